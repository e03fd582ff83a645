# seed-file - systemd's \loader\random-seed on -cpu qemu64 (no RDRAND, no
# EFI_RNG_PROTOCOL).  A 512-byte file (bootctl's size) is a strong source:
# the payload finds the seed-file bit in its entropy sources and the weak
# flag clear, and the file on the disk image holds new bytes of the same
# size after every boot (two boots: three different contents).
# LoaderFeatures, read back by the payload through the runtime services,
# has systemd's random-seed bit (1 << 6) and nothing else.  On a read-only
# ESP the file cannot be rewritten: not counted, the boot weak.  A 31-byte
# file is below systemd-boot's minimum: not used, not rewritten, weak.
# placement: random - the seed file and its entropy do not depend on where the kernel lands
seed=$WORK/$NAME.seed
head -c 512 /dev/urandom >"$seed.0"
place
img=$(mkesp "$NAME" "$P/kernel-pie.elf" loader/random-seed="$seed.0" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
sources() { printf '%d' "$(kv "$LINE" sources)"; }
for i in 1 2; do
	boot_payload "$img" --cpu qemu64
	expect_pass
	[ "$(kv "$LINE" weak)" = 0 ] || fail "boot $i: weak=$(kv "$LINE" weak) with a seed file"
	[ $(($(sources) & 0x10)) != 0 ] || fail "boot $i: sources=$(kv "$LINE" sources), no seed-file bit (0x10)"
	clean_log "$LOG" | grep -q 'warning: only RDTSC' && fail "boot $i: weak-entropy warning with a seed file"
	mcopy -n -i "$img" ::/loader/random-seed "$seed.$i" || fail "boot $i: cannot read the seed file back"
	[ "$(stat -c %s "$seed.$i")" = 512 ] || fail "boot $i: the file is $(stat -c %s "$seed.$i") bytes, want 512"
	for j in $(seq 0 $((i - 1))); do
		cmp -s "$seed.$i" "$seed.$j" && fail "boot $i: the seed file after boot $i equals the one after boot $j"
	done
done
features=$(clean_log "$LOG" | sed -n 's/^payload-bli: LoaderFeatures=\(0x[0-9a-fA-F]*\) nv=0$/\1/p' | tail -n 1)
[ -n "$features" ] || fail "no volatile LoaderFeatures variable"
[ $((features)) = $((1 << 6)) ] || fail "LoaderFeatures=$features, want 0x40 (random-seed only)"

# a file that cannot be rewritten would give the same bytes every boot:
# on a read-only ESP it is mixed in but not counted
boot_payload "$img" --cpu qemu64 --ro
expect_pass
[ "$(kv "$LINE" weak)" = 1 ] || fail "read-only ESP: weak=$(kv "$LINE" weak), want 1"
[ $(($(sources) & 0x10)) = 0 ] || fail "read-only ESP: sources=$(kv "$LINE" sources) has the seed-file bit"
clean_log "$LOG" | grep -q 'random-seed could not be rewritten' || fail "read-only ESP: no warning"
mcopy -n -i "$img" ::/loader/random-seed "$seed.ro" || fail "cannot read the seed file back"
cmp -s "$seed.2" "$seed.ro" || fail "the seed file changed on a read-only ESP"

head -c 31 /dev/urandom >"$seed.short"
mcopy -o -i "$img" "$seed.short" ::/loader/random-seed || fail "mcopy"
boot_payload "$img" --cpu qemu64
expect_pass
[ "$(kv "$LINE" weak)" = 1 ] || fail "31-byte file: weak=$(kv "$LINE" weak), want 1"
[ $(($(sources) & 0x10)) = 0 ] || fail "31-byte file: sources=$(kv "$LINE" sources) has the seed-file bit"
mcopy -n -i "$img" ::/loader/random-seed "$seed.after" || fail "cannot read the seed file back"
cmp -s "$seed.short" "$seed.after" || fail "a 31-byte file was rewritten"
clean_log "$LOG" | grep -q 'random-seed: 31 bytes, fewer than 32: not used' || fail "no warning for the 31-byte file"
ok "512 bytes rewritten twice, features=$features; 31 bytes: sources=$(kv "$LINE" sources)"
