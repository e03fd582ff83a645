#!/bin/bash
# initramfs.sh KIND - an initramfs and a root file system for booting a
# stock Debian kernel (fetch.sh KIND: generic or cloud) to userspace, made
# from Debian's busybox-static and cpio and the kernel package's own
# modules, nothing from elsewhere.  Cached; prints the directory holding:
#
#   initrd.img   gzip'd newc cpio: /init (test/linux/init.sh), busybox,
#                the modules in load order (those built in are simply
#                absent), /data/check.bin (random bytes)
#   data.sha256  SHA-256 of /data/check.bin, for the test to compare
#   root.img     ext4 image: busybox and /sbin/init (test/linux/rootinit.sh)
#
# The init script reports what the running kernel says about itself; see
# test/linux/init.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
die() { echo "initramfs.sh: $*" >&2; exit 1; }
kind=${1:-generic}
case $kind in
generic) D=$B/linux ;;
cloud) D=$B/linux/cloud ;;
*) die "unknown kind '$kind' (generic or cloud)" ;;
esac
test/linux/fetch.sh "$kind" >/dev/null || die "test/linux/fetch.sh $kind failed"
O=$D/userspace
BB=/usr/bin/busybox
for c in "$BB" cpio gzip mkfs.ext4 objcopy; do
	command -v "$c" >/dev/null ||
		die "$c missing (Debian packages busybox-static, cpio, gzip, e2fsprogs, binutils)"
done
exec 9>"$D/.userspace.lock" || die "cannot open the lock"
flock 9 || die "cannot lock"
inputs=(test/linux/init.sh test/linux/rootinit.sh test/linux/initramfs.sh "$BB" "$D/package")
fresh=1
for f in initrd.img data.sha256 root.img; do
	[ -s "$O/$f" ] || fresh=0
done
for i in "${inputs[@]}"; do
	[ "$fresh" = 1 ] && [ "$i" -nt "$O/initrd.img" ] && fresh=0
done
if [ "$fresh" = 1 ]; then
	echo "$O"
	exit 0
fi

{ rm -rf "$O" && mkdir -p "$O/tree" "$O/root"; } || die "cannot create $O"
T=$O/tree
mkdir -p "$T/bin" "$T/proc" "$T/sys" "$T/dev" "$T/newroot" "$T/lib/modules" "$T/data" ||
	die "cannot create the tree"
{ cp "$BB" "$T/bin/busybox" && cp test/linux/init.sh "$T/init" && chmod 755 "$T/init"; } ||
	die "cannot copy busybox and init"
head -c 4096 /dev/urandom >"$T/data/check.bin" || die "no random bytes"
sha256sum "$T/data/check.bin" | cut -d' ' -f1 >"$O/data.sha256"

# the modules in load order: a module after what its .modinfo depends= names
mods=$(cat "$D/modules")
declare -A where=() done_=()
order=()
if [ "$mods" != none ]; then
	while read -r f; do
		n=$(basename "$f" .ko)
		where[$n]=$f
	done < <(find "$mods" -name '*.ko')
fi
# through a file: objcopy given /dev/stdout on a regular file replaces the
# /dev/stdout symlink itself
deps() {
	local t
	t=$(mktemp) || return 1
	objcopy -O binary --only-section=.modinfo "$1" "$t" 2>/dev/null
	tr '\0' '\n' <"$t" | sed -n 's/^depends=//p' | tr ',' ' '
	rm -f "$t"
}
visit() {
	local n=$1 d
	[ -n "${done_[$n]:-}" ] && return
	done_[$n]=1
	[ -n "${where[$n]:-}" ] || return 0 # built in
	for d in $(deps "${where[$n]}"); do visit "$d"; done
	order+=("$n")
}
# crc32c first: ext4 and jbd2 ask the crypto API for it, without modprobe
for n in crc32c_generic crc16 mbcache jbd2 ext4 virtio_ring virtio virtio_pci_modern_dev \
	virtio_pci_legacy_dev virtio_pci virtio_blk efivarfs; do
	visit "$n"
done
for n in "${order[@]}"; do
	cp "${where[$n]}" "$T/lib/modules/$n.ko" || die "copy $n.ko"
done
printf '%s\n' "${order[@]}" >"$T/lib/modules/order"

(cd "$T" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -9 >"$O/initrd.img" ||
	die "cpio/gzip failed"

# the root file system switch_root goes to
R=$O/root
mkdir -p "$R/bin" "$R/sbin" "$R/proc" "$R/sys" "$R/dev" "$R/etc" || die "cannot create the root tree"
{ cp "$BB" "$R/bin/busybox" && cp test/linux/rootinit.sh "$R/sbin/init" &&
	chmod 755 "$R/sbin/init"; } || die "cannot populate the root tree"
echo "kaslr-loader test root" >"$R/etc/root-marker"
mkfs.ext4 -q -F -L kaslr-root -d "$R" "$O/root.img" 32M >/dev/null 2>&1 ||
	die "mkfs.ext4 -d failed"
rm -rf "$T" "$R"
echo "$O"
