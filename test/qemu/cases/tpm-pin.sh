# tpm-pin - with a TPM the pinned kernel is hashed once: the loader checks
# sha256= against the digest the firmware computed for its measurement (read
# back from the event log record), so a wrong pin is still refused
# (EFI_SECURITY_VIOLATION) and the right one boots, saying where its digest
# came from (verbose)
k=$P/kernel-pie.elf.gz
good=$(sha256sum "$k" | cut -d' ' -f1)
bad=$(printf '%s' "$good" | tr '0-9a-f' '1-9a-f0')
img=$(shell_esp) || fail "cannot build the shell ESP"
mcopy -i "$img" "$k" ::/EFI/kaslr/k.gz
cat >"$WORK/$NAME.nsh" <<NSH
fs0:\\EFI\\kaslr\\loader.efi kernel=k.gz sha256=$bad
echo "mismatch returned %lasterror%"
fs0:\\EFI\\kaslr\\loader.efi kernel=k.gz sha256=$good verbose -- pinned=1
NSH
mcopy -i "$img" "$WORK/$NAME.nsh" ::/startup.nsh
tpm=$WORK/$NAME.tpm
rm -rf "$tpm"
boot_payload "$img" --cpu max --timeout 120 --tpm "$tpm"
expect_pass
st=$(clean_log "$LOG" | sed -n 's/^mismatch returned //p')
[ "$st" = 0x1A ] || fail "mismatch returned '$st', want 0x1A (EFI_SECURITY_VIOLATION)"
clean_log "$LOG" | grep -q 'error: .*k.gz: refusing to boot: kernel SHA-256 does not match' ||
	fail "no hash-mismatch error line"
loader_said '.*k.gz: sha256 matches \(the TPM measurement.s digest\)'
[ "$(kv "$LINE" cmdline)" = pinned=1 ] || fail "cmdline=$(kv "$LINE" cmdline)"
ok "mismatch -> $st, match boots on the measurement's digest"
