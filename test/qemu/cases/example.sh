# example - the minimal kernel of include/PROTOCOL.md, built from the
# document's own text (make example), boots: it finds the hand-off and
# itself where the hand-off says (else it exits with status 3), prints its
# line and leaves through isa-debug-exit with status 33
# placement: edges
k=$B/example/kernel.elf
[ -f "$k" ] || make --no-print-directory example >/dev/null || fail "make example failed"
LOG=$WORK/$NAME.log
place
test/qemu/boot.sh --log "$LOG" --cpu max --timeout 90 \
	"$(mkesp "$NAME" "$k" EFI/BOOT/kaslr.conf="$(conf verbose "${PLACE[@]}")")"
rc=$?
placed
line=$(clean_log "$LOG" | grep -a '^example: ' | tail -n 1)
[ "$rc" = 33 ] || fail "qemu exit status $rc, want 33; the example said '$line'"
printf '%s\n' "$line" | grep -Eq '^example: hello from 0xffffffff[0-9a-f]{8}, protocol version 3, [0-9]+ MiB usable, 0 modules, cmdline ""$' ||
	fail "the example said '$line'"
ok "$line"
