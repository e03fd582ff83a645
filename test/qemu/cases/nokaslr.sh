# nokaslr - the lowest valid slot, the same on every boot, flagged and
# warned, with slot counts of 1; the lowest slot as the loader's list of
# free memory (verbose) gives it: the first region with room, 2 MiB-aligned,
# at or above kaslr.min
# placement: no edge - nokaslr is its subject: the lowest slot on every boot
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf nokaslr verbose)")
boot_payload "$esp" --cpu max --rng
expect_pass
a=$(kv "$LINE" phys)
clean_log "$LOG" | grep -q 'warning: nokaslr' || fail "no nokaslr warning"
[ $(( $(kv "$LINE" flags) & 4 )) = 4 ] || fail "NOKASLR flag not set: flags=$(kv "$LINE" flags)"
# one position was possible: no entropy, and the counts say so
[ "$(kv "$LINE" slots)/$(kv "$LINE" vslots)" = 1/1 ] ||
	fail "slots=$(kv "$LINE" slots) vslots=$(kv "$LINE" vslots), want 1/1"
lowest=$(lowest_slot "$LOG") || fail "no free-memory list from the loader (verbose)"
[ $((a)) = "$lowest" ] || fail "nokaslr base $a, the lowest slot is $(printf 0x%x "$lowest")"
boot_payload "$esp" --cpu max --rng
expect_pass
[ "$(kv "$LINE" phys)" = "$a" ] || fail "nokaslr gave $a then $(kv "$LINE" phys)"
ok "phys=$a"
