# linux-user-generic - Debian's generic kernel (xz payload), its bzImage as
# shipped, booted to the busybox initramfs with loader-chosen physical and
# virtual KASLR.  From inside the running system: _text is the link address
# plus the loader's virtual offset, "Kernel code" starts at its physical
# base, /proc/cmdline is what was configured, EFI runtime services work
# (efivarfs shows the loader's LoaderInfo), a file in the initrd has its
# SHA-256, the initrd is where the loader put it, and efifb drives QEMU's
# standard VGA.
# placement: random - linux-rootfs boots this kernel to userspace at the edges, in the same memory, with the same checks and its modules besides
. test/linux/user.sh
want='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=generic'
place
user_boot generic "$want" "${PLACE[@]}" -- --cpu max --rng
user_check_common
[ "$U_CMDLINE" = "$want" ] || fail "/proc/cmdline is '$U_CMDLINE', want '$want'"
[ "$U_FB" = EFI_VGA ] || fail "framebuffer '$U_FB', want efifb's EFI_VGA"
ok "text=$U_TEXT code=$U_CODE ramdisk=$U_RAMDISK fb=$U_FB $U_INFO"
