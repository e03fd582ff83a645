# multi-virt10 - ten boots of the higher-half kernel: virtual bases mostly
# distinct (>= 8 of 10), the virtual-minus-physical delta not constant, and
# as many virtual positions as the protocol's window has for its span
# (virt_slots)
# placement: no edge - its subject is the loader's own draw: ten boots on its entropy, mostly distinct
esp=$(mkesp "$NAME" "$P/kernel-high.elf")
want=$(virt_slots "$P/kernel-high.elf") || fail "no program headers in kernel-high.elf"
virts=() deltas=()
for _ in 1 2 3 4 5 6 7 8 9 10; do
	boot_payload "$esp" --cpu max
	expect_pass
	v=$(kv "$LINE" virt) p=$(kv "$LINE" phys)
	[ "$(kv "$LINE" vslots)" = "$want" ] || fail "vslots=$(kv "$LINE" vslots), want $want"
	virts+=("$v")
	deltas+=("$(printf '%x' $((v - p)))")
done
nv=$(printf '%s\n' "${virts[@]}" | sort -u | wc -l)
nd=$(printf '%s\n' "${deltas[@]}" | sort -u | wc -l)
[ "$nv" -ge 8 ] || fail "only $nv distinct virtual bases: ${virts[*]}"
[ "$nd" -ge 2 ] || fail "virtual-physical delta constant: ${deltas[*]}"
ok "$nv distinct virtual bases, $nd distinct deltas, vslots=$(kv "$LINE" vslots)"
