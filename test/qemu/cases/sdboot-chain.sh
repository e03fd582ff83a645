# sdboot-chain - systemd-boot (Debian's systemd-bootx64.efi) as the firmware's
# \EFI\BOOT\BOOTX64.EFI chainloads the loader from a Type #1 `efi` entry on a
# GPT disk.  The entry's `options` reach the loader as UCS-2 LoadOptions: the
# kernel path is honoured and the command line after `--` reaches the payload
# verbatim.  kaslr.conf beside the loader's own image (\EFI\kaslr\) is read.
# Boot Loader Interface: systemd-boot's LoaderInfo, LoaderImageIdentifier and
# LoaderDevicePartUUID survive (the loader keeps an earlier stage's values).
# Random seed: with \loader\random-seed on the ESP and `random-seed-mode
# always`, systemd-boot (252: the LoaderRandomSeed variable; later versions
# the LINUX_EFI_RANDOM_SEED table) leaves a seed, which the loader mixes in:
# the payload finds the earlier-stage bit (0x20) in its entropy sources,
# on -cpu qemu64 where nothing else would be strong but the file.
# placement: random - what systemd-boot hands over does not depend on where the kernel lands
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
[ -f "$SDBOOT" ] || fail "no $SDBOOT (make deps installs systemd-boot-efi)"
uuid=6c1a5e1f-2b3d-4e5f-8a9b-0c1d2e3f4a5b
want="console=ttyS0 sdboot.marker=1 foo=bar"
printf 'default kaslr.conf\ntimeout 0\nrandom-seed-mode always\n' >"$WORK/$NAME.loader.conf"
head -c 512 /dev/urandom >"$WORK/$NAME.seed"
place
printf '%s\n' 'title kaslr-loader (test)' 'efi /EFI/kaslr/kaslr-loader.efi' \
	"options kernel=\\EFI\\kaslr\\kernel.elf $PLACE_OPTS -- $want" >"$WORK/$NAME.entry.conf"
fat=$WORK/$NAME.fat
test/qemu/mkesp.sh "$fat" "$SDBOOT" - \
	EFI/kaslr/kaslr-loader.efi="$LOADER" EFI/kaslr/kernel.elf="$P/kernel-pie.elf" \
	EFI/kaslr/kaslr.conf="$(conf verbose)" \
	loader/loader.conf="$WORK/$NAME.loader.conf" \
	loader/entries/kaslr.conf="$WORK/$NAME.entry.conf" \
	loader/random-seed="$WORK/$NAME.seed" || fail "mkesp failed"
test/qemu/mkgpt.sh "$WORK/$NAME.img" "$fat" "$uuid" || fail "mkgpt failed"
rm -f "$fat"
boot_payload "$WORK/$NAME.img" --cpu qemu64 --timeout 120
expect_pass
src=$(kv "$LINE" sources)
[ $((src & 0x20)) != 0 ] || fail "sources=$src: systemd-boot's seed was not mixed in (no 0x20)"
[ "$(kv "$LINE" weak)" = 0 ] || fail "weak=$(kv "$LINE" weak) with systemd-boot's seed"
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)', want '$want'"
[ "$(kv "$LINE" variant)" = pie ] || fail "variant=$(kv "$LINE" variant), want pie"
# verbose came from \EFI\kaslr\kaslr.conf, i.e. beside the chainloaded image
clean_log "$LOG" | grep -q '^kaslr-loader: boot loader interface: ' ||
	fail "no verbose output: kaslr.conf beside the loader was not read"
bli() { clean_log "$LOG" | sed -n "s/^payload-bli: $1=\(.*\) nv=0\$/\1/p" | tail -n 1; }
case $(bli LoaderInfo) in "systemd-boot "*) ;; *) fail "LoaderInfo='$(bli LoaderInfo)', want systemd-boot's" ;; esac
[ "$(bli LoaderImageIdentifier)" = '\EFI\BOOT\BOOTX64.EFI' ] ||
	fail "LoaderImageIdentifier='$(bli LoaderImageIdentifier)', want systemd-boot's path"
[ "$(bli LoaderDevicePartUUID | tr A-F a-f)" = "$uuid" ] ||
	fail "LoaderDevicePartUUID='$(bli LoaderDevicePartUUID)', want $uuid"
clean_log "$LOG" | grep '^kaslr-loader: boot loader interface: ' |
	grep -q 'kept from an earlier stage.* LoaderInfo LoaderImageIdentifier' ||
	fail "the loader did not report keeping systemd-boot's variables"
[ "$(kv "$LINE" bli)" = 7 ] || fail "bli=$(kv "$LINE" bli), want 7"
ok "cmdline='$want' $(bli LoaderInfo) sources=$src"
