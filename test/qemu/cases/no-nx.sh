# no-nx - a CPU without NX (as when firmware setup turns the XD bit off):
# the loader must not set EFER.NXE (a #GP) nor NX bits (reserved, a #PF);
# it boots with write protection only, says so in one warning line, and
# flags it in the hand-off.  The payload checks EFER, the flag and every
# permission it can still check.
# placement: random - the page permissions it checks are the same wherever the kernel lands
place
boot_payload "$(mkesp "$NAME" "$P/kernel-high.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")" --cpu qemu64,-nx --timeout 90
expect_pass
[ "$(kv "$LINE" nx)" = 0 ] || fail "payload says nx=$(kv "$LINE" nx), want 0"
clean_log "$LOG" | grep -q 'warning: the CPU offers no NX' || fail "no warning line about NX"
ok "flags=$(kv "$LINE" flags)"
