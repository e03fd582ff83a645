# tpm-measure - measured boot with a TPM 2.0 (swtpm on tpm-tis) under Secure
# Boot: after a signed install boots, the PCRs read from the TPM's saved
# state with tpm2_pcrread, and the event log records the payload reads back
# from the table the loader installed, equal what is computed here from the
# same files:
#   PCR 9  = SHA256(0^32 || SHA256(kernel file))    EV_EVENT_TAG, its ESP path
#   PCR 12 = SHA256(0^32 || SHA256(UTF-16LE(cmdline)))  EV_IPL, the cmdline
#   PCR 5 record: SHA256 of the policy (kaslr-policy show), "kaslr-loader policy"
# placement: random - what is measured does not depend on where the kernel lands
want="console=ttyS0 measured=1"
T=$WORK/$NAME.esp
# place's options, which the policy allows
place
sb_install "$T" KERNEL="$P/kernel-pie.elf.gz" CMDLINE="$want" ALLOW="$PLACE_ALLOW"
printf '%s\n' "${PLACE[@]}" >"$T/EFI/BOOT/kaslr.conf"
tpm=$WORK/$NAME.tpm
rm -rf "$tpm"
boot_payload "$(dir_img "$T")" --secureboot --timeout 120 --tpm "$tpm"
expect_pass
[ "$(kv "$LINE" cmdline)" = "$want" ] || fail "cmdline='$(kv "$LINE" cmdline)'"
h() { sha256sum | cut -d' ' -f1; }
# extend: SHA256(0^32 || digest), digest in hex
extend() { { head -c 32 /dev/zero; printf '%s' "$1" | xxd -r -p; } | h; }
k_sha=$(h <"$T/EFI/BOOT/kernel-pie.elf.gz")
c_sha=$(printf '%s' "$want" | iconv -f ASCII -t UTF-16LE | h)
p_sha=$("$B/tools/kaslr-policy" show "$T/EFI/BOOT/BOOTX64.EFI" | sed -n 's/^pcr5 *sha256=\([0-9a-f]*\).*/\1/p')
[ -n "$p_sha" ] || fail "kaslr-policy show gave no policy digest"

pcrs=$(test/qemu/tpm-pcrs.sh "$tpm" 5 9 12) || fail "reading the PCRs failed"
pcr() { printf '%s\n' "$pcrs" | sed -n "s/^$1 //p"; }
[ "$(pcr 9)" = "$(extend "$k_sha")" ] || fail "PCR 9 = $(pcr 9), want $(extend "$k_sha")"
[ "$(pcr 12)" = "$(extend "$c_sha")" ] || fail "PCR 12 = $(pcr 12), want $(extend "$c_sha")"

rec() { clean_log "$LOG" | grep "^payload-tpm: pcr=$1 "; }
[ "$(rec 9)" = "payload-tpm: pcr=9 type=0x6 sha256=$k_sha tag=0x4b4c4b52 desc=\\EFI\\BOOT\\kernel-pie.elf.gz" ] ||
	fail "PCR 9 record: '$(rec 9)'"
[ "$(rec 12)" = "payload-tpm: pcr=12 type=0xd sha256=$c_sha desc=$want" ] || fail "PCR 12 record: '$(rec 12)'"
rec 5 | grep -qx "payload-tpm: pcr=5 type=0x6 sha256=$p_sha tag=0x4b4c5043 desc=kaslr-loader policy" ||
	fail "no PCR 5 policy record with sha256=$p_sha: '$(rec 5)'"
[ "$(kv "$LINE" tpmlog)" -gt 3 ] || fail "tpmlog=$(kv "$LINE" tpmlog) records"
ok "pcr9=$(pcr 9) pcr12=$(pcr 12) records=$(kv "$LINE" tpmlog)"
