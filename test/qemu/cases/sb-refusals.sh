# sb-refusals - under Secure Boot the signed loader itself refuses, one
# line each and before anything is handed over (no payload line):
#   1. the kernel file changed by one byte after make install;
#   2. a signed loader that carries no policy (the plain build, signed);
#   3. a signed loader whose policy section is malformed (one header byte)
# placement: no edge - the loader refuses every boot before it places anything
T=$WORK/$NAME.esp
sb_install "$T" TEST_KERNEL=1 CMDLINE=tampered
k=$T/EFI/BOOT/kernel-pie.elf
printf '\x01' | dd of="$k" bs=1 seek=$(($(stat -c %s "$k") - 1)) conv=notrunc status=none
boot_payload "$(dir_img "$T")" --secureboot --timeout 90 --until 'kaslr-loader: error'
no_payload
loader_said "error: .*kernel-pie.elf: refusing to boot: file's SHA-256 differs from the embedded policy's pin"

sb_key
sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$WORK/$NAME.plain.efi" "$LOADER" >/dev/null 2>&1 ||
	fail "sbsign the plain build"
rm -rf "$WORK/$NAME.empty"; mkdir -p "$WORK/$NAME.empty"
img=$(dir_img "$WORK/$NAME.empty" EFI/BOOT/BOOTX64.EFI="$WORK/$NAME.plain.efi" \
	EFI/BOOT/kernel.elf="$P/kernel-pie.elf")
boot_payload "$img" --secureboot --timeout 90 --until 'kaslr-loader: error'
no_payload
loader_said "error: refusing to boot: Secure Boot is on and the loader carries no policy"

# a policy whose version field (offset 8 of the section) is not 1
T2=$WORK/$NAME.esp2
sb_install "$T2" TEST_KERNEL=1 ENTRY=no
"$B/tools/kaslr-policy" write --loader "$LOADER" --out "$WORK/$NAME.bad.efi" \
	--kernel "EFI/BOOT/kernel-pie.elf=$P/kernel-pie.elf" || fail "kaslr-policy write"
off=$(objdump -h "$WORK/$NAME.bad.efi" | awk '$2 == ".kpolicy" {print $6}')
[ -n "$off" ] || fail "no .kpolicy section in the loader"
printf '\x02' | dd of="$WORK/$NAME.bad.efi" bs=1 seek=$((0x$off + 8)) conv=notrunc status=none
sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$T2/EFI/BOOT/BOOTX64.EFI" "$WORK/$NAME.bad.efi" \
	>/dev/null 2>&1 || fail "sbsign the malformed one"
"$B/tools/kaslr-policy" show "$T2/EFI/BOOT/BOOTX64.EFI" >/dev/null 2>&1 && fail "the tool accepts the malformed policy"
boot_payload "$(dir_img "$T2")" --secureboot --timeout 90 --until 'kaslr-loader: error'
no_payload
loader_said "error: the loader's own .kpolicy section: the embedded policy is malformed"
ok "tampered kernel, no policy, malformed policy: all refused"
