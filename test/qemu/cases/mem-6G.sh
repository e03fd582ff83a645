# mem-6G - 6 GiB of guest RAM (RAM above 4 GiB): slots there are counted too
boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")" --mem 6G --cpu max
expect_pass
s=$(kv "$LINE" slots)
# below 4 GiB q35 has at most ~2 GiB of RAM (~1000 slots); more means above-4G RAM counts
[ "$s" -gt 2000 ] || fail "slots=$s: RAM above 4 GiB not counted"
ok "slots=$s"
