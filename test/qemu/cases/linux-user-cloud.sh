# linux-user-cloud - Debian's cloud kernel (LZ4 legacy payload), its bzImage
# as shipped, to userspace through systemd-boot: the admin guide's entry (an
# `efi` line, `options kernel=vmlinuz initrd=initrd.img -- CMDLINE`) with
# the kernel and initrd beside the loader.  The same checks as
# linux-user-generic, except that the LoaderInfo the running system reads
# through efivarfs is systemd-boot's (the loader keeps an earlier stage's).
# placement: edges
. test/linux/user.sh
want='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=cloud'
USER_VIA=sdboot
place
user_boot cloud "$want" "${PLACE[@]}" -- --cpu max
user_check_common
[ "$U_CMDLINE" = "$want" ] || fail "/proc/cmdline is '$U_CMDLINE', want '$want'"
ok "text=$U_TEXT code=$U_CODE ramdisk=$U_RAMDISK $U_INFO"
