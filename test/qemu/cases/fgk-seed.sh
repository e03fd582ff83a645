# fgk-seed - kaslr.seed= makes the function order reproducible too: the
# test kernel kernel-fgk.elf booted twice with one seed lands in the same
# order (its own fingerprint) at the same addresses, shuffled; another
# seed gives another order.  The boots are verbose: the loader's report of
# the shuffle is a subject too (moved as the kernel counted, log2(N!) for
# its N function sections as awk computes it, capped at 256 bits).
# placement: no edge - kaslr.seed= is its subject: its own two seeds, twice one of them
# the kernel's function sections (fgk_facts) and the tables' entries
read -r nfn _ nent < <(fgk_facts "$P/kernel-fgk.elf") || fail "no functions note in kernel-fgk.elf"
s1=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
s2=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
# boot_fgk SEED: boot once, got="ORDER PHYS VIRT"
boot_fgk() {
	boot_payload "$(mkesp "$NAME" "$P/kernel-fgk.elf" \
		EFI/BOOT/kaslr.conf="$(conf verbose "kaslr.seed $1" 'cmdline fgk.expect=moved')")" --cpu max --rng
	expect_pass
	f=$(clean_log "$LOG" | grep -a '^fgk: ' | tail -n 1)
	[ -n "$f" ] || fail "no fgk: line"
	[ "$(kv "$f" handoff_moved)" = "$(kv "$f" moved)" ] || fail "hand-off moved=$(kv "$f" handoff_moved), kernel $(kv "$f" moved)"
	clean_log "$LOG" | grep -q "^kaslr-loader: function-granular KASLR: $(kv "$f" moved) of $nfn functions moved, 2 table(s) of $nent entries re-sorted, " ||
		fail "no verbose line saying $(kv "$f" moved) of $nfn functions moved"
	e=$(clean_log "$LOG" | sed -n "s/^kaslr-loader: function order: 256\\.000 bits of entropy (log2($nfn!) = \\([0-9.]*\\), capped by the 256-bit seed)\$/\\1/p")
	[ -n "$e" ] || fail "no verbose line with the order's entropy capped at 256 bits"
	awk -v e="$e" -v n="$nfn" 'BEGIN { for (k = 2; k <= n; k++) s += log(k) / log(2); exit !(e - s < 0.002 && s - e < 0.002) }' ||
		fail "log2($nfn!) printed as $e"
	got="$(kv "$f" order) $(kv "$LINE" phys) $(kv "$LINE" virt)"
}
boot_fgk "$s1"
a=$got
boot_fgk "$s1"
[ "$a" = "$got" ] || fail "same seed, different order or placement: $a vs $got"
boot_fgk "$s2"
c=$got
[ "${a%% *}" != "${c%% *}" ] || fail "different seeds, same order: $a / $c"
ok "order phys virt: $a / $c"
