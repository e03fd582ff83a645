# tpm-module - measured boot without Secure Boot: a TPM 2.0 (swtpm), the
# kernel and one module= file.  PCR 9, read from the TPM's saved state,
# must be the kernel's measurement extended by the module's, and the event
# log the payload reads back must hold the module's record (tag
# 0x4b4c4d4f, its ESP path) after the kernel's: a module swapped on the ESP
# changes PCR 9.  PCR 5 holds the settings record (tag 0x4b4c5354): its
# digest is the SHA-256 of the settings text kaslr.conf(5) documents, written out
# here, which `kaslr-policy settings --conf` must also print for the
# same kaslr.conf and options, and a second boot whose module string alone differs changes PCR 5
# but not PCR 9.  Both boots take the same options of place's (their
# kaslr.seed= as its SHA-256, their placement as written, in the text).
# placement: random - what is measured does not depend on where the kernel lands
m=$WORK/$NAME.m1
head -c 7000 /dev/urandom >"$m"
tpm=$WORK/$NAME.tpm
place
boot_module() { # boot_module STRING: one boot with the module given STRING
	local cf esp
	cf=$(conf "module m1.bin $1" "${PLACE[@]}")
	esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/m1.bin="$m" EFI/BOOT/kaslr.conf="$cf")
	rm -rf "$tpm"
	boot_payload "$esp" --timeout 120 --tpm "$tpm"
	expect_pass
}
boot_module tpm-module
h() { sha256sum | cut -d' ' -f1; }
extend() { { printf '%s' "$1" | xxd -r -p; printf '%s' "$2" | xxd -r -p; } | h; }
zero=0000000000000000000000000000000000000000000000000000000000000000
k_sha=$(h <"$P/kernel-pie.elf")
m_sha=$(h <"$m")
want=$(extend "$(extend "$zero" "$k_sha")" "$m_sha")
pcrs=$(test/qemu/tpm-pcrs.sh "$tpm" 5 9) || fail "reading the PCRs failed"
got=$(printf '%s\n' "$pcrs" | sed -n 's/^9 //p')
pcr5=$(printf '%s\n' "$pcrs" | sed -n 's/^5 //p')
[ "$got" = "$want" ] || fail "PCR 9 = $got, want kernel then module: $want"
recs=$(clean_log "$LOG" | grep '^payload-tpm: pcr=9 ')
[ "$(printf '%s\n' "$recs" | sed -n 2p)" = "payload-tpm: pcr=9 type=0x6 sha256=$m_sha tag=0x4b4c4d4f desc=\\EFI\\BOOT\\m1.bin" ] ||
	fail "second PCR 9 record is not the module's: '$recs'"

# the settings text: every key with its effective value (kaslr.conf(5))
seed=${PLACE_OPTS%% *}
seed_sha=$(printf '%s' "${seed#kaslr.seed=}" | xxd -r -p | h)
settings="kaslr-loader settings 1
verbose=0
nokaslr=0
kernel=
kaslr.seed=sha256:$seed_sha
sha256=none
kaslr.min=0x1000000
kaslr.max=0x0
kaslr.maxsize=0x20000000
module=m1.bin,tpm-module
kaslr.phys=$TEST_PLACEMENT
kaslr.virt=$TEST_PLACEMENT
"
s_sha=$(printf '%s' "$settings" | h)
rec=$(clean_log "$LOG" | grep '^payload-tpm: pcr=5 .* tag=0x4b4c5354 ')
[ "$rec" = "payload-tpm: pcr=5 type=0x6 sha256=$s_sha tag=0x4b4c5354 desc=$(printf '%s' "$settings" | tr '\n' '?')" ] ||
	fail "PCR 5 settings record: '$rec', want sha256=$s_sha"
tool=$("$B/tools/kaslr-policy" settings --conf "$(conf "module m1.bin tpm-module" "${PLACE[@]}")" | h)
[ "$tool" = "$s_sha" ] || fail "kaslr-policy settings --conf gives sha256=$tool, the loader measured $s_sha"

boot_module tpm-module-renamed
pcrs=$(test/qemu/tpm-pcrs.sh "$tpm" 5 9) || fail "reading the PCRs failed"
[ "$(printf '%s\n' "$pcrs" | sed -n 's/^9 //p')" = "$got" ] || fail "the module string changed PCR 9"
[ "$(printf '%s\n' "$pcrs" | sed -n 's/^5 //p')" != "$pcr5" ] ||
	fail "PCR 5 = $pcr5 with another module string: the string is not measured"
ok "pcr9=$got; settings sha256=$s_sha; another module string changes PCR 5"
