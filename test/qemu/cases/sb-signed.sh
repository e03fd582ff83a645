# sb-signed - Secure Boot in force (Debian's OVMF, snakeoil keys enrolled):
# a snakeoil-signed `make install` boots the test kernel from the fallback
# path \EFI\BOOT\BOOTX64.EFI, with the command line from the signed policy;
# no TPM attached, so nothing is measured and nothing fails (tpmlog=0);
# no warning but those about place's options, which the policy allows
# placement: random - what Secure Boot checks does not depend on where the kernel lands
want="console=ttyS0 signed.policy=1"
place
sb_install "$WORK/$NAME.esp" KERNEL="$P/kernel-high.elf.gz" CMDLINE="$want" ALLOW="$PLACE_ALLOW"
printf '%s\n' "${PLACE[@]}" >"$WORK/$NAME.esp/EFI/BOOT/kaslr.conf"
boot_payload "$(dir_img "$WORK/$NAME.esp")" --secureboot --timeout 120
expect_pass
[ "$(kv "$LINE" variant)" = high ] || fail "variant=$(kv "$LINE" variant), want high"
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)', want the policy's '$want'"
[ "$(kv "$LINE" tpmlog)" = 0 ] || fail "tpmlog=$(kv "$LINE" tpmlog) without a TPM"
place_warnings
[ -z "$OTHER_WARNINGS" ] || fail "warnings on a clean signed boot: $OTHER_WARNINGS"
ok "cmdline='$want' phys=$(kv "$LINE" phys)"
