#!/bin/bash
# case.sh NAME - one QEMU + OVMF boot test.  The assertions are on what the
# payload measured about itself (its PASS/FAIL line and key=values), not on
# what the loader printed, except where the loader's output is the subject.
set -u
NAME=$1
. test/qemu/lib.sh

case $NAME in
rng-efi)
	boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")" --rng --cpu max
	expect_pass
	[ "$(kv "$LINE" rng)" = efi ] || fail "rng=$(kv "$LINE" rng), want efi"
	ok "$(kv "$LINE" sources)" ;;
rng-rdrand)
	boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")" --cpu max
	expect_pass
	[ "$(kv "$LINE" rng)" = rdrand ] || fail "rng=$(kv "$LINE" rng), want rdrand"
	[ "$(kv "$LINE" weak)" = 0 ] || fail "weak flag set with RDRAND"
	ok ;;
rng-rdtsc)
	boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")" --cpu qemu64
	expect_pass
	[ "$(kv "$LINE" rng)" = rdtsc ] || fail "rng=$(kv "$LINE" rng), want rdtsc"
	[ "$(kv "$LINE" weak)" = 1 ] || fail "weak flag not set with RDTSC only"
	clean_log "$LOG" | grep -q 'warning: only RDTSC' || fail "no weak-entropy warning"
	ok ;;
bases5)
	esp=$(mkesp "$NAME" "$P/kernel-pie.elf")
	seen=
	for i in 1 2 3 4 5; do
		boot_payload "$esp" --cpu max
		expect_pass
		seen="$seen $(kv "$LINE" phys)"
	done
	n=$(echo $seen | tr ' ' '\n' | sort -u | wc -l)
	[ "$n" -ge 4 ] || fail "only $n distinct bases in 5 boots:$seen"
	ok "$n distinct:$seen" ;;
*)
	echo "FAIL $NAME: no such case"; exit 1 ;;
esac
