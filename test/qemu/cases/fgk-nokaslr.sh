# fgk-nokaslr - nokaslr keeps the test kernel kernel-fgk.elf's functions
# in link order: none moved (fgk.expect=linked makes a moved one a
# failure), KB_FLAG_FGKASLR clear and the hand-off's counts zero, every
# route and both tables still checked
# placement: no edge - nokaslr is its subject: the lowest slot and the functions in link order
esp=$(mkesp "$NAME" "$P/kernel-fgk.elf" EFI/BOOT/kaslr.conf="$(conf nokaslr 'cmdline fgk.expect=linked')")
boot_payload "$esp" --cpu max
expect_pass
f=$(clean_log "$LOG" | grep -a '^fgk: ' | tail -n 1)
[ -n "$f" ] || fail "no fgk: line"
[ "$(kv "$f" moved)" = 0 ] || fail "moved=$(kv "$f" moved) under nokaslr"
[ "$(kv "$f" inversions)" = 0 ] || fail "inversions=$(kv "$f" inversions) under nokaslr"
[ "$(kv "$f" sorted)" = 1 ] || fail "sorted=$(kv "$f" sorted)"
[ "$(kv "$f" handoff_functions)/$(kv "$f" handoff_moved)" = 0/0 ] ||
	fail "hand-off counts $(kv "$f" handoff_functions)/$(kv "$f" handoff_moved) without the shuffle"
flags=$(kv "$LINE" flags)
[ $((flags & 0x20)) = 0 ] || fail "KB_FLAG_FGKASLR set under nokaslr: flags=$flags"
[ $((flags & 4)) = 4 ] || fail "KB_FLAG_NOKASLR not set: flags=$flags"
ok "functions=$(kv "$f" functions) moved=0 order=$(kv "$f" order)"
