# crash-stack - payload.crash=stack: the test kernel recurses until its
# stack runs into the guard page below it.  The #PF cannot be delivered on
# that stack; the loader's gate for it switches to an interrupt stack of
# its TSS, so the early-exception report names vector 14 and the guard
# page in CR2 instead of the machine resetting on a triple fault.  Verbose,
# for the loader's placement line at an edge.
# placement: edges
place
esp=$(mkesp "$NAME" "$P/kernel-high.elf" \
	EFI/BOOT/kaslr.conf="$(conf verbose 'cmdline payload.crash=stack' "${PLACE[@]}")")
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --cpu max --timeout 60 \
	--until 'early exception.*link_rip=' "$esp"
rc=$?
placed
guard=$(clean_log "$LOG" | sed -n 's/^payload: CRASHING stack guard=\(0x[0-9a-f]*\).*/\1/p' | tail -n 1)
[ -n "$guard" ] || fail "the payload did not start overflowing its stack (rc=$rc)"
rep=$(clean_log "$LOG" | grep -a 'early exception' | tail -n 1)
[ -n "$rep" ] || fail "no exception report: the overflow reset the machine (rc=$rc)"
case $rep in *"vector=14 "*) ;; *) fail "report does not name #PF (vector 14): $rep" ;; esac
# RSP was in the guard page too: the fault was delivered on another stack
rsp=$(printf '%s\n' "$rep" | sed -n 's/.* rsp=\(0x[0-9a-f]*\).*/\1/p')
if [ $((rsp)) -lt $((guard)) ] || [ $((rsp)) -ge $((guard + 4096 + 64)) ]; then
	fail "rsp=$rsp at the fault: the stack did not reach the guard page at $guard"
fi
cr2=$(printf '%s\n' "$rep" | sed -n 's/.* cr2=\(0x[0-9a-f]*\).*/\1/p')
[ -n "$cr2" ] || fail "no cr2 in: $rep"
if [ $((cr2)) -lt $((guard)) ] || [ $((cr2)) -ge $((guard + 4096)) ]; then
	fail "cr2=$cr2 is not in the guard page at $guard"
fi
ok "vector=14 cr2=$cr2 in the guard page"
