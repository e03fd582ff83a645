# tpm-module - measured boot without Secure Boot: a TPM 2.0 (swtpm), the
# kernel and one module= file.  PCR 9, read from the TPM's saved state,
# must be the kernel's measurement extended by the module's, and the event
# log the payload reads back must hold the module's record (tag
# 0x4b4c4d4f, its ESP path) after the kernel's: a module swapped on the ESP
# changes PCR 9.
m=$WORK/$NAME.m1
head -c 7000 /dev/urandom >"$m"
cf=$(conf 'module m1.bin tpm-module')
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/m1.bin="$m" EFI/BOOT/kaslr.conf="$cf")
tpm=$WORK/$NAME.tpm
rm -rf "$tpm"
boot_payload "$esp" --timeout 120 --tpm "$tpm"
expect_pass
h() { sha256sum | cut -d' ' -f1; }
extend() { { printf '%s' "$1" | xxd -r -p; printf '%s' "$2" | xxd -r -p; } | h; }
zero=0000000000000000000000000000000000000000000000000000000000000000
k_sha=$(h <"$P/kernel-pie.elf")
m_sha=$(h <"$m")
want=$(extend "$(extend "$zero" "$k_sha")" "$m_sha")
pcrs=$(test/qemu/tpm-pcrs.sh "$tpm" 9) || fail "reading the PCRs failed"
got=$(printf '%s\n' "$pcrs" | sed -n 's/^9 //p')
[ "$got" = "$want" ] || fail "PCR 9 = $got, want kernel then module: $want"
recs=$(clean_log "$LOG" | grep '^payload-tpm: pcr=9 ')
[ "$(printf '%s\n' "$recs" | sed -n 2p)" = "payload-tpm: pcr=9 type=0x6 sha256=$m_sha tag=0x4b4c4d4f desc=\\EFI\\BOOT\\m1.bin" ] ||
	fail "second PCR 9 record is not the module's: '$recs'"
ok "pcr9=$got"
