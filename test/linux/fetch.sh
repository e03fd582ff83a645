#!/bin/bash
# fetch.sh - the stock Debian kernel for the Linux boot tests, cached in
# build/linux/ (never committed):
#   1. resolve the package linux-image-amd64 points to (apt-cache depends,
#      e.g. linux-image-6.1.0-57-amd64) and take its "-unsigned" twin: the
#      same kernel without the Secure Boot signature;
#   2. apt-get download it; unpack its /boot with dpkg-deb (only /boot: the
#      ~400 MB of modules are not needed) into build/linux/pkg/;
#   3. repack the bzImage -> build/linux/vmlinux.gz (+ .facts), see src/tools/kaslr-repack.sh.
# Prints the path of vmlinux.gz on stdout.  Serialised with flock (two boot
# cases may start together).  Any failure - no Debian registry, no package -
# is an error with a clear message: the tests then FAIL, never skip.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/linux
die() { echo "fetch.sh: $*" >&2; exit 1; }
mkdir -p "$D" || die "cannot create $D"
exec 9>"$D/.lock" || die "cannot open $D/.lock"
flock 9 || die "cannot lock $D/.lock"

# cached: the bzImage and the repacked image with its facts are all there
if [ -s "$D/vmlinuz" ] && [ -s "$D/vmlinux.gz" ] && [ -s "$D/vmlinux.gz.facts" ] &&
	[ -s "$D/package" ]; then
	echo "$D/vmlinux.gz"
	exit 0
fi

for c in apt-get dpkg-deb; do
	command -v "$c" >/dev/null || die "$c missing: the Linux boot tests need a Debian host"
done
# first PATTERN-EXPANSION...: the first of the files a glob matched, if any
first() { [ -e "$1" ] && printf '%s\n' "$1"; }
# the metapackage's dependency names the current ABI
resolve() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1
}
dep=$(resolve)
if [ -z "$dep" ] && [ "$(id -u)" -eq 0 ]; then
	# package lists never fetched on this machine: fetch them once
	echo "fetch.sh: apt-get update (linux-image-amd64 unknown)" >&2
	apt-get update -qq >&2 && dep=$(resolve)
fi
[ -n "$dep" ] || die "apt-cache does not know linux-image-amd64: run apt-get update (is the Debian registry reachable?)"
pkg=$dep-unsigned
apt-cache show "$pkg" >/dev/null 2>&1 ||
	die "linux-image-amd64 depends on $dep, but $pkg is not in the package lists"

deb=$(first "$D"/"$pkg"_*.deb)
if [ -z "$deb" ]; then
	echo "fetch.sh: apt-get download $pkg (about 70 MB)" >&2
	(cd "$D" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) ||
		die "apt-get download $pkg failed: the Debian registry is not reachable from this machine"
	deb=$(first "$D"/"$pkg"_*.deb)
	[ -n "$deb" ] || die "apt-get download left no $pkg .deb in $D"
fi
{ rm -rf "$D/pkg" && mkdir -p "$D/pkg"; } || die "cannot create $D/pkg"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$D/pkg" --wildcards './boot/*' ||
	die "unpacking /boot from $deb failed"
vmlinuz=$(first "$D"/pkg/boot/vmlinuz-*)
[ -s "$vmlinuz" ] || die "$deb holds no /boot/vmlinuz-*"
cp "$vmlinuz" "$D/vmlinuz" || die "copy $vmlinuz"
src/tools/kaslr-repack.sh "$D/vmlinuz" "$D/vmlinux.gz" || die "repacking $vmlinuz failed"
echo "$pkg $(basename "$deb")" >"$D/package"
echo "$D/vmlinux.gz"
