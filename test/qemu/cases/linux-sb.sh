# linux-sb - the stock Debian kernel (test/linux/fetch.sh's vmlinux.gz) from a
# snakeoil-signed make install, under Secure Boot with a TPM: the kernel
# boots with the policy's command line, placement and e820 check out as in
# the other Linux cases (test/linux/lib.sh), and PCR 9 holds the measurement
# of exactly the 11 MB file the policy pins.  The kernel learns the Secure
# Boot state from boot_params (as from its own EFI stub) and locks itself
# down, and finds the TPM event log through the table the loader installed.
# placement: edges
. test/linux/lib.sh
gz=$(test/linux/fetch.sh) || fail "no Debian kernel: test/linux/fetch.sh failed (message above)"
TEXT_LINK=$(sed -n 's/^text_link=//p' "$gz.facts") BRK_LINK=$(sed -n 's/^brk_link=//p' "$gz.facts")
T=$WORK/$NAME.esp
sb_install "$T" KERNEL="$gz" CMDLINE="$LINUX_CMDLINE" ALLOW="verbose $PLACE_ALLOW"
# verbose, which the policy allows, for the checks' loader lines, and
# place's options, which it allows too
place
printf '%s\n' verbose "${PLACE[@]}" >"$T/EFI/BOOT/kaslr.conf"
LINUX_ESP=$(dir_img "$T")
linux_boot --cpu max --secureboot --tpm "$WORK/$NAME.tpm"
c=$(clean_log "$LOG")
printf '%s\n' "$c" | grep -q "Kernel command line: $LINUX_CMDLINE\$" || fail "the kernel's command line is not the policy's"
printf '%s\n' "$c" | grep -q 'tpm_tis .* 2.0 TPM' || fail "Linux did not find the TPM"
printf '%s\n' "$c" | grep -q 'secureboot: Secure boot enabled' || fail "Linux does not see Secure Boot"
printf '%s\n' "$c" | grep -q 'Kernel is locked down from EFI Secure Boot' ||
	fail "Linux did not lock itself down"
printf '%s\n' "$c" | grep -q 'efi: .*TPMEventLog=' || fail "Linux found no TPM event log table"
k=$(sha256sum <"$T/EFI/BOOT/vmlinux.gz" | cut -d' ' -f1)
want=$({ head -c 32 /dev/zero; printf '%s' "$k" | xxd -r -p; } | sha256sum | cut -d' ' -f1)
got=$(test/qemu/tpm-pcrs.sh "$WORK/$NAME.tpm" 9 | sed -n 's/^9 //p')
[ "$got" = "$want" ] || fail "PCR 9 = $got, want $want"
ok "phys=$LX_PHYS offset=$LX_VOFF pcr9=$got"
