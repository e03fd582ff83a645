#!/bin/bash
# fetch.sh - Debian's linux-source-6.1 (the tree Debian builds its 6.1
# kernels from), downloaded with apt-get and unpacked once under
# build/kconfig/src/ (never committed).  Prints the source directory.
#
# The .deb is kept beside it (build/kconfig/src/linux-source-6.1_*.deb) and
# its name in build/kconfig/src/package: a newer Debian upload is fetched
# and unpacked only when the cache is gone.  Serialised with flock (two
# cells may start together).  Any failure - no Debian registry, no package -
# is an error with one clear line: the tests that need the source then
# FAIL, never skip.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/kconfig/src
PKG=linux-source-6.1
die() { echo "fetch.sh: $*" >&2; exit 1; }
mkdir -p "$D" || die "cannot create $D"
exec 9>"$D/.lock" || die "cannot open $D/.lock"
flock 9 || die "cannot lock $D/.lock"

S=$D/$PKG
if [ -s "$D/package" ] && [ -f "$S/Makefile" ] && [ -e "$D/.unpacked" ]; then
	echo "$S"
	exit 0
fi
for c in apt-get apt-cache dpkg-deb tar xz; do
	command -v "$c" >/dev/null || die "$c missing: the configuration matrix needs a Debian host"
done
known() { apt-cache show "$PKG" >/dev/null 2>&1; }
if ! known && [ "$(id -u)" -eq 0 ]; then
	echo "fetch.sh: apt-get update ($PKG unknown)" >&2
	apt-get update -qq >&2
fi
known || die "apt-cache does not know $PKG: run apt-get update (is the Debian registry reachable?)"
# first PATTERN-EXPANSION...: the first of the files a glob matched, if any
first() { [ -e "$1" ] && printf '%s\n' "$1"; }
deb=$(first "$D"/"$PKG"_*.deb)
if [ -z "$deb" ]; then
	echo "fetch.sh: apt-get download $PKG (about 140 MB)" >&2
	(cd "$D" && apt-get download -q -o APT::Sandbox::User=root "$PKG" >&2) ||
		die "apt-get download $PKG failed: the Debian registry is not reachable from this machine"
	deb=$(first "$D"/"$PKG"_*.deb)
	[ -n "$deb" ] || die "apt-get download left no $PKG .deb in $D"
fi
rm -rf "$S" "$D/.unpacked" || die "cannot clear $S"
echo "fetch.sh: unpacking $(basename "$deb")" >&2
# the package holds one tarball, /usr/src/linux-source-6.1.tar.xz
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$PKG.tar.xz" | tar -xJ -C "$D" ||
	die "unpacking the kernel tree from $deb failed"
[ -f "$S/Makefile" ] || die "$deb did not hold $PKG/Makefile"
basename "$deb" >"$D/package"
: >"$D/.unpacked"
echo "$S"
