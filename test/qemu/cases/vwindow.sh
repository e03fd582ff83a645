# vwindow - a higher-half kernel carrying a KASLR window note (added to the
# payload with objcopy as an SHT_NOTE section) gets its virtual base from
# that window, [0xffffffffc0000000, 0xffffffffc8000000): the image (its
# program headers' span) lies inside, and the count of virtual slots is
# the window's 2 MiB positions for an image of that span.  Three boots
# (one at an edge, which then starts or ends at the window's edge).
# placement: edges
note=$WORK/$NAME.note
k=$WORK/$NAME.elf
lo=0xffffffffc0000000 hi=0xffffffffc8000000
# namesz=6 descsz=16 type=1 "KASLR\0" + 2 pad, start, end (little-endian)
printf '\006\000\000\000\020\000\000\000\001\000\000\000KASLR\000\000\000\000\000\000\300\377\377\377\377\000\000\000\310\377\377\377\377' >"$note"
objcopy --add-section .note.kaslr="$note" "$P/kernel-high.elf" "$k" || fail "objcopy"
readelf -SW "$k" | grep -q 'note.kaslr *NOTE' || fail "objcopy did not make an SHT_NOTE section"
span=$(elf_span "$k") || fail "no program headers in $k"
size=$(((span + 0x1fffff) & ~0x1fffff))
want=$(((hi - lo - size) / 0x200000 + 1))
seen='' boots=3
edge && boots=1
for _ in $(seq "$boots"); do
	place
	esp=$(mkesp "$NAME" "$k" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
	boot_payload "$esp" --cpu max
	expect_pass
	v=$(kv "$LINE" virt)
	# (unsigned comparisons of addresses in the top half: as signed, in order)
	{ [ $((v >= lo)) = 1 ] && [ $((v + span <= hi)) = 1 ]; } || fail "virt=$v + $span bytes: outside the noted window"
	[ "$(kv "$LINE" vslots)" = "$want" ] || fail "vslots=$(kv "$LINE" vslots), want $want"
	case $TEST_PLACEMENT in
	lowest) [ $((v)) = $((lo)) ] || fail "virt=$v at the lowest edge, not the window's start" ;;
	highest) [ $((v + size)) = $((hi)) ] || fail "virt=$v at the highest edge: its slot does not end at the window's end" ;;
	esac
	seen="$seen $v"
done
ok "virt:$seen"
