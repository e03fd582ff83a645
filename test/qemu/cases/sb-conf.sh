# sb-conf - under Secure Boot an unsigned kaslr.conf beside the signed loader
# changes nothing the policy decides: it names another kernel (present on
# the ESP), asks for nokaslr, a fixed kaslr.seed, forced placements
# (kaslr.phys=, kaslr.virt=), another command line and verbose, and gives
# sha256= of the other kernel.  The payload that runs is the policy's
# (variant pie), with the policy's command line and none of the NOKASLR
# (0x4), FIXED_SEED (0x2) and FORCED (0x40) flags; one warning per ignored
# key.  `verbose` would print the kernel's addresses (often to a logged
# serial line), so it is ignored too: the console holds neither the
# physical base the payload reports nor the verbose step lines.  Then the
# same kaslr.conf with a policy that allows verbose (ALLOW=verbose): the
# verbose lines are there, with the payload's base among them.
# placement: no edge - its subject is that Secure Boot ignores kaslr.conf's kaslr.seed=, kaslr.phys= and kaslr.virt=
want="console=ttyS0 from.policy=1"
T=$WORK/$NAME.esp
conf_lines() {
	printf '%s\n' 'kernel other.elf' nokaslr verbose \
		'kaslr.seed 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' \
		"sha256 $(sha256sum "$P/kernel-high.elf" | cut -d' ' -f1)" \
		'kaslr.phys lowest' 'kaslr.virt highest' 'cmdline init=/bin/sh' >"$T/EFI/BOOT/kaslr.conf"
	cp "$P/kernel-high.elf" "$T/EFI/BOOT/other.elf"
}
# the payload's physical base in the loader's lines (hex, any case, with
# or without leading zeros)
base_printed() {
	local hex
	hex=$(printf '%x' "$(($(kv "$LINE" phys)))")
	clean_log "$LOG" | grep '^kaslr-loader' | grep -Eiq "0x0*$hex([^0-9a-f]|$)"
}
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want"
conf_lines
boot_payload "$(dir_img "$T")" --secureboot --timeout 120
expect_pass
[ "$(kv "$LINE" variant)" = pie ] || fail "variant=$(kv "$LINE" variant): kaslr.conf's kernel was booted"
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)', want the policy's"
[ $(( $(kv "$LINE" flags) & 0x46 )) = 0 ] || fail "flags=$(kv "$LINE" flags): nokaslr, kaslr.seed or a forced placement taken"
for k in kernel nokaslr verbose kaslr.seed sha256 cmdline kaslr.phys kaslr.virt; do
	loader_said "warning: .*kaslr.conf: '$k' ignored: Secure Boot is on"
done
n=$(clean_log "$LOG" | grep -c 'kaslr-loader: warning: ')
[ "$n" = 8 ] || fail "$n warning lines, want 8 (one per ignored key)"
if clean_log "$LOG" | grep -q '^kaslr-loader: entropy sources:'; then
	fail "verbose was taken from an unsigned kaslr.conf"
fi
base_printed && fail "the console shows the physical base $(kv "$LINE" phys)"
flags=$(kv "$LINE" flags)

sb_install "$T" TEST_KERNEL=1 CMDLINE="$want" ALLOW=verbose
conf_lines
boot_payload "$(dir_img "$T")" --secureboot --timeout 120
expect_pass
loader_said 'entropy sources:' # the policy allows verbose
base_printed || fail "verbose allowed, but the physical base $(kv "$LINE" phys) is not in the loader's lines"
n=$(clean_log "$LOG" | grep -c 'kaslr-loader: warning: ')
[ "$n" = 7 ] || fail "ALLOW=verbose: $n warning lines, want 7"
ok "policy kernel and cmdline kept, 8 keys ignored (verbose too: no address shown), flags=$flags; ALLOW=verbose shows them"
