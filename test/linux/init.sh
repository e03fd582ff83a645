#!/bin/busybox sh
# shellcheck shell=dash
# init.sh - /init of the initramfs test/linux/initramfs.sh builds.  It runs
# inside the booted Debian kernel and reports, in one line on the console,
# what the kernel itself says about where it is and what it was given:
#
#   linux-init: REPORT text=<_text from /proc/kallsyms>
#     code=<start of "Kernel code" in /proc/iomem> efi=<0|1>
#     loaderinfo=<LoaderInfo through efivarfs> sha=<SHA-256 of /data/check.bin>
#     fb=<fb0's name> ramdisk=<the RAMDISK range dmesg shows> kaslr=<0|1>
#     bpuid=<uid that read boot_params> bpbytes=<bytes it read>
#     bphits=<none, or OFFSET:phys|voff,... fields that give the layout away>
#     features=<LoaderFeatures through efivarfs, 0x + 16 hex digits, or none>
#     rseed=<bytes of LoaderRandomSeed through efivarfs, or none>
#     crng=<dmesg's time of "random: crng init done", or none: not yet>
#     cmdline=<the rest of the line: /proc/cmdline>
#
# and before it, when there is any, what a unified kernel image's stub
# (or the loader booting one) left for systemd (StubPcr* variables in hex,
# attributes first; the sha256 of each file under /.extra):
#
#   linux-init: STUB StubPcrKernelImage=<hex> tpm2-pcr-signature.json=<sha256> ...
#
# and with a TPM the SHA-256 bank's PCRs as the kernel reads
# them (/sys/class/tpm/tpm0/pcr-sha256/N):
#
#   linux-init: PCRS 0=<hex> 1=<hex> ... 15=<hex>
#
# With kl.evlog=1 on the command line, after those: each active PCR bank's
# PCRs 0-23 and the firmware's event log as the kernel offers it
# (/sys/kernel/security/tpm0/binary_bios_measurements), in base64 between
# two marker lines, for kaslr-pcr to read back (test/linux/evlog.sh):
#
#   linux-init: BANK sha1 0=<hex> ... 23=<hex>
#   linux-init: EVLOG BEGIN
#   <base64 lines>
#   linux-init: EVLOG END
#
# bphits: /sys/kernel/boot_params/data (mode 0444) and any setup_data node
# an unprivileged user (uid 65534) can read, checked for a 4- or 8-byte
# field at any 4-byte-aligned offset equal to the physical base ("Kernel
# code") or to the virtual offset (_text minus the link address 0xffffffff81000000).
# Every multi-byte field of boot_params sits at such an offset.  Unaligned
# windows are not checked: any lone small byte among zeros reads there as a
# multiple of 16 MiB, which a 2 MiB-aligned base would match by chance.
# A base at the link-time address (16 MiB) or an offset of 0 is public
# (pref_address, nokaslr) and not compared.  Two kinds of field hold values
# that are not the loader's to choose, and a small offset matches them by
# chance (an offset of 4 MiB is also the size of the flash's e820 entry):
# the kernel's own constants in the setup header (kernel_alignment at
# 0x230, pref_address at 0x258, init_size at 0x260) are not compared with
# the offset, and in the e820 table (0x2d0, 20 bytes an entry) an entry
# gives the layout away only when it starts or ends at the physical base.
# In screen_info (0x00-0x3f) only lfb_base and lfb_size (0x18, 0x1c) are
# 4-byte fields at such offsets; every other aligned window there spans
# two or more smaller fields, and a zero 16-bit field under lfb_width (0x12)
# reads as lfb_width << 16: a 1280-pixel-wide frame buffer "matched" a base
# of 0x5000000.  Those windows are not compared.
#
# kaslr=0 when the kernel says its offset is disabled (checked on its own
# panic report: see kl.panic).  Then, by kl.mode= on the command line:
#   initrd (default)  power off
#   root              load the virtio and ext4 modules, mount /dev/vda
#                     read-only and switch_root to its /sbin/init
# and kl.panic=1 makes the kernel panic instead of powering off, so that it
# prints its own "Kernel Offset" line.

