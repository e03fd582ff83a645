# rng-rdrand - -cpu max, no virtio-rng: RDRAND is the strongest source, not weak
# placement: random - the entropy sources do not depend on where the kernel lands
place
boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")" --cpu max
expect_pass
[ "$(kv "$LINE" rng)" = rdrand ] || fail "rng=$(kv "$LINE" rng), want rdrand"
[ "$(kv "$LINE" weak)" = 0 ] || fail "weak flag set with RDRAND"
ok
