# fgk-seed - kaslr.seed= makes the function order reproducible too: the
# test kernel kernel-fgk.elf booted twice with one seed lands in the same
# order (its own fingerprint) at the same addresses, shuffled; another
# seed gives another order
s1=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
s2=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
# boot_fgk SEED: boot once, got="ORDER PHYS VIRT"
boot_fgk() {
	boot_payload "$(mkesp "$NAME" "$P/kernel-fgk.elf" \
		EFI/BOOT/kaslr.conf="$(conf "kaslr.seed $1" 'cmdline fgk.expect=moved')")" --cpu max --rng
	expect_pass
	f=$(clean_log "$LOG" | grep -a '^fgk: ' | tail -n 1)
	[ -n "$f" ] || fail "no fgk: line"
	[ "$(kv "$f" handoff_moved)" = "$(kv "$f" moved)" ] || fail "hand-off moved=$(kv "$f" handoff_moved), kernel $(kv "$f" moved)"
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
