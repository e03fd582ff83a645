#!/bin/bash
# compare-boot.sh [RUNS] - boot time of the stock Debian kernel, from QEMU
# start to the kernel's "Linux version" banner, two ways on the same VM
# (q35, OVMF, TCG, -cpu max, 1 GiB, no NIC; test/qemu/boot.sh):
#   kaslr-loader: BOOTX64.EFI reads vmlinux.gz (repacked, src/tools/kaslr-repack.sh),
#                 inflates, places and relocates it, boot_params, jump;
#   systemd-boot: \EFI\BOOT\BOOTX64.EFI = systemd-bootx64.efi, a Type #1
#                 entry "linux /vmlinuz" (the .deb's bzImage, its own EFI
#                 stub and xz decompressor choose its addresses).
# Both get "console=ttyS0 panic=-1"; the loader runs quiet (its default).
# Runs alternate (loader, sd-boot, loader, ...) so that load on the host
# hits both alike.  Prints each time, the means and the ratio; exit 1 if
# a boot did not reach the banner.  Times are for benchmarks, not asserts.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
runs=${1:-3}
W=$B/linux/compare
die() { echo "compare-boot: FAIL: $*"; exit 1; }
sdboot=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
[ -f "$B/BOOTX64.EFI" ] || die "$B/BOOTX64.EFI missing: run make first"
[ -f "$sdboot" ] || die "$sdboot missing (Debian package systemd-boot-efi)"
gz=$(test/linux/fetch.sh) || die "no Debian kernel (test/linux/fetch.sh failed)"
vmlinuz=$(dirname "$gz")/vmlinuz
mkdir -p "$W" || die "mkdir $W"

printf 'kernel vmlinux.gz\ncmdline console=ttyS0 panic=-1\n' >"$W/kaslr.conf"
test/qemu/mkesp.sh "$W/kaslr.img" "$B/BOOTX64.EFI" - \
	EFI/BOOT/vmlinux.gz="$gz" EFI/BOOT/kaslr.conf="$W/kaslr.conf" || die "ESP for the loader"
printf 'default debian.conf\ntimeout 0\n' >"$W/loader.conf"
printf 'title Debian stock kernel\nlinux /vmlinuz\noptions console=ttyS0 panic=-1\n' >"$W/debian.conf"
test/qemu/mkesp.sh "$W/sdboot.img" "$sdboot" - loader/loader.conf="$W/loader.conf" \
	loader/entries/debian.conf="$W/debian.conf" vmlinuz="$vmlinuz" || die "ESP for systemd-boot"

# one boot: seconds (3 decimals) from QEMU start to the banner
one() {
	local t0 t1 rc log=$W/$1.log
	t0=$(date +%s%N)
	test/qemu/boot.sh --log "$log" --mem 1G --cpu max --timeout 300 \
		--until 'Linux version' "$W/$1.img" 2>/dev/null
	rc=$?
	t1=$(date +%s%N)
	if [ "$rc" != 0 ]; then
		echo "compare-boot: FAIL: $1: no 'Linux version' (boot.sh status $rc); see $log" >&2
		return 1
	fi
	echo $(((t1 - t0) / 1000000)) | awk '{ printf "%.3f", $1 / 1000 }'
}

ka=() sd=()
for _ in $(seq "$runs"); do
	t=$(one kaslr) || exit 1
	ka+=("$t")
	t=$(one sdboot) || exit 1
	sd+=("$t")
done
mean() { printf '%s\n' "$@" | awk 'NF { s += $1; n++ } END { printf "%.2f", s / n }'; }
mk=$(mean "${ka[@]}") ms=$(mean "${sd[@]}")
echo "compare-boot: QEMU start to 'Linux version', $runs alternating runs each (1 GiB, -cpu max, TCG)"
echo "compare-boot: kaslr-loader  (vmlinux.gz):      ${ka[*]} s; mean $mk s"
echo "compare-boot: systemd-boot  (vmlinuz stub):    ${sd[*]} s; mean $ms s"
echo "compare-boot: ratio kaslr-loader / systemd-boot = $(awk -v a="$mk" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')"
