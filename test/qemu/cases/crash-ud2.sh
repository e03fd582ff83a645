# crash-ud2 - payload.crash=ud2: the loader's early-exception stub reports
# vector 6 and a link-time RIP equal to payload_crash_site in the unrelocated
# kernel (from nm), for the higher-half and the identity-linked ET_EXEC kernel
for v in high exec; do
	k=$P/kernel-$v.elf
	want=$(nm "$k" | awk '$3 == "payload_crash_site" {print $1}')
	[ -n "$want" ] || fail "no payload_crash_site symbol in $k"
	esp=$(mkesp "$NAME-$v" "$k" EFI/BOOT/kaslr.conf="$(conf 'cmdline payload.crash=ud2')")
	LOG=$WORK/$NAME-$v.log
	test/qemu/boot.sh --log "$LOG" --cpu max --timeout 60 \
		--until 'early exception.*link_rip=[0-9a-fx]{18}' "$esp"
	rc=$?
	[ "$rc" = 0 ] || fail "$v: no exception report (rc=$rc)"
	clean_log "$LOG" | grep -q '^payload: CRASHING ud2' || fail "$v: the payload did not reach ud2"
	rep=$(clean_log "$LOG" | grep -a 'early exception' | tail -n 1)
	case $rep in *"vector=6 "*) ;; *) fail "$v: report does not name vector 6: $rep" ;; esac
	got=$(printf '%s\n' "$rep" | sed -n 's/.*link_rip=0x\([0-9a-f]*\).*/\1/p')
	[ "$((16#$got))" = "$((16#$want))" ] 2>/dev/null ||
		[ "$got" = "$want" ] || fail "$v: link_rip=0x$got, nm says payload_crash_site=0x$want"
	rip=$(printf '%s\n' "$rep" | sed -n 's/.* rip=0x\([0-9a-f]*\).*/\1/p')
	[ "$rip" != "$got" ] || [ "$v" = none ] || fail "$v: rip equals link_rip: kernel was not moved?"
done
ok "link_rip=0x$got"
