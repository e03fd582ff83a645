# install-boot - what `make install` puts into an ESP directory boots as it
# is: the loader signed with sbsign (OVMF here does not enforce Secure Boot,
# so this proves signing leaves a working image), the kernel as kernel.elf
# beside it, and CONF= as kaslr.conf, whose command line reaches the payload.
# placement: random - what make install writes boots or not wherever the kernel lands
E=$WORK/$NAME.dir
rm -rf "$E"; mkdir -p "$E"
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 1 -subj /CN=kaslr-loader-test \
	-keyout "$WORK/$NAME.key" -out "$WORK/$NAME.crt" >/dev/null 2>&1 || fail "openssl"
place
printf '%s\n' 'cmdline console=ttyS0 installed=1' "${PLACE[@]}" >"$WORK/$NAME.conf"
make --no-print-directory install ESP="$E" KERNEL="$P/kernel-high.elf.gz" CONF="$WORK/$NAME.conf" \
	SIGN_KEY="$WORK/$NAME.key" SIGN_CERT="$WORK/$NAME.crt" >"$WORK/$NAME.make.log" 2>&1 ||
	fail "make install: $(tail -n 2 "$WORK/$NAME.make.log")"
sbverify --cert "$WORK/$NAME.crt" "$E/EFI/BOOT/BOOTX64.EFI" >/dev/null 2>&1 || fail "installed loader is not signed"
img=$WORK/$NAME.img
rm -f "$img"
mformat -i "$img" -C -T 131072 -h 64 -s 32 :: >/dev/null || fail mformat
mcopy -s -i "$img" "$E"/* ::/ || fail mcopy
boot_payload "$img" --cpu max
expect_pass
[ "$(kv "$LINE" variant)" = high ] || fail "variant=$(kv "$LINE" variant), want high (KERNEL=)"
[ "$(kv "$LINE" cmdline)" = "console=ttyS0 installed=1" ] || fail "cmdline='$(kv "$LINE" cmdline)' (CONF=)"
ok "signed, $(kv "$LINE" variant), cmdline from CONF="
