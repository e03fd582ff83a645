# rng-efi - virtio-rng: the payload reports the EFI RNG protocol as its strongest source
boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")" --rng --cpu max
expect_pass
[ "$(kv "$LINE" rng)" = efi ] || fail "rng=$(kv "$LINE" rng), want efi"
ok "$(kv "$LINE" sources)"
