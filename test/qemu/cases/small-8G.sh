# small-8G - the small-code-model kernel (R_X86_64_32/32S, identity-mapped)
# in 8 GiB of RAM, where 3 of 4 slots lie above 2 GiB: four boots, each one
# must pass its own checks (absolute 32-bit fields hold its run-time
# addresses) and sit below 2 GiB
esp=$(mkesp "$NAME" "$P/kernel-small.elf")
seen=
for i in 1 2 3 4; do
	boot_payload "$esp" --mem 8G --cpu max
	expect_pass
	[ "$(kv "$LINE" variant)" = small ] || fail "variant=$(kv "$LINE" variant), want small"
	phys=$(kv "$LINE" phys)
	[ $((phys < 0x80000000)) = 1 ] || fail "boot $i: phys=$phys is above 2 GiB"
	seen="$seen $phys"
done
ok "phys:$seen"
