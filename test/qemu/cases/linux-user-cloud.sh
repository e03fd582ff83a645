# linux-user-cloud - Debian's cloud kernel (LZ4 legacy payload), its bzImage
# as shipped, to userspace: the same checks as linux-user-generic.
. test/linux/user.sh
want='console=ttyS0 panic=-1 quiet kl.marker=cloud'
user_boot cloud "$want" -- --cpu max
user_check_common
[ "$U_CMDLINE" = "$want" ] || fail "/proc/cmdline is '$U_CMDLINE', want '$want'"
ok "text=$U_TEXT code=$U_CODE ramdisk=$U_RAMDISK $U_INFO"
