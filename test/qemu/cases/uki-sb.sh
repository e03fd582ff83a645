# uki-sb - Secure Boot (Debian's OVMF, snakeoil keys enrolled) and a
# unified kernel image (test/linux/uki.sh) signed with the snakeoil key
# (sbsign).  The signed loader's policy names \EFI\Linux\uki.efi with the
# pin of the unsigned build, so no pin admits the signed file: its own
# signature must (the firmware's LoadImage, db and dbx), as through its
# stub.  kaslr.conf passes a command line, which the policy allows:
#   1. the signed UKI boots, with a TPM: the kernel runs where the loader
#      put it, knows Secure Boot is on, and has the .cmdline, not the line
#      passed in (the stub ignores one under Secure Boot when the image
#      has a .cmdline), which is measured nowhere (PCR 12 empty); PCR 11 is
#      systemd-measure's prediction (signing changed no section);
#   2. one byte changed in .linux, .initrd, .cmdline or .osrel of a signed
#      UKI (a small one: the refusal comes before any section is used, and
#      a small file boots faster): the loader refuses it with one error
#      line and returns an EFI error (the firmware reports "Security
#      Violation"), and no kernel starts.
# not quiet: the kernel's own word on Secure Boot is an info line
# placement: no edge - its subject is Secure Boot's verdict on the image's signature and command line, under a policy that allows no placement option (uki-boot boots the image at both edges)
UKI_CMDLINE='console=ttyS0 panic=-1 kl.marker=uki'
. test/linux/user.sh
. test/linux/uki.sh
uki_build
sb_key
signed=$WORK/$NAME.signed.efi
sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$signed" "$UKI" >/dev/null 2>&1 || fail "sbsign the UKI"
"$B/tools/kaslr-policy" write --loader "$LOADER" --out "$WORK/$NAME.loader.efi" \
	--kernel "EFI/Linux/uki.efi=$UKI" --allow cmdline --allow verbose >/dev/null ||
	fail "kaslr-policy write"
sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$WORK/$NAME.loader.signed.efi" \
	"$WORK/$NAME.loader.efi" >/dev/null 2>&1 || fail "sbsign the loader"
line='console=ttyS0 panic=-1 quiet kl.marker=override'
cf=$(conf verbose "cmdline $line")
esp() { # esp UKI: the signed loader, kaslr.conf and that UKI
	test/qemu/mkesp.sh "$WORK/$NAME.img" "$WORK/$NAME.loader.signed.efi" - \
		EFI/BOOT/kaslr.conf="$cf" EFI/Linux/uki.efi="$1" || fail "mkesp failed"
	echo "$WORK/$NAME.img"
}

uki_boot "$(esp "$signed")" --secureboot --tpm "$WORK/$NAME.tpm"
user_check_common
[ "$U_CMDLINE" = "$UKI_CMDLINE" ] || fail "boot 1: /proc/cmdline is '$U_CMDLINE', want the .cmdline '$UKI_CMDLINE'"
c=$(clean_log "$LOG")
printf '%s\n' "$c" | grep -q 'secureboot: Secure boot enabled' || fail "boot 1: Linux does not see Secure Boot"
printf '%s\n' "$c" | grep -q '^kaslr-loader: \\EFI\\Linux\\uki.efi: signature verified by the firmware' ||
	fail "boot 1: the loader did not say the firmware admitted the signature"
printf '%s\n' "$c" | grep -q '^kaslr-loader: warning: \\EFI\\Linux\\uki.efi: command line ignored: Secure Boot is on and the UKI has a .cmdline' ||
	fail "boot 1: no warning that the line passed in is ignored"
[ "$(U_PCR 11)" = "$UKI_PCR11" ] || fail "boot 1: PCR 11 is $(U_PCR 11), systemd-measure predicts $UKI_PCR11"
[ "$(U_PCR 12)" = 0000000000000000000000000000000000000000000000000000000000000000 ] ||
	fail "boot 1: PCR 12 is $(U_PCR 12): the ignored line was measured"
[ -z "$(uki_stub StubPcrKernelParameters)" ] || fail "boot 1: StubPcrKernelParameters set for an ignored line"
base=$L_PHYS

small=$WORK/$NAME.small
mkdir -p "$small.src"
head -c 65536 /dev/urandom >"$small.src/linux"
head -c 16384 /dev/urandom >"$small.src/initrd"
test/linux/mkuki.sh "$small.efi" --linux "$small.src/linux" --initrd "$small.src/initrd" \
	--cmdline "$UKI_CMDLINE" --osrel "$WORK/$NAME.uki.src/os-release" || fail "mkuki.sh (small)"
sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$small.signed.efi" "$small.efi" >/dev/null 2>&1 ||
	fail "sbsign the small UKI"
summary=''
for s in .linux .initrd .cmdline .osrel; do
	bad=$WORK/$NAME.bad.efi
	cp "$small.signed.efi" "$bad"
	# the byte in the middle of the section's raw data, complemented
	read -r off size < <(objdump -h "$bad" | awk -v s="$s" '$2 == s {print $6, $3}')
	[ -n "$off" ] || fail "no $s section in the signed UKI"
	at=$((0x$off + 0x$size / 2))
	b=$(xxd -s "$at" -l 1 -p "$bad")
	printf '%02x' $((0x$b ^ 0xff)) | xxd -r -p | dd of="$bad" bs=1 seek="$at" conv=notrunc status=none
	LOG=$WORK/$NAME.$s.log
	test/qemu/boot.sh --log "$LOG" --secureboot --timeout 120 --mem 1G \
		--until 'BdsDxe: failed to start|Linux version' "$(esp "$bad")"
	c=$(first_attempt "$LOG")
	printf '%s\n' "$c" | grep -qa 'Linux version' && fail "$s changed: the kernel started"
	errs=$(printf '%s\n' "$c" | grep -c '^kaslr-loader: error: ')
	[ "$errs" = 1 ] || fail "$s changed: $errs error lines, want one"
	printf '%s\n' "$c" | grep -q '^kaslr-loader: error: \\EFI\\Linux\\uki.efi: refusing to boot (LoadImage: [A-Za-z ]*): no pin admits it, and the firmware refused its signature' ||
		fail "$s changed: not refused for its signature: $(printf '%s\n' "$c" | grep '^kaslr-loader: error: ')"
	printf '%s\n' "$c" | grep -q 'BdsDxe: failed to start .*: Security Violation' ||
		fail "$s changed: the loader did not return EFI_SECURITY_VIOLATION"
	summary="$summary $s"
done
ok "signed UKI booted at $base with its .cmdline; one byte changed refused in:$summary"
