# shim-fallback - a TRUST=shim install whose kaslr.conf names a list of
# kernels: first a small unified kernel image signed with a key of our own
# that shim does not trust (a throwaway self-signed certificate), then
# Debian's kernel signed with that key (the -unsigned package's bzImage,
# sbsign'ed) with an initrd of its own, then Debian's signed kernel with
# the busybox initramfs.  Through shim, under Secure Boot with a TPM,
# shim's Verify refuses the UKI (the whole file, as its stub's shim would)
# and the first bzImage, and the loader goes on to the third; from inside
# the running system: userspace started from the third kernel's initrd
# (its data file hashes right, so no other kernel's initrd was loaded),
# /proc/cmdline is the policy's; PCR 9 holds each refused kernel followed
# by the record saying shim refused it, then the kernel that booted and
# its initrd; PCR 12 holds the command line once.  The loader said so in
# one warning line per refused kernel, and no error line.
# placement: random - what shim refuses and the order of the list do not depend on where the kernel lands (linux-sb boots this kernel at the edges)
. test/linux/user.sh
sb_shim
signed=$(test/linux/fetch.sh signed) || fail "no Debian signed kernel: test/linux/fetch.sh signed failed"
unsigned=$B/linux/vmlinuz
[ -f "$unsigned" ] || test/linux/fetch.sh generic >/dev/null || fail "no Debian unsigned kernel"
U_DIR=$(test/linux/initramfs.sh generic) || fail "no initramfs"
want='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=fallback'
T=$WORK/$NAME.esp
place
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want" SHIM="$SHIM_EFI" TRUST=shim ALLOW="$PLACE_ALLOW"
# a key of our own: a valid signature shim has no reason to trust
own=$WORK/$NAME.own
openssl req -new -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=kaslr-loader test: not trusted/" \
	-keyout "$own.key" -out "$own.crt" >/dev/null 2>&1 || fail "openssl req"
sbsign --key "$own.key" --cert "$own.crt" --output "$T/EFI/BOOT/vmlinuz-own" "$unsigned" \
	>/dev/null 2>&1 || fail "sbsign the unsigned kernel"
sbverify --cert "$own.crt" "$T/EFI/BOOT/vmlinuz-own" >/dev/null 2>&1 || fail "vmlinuz-own not validly signed"
# the UKI: the stub with 64 KiB of random .linux (shim refuses it before
# anything parses it)
s=$WORK/$NAME.uki
rm -rf "$s"; mkdir -p "$s"
head -c 65536 /dev/urandom >"$s/linux"
printf 'PRETTY_NAME="not trusted"\n' >"$s/os-release"
test/linux/mkuki.sh "$s/uki.efi" --linux "$s/linux" --osrel "$s/os-release" --cmdline "$want" ||
	fail "mkuki.sh"
sbsign --key "$own.key" --cert "$own.crt" --output "$T/EFI/BOOT/uki-own.efi" "$s/uki.efi" \
	>/dev/null 2>&1 || fail "sbsign the UKI"
cp "$signed" "$T/EFI/BOOT/vmlinuz-signed" || fail "copying the kernel"
cp "$U_DIR/initrd.img" "$T/EFI/BOOT/initrd.img" || fail "copying the initrd"
head -c 4096 /dev/urandom >"$T/EFI/BOOT/initrd-own.img" || fail "the first kernel's initrd"
printf '%s\n' 'kernel uki-own.efi' 'kernel vmlinuz-own' 'initrd initrd-own.img' 'kernel vmlinuz-signed' \
	'initrd initrd.img' "${PLACE[@]}" >"$T/EFI/BOOT/kaslr.conf"
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
u=$(h <"$T/EFI/BOOT/uki-own.efi") k1=$(h <"$T/EFI/BOOT/vmlinuz-own")
k2=$(h <"$T/EFI/BOOT/vmlinuz-signed") i=$(h <"$T/EFI/BOOT/initrd.img")
ru=$(printf 'refused by shim: %s' '\EFI\BOOT\uki-own.efi' | h)
r=$(printf 'refused by shim: %s' '\EFI\BOOT\vmlinuz-own' | h)
want9=$(extend "$u" "$ru" "$k1" "$r" "$k2" "$i")
pcrs=$(test/qemu/tpm-pcrs.sh "$tpm" 9 12) || fail "reading the PCRs failed"
got=$(printf '%s\n' "$pcrs" | sed -n 's/^9 //p')
[ "$got" = "$want9" ] ||
	fail "PCR 9 = $got, want for each refused kernel its record and the refusal's, then kernel, initrd: $want9"
[ "$got" != "$(extend "$k2" "$i")" ] || fail "PCR 9 as if the last kernel had been named alone"
want12=$(extend "$(printf '%s' "$want" | iconv -f ASCII -t UTF-16LE | h)")
got12=$(printf '%s\n' "$pcrs" | sed -n 's/^12 //p')
[ "$got12" = "$want12" ] || fail "PCR 12 = $got12, want the command line measured once: $want12"
# the loader's own lines: besides place's, one warning per refused kernel, no error
place_warnings
[ "$(printf '%s\n' "$OTHER_WARNINGS" | grep -c .)" = 2 ] ||
	fail "not exactly two more warning lines: $OTHER_WARNINGS"
printf '%s\n' "$OTHER_WARNINGS" | grep -q '^kaslr-loader: warning: .*uki-own.efi: not booted (shim: Security Policy Violation).* trying the next kernel, .*vmlinuz-own$' ||
	fail "no warning line for the refused UKI"
printf '%s\n' "$OTHER_WARNINGS" | grep -q '^kaslr-loader: warning: .*vmlinuz-own: not booted (shim: Security Policy Violation).* trying the next kernel, .*vmlinuz-signed$' ||
	fail "no warning line for the refused kernel"
printf '%s\n' "$c" | grep -q '^kaslr-loader: error' && fail "an error line"
printf '%s\n' "$c" | grep -q "^kaslr-loader: loading .*vmlinuz-signed (Linux kernel)" || fail "not the signed kernel"
ok "shim refused uki-own.efi and vmlinuz-own, vmlinuz-signed booted to userspace with its initrd, pcr9=$got"
