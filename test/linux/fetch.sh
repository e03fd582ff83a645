#!/bin/bash
# fetch.sh - the stock Debian kernel for the Linux boot tests, cached in
# build/linux/ (never committed):
#   1. resolve the package linux-image-amd64 points to (apt-cache depends)
#      and take its "-unsigned" twin (same kernel, no Secure Boot signature);
#   2. apt-get download it, dpkg-deb -x it into build/linux/root/;
#   3. repack: bzImage -> build/linux/vmlinux.gz (test/linux/repack.sh).
# Prints the path of vmlinux.gz on its last line.  Every failure (no
# registry, no package) is an error with a clear message: the tests that
# need the kernel then FAIL, they never skip.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/linux
die() { echo "fetch.sh: $*" >&2; exit 1; }
mkdir -p "$D" || die "cannot create $D"

# cached: the extracted tree and the repacked image are both there
if [ -s "$D/vmlinuz" ] && [ -s "$D/vmlinux.gz" ] && [ -s "$D/package" ]; then
	echo "$D/vmlinux.gz"
	exit 0
fi

command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
	die "apt-get/dpkg-deb missing: this test needs a Debian host"
# the metapackage's dependency names the current ABI, e.g. linux-image-6.1.0-57-amd64
dep=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
[ -n "$dep" ] || die "apt-cache knows no linux-image-amd64 (run apt-get update; is the Debian registry reachable?)"
pkg=$dep-unsigned
apt-cache show "$pkg" >/dev/null 2>&1 || die "linux-image-amd64 depends on $dep but $pkg is not in the package lists"

if ! ls "$D"/"$pkg"_*.deb >/dev/null 2>&1; then
	echo "fetch.sh: apt-get download $pkg (about 70 MB)" >&2
	(cd "$D" && apt-get download -q "$pkg" >&2) ||
		die "apt-get download $pkg failed: the Debian registry is not reachable from this machine"
fi
deb=$(ls "$D"/"$pkg"_*.deb | head -n 1)
rm -rf "$D/root"
dpkg-deb -x "$deb" "$D/root" || die "dpkg-deb -x $deb failed"
vmlinuz=$(ls "$D"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -s "$vmlinuz" ] || die "$deb holds no /boot/vmlinuz-*"
cp "$vmlinuz" "$D/vmlinuz" || die "copy $vmlinuz"
# the modules are not needed: keep only what the tests use
rm -rf "$D/root/lib"
test/linux/repack.sh "$D/vmlinuz" "$D/vmlinux.gz" || die "repacking $vmlinuz failed"
echo "$pkg $(basename "$deb")" >"$D/package"
echo "$D/vmlinux.gz"
