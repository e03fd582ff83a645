# fgk-shuffle5 - function-granular KASLR: the test kernel kernel-fgk.elf
# (payload/fgk_main.c) booted five times.  Each boot it finds itself
# shuffled (fgk.expect=moved: functions away from their link addresses
# and out of link order), every function returns its own id by every
# route, both tables its note declares sorted are sorted and complete, and
# the hand-off's counts equal its own; the five orders (its fingerprint of
# where each function landed) are all different.  At an edge one boot:
# its checks are the placement's; the five orders are the random run's.
# placement: edges
# what to expect, from the file (fgk_facts) and the depth of its switch
# routes in its source: each generated function is called 3 + 2 * depth times
read -r nfn ngen nent < <(fgk_facts "$P/kernel-fgk.elf") || fail "no functions note in kernel-fgk.elf"
depth=$(sed -n 's/^#define FGK_DEPTH *\([0-9]*\).*/\1/p' payload/fgk_main.c)
[ -n "$depth" ] || fail "no FGK_DEPTH in payload/fgk_main.c"
orders=() boots=5
edge && boots=1
for i in $(seq "$boots"); do
	place
	esp=$(mkesp "$NAME" "$P/kernel-fgk.elf" EFI/BOOT/kaslr.conf="$(conf 'cmdline fgk.expect=moved' "${PLACE[@]}")")
	boot_payload "$esp" --cpu max
	expect_pass
	f=$(clean_log "$LOG" | grep -a '^fgk: ' | tail -n 1)
	[ -n "$f" ] || fail "boot $i: no fgk: line"
	n=$(kv "$f" functions) m=$(kv "$f" moved)
	[ "$n" = "$nfn" ] || fail "boot $i: functions=$n, want $nfn (the .text.* sections: $ngen generated, fgk_direct, _start)"
	[ "$m" -gt 0 ] || fail "boot $i: moved=$m"
	[ "$(kv "$f" inversions)" -gt 0 ] || fail "boot $i: inversions=$(kv "$f" inversions)"
	[ "$(kv "$f" calls)" = $((ngen * (3 + 2 * depth))) ] ||
		fail "boot $i: calls=$(kv "$f" calls), want $((ngen * (3 + 2 * depth)))"
	[ "$(kv "$f" entries)" = "$nent" ] || fail "boot $i: entries=$(kv "$f" entries), want the tables' $nent"
	[ "$(kv "$f" sorted)" = 1 ] || fail "boot $i: sorted=$(kv "$f" sorted)"
	[ "$(kv "$f" handoff_functions)" = "$n" ] || fail "boot $i: hand-off says $(kv "$f" handoff_functions) functions, the kernel $n"
	[ "$(kv "$f" handoff_moved)" = "$m" ] || fail "boot $i: hand-off says $(kv "$f" handoff_moved) moved, the kernel $m"
	# log2(functions!) is far above the 256 bits the seed holds
	[ "$(kv "$f" handoff_millibits)" = 256000 ] || fail "boot $i: handoff_millibits=$(kv "$f" handoff_millibits)"
	[ $(( $(kv "$LINE" flags) & 0x20 )) = 32 ] || fail "boot $i: KB_FLAG_FGKASLR not set: flags=$(kv "$LINE" flags)"
	orders+=("$(kv "$f" order)")
	moved="${moved:+$moved,}$m"
done
d=$(printf '%s\n' "${orders[@]}" | sort -u | wc -l)
[ "$d" = "$boots" ] || fail "$d distinct orders in $boots boots: ${orders[*]}"
ok "moved $moved of $nfn; orders ${orders[*]}"
