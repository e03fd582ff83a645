# newcomer - the administrator's guide's way from the source tree to a
# systemd-boot entry, run as written: its `make install ESP=/boot/efi ...`
# line is taken from docs/admin-guide.md (the ESP, kernel, initrd and key
# swapped for this test's files;
# CMDLINE and everything else as written) and run against a copy of a
# systemd-boot ESP tree.  systemd-boot's BOOTX64.EFI must come out
# byte-identical, the entry make install writes must be the guide's entry
# text, and booting that entry (OVMF, systemd-boot unsigned, so without
# Secure Boot) must give the payload's PASS with the guide's command line.
# placement: no edge - its subject is the administrator's guide's install and entry as written, which add no option
DOC=docs/admin-guide.md
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
[ -f "$SDBOOT" ] || fail "no $SDBOOT (make deps installs systemd-boot-efi)"
cmd=$(grep -m 1 '^    make install ESP=/boot/efi ' "$DOC" | sed 's/^    //')
[ -n "$cmd" ] || fail "$DOC has no '    make install ESP=/boot/efi' line"
entry=$(sed -n '/writes \\loader\\entries\\kaslr-loader.conf:$/,/^[^ ]/p' "$DOC" | sed -n 's/^    //p')
[ -n "$entry" ] || fail "$DOC shows no kaslr-loader.conf entry"
readme_cmdline=$(printf '%s\n' "$cmd" | sed -n 's/.* CMDLINE="\([^"]*\)".*/\1/p')
[ -n "$readme_cmdline" ] || fail "the make install line of $DOC has no CMDLINE=\"...\""

E=$WORK/$NAME.esp
rm -rf "$E"; mkdir -p "$E/EFI/BOOT" "$E/EFI/systemd" "$E/loader/entries"
cp "$SDBOOT" "$E/EFI/BOOT/BOOTX64.EFI"
cp "$SDBOOT" "$E/EFI/systemd/systemd-bootx64.efi"
printf 'default kaslr-loader.conf\ntimeout 0\n' >"$E/loader/loader.conf"
printf 'an initrd the newcomer pins\n' >"$WORK/$NAME.initrd"
sb_key
run=$(printf '%s\n' "$cmd" | sed -e "s|ESP=/boot/efi|ESP=$E|" \
	-e "s|KERNEL=[^ ]*|KERNEL=$P/kernel-pie.elf|" -e "s|INITRD=[^ ]*|INITRD=$WORK/$NAME.initrd|" \
	-e "s|SIGN_KEY=[^ ]*|SIGN_KEY=$SB_KEY|" -e "s|SIGN_CERT=[^ ]*|SIGN_CERT=$SB_CERT|")
eval "$run --no-print-directory" >"$WORK/$NAME.install.log" 2>&1 ||
	fail "the guide's make install failed: $(tail -n 2 "$WORK/$NAME.install.log")"
cmp -s "$E/EFI/BOOT/BOOTX64.EFI" "$SDBOOT" || fail "systemd-boot's BOOTX64.EFI was changed"
cmp -s "$E/EFI/systemd/systemd-bootx64.efi" "$SDBOOT" || fail "systemd-bootx64.efi was changed"
[ "$(cat "$E/loader/entries/kaslr-loader.conf")" = "$entry" ] ||
	fail "make install wrote an entry that differs from the guide's: $(cat "$E/loader/entries/kaslr-loader.conf")"
test/qemu/mkgpt.sh "$WORK/$NAME.disk" "$(dir_img "$E")" 6c1a5e1f-2b3d-4e5f-8a9b-0c1d2e3f4a5d || fail "mkgpt failed"
boot_payload "$WORK/$NAME.disk" --timeout 120
expect_pass
[ "$(kv "$LINE" cmdline)" = "$readme_cmdline" ] ||
	fail "cmdline='$(kv "$LINE" cmdline)', want the guide's '$readme_cmdline'"
ok "the guide's install and entry boot: cmdline='$readme_cmdline'"
