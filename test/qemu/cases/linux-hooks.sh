# linux-hooks - a Debian kernel update end to end: the host side installed
# with make install-hooks into a directory of this case's own, the Debian
# postinst.d hook run on the kernel package's own bzImage (test/linux/
# fetch.sh) with install.conf naming a temporary ESP, the snakeoil key and
# the command line; the hook copies, pins, signs and installs it at the
# fallback path, and that ESP boots the kernel under Secure Boot with the
# configured command line (the checks of test/linux/lib.sh).
# placement: random - linux-rootfs and linux-sb boot this kernel at the edges, without and with Secure Boot
. test/linux/lib.sh
gz=$(test/linux/fetch.sh) || fail "no Debian kernel: test/linux/fetch.sh failed (message above)"
TEXT_LINK=$(sed -n 's/^text_link=//p' "$gz.facts") BRK_LINK=$(sed -n 's/^brk_link=//p' "$gz.facts")
vmlinuz=$(find "$B/linux/pkg/boot" -maxdepth 1 -name 'vmlinuz-*' | head -n 1)
[ -f "$vmlinuz" ] || fail "no vmlinuz in $B/linux/pkg/boot"
V=${vmlinuz##*/vmlinuz-}
R=$WORK/$NAME.root E=$WORK/$NAME.esp
rm -rf "$R" "$E" "$WORK/$NAME.state"; mkdir -p "$E"
make --no-print-directory install-hooks DESTDIR="$R" >"$WORK/$NAME.hooks.log" 2>&1 ||
	fail "make install-hooks: $(tail -n 2 "$WORK/$NAME.hooks.log")"
sb_key
place
cat >"$WORK/$NAME.conf" <<CONF
ESP=$E
INSTALL_PATH=EFI/BOOT/BOOTX64.EFI
CMDLINE="$LINUX_CMDLINE"
ALLOW="verbose $PLACE_ALLOW"
SIGN_KEY=$SB_KEY
SIGN_CERT=$SB_CERT
CONF
KASLR_LOADER_CONF=$WORK/$NAME.conf KASLR_LOADER_LIB=$R/usr/lib/kaslr-loader \
	KASLR_LOADER_INSTALL=$R/usr/sbin/kaslr-loader-install \
	KASLR_LOADER_UPDATE=$R/usr/sbin/kaslr-loader-update KASLR_LOADER_BOOT=$B/linux/pkg/boot \
	KASLR_LOADER_STATE=$WORK/$NAME.state \
	"$R/etc/kernel/postinst.d/zz-kaslr-loader" "$V" "$vmlinuz" >"$WORK/$NAME.postinst.log" 2>&1 ||
	fail "the postinst hook: $(tail -n 2 "$WORK/$NAME.postinst.log")"
cmp -s "$E/EFI/BOOT/vmlinuz-$V" "$vmlinuz" || fail "the hook put no copy of vmlinuz-$V on the ESP"
# verbose (install.conf's ALLOW lets it through under Secure Boot) for the
# checks' loader lines, and place's options (ALLOW too)
printf '%s\n' verbose "${PLACE[@]}" >"$E/EFI/BOOT/kaslr.conf"
LINUX_ESP=$(dir_img "$E")
linux_boot --cpu max --secureboot
clean_log "$LOG" | grep -q "Kernel command line: $LINUX_CMDLINE\$" || fail "the kernel's command line is not install.conf's"
ok "vmlinuz-$V via the postinst hook: phys=$LX_PHYS offset=$LX_VOFF"
