# crash-ud2 - payload.crash=ud2: the loader's early-exception stub reports
# vector 6, the virtual offset the loader chose (its verbose placement
# line; 0 for the ET_EXEC kernel in its link-time slot, the lowest) and a
# link-time RIP equal to payload_crash_site in the unrelocated kernel (from
# nm), the RIP less that offset, for the higher-half and the
# identity-linked ET_EXEC kernel
# placement: edges
offs=
for v in high exec; do
	k=$P/kernel-$v.elf
	want=$(nm "$k" | awk '$3 == "payload_crash_site" {print $1}')
	[ -n "$want" ] || fail "no payload_crash_site symbol in $k"
	place
	esp=$(mkesp "$NAME-$v" "$k" EFI/BOOT/kaslr.conf="$(conf verbose 'cmdline payload.crash=ud2' "${PLACE[@]}")")
	LOG=$WORK/$NAME-$v.log
	test/qemu/boot.sh --log "$LOG" --cpu max --timeout 60 \
		--until 'early exception.*link_rip=[0-9a-fx]{18}' "$esp"
	rc=$?
	[ "$rc" = 0 ] || fail "$v: no exception report (rc=$rc)"
	placed
	clean_log "$LOG" | grep -q '^payload: CRASHING ud2' || fail "$v: the payload did not reach ud2"
	rep=$(clean_log "$LOG" | grep -a 'early exception' | tail -n 1)
	case $rep in *"vector=6 "*) ;; *) fail "$v: report does not name vector 6: $rep" ;; esac
	got=$(printf '%s\n' "$rep" | sed -n 's/.*link_rip=0x\([0-9a-f]*\).*/\1/p')
	[ "$((16#$got))" = "$((16#$want))" ] 2>/dev/null ||
		[ "$got" = "$want" ] || fail "$v: link_rip=0x$got, nm says payload_crash_site=0x$want"
	rip=$(printf '%s\n' "$rep" | sed -n 's/.* rip=0x\([0-9a-f]*\).*/\1/p')
	off=$(printf '%s\n' "$rep" | sed -n 's/.* virt_offset=\(0x[0-9a-f]*\).*/\1/p')
	{ [ -n "$rip" ] && [ -n "$off" ]; } || fail "$v: no rip or virt_offset in: $rep"
	[ $((off)) = $((PL_VOFF)) ] || fail "$v: the report's virt_offset=$off, the loader chose offset $PL_VOFF"
	[ $((16#$rip - off)) = $((16#$got)) ] || fail "$v: rip=0x$rip less virt_offset=$off is not link_rip=0x$got"
	offs="$offs $v:$off"
done
ok "link_rip=0x$got; offsets$offs"
