#!/bin/bash
# build-image.sh [NAME] - the Debian 12 system test/system/run.sh boots, built
# with mmdebstrap and cached under build/system/ (never committed); with NAME,
# test/system/NAME.conf, read after image.conf, changes it (its PACKAGES, and
# CUSTOMIZE: more lines for the customize hook, the tree in $r) and the image
# is cached under build/system/NAME/:
#   root.ext4      the root file system (ext4, UUID $ROOT_UUID, made with
#                  mkfs.ext4 -d from mmdebstrap's directory: no mount needed)
#   boot/          copies of its /boot/vmlinuz-* and initrd.img-*, for make install
#   image.key      the SHA-256 of this script, test/system/image.conf (and
#                  NAME.conf): while they are unchanged the image is not
#                  built again
# The system: bookworm (main, as the point release ships it) with the real
# linux-image-amd64, initramfs-tools (MODULES=most: the initrd is made in a
# chroot that cannot see the VM's disk), systemd, systemd-boot (bootctl) and
# what the guest side of the tests needs (binutils, xz-utils and sbsigntool
# for kaslr-loader's hooks, dosfstools for the ESP's fsck).  The ESP is
# mounted at /boot/efi by fstab (PARTUUID); the unit kaslr-system.service
# runs /root/kaslr-system/run when run.sh has put one there (it writes per-run
# files into the image copy it boots with debugfs), then powers off.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/system
die() { echo "build-image.sh: $*" >&2; exit 1; }
confs=(test/system/image.conf)
if [ -n "${1:-}" ]; then
	confs+=("test/system/$1.conf")
	D=$B/system/$1
fi
for c in "${confs[@]}"; do
	[ -f "$c" ] || die "no $c"
	# shellcheck source=test/system/image.conf
	. "$c"
done
key=$(cat test/system/build-image.sh "${confs[@]}" | sha256sum | cut -d' ' -f1)
if [ -s "$D/root.ext4" ] && [ "$(cat "$D/image.key" 2>/dev/null)" = "$key" ] &&
	ls "$D"/boot/vmlinuz-* >/dev/null 2>&1; then
	echo "build-image.sh: cached $D/root.ext4"
	exit 0
fi
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (make deps installs it)"
command -v mkfs.ext4 >/dev/null || PATH=$PATH:/usr/sbin:/sbin
mkdir -p "$D" || die "cannot create $D"
rm -rf "${D:?}/root" "${D:?}/root.ext4" "${D:?}/image.key" "${D:?}/boot"
tree=$D/root

# the customize hook: runs with the finished tree as $1
hook=$D/customize.sh
cat >"$hook" <<HOOK
#!/bin/sh
set -e
r=\$1
echo kaslr-system >"\$r/etc/hostname"
echo $MACHINE_ID >"\$r/etc/machine-id"
mkdir -p "\$r/boot/efi" "\$r/root/kaslr-system"
printf '%s\n' 'UUID=$ROOT_UUID / ext4 errors=remount-ro 0 1' \\
	'PARTUUID=$ESP_PARTUUID /boot/efi vfat umask=0077 0 2' >"\$r/etc/fstab"
cat >"\$r/etc/systemd/system/kaslr-system.service" <<'UNIT'
[Unit]
Description=kaslr-loader system test: report, then the step run.sh asked for
After=multi-user.target
ConditionPathExists=/root/kaslr-system/run

[Service]
Type=simple
ExecStart=/bin/bash /root/kaslr-system/run
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/kaslr-system.service \\
	"\$r/etc/systemd/system/multi-user.target.wants/kaslr-system.service"
# no login prompt on the serial console to interleave with the report
ln -sf /dev/null "\$r/etc/systemd/system/serial-getty@ttyS0.service"
${CUSTOMIZE:-}
# apt-get clean: the image keeps no .deb files
rm -f "\$r"/var/cache/apt/archives/*.deb
HOOK
chmod +x "$hook"

mode=${MMDEBSTRAP_MODE:-unshare}
# the initrd is made in a chroot that cannot see the VM's disk: every module
# a disk may need goes in (hook arguments are expanded by mmdebstrap's shell)
# shellcheck disable=SC2016
ehook='mkdir -p "$1/etc/initramfs-tools/conf.d" && echo MODULES=most >"$1/etc/initramfs-tools/conf.d/kaslr-system"'
echo "build-image.sh: mmdebstrap --mode=$mode bookworm (about 300 packages; several minutes)" >&2
mmdebstrap --mode="$mode" --variant=apt --include="$(echo "$PACKAGES" | tr ' ' ',')" \
	--essential-hook="$ehook" \
	--customize-hook="$hook \"\$1\"" \
	bookworm "$tree" "$MIRROR" >"$D/mmdebstrap.log" 2>&1 ||
	die "mmdebstrap failed (last lines of $D/mmdebstrap.log:) $(tail -n 5 "$D/mmdebstrap.log")"
mkdir -p "$D/boot" || die "cannot create $D/boot"
cp "$tree"/boot/vmlinuz-* "$tree"/boot/initrd.img-* "$D/boot/" ||
	die "the image has no /boot/vmlinuz-* and initrd.img-*"
mkfs.ext4 -q -F -U "$ROOT_UUID" -L root -d "$tree" "$D/root.ext4" "$ROOT_SIZE" ||
	die "mkfs.ext4 -d $tree failed"
rm -rf "$tree"
echo "$key" >"$D/image.key"
echo "build-image.sh: built $D/root.ext4 ($(cd "$D/boot" && echo *))"
