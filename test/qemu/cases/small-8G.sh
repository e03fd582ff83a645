# small-8G - the small-code-model kernel (R_X86_64_32/32S, identity-mapped)
# in 8 GiB of RAM, most of it above 2 GiB: four boots (one at an edge:
# the highest is the subject there), each one must pass its own checks
# (absolute 32-bit fields hold its run-time addresses) and lie below 2 GiB
# whole (its base plus its program headers' span)
# placement: edges
span=$(elf_span "$P/kernel-small.elf") || fail "no program headers in kernel-small.elf"
seen='' boots=4
edge && boots=1
for i in $(seq "$boots"); do
	place
	esp=$(mkesp "$NAME" "$P/kernel-small.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
	boot_payload "$esp" --mem 8G --cpu max
	expect_pass
	[ "$(kv "$LINE" variant)" = small ] || fail "variant=$(kv "$LINE" variant), want small"
	phys=$(kv "$LINE" phys)
	[ $((phys + span <= 0x80000000)) = 1 ] || fail "boot $i: phys=$phys + $span bytes reaches above 2 GiB"
	seen="$seen $phys"
done
ok "phys:$seen"
