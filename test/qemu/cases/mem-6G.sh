# mem-6G - 6 GiB of guest RAM (RAM above 4 GiB): slots there are counted
# too: the count of slots the payload was handed is the sum over the
# loader's list of free memory (verbose), where regions above 4 GiB hold
# some; at the highest edge the payload runs above 4 GiB
# placement: edges
place
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf verbose "${PLACE[@]}")")
boot_payload "$esp" --mem 6G --cpu max
expect_pass
s=$(kv "$LINE" slots) phys=$(kv "$LINE" phys)
read -r n hi < <(free_slots "$LOG" | awk '{ n += $3; if ($1 >= 2^32) hi += $3 } END { print n + 0, hi + 0 }')
[ "$s" = "$n" ] || fail "slots=$s, the loader's list of free memory holds $n"
[ "$hi" -gt 0 ] || fail "no slot above 4 GiB among the $n listed: RAM above 4 GiB not counted"
if [ "$TEST_PLACEMENT" = highest ] && [ $((phys >= 1 << 32)) = 0 ]; then
	fail "phys=$phys at the highest edge: below 4 GiB"
fi
ok "slots=$s ($hi above 4 GiB) phys=$phys"
