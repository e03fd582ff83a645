# rng-efi - virtio-rng: the payload reports the EFI RNG protocol as its strongest source
# placement: random - the entropy sources do not depend on where the kernel lands
place
boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")" --rng --cpu max
expect_pass
[ "$(kv "$LINE" rng)" = efi ] || fail "rng=$(kv "$LINE" rng), want efi"
ok "$(kv "$LINE" sources)"
