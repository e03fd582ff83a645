# seed-planted - a LoaderRandomSeed someone planted, non-volatile (root can
# write one through efivarfs, a firmware shell one with any bytes): OVMF's
# UEFI shell sets 64 known bytes with -nv -bs -rt, then starts the loader
# with Debian's kernel and the busybox initramfs.  systemd-boot only ever
# leaves it volatile, so this one must count for nothing, and go.  From
# inside the running system:
#   1. -cpu qemu64 (no RDRAND, no EFI_RNG_PROTOCOL: RDTSC alone besides
#      it): the kernel's RNG was not ready at 0.000000 (it was handed no
#      seed it credits) and efivarfs shows no LoaderRandomSeed (the planted
#      one deleted; a weak pool sets none of its own);
#   2. -cpu max (RDRAND): efivarfs shows the loader's own 32 bytes in place
#      of the planted 64 (its volatile SetVariable no longer clashes with a
#      non-volatile variable of that name).
# placement: random - linux-rootfs boots this kernel at the edges; a planted seed does not change where it lands
bz=$B/linux/vmlinuz
[ -f "$bz" ] || test/linux/fetch.sh generic >/dev/null || fail "no Debian kernel: test/linux/fetch.sh failed"
U_DIR=$(test/linux/initramfs.sh generic) || fail "no initramfs"
img=$(shell_esp 112) || fail "cannot build the shell ESP"
for f in "$bz:vmlinuz" "$U_DIR/initrd.img:initrd.img"; do
	mcopy -i "$img" "${f%:*}" "::/${f##*:}" || fail "mcopy ${f%:*}"
done
nsh=$WORK/$NAME.nsh
# boot_planted CPU: one boot; sets line (the kernel's report), crng, rseed
boot_planted() {
	place
	{
		echo 'fs0:'
		printf 'setvar LoaderRandomSeed -guid 4a67b082-0a4c-41cf-b6c7-440b29bb8c4f -nv -bs -rt =H%s\n' \
			"$(printf '%0128d' 0 | tr 0 a5)"
		echo 'echo "planted: %lasterror%"'
		printf '%s %s %s\n' '\EFI\kaslr\loader.efi kernel=\vmlinuz initrd=\initrd.img' "$PLACE_OPTS" \
			'-- console=ttyS0 panic=-1 quiet no_timer_check'
	} >"$nsh"
	mcopy -o -i "$img" "$nsh" ::/startup.nsh || fail "mcopy startup.nsh"
	LOG=$WORK/$NAME.$1.log
	test/qemu/boot.sh --log "$LOG" --mem 1G --cpu "$1" --timeout 240 \
		--until 'linux-init: REPORT|Kernel Offset|end Kernel panic|kaslr-loader: error' "$img"
	RC=$?
	clean_log "$LOG" | grep -q '^planted: 0x0$' || fail "$1: the shell did not plant LoaderRandomSeed"
	line=$(clean_log "$LOG" | grep -a '^linux-init: REPORT' | tail -n 1)
	[ -n "$line" ] || fail "$1: no report from the kernel's userspace (boot.sh status $RC)"
	crng=$(kv "$line" crng) rseed=$(kv "$line" rseed)
	placed
}
boot_planted qemu64
[ "$crng" != 0.000000 ] || fail "qemu64: the kernel's RNG was ready at 0.000000: it credited a seed the planted bytes made strong"
[ "$rseed" = none ] || fail "qemu64: LoaderRandomSeed through efivarfs holds $rseed bytes, want none (the planted 64 deleted)"
weak=$rseed weak_crng=$crng
boot_planted max
[ "$rseed" = 32 ] || fail "max: LoaderRandomSeed through efivarfs holds $rseed bytes, want the loader's 32 (the planted one held 64)"
ok "qemu64: crng ready at $weak_crng, LoaderRandomSeed $weak; max: LoaderRandomSeed $rseed bytes"
