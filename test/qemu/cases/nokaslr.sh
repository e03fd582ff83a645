# nokaslr - the lowest valid slot, the same on every boot, flagged and
# warned, with slot counts of 1
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf nokaslr)")
boot_payload "$esp" --cpu max --rng
expect_pass
a=$(kv "$LINE" phys)
clean_log "$LOG" | grep -q 'warning: nokaslr' || fail "no nokaslr warning"
[ $(( $(kv "$LINE" flags) & 4 )) = 4 ] || fail "NOKASLR flag not set: flags=$(kv "$LINE" flags)"
# one position was possible: no entropy, and the counts say so
[ "$(kv "$LINE" slots)/$(kv "$LINE" vslots)" = 1/1 ] ||
	fail "slots=$(kv "$LINE" slots) vslots=$(kv "$LINE" vslots), want 1/1"
boot_payload "$esp" --cpu max --rng
expect_pass
[ "$(kv "$LINE" phys)" = "$a" ] || fail "nokaslr gave $a then $(kv "$LINE" phys)"
# lowest: 2 MiB-aligned at or above 16 MiB, below the first random base seen in tests
[ $((a >= 0x1000000 && a < 0x4000000)) = 1 ] || fail "nokaslr base $a is not near 16 MiB"
ok "phys=$a"
