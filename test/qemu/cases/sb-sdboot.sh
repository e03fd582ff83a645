# sb-sdboot - Secure Boot with systemd-boot (Debian's systemd-bootx64.efi,
# signed here with the snakeoil key) as \EFI\BOOT\BOOTX64.EFI chainloading
# the signed loader from a Type #1 entry whose options try to change what
# is booted: another kernel, nokaslr, kaslr.seed= and a command line after
# "--".  The payload shows the policy's kernel and command line, no
# NOKASLR/FIXED_SEED flag.
# placement: no edge - its subject is that Secure Boot ignores the entry's options, kaslr.seed= among them
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
[ -f "$SDBOOT" ] || fail "no $SDBOOT (make deps installs systemd-boot-efi)"
want="console=ttyS0 via.sdboot=1"
T=$WORK/$NAME.esp
rm -rf "$T"; mkdir -p "$T/EFI/BOOT" "$T/loader/entries"
sb_key
sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$T/EFI/BOOT/BOOTX64.EFI" "$SDBOOT" >/dev/null 2>&1 ||
	fail "sbsign systemd-boot"
cp -r "$T" "$WORK/$NAME.keep"
make --no-print-directory install ESP="$T" INSTALL_PATH=EFI/kaslr/kaslr-loader.efi TEST_KERNEL=1 \
	CMDLINE="$want" SIGN_KEY="$SB_KEY" SIGN_CERT="$SB_CERT" >"$WORK/$NAME.install.log" 2>&1 ||
	fail "make install: $(tail -n 2 "$WORK/$NAME.install.log")"
cmp -s "$T/EFI/BOOT/BOOTX64.EFI" "$WORK/$NAME.keep/EFI/BOOT/BOOTX64.EFI" || fail "make install changed systemd-boot"
rm -rf "$WORK/$NAME.keep"
cp "$P/kernel-high.elf" "$T/EFI/kaslr/other.elf"
printf 'default kaslr-loader.conf\ntimeout 0\n' >"$T/loader/loader.conf"
# the entry make install wrote, with options an attacker added
printf 'options kernel=\\EFI\\kaslr\\other.elf nokaslr kaslr.seed=%s -- init=/bin/sh\n' \
	0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef \
	>>"$T/loader/entries/kaslr-loader.conf"
test/qemu/mkgpt.sh "$WORK/$NAME.disk" "$(dir_img "$T")" 6c1a5e1f-2b3d-4e5f-8a9b-0c1d2e3f4a5c ||
	fail "mkgpt failed"
boot_payload "$WORK/$NAME.disk" --secureboot --timeout 150
expect_pass
[ "$(kv "$LINE" variant)" = pie ] || fail "variant=$(kv "$LINE" variant): the options' kernel was booted"
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)', want the policy's"
[ $(( $(kv "$LINE" flags) & 6 )) = 0 ] || fail "flags=$(kv "$LINE" flags): nokaslr or kaslr.seed taken"
for k in kernel nokaslr kaslr.seed cmdline; do
	loader_said "warning: load options: '$k' ignored: Secure Boot is on"
done
ok "systemd-boot signed, options ignored, cmdline='$want'"
