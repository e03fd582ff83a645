# uki-boot - a unified kernel image named as the kernel in kaslr.conf
# (`kernel \EFI\Linux\uki.efi`): Debian's cloud kernel, the suite's busybox
# initramfs, a .cmdline, .osrel, .pcrsig and .pcrpkey, built with Debian
# 12's linuxx64.efi.stub (test/linux/uki.sh), booted with a TPM (swtpm) at
# the run's placement (make test: random and both edges) and with a command
# line in kaslr.conf, which the stub would take with Secure Boot off:
#   the kernel runs where the loader put it ("Kernel code", _text), from
#   its .initrd (/data/check.bin) with the line passed in; PCR 11 read
#   inside Linux is what systemd-measure calculate predicts for the
#   sections; PCR 12 holds the line's one record as the stub makes it
#   (UTF-16 with its NUL: uki-sdboot shows the stub's own); the
#   StubPcrKernelImage and StubPcrKernelParameters variables read "11" and
#   "12" as the stub sets them; .pcrsig and .pcrpkey are /.extra's files.
# placement: edges
. test/linux/user.sh
. test/linux/uki.sh
uki_build
line='console=ttyS0 panic=-1 quiet kl.marker=override'
place
cf=$(conf 'kernel \EFI\Linux\uki.efi' verbose "${PLACE[@]}" "cmdline $line")
uki_boot "$(mkesp "$NAME" - EFI/BOOT/kaslr.conf="$cf" EFI/Linux/uki.efi="$UKI")" --tpm "$WORK/$NAME.tpm"
user_check_common
[ "$U_CMDLINE" = "$line" ] || fail "/proc/cmdline is '$U_CMDLINE', want the one passed in: '$line'"
[ "$(U_PCR 11)" = "$UKI_PCR11" ] || fail "PCR 11 is $(U_PCR 11), systemd-measure predicts $UKI_PCR11"
d=$({ printf '%s' "$line" | iconv -f ASCII -t UTF-16LE; printf '\0\0'; } | sha256sum | cut -d' ' -f1)
want12=$({ head -c 32 /dev/zero; printf '%s' "$d" | xxd -r -p; } | sha256sum | cut -d' ' -f1)
[ "$(U_PCR 12)" = "$want12" ] || fail "PCR 12 is $(U_PCR 12), want $want12 (the line in UTF-16 with its NUL)"
[ "$(uki_stub StubPcrKernelImage)" = "$(uki_var_hex 11)" ] ||
	fail "StubPcrKernelImage is '$(uki_stub StubPcrKernelImage)', want $(uki_var_hex 11)"
[ "$(uki_stub StubPcrKernelParameters)" = "$(uki_var_hex 12)" ] ||
	fail "StubPcrKernelParameters is '$(uki_stub StubPcrKernelParameters)', want $(uki_var_hex 12)"
uki_files_ok
ok "pcr11=${UKI_PCR11:0:16}... as predicted, at $TEST_PLACEMENT base $L_PHYS, the line passed in measured into PCR 12"
