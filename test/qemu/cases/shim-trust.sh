# shim-trust - a TRUST=shim install through shim boots a kernel the
# distribution signed that no pin names: `make install SHIM=... TRUST=shim`
# pins only the test kernel; Debian's signed vmlinuz (test/linux/fetch.sh
# signed) and the busybox initramfs are then copied beside the loader and
# named in kaslr.conf alone, which also tries another command line.  Under
# Secure Boot with a TPM, shim's Verify admits the kernel, the initrd
# needs no pin, and from inside the running system: userspace started
# from that initrd (its data file hashes right), /proc/cmdline is the
# policy's (kaslr.conf's line ignored); PCR 9
# holds exactly the kernel file then the initrd.
# placement: random - linux-rootfs and linux-sb boot this kernel at the edges; what shim verifies does not depend on where it lands
. test/linux/user.sh
sb_shim
signed=$(test/linux/fetch.sh signed) || fail "no Debian signed kernel: test/linux/fetch.sh signed failed"
U_DIR=$(test/linux/initramfs.sh generic) || fail "no initramfs"
# no_timer_check: under TCG on a loaded host Linux's IO-APIC timer probe can
# miss its ticks and panic ("IO-APIC + timer doesn't work!")
want='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=shim'
T=$WORK/$NAME.esp
place
sb_install "$T" TEST_KERNEL=1 CMDLINE="$want" SHIM="$SHIM_EFI" TRUST=shim ALLOW="$PLACE_ALLOW"
"$B/tools/kaslr-policy" show "$T/EFI/BOOT/grubx64.efi" | grep -q '^trust *pins or shim' ||
	fail "the policy does not trust shim"
cp "$signed" "$T/EFI/BOOT/vmlinuz-signed" || fail "copying the kernel"
cp "$U_DIR/initrd.img" "$T/EFI/BOOT/initrd.img" || fail "copying the initrd"
# and place's options, which the policy allows
printf '%s\n' 'kernel vmlinuz-signed' 'initrd initrd.img' 'cmdline console=ttyS0 init=/bin/sh' "${PLACE[@]}" \
	>"$T/EFI/BOOT/kaslr.conf"
tpm=$WORK/$NAME.tpm
rm -rf "$tpm"
LOG=$WORK/$NAME.log
test/qemu/boot.sh --log "$LOG" --timeout 300 --secureboot --tpm "$tpm" --mem 1G \
	--until 'linux-init: REPORT|Kernel Offset|end Kernel panic|kaslr-loader: error' "$(dir_img "$T")"
RC=$?
placed
c=$(clean_log "$LOG")
line=$(printf '%s\n' "$c" | grep -a '^linux-init: REPORT' | tail -n 1)
[ -n "$line" ] || fail "no report from the kernel's userspace (boot.sh status $RC)"
[ "$(kv "$line" cmdline)" = "$want" ] || fail "/proc/cmdline is '$(kv "$line" cmdline)', want the policy's '$want'"
[ "$(kv "$line" sha)" = "$(cat "$U_DIR/data.sha256")" ] || fail "the initrd's data file hashes to $(kv "$line" sha)"
printf '%s\n' "$c" | grep -q "^kaslr-loader: loading .*vmlinuz-signed (Linux kernel)" || fail "not the signed kernel"
printf '%s\n' "$c" | grep -q "^kaslr-loader: warning: .*kaslr.conf: 'cmdline' ignored" ||
	fail "no warning for kaslr.conf's cmdline"
h() { sha256sum | cut -d' ' -f1; }
k=$(h <"$T/EFI/BOOT/vmlinuz-signed") i=$(h <"$T/EFI/BOOT/initrd.img")
want9=$({ head -c 32 /dev/zero; printf '%s' "$k" | xxd -r -p; } | h)
want9=$({ printf '%s' "$want9" | xxd -r -p; printf '%s' "$i" | xxd -r -p; } | h)
got=$(test/qemu/tpm-pcrs.sh "$tpm" 9 | sed -n 's/^9 //p')
[ "$got" = "$want9" ] || fail "PCR 9 = $got, want kernel then initrd: $want9"
ok "userspace via shim's Verify, cmdline pinned, pcr9=$got"