# bp_scan PHYS VOFF (16 hex digits each, zeros: not compared): the
# bphits scan (above) of hex-byte lines on stdin, boot_params first, then
# each setup_data node; prints "HITS BYTES"
bp_scan() {
	# Each line is made " b1 b2 ... bn " (byte k's digits at 3k - 1) and
	# searched for the two values' little-endian bytes by index(): the
	# windows are not walked one by one in awk, which under TCG took a
	# third of a second of every boot
	awk -v P="$1" -v V="$2" '
	function hx(s,   k, v) { v = 0; for (k = 1; k <= length(s); k++) v = v * 16 + index("0123456789abcdef", substr(s, k, 1)) - 1; return v }
	# le(o, c): the c bytes from offset o as one big-endian hex number
	function le(o, c,   r, k) { r = ""; for (k = c - 1; k >= 0; k--) r = r substr(s, 3 * (o + k) + 2, 2); return r }
	# pat(X): " b0 b1 ... " of X (16 hex digits): its low 4 bytes when the
	# high ones are zero (then an 8-byte field equal to X matches them too)
	function pat(X,   c, r, k) { c = substr(X, 1, 8) == "00000000" ? 4 : 8; r = " "
		for (k = 0; k < c; k++) r = r substr(X, 15 - 2 * k, 2) " "; return r }
	# mark(X, what): M[o] gets what at every 4-byte-aligned offset o where X is
	function mark(X, what,   p, q, from, o) {
		if (X == "0000000000000000") return
		p = pat(X); from = 1
		while ((q = index(substr(s, from), p)) > 0) {
			q += from - 1; o = (q - 1) / 3
			if (o % 4 == 0) { if (!(o in M)) L[++nl] = o; M[o] = M[o] " " what }
			from = q + 3
		}
	}
	function hit(o, what) { out = out (out == "" ? "" : ",") sprintf("%s0x%x:%s", NR > 1 ? "setup" (NR - 1) "+" : "", o, what) }
	{
		s = " " $0 " "; gsub(/ +/, " ", s)
		n = (length(s) - 1) / 3
		total += n
		split("", M); nl = 0
		mark(P, "phys"); mark(V, "voff")
		# boot_params: the e820 table, 0x2d0 (720) to 720 + 20 * e820_entries (0x1e8)
		lo = hi = -1
		if (NR == 1 && n >= 3280) {
			lo = 720; hi = 720 + 20 * hx(le(488, 1)); if (hi > 3280) hi = 3280
			if (P != "0000000000000000") {
				pv = hx(P)
				for (o = lo; o + 20 <= hi; o += 20) {
					a = hx(le(o, 8))
					if (a == pv || a + hx(le(o + 8, 8)) == pv) { if (!(o in M)) L[++nl] = o; M[o] = " e820" }
				}
			}
		}
		# in offset order (few: an insertion sort)
		for (i = 2; i <= nl; i++) { o = L[i]; for (j = i - 1; j >= 1 && L[j] > o; j--) L[j + 1] = L[j]; L[j + 1] = o }
		for (i = 1; i <= nl; i++) {
			o = L[i]; w = M[o]
			if (o >= lo && o < hi) { if (w == " e820") hit(o, "phys-e820"); continue }
			if (NR == 1 && o < 64 && o != 24 && o != 28) continue
			if (w ~ / phys/) hit(o, "phys")
			if (NR == 1 && (o == 560 || o == 600 || o == 608)) continue
			if (w ~ / voff/) hit(o, "voff")
		}
	}
	END { print (out == "" ? "none" : out) " " total + 0 }'
}
# test/linux/bp-scan-test.sh sources this file for bp_scan alone
[ "${INIT_FUNCTIONS_ONLY:-0}" = 1 ] && return 0

/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

IFS= read -r cmdline </proc/cmdline
# arg NAME: argv set to the value of the first NAME= on the kernel command
# line, or empty; the shell's own words (no globbing), no process: under
# TCG each process of this script costs tens of milliseconds
arg() {
	argv=''
	set -f
	for w in $cmdline; do
		case $w in "$1"=*) argv=${w#*=} && break ;; esac
	done
	set +f
}
ld() { # ld NAME...: insmod each module this kernel has as a module
	for m in "$@"; do
		[ -f "/lib/modules/$m.ko" ] && insmod "/lib/modules/$m.ko"
	done
}

# sed stops at the first _text: the whole of /proc/kallsyms, a line for each
# of the kernel's symbols made as it is read, took 1.4 s under TCG
text=$(sed -n '/ [Tt] _text$/ { s/^\([0-9a-f]*\) .*/0x\1/p; q }' /proc/kallsyms)
code=$(sed -n '/^ *[0-9a-f]*-[0-9a-f]* : Kernel code$/ { s/^ *\([0-9a-f]*\)-.*/0x\1/p; q }' /proc/iomem)
efi=0
info=
features=
rseed=
if [ -d /sys/firmware/efi ]; then
	efi=1
	ld efivarfs
	mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null
	v=/sys/firmware/efi/efivars/LoaderInfo-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
	# 4 bytes of attributes, then UCS-2 text: keep the ASCII
	[ -f "$v" ] && info=$(tail -c +5 "$v" | tr -d '\000' | tr ' ' '_')
	v=/sys/firmware/efi/efivars/LoaderFeatures-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
	# 4 bytes of attributes, then the u64 little-endian mask
	[ -f "$v" ] && features=0x$(tail -c +5 "$v" | od -A n -t x8 -N 8 | tr -d ' ')
	v=/sys/firmware/efi/efivars/LoaderRandomSeed-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
	# its size without the 4 bytes of attributes
	[ -f "$v" ] && rseed=$(($(wc -c <"$v") - 4))
