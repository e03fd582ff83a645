# quiet - without verbose the loader prints one line, what it loads and from
# where, and no address, offset or slot count
# placement: no edge - its subject is the one line a boot without options prints; kaslr.seed= and kaslr.phys= add their warnings
boot_payload "$(mkesp "$NAME" "$P/kernel-high.elf")" --cpu max
expect_pass
lines=$(clean_log "$LOG" | grep '^kaslr-loader: ')
want='kaslr-loader: loading \EFI\BOOT\kernel.elf (native kernel)'
[ "$lines" = "$want" ] || fail "quiet boot printed '$lines', want only '$want'"
leak=$(printf '%s\n' "$lines" | grep -Ei '0x[0-9a-f]{5,}|[0-9a-f]{8,}|slot')
[ -z "$leak" ] || fail "loader printed: $leak"
# and the same boot with verbose does print them (so the check above can fail)
esp=$(mkesp "$NAME" "$P/kernel-high.elf" EFI/BOOT/kaslr.conf="$(conf verbose)")
boot_payload "$esp" --cpu max
expect_pass
clean_log "$LOG" | grep 'kaslr-loader' | grep -qi "virt 0x$(printf '%x' "$(kv "$LINE" virt)")" ||
	fail "verbose did not print the virtual base $(kv "$LINE" virt)"
clean_log "$LOG" | grep -qxF "$want" || fail "verbose boot lacks '$want'"
ok
