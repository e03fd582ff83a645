# sha256 - sha256= pins the kernel file: a wrong hash refuses to boot before
# anything is loaded (error line, EFI error back to the shell), the right
# one boots (the payload then passes).  Twice: without a TPM the loader
# hashes the file itself; with one (swtpm) it hashes it once, checking the
# pin against the digest the firmware computed for its measurement (read
# back from the event log record), so a wrong pin is still refused and the
# right one says where its digest came from (verbose).
# placement: random - the pin is checked before anything is placed
k=$P/kernel-pie.elf.gz
good=$(sha256sum "$k" | cut -d' ' -f1)
bad=$(printf '%s' "$good" | tr '0-9a-f' '1-9a-f0')
img=$(shell_esp) || fail "cannot build the shell ESP"
mcopy -i "$img" "$k" ::/EFI/kaslr/k.gz
place
cat >"$WORK/$NAME.nsh" <<NSH
fs0:\\EFI\\kaslr\\loader.efi kernel=k.gz sha256=$bad
echo "mismatch returned %lasterror%"
fs0:\\EFI\\kaslr\\loader.efi kernel=k.gz sha256=$good verbose $PLACE_OPTS -- pinned=1
NSH
mcopy -i "$img" "$WORK/$NAME.nsh" ::/startup.nsh
tpm=$WORK/$NAME.tpm
for with in none tpm; do
	rm -rf "$tpm"
	if [ "$with" = tpm ]; then
		boot_payload "$img" --cpu max --timeout 120 --tpm "$tpm"
	else
		boot_payload "$img" --cpu max --timeout 90
	fi
	expect_pass
	st=$(clean_log "$LOG" | sed -n 's/^mismatch returned //p')
	[ "$st" = 0x1A ] || fail "$with: mismatch returned '$st', want 0x1A (EFI_SECURITY_VIOLATION)"
	clean_log "$LOG" | grep -q 'error: .*k.gz: refusing to boot: kernel SHA-256 does not match' ||
		fail "$with: no hash-mismatch error line"
	[ "$(kv "$LINE" cmdline)" = pinned=1 ] || fail "$with: cmdline=$(kv "$LINE" cmdline)"
done
loader_said '.*k.gz: sha256 matches \(the TPM measurement.s digest\)'
ok "mismatch -> $st, match boots; with a TPM on the measurement's digest"
