# above-4g - kaslr.min=4G with 6 GiB of RAM: the kernel must run above 4 GiB
# placement: edges
place
esp=$(mkesp "$NAME" "$P/kernel-exec.elf" EFI/BOOT/kaslr.conf="$(conf 'kaslr.min 4G' "${PLACE[@]}")")
boot_payload "$esp" --mem 6G --cpu max
expect_pass
phys=$(kv "$LINE" phys)
[ $((phys >= 0x100000000)) = 1 ] || fail "phys=$phys is below 4 GiB"
ok "phys=$phys slots=$(kv "$LINE" slots)"
