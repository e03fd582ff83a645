# vwindow - a higher-half kernel carrying a KASLR window note (added to the
# payload with objcopy as an SHT_NOTE section) gets its virtual base from
# that window: [0xffffffffc0000000, 0xffffffffc8000000), 64 positions
note=$WORK/$NAME.note
k=$WORK/$NAME.elf
# namesz=6 descsz=16 type=1 "KASLR\0" + 2 pad, start, end (little-endian)
printf '\006\000\000\000\020\000\000\000\001\000\000\000KASLR\000\000\000\000\000\000\300\377\377\377\377\000\000\000\310\377\377\377\377' >"$note"
objcopy --add-section .note.kaslr="$note" "$P/kernel-high.elf" "$k" || fail "objcopy"
readelf -SW "$k" | grep -q 'note.kaslr *NOTE' || fail "objcopy did not make an SHT_NOTE section"
esp=$(mkesp "$NAME" "$k")
seen=
for _ in 1 2 3; do
	boot_payload "$esp" --cpu max
	expect_pass
	v=$(kv "$LINE" virt)
	case $v in 0xffffffffc[0-7]*) ;; *) fail "virt=$v outside the noted window" ;; esac
	[ "$(kv "$LINE" vslots)" = 64 ] || fail "vslots=$(kv "$LINE" vslots), want 64"
	seen="$seen $v"
done
ok "virt:$seen"
