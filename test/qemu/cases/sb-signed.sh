# sb-signed - Secure Boot in force (Debian's OVMF, snakeoil keys enrolled):
# a snakeoil-signed `make install` boots the test kernel from the fallback
# path \EFI\BOOT\BOOTX64.EFI, with the command line from the signed policy;
# no TPM attached, so nothing is measured and nothing fails (tpmlog=0)
want="console=ttyS0 signed.policy=1"
sb_install "$WORK/$NAME.esp" KERNEL="$P/kernel-high.elf.gz" CMDLINE="$want"
boot_payload "$(dir_img "$WORK/$NAME.esp")" --secureboot --timeout 120
expect_pass
[ "$(kv "$LINE" variant)" = high ] || fail "variant=$(kv "$LINE" variant), want high"
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)', want the policy's '$want'"
[ "$(kv "$LINE" tpmlog)" = 0 ] || fail "tpmlog=$(kv "$LINE" tpmlog) without a TPM"
clean_log "$LOG" | grep -q 'kaslr-loader: warning' && fail "warnings on a clean signed boot"
ok "cmdline='$want' phys=$(kv "$LINE" phys)"
