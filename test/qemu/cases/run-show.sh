# run-show - what `make run` shows (test/qemu/boot.sh --show): the QEMU
# command first, reusable as printed; the loader's one quiet line; the
# payload's report; and no escape code or CR from the firmware's console
# placement: random - what make run shows does not depend on where the kernel lands
place
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
out=$WORK/$NAME.out
LOG=$WORK/$NAME.log
test/qemu/boot.sh --show --log "$LOG" --timeout 120 "$esp" </dev/null >"$out" 2>&1
rc=$?
[ "$rc" = 33 ] || fail "boot.sh --show: status $rc, want 33 (payload PASS)"
grep -q $'\x1b' "$out" && fail "an escape code reached the terminal: $(grep -a $'\x1b' "$out" | head -n 1 | cat -v)"
grep -q $'\r' "$out" && fail "a CR reached the terminal"
grep -qxF 'kaslr-loader: loading \EFI\BOOT\kernel.elf (native kernel)' "$out" ||
	fail "no 'kaslr-loader: loading \\EFI\\BOOT\\kernel.elf (native kernel)' line"
grep -q '^payload: PASS ' "$out" || fail "no payload report"
cmd=$(sed -n '/^QEMU command/{n;p;q}' "$out")
case $cmd in " qemu-system-x86_64 "*"$esp"*"-nic none"*) ;; *) fail "no QEMU command under the banner: '$cmd'" ;; esac
# as printed, it boots the same image again (its variable store still exists)
again=$WORK/$NAME.again
eval "timeout 120 $cmd" </dev/null >"$again" 2>&1
rc=$?
[ "$rc" = 33 ] || fail "the printed command exited $rc, want 33"
LOG=$again LINE=$(payload_line "$again")
case $LINE in "payload: PASS "*) ;; *) fail "the printed command's boot: '$LINE'" ;; esac
ok "command reused: $(kv "$LINE" phys)"
