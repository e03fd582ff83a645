#!/bin/busybox sh
# shellcheck shell=dash
# rootinit.sh - /sbin/init of the ext4 root file system that
# test/linux/initramfs.sh makes: the initramfs switch_root'ed here.  Reports
# in one line what the kernel says the root file system is, then powers off:
#   linux-root: REPORT root=<device> fstype=<type> ro=<0|1> pid=<$$> marker=<...>
# The root is mounted read-only, so busybox cannot install its applet links:
# every tool is called through busybox itself.
bb=/bin/busybox
$bb mount -t proc proc /proc
# shellcheck disable=SC2016 # awk's own $2, not the shell's
read -r dev fstype opts <<EOM
$($bb awk '$2 == "/" && $1 != "rootfs" {print $1, $3, $4}' /proc/mounts | $bb tail -n 1)
EOM
ro=0
case ",$opts," in *,ro,*) ro=1 ;; esac
echo "linux-root: REPORT root=$dev fstype=$fstype ro=$ro pid=$$ marker=$($bb tr ' ' '_' </etc/root-marker)"
$bb poweroff -f