fi
# what systemd-stub leaves systemd's userspace, as a unified kernel image's
# stub or the loader booting one sets it: each StubPcr* variable as
# efivarfs gives it (attributes, then the value) in hex, and the sha256 of
# each file its cpio archives put under /.extra
stub=
for n in StubPcrKernelImage StubPcrKernelParameters; do
	v=/sys/firmware/efi/efivars/$n-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
	[ -f "$v" ] && stub="$stub $n=$(od -A n -t x1 -v "$v" | tr -d ' \n')"
done
for f in /.extra/*; do
	[ -f "$f" ] && stub="$stub ${f##*/}=$(sha256sum "$f" | cut -d' ' -f1)"
done
[ -n "$stub" ] && echo "linux-init: STUB$stub"
# the kernel's log read once, for the crng's time and the RAMDISK line
dmesg >/dmesg
# when the kernel's RNG became ready, by its own clock (0.000000: before
# the kernel had a clock, i.e. from a seed it was handed)
crng=$(sed -n '/^\[ *[0-9.]*\] random: crng init done/ { s/^\[ *\([0-9.]*\)\].*/\1/p; q }' /dmesg)
sha=$(sha256sum /data/check.bin)
sha=${sha%% *}
fb=$(tr ' ' '_' </sys/class/graphics/fb0/name 2>/dev/null)
rd=$(sed -n '/RAMDISK: \[mem 0x[0-9a-f]*-0x[0-9a-f]*\]/ { s/.*RAMDISK: \[mem \(0x[0-9a-f]*-0x[0-9a-f]*\)\].*/\1/p; q }' /dmesg)
d=/sys/class/tpm/tpm0/pcr-sha256
if [ -r "$d/0" ]; then
	pcrs=
	for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		pcrs="$pcrs $i=$(cat "$d/$i")"
	done
	echo "linux-init: PCRS$pcrs"
fi
arg kl.evlog
if [ "$argv" = 1 ]; then
	for b in /sys/class/tpm/tpm0/pcr-*; do
		[ -r "$b/0" ] || continue
		pcrs=
		for i in $(seq 0 23); do pcrs="$pcrs $i=$(cat "$b/$i")"; done
		echo "linux-init: BANK ${b##*/pcr-}$pcrs"
	done
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
	echo "linux-init: EVLOG BEGIN"
	base64 </sys/kernel/security/tpm0/binary_bios_measurements
	echo "linux-init: EVLOG END"
fi

# boot_params as uid 65534 reads it: hex bytes, one file after the other
mkdir -p /etc
echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >/etc/passwd
echo 'nogroup:x:65534:' >/etc/group
# shellcheck disable=SC2016 # expanded by the unprivileged shell
bp=$(su -s /bin/sh -c 'id -u; for f in /sys/kernel/boot_params/data /sys/kernel/boot_params/setup_data/*/data; do [ -r "$f" ] && od -A n -t x1 -v "$f" | tr -s " \n" "  "; echo; done' nobody 2>/dev/null)
bpuid=$(echo "$bp" | head -n 1)
# the kernel's own word for its layout (read as root above)
voff=$(printf '%016x' $((text - 0xffffffff81000000)))
phys=$(printf '%016x' $((code)))
# at its link-time address (16 MiB, as pref_address says) or offset 0 the
# kernel has nothing to hide in that value: not compared
[ "$phys" = 0000000001000000 ] && phys=0000000000000000
bphits=$(echo "$bp" | tail -n +2 | bp_scan "$phys" "$voff")
bpbytes=${bphits#* }
bphits=${bphits% *}
echo "linux-init: REPORT text=$text code=$code efi=$efi loaderinfo=${info:-none} sha=$sha fb=${fb:-none} ramdisk=${rd:-none} features=${features:-none} rseed=${rseed:-none} crng=${crng:-none} bpuid=${bpuid:-none} bpbytes=$bpbytes bphits=$bphits cmdline=$cmdline"

arg kl.mode
if [ "$argv" = root ]; then
	while read -r m; do
		[ "$m" = efivarfs ] || insmod "/lib/modules/$m.ko"
	done </lib/modules/order
	n=0
	while [ ! -b /dev/vda ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	if mount -t ext4 -o ro /dev/vda /newroot; then
		umount /proc /sys /dev 2>/dev/null
		exec switch_root /newroot /sbin/init
	fi
	echo "linux-init: FAIL cannot mount /dev/vda"
fi
arg kl.panic
if [ "$argv" = 1 ]; then
	echo c >/proc/sysrq-trigger
fi
poweroff -f
