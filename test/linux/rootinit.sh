#!/bin/busybox sh
# rootinit.sh - /sbin/init of the ext4 root file system that
# test/linux/initramfs.sh makes: the initramfs switch_root'ed here.  Reports
# in one line what the kernel says the root file system is, then powers off:
#   linux-root: REPORT root=<device> fstype=<type> ro=<0|1> marker=<...>
/bin/busybox mkdir -p /usr/bin /usr/sbin
/bin/busybox --install -s 2>/dev/null
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
read -r dev fstype opts <<EOM
$(awk '$2 == "/" && $1 != "rootfs" {print $1, $3, $4}' /proc/mounts | tail -n 1)
EOM
ro=0
case ",$opts," in *,ro,*) ro=1 ;; esac
echo "linux-root: REPORT root=$dev fstype=$fstype ro=$ro pid=$$ marker=$(tr ' ' '_' </etc/root-marker)"
poweroff -f
