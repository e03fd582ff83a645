# shim-fallback - a TRUST=shim install whose kaslr.conf names a list of
# kernels: first Debian's kernel signed with a key of our own that shim
# does not trust (the -unsigned package's bzImage, sbsign'ed with a
# throwaway self-signed certificate), with an initrd of its own, then
# Debian's signed kernel with the busybox initramfs.  Through shim, under
# Secure Boot with a TPM, shim's Verify refuses the first and the loader
# goes on to the second; from inside the running system: userspace started
# from the second kernel's initrd (its data file hashes right, so neither
# the first kernel's initrd nor both were loaded), /proc/cmdline is the
# policy's; PCR 9 holds the refused kernel, the record saying shim refused
# it, then the kernel that booted and its initrd.  The loader said so in
# one warning line, and no error line.
. test/linux/user.sh
sb_shim
signed=$(test/linux/fetch.sh signed) || fail "no Debian signed kernel: test/linux/fetch.sh signed failed"
unsigned=$B/linux/vmlinuz
[ -f "$unsigned" ] || test/linux/fetch.sh generic >/dev/null || fail "no Debian unsigned kernel"
U_DIR=$(test/linux/initramfs.sh generic) || fail "no initramfs"
want='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=fallback'
T=$WORK/$NAME.esp
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want" SHIM="$SHIM_EFI" TRUST=shim
# a key of our own: a valid signature shim has no reason to trust
own=$WORK/$NAME.own
openssl req -new -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=kaslr-loader test: not trusted/" \
	-keyout "$own.key" -out "$own.crt" >/dev/null 2>&1 || fail "openssl req"
sbsign --key "$own.key" --cert "$own.crt" --output "$T/EFI/BOOT/vmlinuz-own" "$unsigned" \
	>/dev/null 2>&1 || fail "sbsign the unsigned kernel"
sbverify --cert "$own.crt" "$T/EFI/BOOT/vmlinuz-own" >/dev/null 2>&1 || fail "vmlinuz-own not validly signed"
cp "$signed" "$T/EFI/BOOT/vmlinuz-signed" || fail "copying the kernel"
cp "$U_DIR/initrd.img" "$T/EFI/BOOT/initrd.img" || fail "copying the initrd"
head -c 4096 /dev/urandom >"$T/EFI/BOOT/initrd-own.img" || fail "the first kernel's initrd"
printf '%s\n' 'kernel vmlinuz-own' 'initrd initrd-own.img' 'kernel vmlinuz-signed' 'initrd initrd.img' \
	>"$T/EFI/BOOT/kaslr.conf"
tpm=$WORK/$NAME.tpm
rm -rf "$tpm"
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --timeout 300 --secureboot --tpm "$tpm" --mem 1G \
	--until 'linux-init: REPORT|Kernel Offset|end Kernel panic|kaslr-loader: error' "$(dir_img "$T")"
RC=$?
c=$(clean_log "$LOG")
line=$(printf '%s\n' "$c" | grep -a '^linux-init: REPORT' | tail -n 1)
[ -n "$line" ] || fail "no report from the kernel's userspace (boot.sh status $RC)"
[ "$(kv "$line" cmdline)" = "$want" ] || fail "/proc/cmdline is '$(kv "$line" cmdline)', want the policy's '$want'"
[ "$(kv "$line" sha)" = "$(cat "$U_DIR/data.sha256")" ] ||
	fail "the initrd's data file hashes to $(kv "$line" sha): not the second kernel's initrd alone"
h() { sha256sum | cut -d' ' -f1; }
# extend HEX...: PCR 9 from zero, extended with each digest in turn
extend() {
	local p d
	p=$(printf '%064d' 0)
	for d in "$@"; do p=$({ printf '%s' "$p" | xxd -r -p; printf '%s' "$d" | xxd -r -p; } | h); done
	echo "$p"
}
k1=$(h <"$T/EFI/BOOT/vmlinuz-own") k2=$(h <"$T/EFI/BOOT/vmlinuz-signed") i=$(h <"$T/EFI/BOOT/initrd.img")
r=$(printf 'refused by shim: %s' '\EFI\BOOT\vmlinuz-own' | h)
want9=$(extend "$k1" "$r" "$k2" "$i")
got=$(test/qemu/tpm-pcrs.sh "$tpm" 9 | sed -n 's/^9 //p')
[ "$got" = "$want9" ] || fail "PCR 9 = $got, want refused kernel, refusal record, kernel, initrd: $want9"
[ "$got" != "$(extend "$k2" "$i")" ] || fail "PCR 9 as if the second kernel had been named alone"
# the loader's own lines: one warning for the refused kernel, no error
[ "$(printf '%s\n' "$c" | grep -c '^kaslr-loader: warning: ')" = 1 ] || fail "not exactly one warning line"
printf '%s\n' "$c" | grep -q '^kaslr-loader: warning: .*vmlinuz-own: not booted (shim: Security Policy Violation).* trying the next kernel, .*vmlinuz-signed$' ||
	fail "no warning line for the refused kernel"
printf '%s\n' "$c" | grep -q '^kaslr-loader: error' && fail "an error line"
printf '%s\n' "$c" | grep -q "^kaslr-loader: loading .*vmlinuz-signed (Linux kernel)" || fail "not the signed kernel"
ok "shim refused vmlinuz-own, vmlinuz-signed booted to userspace with its initrd, pcr9=$got"
