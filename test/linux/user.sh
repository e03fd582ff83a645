# shellcheck shell=bash
# user.sh - for the boot cases that take a stock Debian kernel to userspace
# (test/qemu/cases/linux-user-*.sh and friends; sourced after
# test/qemu/lib.sh).  The kernel file is the bzImage exactly as Debian
# ships it; the initramfs is test/linux/initramfs.sh's, whose /init reports
# what the running kernel says about itself (test/linux/init.sh).
#
# user_boot KIND "KERNEL CMDLINE" [kaslr.conf line...] [-- boot.sh option...]
#   boots once (USER_VIA=sdboot: through systemd-boot, the loader's options
#   from its entry; the kaslr.conf lines are then key=value load options)
#   and sets, from the kernel's report line (the kaslr.conf lines are
#   typically place's, test/qemu/lib.sh):
#     U_TEXT U_CODE U_EFI U_INFO U_SHA U_FB U_RAMDISK U_FEATURES U_CRNG U_RSEED
#     U_CMDLINE
#     U_BPUID U_BPBYTES U_BPHITS (boot_params as uid 65534 read it)
#   USER_ESP_FILES="NAME=SRC ...": more files on the ESP (not with sdboot);
#   U_ESP is the image, which user_boot_again boots once more.
#   and from the loader's verbose lines (what it claims to have done, for
#   the report to be compared with): L_PHYS L_VOFF L_INITRD
#   and, with a TPM (boot.sh's --tpm), U_PCRS: "0=HEX ... 15=HEX" as the
#   running kernel reads them
#   U_DIR is initramfs.sh's directory (data.sha256, root.img); LOG the log.
# The cases' command lines carry no_timer_check: under TCG on a busy host
# Linux's IO-APIC timer probe can miss its ticks and panic.
LINUX_LINK=0xffffffff81000000

user_boot() {
	local kind=$1 cmdline=$2 conf_lines=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do conf_lines+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	U_DIR=$(test/linux/initramfs.sh "$kind") || fail "no initramfs for the $kind kernel"
	local bz=$B/linux/vmlinuz
	[ "$kind" = generic ] || bz=$B/linux/$kind/vmlinuz
	local cf esp
	if [ "${USER_VIA:-}" = sdboot ]; then
		# systemd-boot's Type #1 entry: an `efi` line and the loader's
		# options, as docs/admin-guide.md shows; the files beside the loader
		local sd=/usr/lib/systemd/boot/efi/systemd-bootx64.efi fat=$WORK/$NAME.fat l opts=()
		# kaslr.conf's "key value" is key=value among load options
		for l in "${conf_lines[@]}"; do opts+=("${l/ /=}"); done
		[ -f "$sd" ] || fail "no $sd (make deps installs systemd-boot-efi)"
		printf 'default debian-kaslr.conf\ntimeout 0\n' >"$WORK/$NAME.loader.conf"
		printf '%s\n' 'title Debian (kaslr-loader)' 'efi /EFI/kaslr/kaslr-loader.efi' \
			"options kernel=vmlinuz initrd=initrd.img verbose ${opts[*]} -- $cmdline" \
			>"$WORK/$NAME.entry.conf"
		test/qemu/mkesp.sh "$fat" "$sd" - EFI/kaslr/kaslr-loader.efi="$LOADER" \
			EFI/kaslr/vmlinuz="$bz" EFI/kaslr/initrd.img="$U_DIR/initrd.img" \
			loader/loader.conf="$WORK/$NAME.loader.conf" \
			loader/entries/debian-kaslr.conf="$WORK/$NAME.entry.conf" || fail "mkesp failed"
		esp=$WORK/$NAME.img
		test/qemu/mkgpt.sh "$esp" "$fat" 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d || fail "mkgpt failed"
		rm -f "$fat"
	else
		cf=$(conf 'kernel vmlinuz' 'initrd initrd.img' verbose "${conf_lines[@]}" "cmdline $cmdline")
		# shellcheck disable=SC2086 # USER_ESP_FILES is a list of NAME=SRC
		esp=$(mkesp "$NAME" - EFI/BOOT/vmlinuz="$bz" EFI/BOOT/initrd.img="$U_DIR/initrd.img" \
			EFI/BOOT/kaslr.conf="$cf" ${USER_ESP_FILES:-})
	fi
	U_ESP=$esp
	user_boot_again "$@"
}

