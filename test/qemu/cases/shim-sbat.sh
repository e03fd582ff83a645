# shim-sbat - Secure Boot through shim: Debian's shim (snakeoil-signed, in
# place of the Microsoft-signed one) as \EFI\BOOT\BOOTX64.EFI from
# `make install SHIM=...`, the signed loader beside it as grubx64.efi:
#   1. shim starts the loader, which boots its pinned test kernel with the
#      policy's command line (payload PASS);
#   2. the same signed loader with its .sbat section removed (and signed
#      again) is refused by shim before it runs: no loader line, no payload.
# placement: random - what shim checks does not depend on where the kernel lands
sb_shim
want="console=ttyS0 via=shim"
T=$WORK/$NAME.esp
# place's options, which the policy allows
place
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want" SHIM="$SHIM_EFI" ALLOW="$PLACE_ALLOW"
printf '%s\n' "${PLACE[@]}" >"$T/EFI/BOOT/kaslr.conf"
cmp -s "$T/EFI/BOOT/BOOTX64.EFI" "$SHIM_EFI" || fail "BOOTX64.EFI is not shim"
cmp -s "$T/EFI/BOOT/mmx64.efi" "$WORK/shim/mmx64.efi" || fail "no mmx64.efi beside shim"
"$B/tools/kaslr-policy" show "$T/EFI/BOOT/grubx64.efi" >/dev/null 2>&1 || fail "grubx64.efi is not kaslr-loader"
boot_payload "$(dir_img "$T")" --secureboot --timeout 150
expect_pass
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)', want the policy's '$want'"
clean_log "$LOG" | grep -q '^kaslr-loader: loading ' || fail "no loader line: shim did not start the loader"

sb_resign "$T/EFI/BOOT/grubx64.efi" "$WORK/$NAME.nosbat.efi" --remove-section .sbat
objdump -h "$WORK/$NAME.nosbat.efi" | grep -q ' \.sbat ' && fail ".sbat still there"
sbverify --cert "$SB_CERT" "$WORK/$NAME.nosbat.efi" >/dev/null 2>&1 || fail "the loader without .sbat is not validly signed"
cp "$WORK/$NAME.nosbat.efi" "$T/EFI/BOOT/grubx64.efi"
boot_payload "$(dir_img "$T")" --secureboot --timeout 120 --until 'Verification failed|kaslr-loader: |payload: '
no_payload
clean_log "$LOG" | grep -q '^kaslr-loader: ' && fail "shim started the loader without .sbat"
clean_log "$LOG" | grep -q 'Verification failed: (0x1A) Security Violation' || fail "no refusal from shim"
ok "with .sbat: PASS cmdline='$want'; without: shim says Verification failed (0x1A)"
