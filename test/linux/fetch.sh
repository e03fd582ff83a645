#!/bin/bash
# fetch.sh [KIND] - a stock Debian kernel, cached under build/linux/ (never
# committed).  KIND:
#   generic (default)  the kernel linux-image-amd64 points to, unsigned
#                      (xz payload); into build/linux/, repacked for the
#                      Linux boot tests; prints build/linux/vmlinux.gz
#   cloud              the one linux-image-cloud-amd64 points to, unsigned
#                      (LZ4 payload); into build/linux/cloud/; prints its vmlinuz
#   signed             the generic kernel as Debian signs it for Secure Boot
#                      (a PE signature after the bzImage); into
#                      build/linux/signed/; prints its vmlinuz
# Steps:
#   1. resolve the package the metapackage points to (apt-cache depends,
#      e.g. linux-image-6.1.0-57-amd64) and, but for "signed", take its
#      "-unsigned" twin: the same kernel without the Secure Boot signature;
#   2. apt-get download it; unpack its /boot and the few modules the
#      userspace boot tests load (efivarfs, virtio PCI and block, ext4 and
#      what it needs: the other ~400 MB of modules are not) with dpkg-deb
#      into DIR/pkg/, copy the bzImage to DIR/vmlinuz;
#   3. generic only: repack the bzImage -> build/linux/vmlinux.gz (+ .facts),
#      see src/tools/kaslr-repack.sh.
# Serialised with flock per directory (two boot cases may start together).
# Any failure - no Debian registry, no package - is an error with a clear
# message: the tests then FAIL, never skip.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
die() { echo "fetch.sh: $*" >&2; exit 1; }
kind=${1:-generic}
case $kind in
generic) D=$B/linux meta=amd64 twin=-unsigned ;;
cloud) D=$B/linux/cloud meta=cloud-amd64 twin=-unsigned ;;
signed) D=$B/linux/signed meta=amd64 twin= ;;
*) die "unknown kind '$kind' (generic, cloud or signed)" ;;
esac
mkdir -p "$D" || die "cannot create $D"
exec 9>"$D/.lock" || die "cannot open $D/.lock"
flock 9 || die "cannot lock $D/.lock"

# the modules test/linux/initramfs.sh puts into its initramfs
MODULES=(fs/efivarfs/efivarfs.ko drivers/virtio/virtio.ko drivers/virtio/virtio_ring.ko
	drivers/virtio/virtio_pci.ko drivers/virtio/virtio_pci_modern_dev.ko
	drivers/virtio/virtio_pci_legacy_dev.ko drivers/block/virtio_blk.ko fs/ext4/ext4.ko
	fs/jbd2/jbd2.ko fs/mbcache.ko lib/crc16.ko crypto/crc32c_generic.ko)

# cached: the bzImage and modules (and for generic the repacked image with
# its facts)
if [ -s "$D/vmlinuz" ] && [ -s "$D/package" ] && [ -e "$D/modules" ]; then
	if [ "$kind" != generic ]; then
		echo "$D/vmlinuz"
		exit 0
	elif [ -s "$D/vmlinux.gz" ] && [ -s "$D/vmlinux.gz.facts" ]; then
		echo "$D/vmlinux.gz"
		exit 0
	fi
fi

for c in apt-get dpkg-deb; do
	command -v "$c" >/dev/null || die "$c missing: the Linux boot tests need a Debian host"
done
# first PATTERN-EXPANSION...: the first of the files a glob matched, if any
first() { [ -e "$1" ] && printf '%s\n' "$1"; }
# the metapackage's dependency names the current ABI
resolve() {
	apt-cache depends "linux-image-$meta" 2>/dev/null |
		sed -n "s/^ *Depends: \\(linux-image-[0-9][^ ]*-$meta\\)\$/\\1/p" | head -n 1
}
dep=$(resolve)
if [ -z "$dep" ] && [ "$(id -u)" -eq 0 ]; then
	# package lists never fetched on this machine: fetch them once
	echo "fetch.sh: apt-get update (linux-image-$meta unknown)" >&2
	apt-get update -qq >&2 && dep=$(resolve)
fi
[ -n "$dep" ] || die "apt-cache does not know linux-image-$meta: run apt-get update (is the Debian registry reachable?)"
pkg=$dep$twin
apt-cache show "$pkg" >/dev/null 2>&1 ||
	die "linux-image-$meta depends on $dep, but $pkg is not in the package lists"

deb=$(first "$D"/"$pkg"_*.deb)
if [ -z "$deb" ]; then
	echo "fetch.sh: apt-get download $pkg (30 to 70 MB)" >&2
	(cd "$D" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) ||
		die "apt-get download $pkg failed: the Debian registry is not reachable from this machine"
	deb=$(first "$D"/"$pkg"_*.deb)
	[ -n "$deb" ] || die "apt-get download left no $pkg .deb in $D"
fi
{ rm -rf "$D/pkg" && mkdir -p "$D/pkg"; } || die "cannot create $D/pkg"
# a kernel flavour builds some of them in (the cloud kernel: ext4, ...):
# take the ones this package has
list=$(dpkg-deb -c "$deb") || die "cannot list $deb"
patterns=('./boot/*')
for m in "${MODULES[@]}"; do
	if grep -q "/lib/modules/[^/]*/kernel/$m\$" <<<"$list"; then
		patterns+=("./lib/modules/*/kernel/$m")
	fi
done
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$D/pkg" --wildcards "${patterns[@]}" ||
	die "unpacking /boot and modules from $deb failed"
vmlinuz=$(first "$D"/pkg/boot/vmlinuz-*)
[ -s "$vmlinuz" ] || die "$deb holds no /boot/vmlinuz-*"
cp "$vmlinuz" "$D/vmlinuz" || die "copy $vmlinuz"
if [ "$kind" = generic ]; then
	src/tools/kaslr-repack.sh "$D/vmlinuz" "$D/vmlinux.gz" || die "repacking $vmlinuz failed"
fi
# the modules' directory, for initramfs.sh
mods=$(first "$D"/pkg/lib/modules/*/kernel)
printf '%s\n' "${mods:-none}" >"$D/modules"
echo "$pkg $(basename "$deb")" >"$D/package"
if [ "$kind" = generic ]; then echo "$D/vmlinux.gz"; else echo "$D/vmlinuz"; fi
