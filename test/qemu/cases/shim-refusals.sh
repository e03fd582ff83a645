# shim-refusals - what a TRUST=shim policy still refuses, one loader error
# line each with EFI_SECURITY_VIOLATION and nothing handed over (no Linux,
# no payload):
#   1. through shim, Debian's kernel from the -unsigned package (the same
#      kernel without its signature) named in kaslr.conf: shim's Verify
#      says Security Violation;
#   2. through shim, the signed kernel with one byte changed: the same;
#   3. the firmware starting the loader directly (no shim): only pins
#      count, the signed kernel is refused with the "shim is absent" line,
#      while the pinned test kernel still boots (payload PASS).
# placement: no edge - its subject is what TRUST=shim refuses; its one boot that runs is the control
sb_shim
signed=$(test/linux/fetch.sh signed) || fail "no Debian signed kernel: test/linux/fetch.sh signed failed"
unsigned=$B/linux/vmlinuz
[ -f "$unsigned" ] || test/linux/fetch.sh generic >/dev/null || fail "no Debian unsigned kernel"
T=$WORK/$NAME.esp
sb_install "$T" TEST_KERNEL=1 CMDLINE="console=ttyS0 trust=shim" SHIM="$SHIM_EFI" TRUST=shim
printf 'kernel vmlinuz\n' >"$T/EFI/BOOT/kaslr.conf"
summary=''
# refused IMAGE WHAT REGEX: one boot, the loader's single error line matches
# REGEX, the status it returned is Security Violation, no kernel ran
refused() {
	boot_payload "$1" --secureboot --timeout 150 \
		--until 'returned Security (Policy )?Violation|failed to start .*Security Violation|Linux version|payload: '
	no_payload
	clean_log "$LOG" | grep -q 'Linux version' && fail "$2: Linux ran"
	# up to the first refusal the firmware reports (on a slow host it may
	# try the boot option again before QEMU is stopped)
	[ "$(clean_log "$LOG" | sed -E '/returned Security (Policy )?Violation|failed to start .*Security Violation/q' |
		grep -c '^kaslr-loader: error: ')" = 1 ] || fail "$2: not exactly one error line"
	loader_said "error: $3"
	clean_log "$LOG" | grep -Eq 'returned Security (Policy )?Violation|failed to start .*: Security Violation' ||
		fail "$2: no EFI_SECURITY_VIOLATION returned"
	summary="$summary $2=refused"
}
cp "$unsigned" "$T/EFI/BOOT/vmlinuz"
refused "$(dir_img "$T")" unsigned '.*vmlinuz: refusing to boot \(shim: Security Policy Violation\): not pinned, and shim.s SHIM_LOCK Verify refused its signature'
cp "$signed" "$T/EFI/BOOT/vmlinuz"
printf '\x01' | dd of="$T/EFI/BOOT/vmlinuz" bs=1 seek=4096 conv=notrunc status=none
cmp -s "$signed" "$T/EFI/BOOT/vmlinuz" && fail "the byte did not change"
refused "$(dir_img "$T")" altered '.*vmlinuz: refusing to boot \(shim: Security Policy Violation\): not pinned, and shim.s SHIM_LOCK Verify refused its signature'

# no shim: the loader itself at the fallback path, the same policy
cp "$signed" "$T/EFI/BOOT/vmlinuz"
mv "$T/EFI/BOOT/grubx64.efi" "$T/EFI/BOOT/BOOTX64.EFI"
refused "$(dir_img "$T")" direct '.*vmlinuz: refusing to boot: not pinned, and shim is absent'
rm "$T/EFI/BOOT/kaslr.conf"
boot_payload "$(dir_img "$T")" --secureboot --timeout 120
expect_pass
[ "$(kv "$LINE" cmdline)" = "console=ttyS0 trust=shim" ] || fail "cmdline='$(kv "$LINE" cmdline)'"
ok "$summary pinned-direct=PASS"
