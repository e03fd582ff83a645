# linux-fixed - a bzImage that is not relocatable (test/kconfig/derive.sh:
# Debian's cloud kernel with relocatable_kernel 0, as RELOCATABLE off
# leaves it) runs only at its pref_address, 16 MiB, where OVMF keeps boot
# services' memory until ExitBootServices (its Secure Boot build, with SMM,
# keeps ACPI NVS there for good):
#   1. under Secure Boot, signed with a policy that does not allow nokaslr:
#      refused by the policy, one error line, the kernel never starts;
#   2. the same with ALLOW=nokaslr: the policy admits it (the loader's one
#      warning, no policy refusal); the kernel then starts, or, on the SMM
#      build whose ACPI NVS covers 16 MiB, one line says that memory is not
#      RAM;
#   3. without Secure Boot: the running kernel reports "Kernel code" at
#      16 MiB and _text at its link address, and the loader said why there
#      is no KASLR in exactly one warning line;
#   4. memmap= keeping that memory out: one error line naming the address,
#      the kernel never starts.
# (make test's tier 7 sweeps the same kernel at every edge; make
# test-kconfig boots one built without RELOCATABLE.)
# placement: no edge - a kernel that is not relocatable loads at its own address whatever the placement asks (tier 7 sweeps it at every edge)
. test/linux/user.sh
D=$(test/kconfig/derive.sh) || fail "test/kconfig/derive.sh failed"
bz=$D/fixed.bzImage
U_DIR=$(test/linux/initramfs.sh cloud) || fail "no initramfs for the cloud kernel"
cmd='console=ttyS0 panic=-1 quiet'
pref=$(od -An -t u8 -j $((0x258)) -N 8 "$bz" | tr -d ' ')
[ "$pref" = $((16 << 20)) ] || fail "pref_address $pref, want 16 MiB"
T=$WORK/$NAME.esp

# quick_boot N IMAGE [boot.sh option...]: until the firmware reports the
# loader's return or the kernel's banner; sets LOG and c (the clean log of
# that first attempt)
quick_boot() {
	LOG=$WORK/$NAME.q$1.log
	test/qemu/boot.sh --log "$LOG" --mem 1G --timeout 120 \
		--until 'BdsDxe: failed to start|Linux version' "${@:3}" "$2"
	c=$(first_attempt "$LOG")
}
errors() { printf '%s\n' "$c" | grep -c 'kaslr-loader: error: '; }
warnings() { printf '%s\n' "$c" | grep -c "kaslr-loader: warning: .* is not relocatable: it loads at its own address, no KASLR"; }

# 1. Secure Boot, nokaslr not allowed
sb_install "$T" KERNEL="$bz" INITRD="$U_DIR/initrd.img" CMDLINE="$cmd" ALLOW=verbose
quick_boot 1 "$(dir_img "$T")" --secureboot
printf '%s\n' "$c" | grep -qa 'Linux version' && fail "1: the kernel started under Secure Boot"
[ "$(errors)" = 1 ] || fail "1: $(errors) error lines, want one"
printf '%s\n' "$c" | grep -q 'kaslr-loader: error: .*fixed.bzImage is not relocatable: Secure Boot is on and the policy does not allow nokaslr' ||
	fail "1: not the policy's refusal: $(printf '%s\n' "$c" | grep 'kaslr-loader: error')"

# 2. Secure Boot, ALLOW=nokaslr: admitted
sb_install "$T" KERNEL="$bz" INITRD="$U_DIR/initrd.img" CMDLINE="$cmd" ALLOW=nokaslr
quick_boot 2 "$(dir_img "$T")" --secureboot
printf '%s\n' "$c" | grep -q 'policy does not allow nokaslr' && fail "2: refused by the policy that allows nokaslr"
[ "$(warnings)" = 1 ] || fail "2: $(warnings) warnings saying why there is no KASLR, want one"
if printf '%s\n' "$c" | grep -qa 'Linux version'; then
	sb2="the kernel started"
else
	[ "$(errors)" = 1 ] || fail "2: $(errors) error lines and no kernel"
	printf '%s\n' "$c" | grep -q 'kaslr-loader: error: this kernel is not relocatable: its address 0x1000000: not a usable slot: not all RAM' ||
		fail "2: not started, and not for want of RAM: $(printf '%s\n' "$c" | grep 'kaslr-loader: error')"
	sb2="that firmware's ACPI NVS at 16 MiB refused"
fi

# 3. without Secure Boot: at its own address
cf=$(conf 'kernel vmlinuz' 'initrd initrd.img' verbose "cmdline $cmd")
U_ESP=$(mkesp "$NAME" - EFI/BOOT/vmlinuz="$bz" EFI/BOOT/initrd.img="$U_DIR/initrd.img" \
	EFI/BOOT/kaslr.conf="$cf")
user_boot_again
[ $((U_CODE)) -eq $((16 << 20)) ] || fail "3: Kernel code at $U_CODE, want its pref_address 0x1000000"
[ $((U_TEXT)) -eq $((LINUX_LINK)) ] || fail "3: _text at $U_TEXT, want its link address $LINUX_LINK"
[ "$U_SHA" = "$(cat "$U_DIR/data.sha256")" ] || fail "3: the initramfs's data hashes to $U_SHA"
c=$(clean_log "$LOG")
[ "$(warnings)" = 1 ] || fail "3: $(warnings) warnings saying why there is no KASLR, want one"
printf '%s\n' "$c" | grep -q 'placement: phys 0x1000000 slot 0 of 1 (fixed: not relocatable), .* offset 0x0 slot 0 of 1 (fixed: not relocatable)' ||
	fail "3: the placement line does not say fixed"

# 4. its memory kept out by memmap=: refused
cf=$(conf 'kernel vmlinuz' 'initrd initrd.img' "cmdline $cmd memmap=4M\$20M")
quick_boot 4 "$(mkesp "$NAME" - EFI/BOOT/vmlinuz="$bz" EFI/BOOT/initrd.img="$U_DIR/initrd.img" \
	EFI/BOOT/kaslr.conf="$cf")"
printf '%s\n' "$c" | grep -qa 'Linux version' && fail "4: the kernel started"
[ "$(errors)" = 1 ] || fail "4: $(errors) error lines, want one"
printf '%s\n' "$c" | grep -q 'kaslr-loader: error: this kernel is not relocatable: its address 0x1000000: not a usable slot: touches a range kept out' ||
	fail "4: not the refusal: $(printf '%s\n' "$c" | grep 'kaslr-loader: error')"
ok "Secure Boot: refused, admitted with ALLOW=nokaslr ($sb2); at 0x1000000 without; refused where memmap= keeps it out"
