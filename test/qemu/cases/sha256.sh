# sha256 - sha256= pins the kernel file: a wrong hash refuses to boot before
# anything is loaded (error line, EFI error back to the shell), the right
# one boots (the payload then passes)
k=$P/kernel-pie.elf.gz
good=$(sha256sum "$k" | cut -d' ' -f1)
bad=$(printf '%s' "$good" | tr '0-9a-f' '1-9a-f0')
img=$(shell_esp) || fail "cannot build the shell ESP"
mcopy -i "$img" "$k" ::/EFI/kaslr/k.gz
cat >"$WORK/$NAME.nsh" <<NSH
fs0:\\EFI\\kaslr\\loader.efi kernel=k.gz sha256=$bad
echo "mismatch returned %lasterror%"
fs0:\\EFI\\kaslr\\loader.efi kernel=k.gz sha256=$good -- pinned=1
NSH
mcopy -i "$img" "$WORK/$NAME.nsh" ::/startup.nsh
boot_payload "$img" --cpu max --timeout 90
expect_pass
st=$(clean_log "$LOG" | sed -n 's/^mismatch returned //p')
[ "$st" = 0x1A ] || fail "mismatch returned '$st', want 0x1A (EFI_SECURITY_VIOLATION)"
clean_log "$LOG" | grep -q 'error: .*k.gz: refusing to boot: kernel SHA-256 does not match' ||
	fail "no hash-mismatch error line"
[ "$(kv "$LINE" cmdline)" = pinned=1 ] || fail "cmdline=$(kv "$LINE" cmdline)"
ok "mismatch -> $st, match boots"
