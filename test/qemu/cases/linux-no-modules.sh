# linux-no-modules - module= is this loader's own protocol: given with a
# Linux kernel, the loader refuses it in one line naming the file and the
# protocol, and goes back to the firmware (which then runs its shell:
# nothing is handed over, no Linux banner)
# placement: no edge - the loader refuses module= with a Linux kernel before it places anything
. test/linux/lib.sh
head -c 4096 /dev/zero >"$WORK/$NAME.mod"
linux_esp 'module m.bin'
mcopy -i "$LINUX_ESP" "$WORK/$NAME.mod" ::/EFI/BOOT/m.bin || fail "mcopy"
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --mem 1G --cpu max --timeout 120 --until 'Shell> |UEFI Interactive Shell' "$LINUX_ESP"
rc=$?
[ "$rc" = 0 ] || fail "the firmware did not go on after the loader (boot.sh status $rc)"
clean_log "$LOG" | grep -q 'Linux version' && fail "Linux ran"
want='kaslr-loader: error: module= given, but \EFI\BOOT\vmlinux.gz is a Linux kernel, which takes no modules'
clean_log "$LOG" | grep -qxF "$want" || fail "no line '$want'"
ok
