# linux-rootfs - all the way to a root file system: the initramfs loads
# virtio_pci, virtio_blk and ext4 (with what they need) from the kernel
# package itself, mounts the ext4 disk the test made on /dev/vda read-only,
# and switch_roots into it; its /sbin/init reports what it runs on.
# placement: edges
. test/linux/user.sh
place
user_boot generic 'console=ttyS0 panic=-1 quiet no_timer_check kl.mode=root ro' "${PLACE[@]}" -- --cpu max \
	--vdisk "$B/linux/userspace/root.img"
user_check_common
line=$(clean_log "$LOG" | grep -a '^linux-root: REPORT' | tail -n 1)
[ -n "$line" ] || fail "no report from the root file system's /sbin/init"
[ "$(kv "$line" root)" = /dev/vda ] || fail "root is $(kv "$line" root), want /dev/vda: $line"
[ "$(kv "$line" fstype)" = ext4 ] || fail "root fstype $(kv "$line" fstype): $line"
[ "$(kv "$line" ro)" = 1 ] || fail "root is not read-only: $line"
[ "$(kv "$line" pid)" = 1 ] || fail "the root's init is not PID 1: $line"
[ "$(kv "$line" marker)" = kaslr-loader_test_root ] || fail "wrong root file system: $line"
ok "root=/dev/vda ext4 ro; text=$U_TEXT code=$U_CODE"
