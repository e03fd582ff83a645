# sb-conf - under Secure Boot an unsigned kaslr.conf beside the signed loader
# changes nothing the policy decides: it names another kernel (present on
# the ESP), asks for nokaslr, a fixed kaslr.seed, forced placements
# (kaslr.phys=, kaslr.virt=) and another command line, and gives sha256= of
# the other kernel.  The payload that runs is the policy's (variant pie),
# with the policy's command line and none of the NOKASLR (0x4), FIXED_SEED
# (0x2) and FORCED (0x40) flags; one warning per ignored key.
# `verbose` is still taken.
want="console=ttyS0 from.policy=1"
T=$WORK/$NAME.esp
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want"
cp "$P/kernel-high.elf" "$T/EFI/BOOT/other.elf"
printf '%s\n' 'kernel other.elf' nokaslr verbose \
	'kaslr.seed 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' \
	"sha256 $(sha256sum "$P/kernel-high.elf" | cut -d' ' -f1)" \
	'kaslr.phys lowest' 'kaslr.virt highest' 'cmdline init=/bin/sh' >"$T/EFI/BOOT/kaslr.conf"
boot_payload "$(dir_img "$T")" --secureboot --timeout 120
expect_pass
[ "$(kv "$LINE" variant)" = pie ] || fail "variant=$(kv "$LINE" variant): kaslr.conf's kernel was booted"
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)', want the policy's"
[ $(( $(kv "$LINE" flags) & 0x46 )) = 0 ] || fail "flags=$(kv "$LINE" flags): nokaslr, kaslr.seed or a forced placement taken"
for k in kernel nokaslr kaslr.seed sha256 cmdline kaslr.phys kaslr.virt; do
	loader_said "warning: .*kaslr.conf: '$k' ignored: Secure Boot is on"
done
n=$(clean_log "$LOG" | grep -c 'kaslr-loader: warning: ')
[ "$n" = 7 ] || fail "$n warning lines, want 7 (one per ignored key)"
loader_said 'entropy sources:' # verbose was taken
ok "policy kernel and cmdline kept, 7 keys ignored, flags=$(kv "$LINE" flags)"