# user_boot_again [boot.sh option...]: boot U_ESP once more, set the same
user_boot_again() {
	local line esp=$U_ESP
	USER_BOOTS=$((${USER_BOOTS:-0} + 1))
	LOG=$WORK/$NAME.$USER_BOOTS.log
	test/qemu/boot.sh --log "$LOG" --timeout "${USER_TIMEOUT:-240}" \
		--until 'linux-root: REPORT|Kernel Offset|reboot: Power down|end Kernel panic' \
		--mem 1G "$@" "$esp"
	RC=$?
	line=$(clean_log "$LOG" | grep -a '^linux-init: REPORT' | tail -n 1)
	[ -n "$line" ] || fail "boot $USER_BOOTS: no report from the kernel's userspace (boot.sh status $RC)"
	U_TEXT=$(kv "$line" text) U_CODE=$(kv "$line" code) U_EFI=$(kv "$line" efi)
	# shellcheck disable=SC2034 # U_FB and U_CMDLINE are for the cases
	U_INFO=$(kv "$line" loaderinfo) U_SHA=$(kv "$line" sha) U_FB=$(kv "$line" fb)
	# shellcheck disable=SC2034
	U_RAMDISK=$(kv "$line" ramdisk) U_CMDLINE=$(kv "$line" cmdline)
	# shellcheck disable=SC2034
	U_PCRS=$(clean_log "$LOG" | sed -n 's/^linux-init: PCRS //p' | tail -n 1)
	U_BPUID=$(kv "$line" bpuid) U_BPBYTES=$(kv "$line" bpbytes) U_BPHITS=$(kv "$line" bphits)
	# shellcheck disable=SC2034 # for the cases
	U_FEATURES=$(kv "$line" features) U_CRNG=$(kv "$line" crng) U_RSEED=$(kv "$line" rseed)
	line=$(clean_log "$LOG" | grep -a 'kaslr-loader: linux: physical base' | tail -n 1)
	L_PHYS=$(printf '%s\n' "$line" | sed -n 's/.*physical base \(0x[0-9A-Fa-f]*\),.*/\1/p')
	L_VOFF=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset \(0x[0-9A-Fa-f]*\) from.*/\1/p')
	L_INITRD=$(clean_log "$LOG" | sed -n 's/.*kaslr-loader: initrd: .* bytes at \(0x[0-9A-Fa-f]*\) .*/\1/p' | tail -n 1)
	# shellcheck disable=SC2034 # read by the case that sourced this file
	USER_LINE=$line
}

# user_check_common: what every userspace boot must show
user_check_common() {
	if [ -z "$L_PHYS" ] || [ -z "$L_VOFF" ]; then
		fail "boot $USER_BOOTS: no placement line from the loader (verbose)"
	fi
	# kaslr.seed= taken and, at an edge, the edge's slots (test/qemu/lib.sh)
	placed
	[ $((U_TEXT)) -eq $((LINUX_LINK + L_VOFF)) ] ||
		fail "boot $USER_BOOTS: _text is $U_TEXT, want $LINUX_LINK + the loader's $L_VOFF"
	[ $((U_CODE)) -eq $((L_PHYS)) ] ||
		fail "boot $USER_BOOTS: Kernel code starts at $U_CODE, the loader placed it at $L_PHYS"
	[ "$U_EFI" = 1 ] || fail "boot $USER_BOOTS: no /sys/firmware/efi: the kernel has no EFI"
	# the first stage's LoaderInfo stands: the loader's own, or
	# systemd-boot's when it chainloaded the loader
	local info=kaslr-loader_
	[ "${USER_VIA:-}" = sdboot ] && info=systemd-boot_
	case $U_INFO in "$info"*) ;; *) fail "boot $USER_BOOTS: LoaderInfo through efivarfs is '$U_INFO', want $info..." ;; esac
	[ "$U_SHA" = "$(cat "$U_DIR/data.sha256")" ] ||
		fail "boot $USER_BOOTS: /data/check.bin hashes to $U_SHA in the running system"
	[ "${U_RAMDISK%-*}" = "$(printf '0x%08x' $((L_INITRD)))" ] ||
		fail "boot $USER_BOOTS: the kernel's RAMDISK is $U_RAMDISK, the loader placed it at $L_INITRD"
	# /sys/kernel/boot_params/data is 0444: nothing there may give the
	# physical base or the virtual offset away to an unprivileged user
	[ "$U_BPUID" = 65534 ] || fail "boot $USER_BOOTS: boot_params was read as uid '$U_BPUID', want 65534"
	[ "${U_BPBYTES:-0}" -ge 4096 ] || fail "boot $USER_BOOTS: uid 65534 read ${U_BPBYTES:-0} bytes of boot_params"
	[ "$U_BPHITS" = none ] ||
		fail "boot $USER_BOOTS: boot_params, as uid 65534 reads it, gives the layout away at $U_BPHITS (phys $U_CODE, _text $U_TEXT)"
}

# user_span KIND: the bytes the KIND kernel occupies from its base, as its
# vmlinux's program headers say (elf_span, test/qemu/lib.sh); the generic
# kernel's vmlinux is test/linux/fetch.sh's repack of the same bzImage
user_span() {
	local gz elf=$WORK/$NAME.vmlinux
	[ "$1" = generic ] || { echo "user_span: only the generic kernel's vmlinux is at hand" >&2; return 1; }
	gz=$(test/linux/fetch.sh generic) || return 1
	[ "$elf" -nt "$gz" ] || gzip -dc "$gz" >"$elf" || return 1
	elf_span "$elf"
}
