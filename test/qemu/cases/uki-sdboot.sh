# uki-sdboot - the same unified kernel image (test/linux/uki.sh) twice
# under systemd-boot (Debian's systemd-bootx64.efi as \EFI\BOOT\BOOTX64.EFI,
# a GPT disk), with a TPM:
#   1. as systemd-boot's own Type #2 entry (\EFI\Linux\uki.efi): its
#      systemd-stub boots it;
#   2. through a Type #1 entry that starts the loader with
#      `options kernel=\EFI\Linux\uki.efi`: the loader boots it at a
#      random place (uki-boot: the edges too), the kernel runs where the
#      loader put it, from the .initrd with the .cmdline, .osrel names it
#      on the loader's loading line, and as no command line was passed to
#      the loader, StubPcrKernelParameters stays unset.
# PCR 11 read inside Linux is the same in both and is what
# systemd-measure calculate predicts; StubPcrKernelImage reads the same,
# byte for byte; the kernel finds the same /.extra files from .pcrsig and
# .pcrpkey, and its .initrd.  Boot 1 also shows the stub's PCR 12 record
# for a line passed in, the one the loader makes (checked in uki-boot).
# placement: random - its subject is the stub's measurements and variables, which do not depend on where the kernel lands (uki-boot boots the image at both edges)
. test/linux/user.sh
. test/linux/uki.sh
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
[ -f "$SDBOOT" ] || fail "no $SDBOOT (make deps installs systemd-boot-efi)"
uki_build
disk() { # disk FILE... (mkesp.sh NAME=SRC): systemd-boot's ESP on a GPT disk
	local fat=$WORK/$NAME.fat
	test/qemu/mkesp.sh "$fat" "$SDBOOT" - EFI/Linux/uki.efi="$UKI" "$@" || fail "mkesp failed"
	test/qemu/mkgpt.sh "$WORK/$NAME.img" "$fat" 5a1e0b7c-3d2f-4e6a-9b8c-7d6e5f4a3b2c || fail "mkgpt failed"
	rm -f "$fat"
	echo "$WORK/$NAME.img"
}

printf 'timeout 0\n' >"$WORK/$NAME.loader.conf"
uki_boot "$(disk loader/loader.conf="$WORK/$NAME.loader.conf")" --tpm "$WORK/$NAME.tpm.1"
[ "$U_SHA" = "$(cat "$U_DIR/data.sha256")" ] || fail "boot 1 (stub): /data/check.bin hashes to '$U_SHA': not the .initrd's"
[ "$U_CMDLINE" = "$UKI_CMDLINE" ] || fail "boot 1 (stub): /proc/cmdline is '$U_CMDLINE', want '$UKI_CMDLINE'"
stub11=$(U_PCR 11) stub_var=$(uki_stub StubPcrKernelImage)
[ "$stub11" = "$UKI_PCR11" ] || fail "boot 1 (stub): PCR 11 is '$stub11', systemd-measure predicts $UKI_PCR11"
[ "$stub_var" = "$(uki_var_hex 11)" ] || fail "boot 1 (stub): StubPcrKernelImage is '$stub_var'"
uki_files_ok
# systemd-boot passes the .cmdline on as load options, and the stub (Secure
# Boot off) takes them: PCR 12 holds two records, each the line in UTF-16
# with its NUL - the record the loader makes for a line passed in (uki-boot)
d=$({ printf '%s' "$UKI_CMDLINE" | iconv -f ASCII -t UTF-16LE; printf '\0\0'; } | sha256sum | cut -d' ' -f1)
p=$({ head -c 32 /dev/zero; printf '%s' "$d" | xxd -r -p; } | sha256sum | cut -d' ' -f1)
p=$({ printf '%s%s' "$p" "$d" | xxd -r -p; } | sha256sum | cut -d' ' -f1)
[ "$(U_PCR 12)" = "$p" ] || fail "boot 1 (stub): PCR 12 is $(U_PCR 12), want $p (two records of the line)"
[ "$(uki_stub StubPcrKernelParameters)" = "$(uki_var_hex 12)" ] ||
	fail "boot 1 (stub): StubPcrKernelParameters is '$(uki_stub StubPcrKernelParameters)'"

printf 'default kaslr.conf\ntimeout 0\n' >"$WORK/$NAME.loader.conf"
place
printf '%s\n' 'title kaslr-loader with a UKI' 'efi /EFI/kaslr/kaslr-loader.efi' \
	"options kernel=\\EFI\\Linux\\uki.efi verbose $PLACE_OPTS" >"$WORK/$NAME.entry.conf"
USER_VIA=sdboot
uki_boot "$(disk loader/loader.conf="$WORK/$NAME.loader.conf" EFI/kaslr/kaslr-loader.efi="$LOADER" \
	loader/entries/kaslr.conf="$WORK/$NAME.entry.conf")" --tpm "$WORK/$NAME.tpm.2"
user_check_common
[ "$U_CMDLINE" = "$UKI_CMDLINE" ] || fail "boot 2 (loader): /proc/cmdline is '$U_CMDLINE', want '$UKI_CMDLINE'"
[ "$(U_PCR 11)" = "$stub11" ] || fail "boot 2 (loader): PCR 11 is $(U_PCR 11), its own stub made $stub11"
clean_log "$LOG" | grep -q '^kaslr-loader: loading \\EFI\\Linux\\uki.efi (Debian GNU/Linux 12 (bookworm), Linux kernel)' ||
	fail "boot 2 (loader): no loading line with .osrel's PRETTY_NAME"
[ -z "$(uki_stub StubPcrKernelParameters)" ] || fail "boot 2 (loader): StubPcrKernelParameters set with no line passed in"
[ "$(uki_stub StubPcrKernelImage)" = "$stub_var" ] ||
	fail "boot 2 (loader): StubPcrKernelImage is '$(uki_stub StubPcrKernelImage)', the stub set '$stub_var'"
uki_files_ok
ok "pcr11=${stub11:0:16}... through its stub and through the loader (base $L_PHYS)"
