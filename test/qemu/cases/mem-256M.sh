# mem-256M - 256 MiB of guest RAM: the payload passes and reports slots
boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")" --mem 256M --cpu max
expect_pass
[ "$(kv "$LINE" slots)" -gt 1 ] || fail "slots=$(kv "$LINE" slots)"
ok "slots=$(kv "$LINE" slots)"
