# mem-2G - 2 GiB of guest RAM: the payload passes, and the count of
# slots it was handed is the sum over the loader's list of free memory
# (verbose) of the slots each region holds
# placement: random - mem-256M and mem-6G boot this kernel at the edges of a small and a large memory
place
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf verbose "${PLACE[@]}")")
boot_payload "$esp" --mem 2G --cpu max
expect_pass
s=$(kv "$LINE" slots)
n=$(free_slots "$LOG" | awk '{ n += $3 } END { print n + 0 }')
{ [ "$s" -gt 1 ] && [ "$s" = "$n" ]; } || fail "slots=$s, the loader's list of free memory holds $n"
ok "slots=$s phys=$(kv "$LINE" phys)"
