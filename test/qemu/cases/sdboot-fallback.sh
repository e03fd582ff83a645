# sdboot-fallback - systemd-boot's default entry names a truncated kernel.
# The loader must print its one error line and return an EFI error to
# systemd-boot, which must still be alive to report it ("Failed to execute
# … Load Error") and return it to the firmware.  The firmware falls back to
# its UEFI shell, whose startup.nsh makes the other entry the default and
# starts systemd-boot again, from the same ESP in the same boot: that entry
# (a relative kernel= path, resolved beside the loader) must reach the
# payload.  So nothing the failed run did leaked into the next one.
# placement: random - the fallback after a refusal does not depend on where the kernel lands
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
[ -f "$SDBOOT" ] || fail "no $SDBOOT (make deps installs systemd-boot-efi)"
bad=$WORK/$NAME.bad.elf
place
head -c 3000 "$P/kernel-pie.elf" >"$bad"
printf 'default bad.conf\ntimeout 0\n' >"$WORK/$NAME.loader1.conf"
printf 'default good.conf\ntimeout 0\n' >"$WORK/$NAME.loader2.conf"
printf '%s\n' 'title kaslr-loader, truncated kernel' 'efi /EFI/kaslr/kaslr-loader.efi' \
	'options kernel=\EFI\kaslr\bad.elf -- console=ttyS0 entry=bad' >"$WORK/$NAME.bad.conf"
printf '%s\n' 'title kaslr-loader, good kernel' 'efi /EFI/kaslr/kaslr-loader.efi' \
	"options kernel=kernel.elf $PLACE_OPTS -- console=ttyS0 entry=good" >"$WORK/$NAME.good.conf"
printf '%s\r\n' '@echo -off' 'echo "shell: firmware fell back"' 'fs0:' \
	'cp -q \loader\loader2.conf \loader\loader.conf' \
	'echo "shell: starting systemd-boot again"' '\EFI\BOOT\BOOTX64.EFI' \
	'echo "shell: systemd-boot returned %lasterror%"' 'reset -s' >"$WORK/$NAME.nsh"
img=$WORK/$NAME.img
test/qemu/mkesp.sh "$img" "$SDBOOT" - \
	EFI/kaslr/kaslr-loader.efi="$LOADER" EFI/kaslr/kernel.elf="$P/kernel-pie.elf" \
	EFI/kaslr/bad.elf="$bad" \
	loader/loader.conf="$WORK/$NAME.loader1.conf" \
	loader/loader2.conf="$WORK/$NAME.loader2.conf" \
	loader/entries/bad.conf="$WORK/$NAME.bad.conf" \
	loader/entries/good.conf="$WORK/$NAME.good.conf" \
	startup.nsh="$WORK/$NAME.nsh" || fail "mkesp failed"
boot_payload "$img" --cpu max --timeout 150
# the events, in this order, each once
ev=$(clean_log "$LOG" | grep -aE '^kaslr-loader: error: |^Failed to execute |^BdsDxe: failed to start |^shell: |^payload: ')
n=$(printf '%s\n' "$ev" | grep -c '^kaslr-loader: error: ')
[ "$n" = 1 ] || fail "$n loader error lines, want 1"
printf '%s\n' "$ev" | head -n 1 | grep -q '^kaslr-loader: error: \\EFI\\kaslr\\bad.elf' ||
	fail "first event is not the loader's error about bad.elf: $(printf '%s\n' "$ev" | head -n 1)"
printf '%s\n' "$ev" | sed -n 2p | grep -q '^Failed to execute kaslr-loader, truncated kernel (.*kaslr-loader.efi): Load Error' ||
	fail "systemd-boot did not report the loader's EFI error: $(printf '%s\n' "$ev" | sed -n 2p)"
printf '%s\n' "$ev" | sed -n 3p | grep -q '^BdsDxe: failed to start .*: Load Error' ||
	fail "systemd-boot did not return the error to the firmware: $(printf '%s\n' "$ev" | sed -n 3p)"
printf '%s\n' "$ev" | sed -n 4p | grep -q '^shell: firmware fell back' || fail "no shell fallback"
printf '%s\n' "$ev" | sed -n 6p | grep -q '^payload: PASS ' ||
	fail "no payload PASS after systemd-boot started again: $(printf '%s\n' "$ev" | sed -n 6p)"
expect_pass
[ "$(kv "$LINE" cmdline)" = "console=ttyS0 entry=good" ] || fail "cmdline='$(kv "$LINE" cmdline)'"
ok "error line, Load Error to systemd-boot and firmware, then the good entry"
