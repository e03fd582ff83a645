# shellcheck shell=bash
# uki.sh - for the boot cases that boot a unified kernel image
# (test/qemu/cases/uki-*.sh; sourced after test/qemu/lib.sh and
# test/linux/user.sh).
#
# uki_build: $WORK/$NAME.uki.efi from Debian's cloud
#   kernel (LZ4: the fastest to boot) and the suite's busybox initramfs,
#   with UKI_CMDLINE as .cmdline (set it before sourcing this file to
#   change it), an os-release as .osrel, and a .pcrsig
#   (a small JSON text) and .pcrpkey (a fresh RSA public key): built by
#   test/linux/mkuki.sh as linuxx64.efi.stub(7) shows.  Sets UKI (the
#   file), UKI_DIR (the section files), U_DIR (initramfs.sh's directory)
#   and UKI_PCR11, what `systemd-measure calculate` (systemd 252, the
#   stub's own version) predicts PCR 11 to be after the sections-only
#   phase: the value every boot of UKI, through its stub or the loader,
#   must show.
# uki_boot ESP [boot.sh option...]: user_boot_again on ESP, then U_STUB
#   (the kernel's "linux-init: STUB" line: StubPcr* variables, /.extra
#   files) and U_PCR N (PCR N of the report, lower case).
# uki_var_hex N: StubPcr* variable content as efivarfs shows it for the
#   PCR number N: attributes 0x06 (boot service and runtime access,
#   volatile), then N in UTF-16 with its NUL
UKI_CMDLINE=${UKI_CMDLINE:-'console=ttyS0 panic=-1 quiet kl.marker=uki'}

uki_build() {
	local measure=/lib/systemd/systemd-measure o
	[ -x "$measure" ] || fail "no $measure (make deps installs systemd)"
	test/linux/fetch.sh cloud >/dev/null || fail "no Debian cloud kernel: test/linux/fetch.sh cloud failed"
	U_DIR=$(test/linux/initramfs.sh cloud) || fail "no initramfs for the cloud kernel"
	o=$WORK/$NAME.uki
	mkdir -p "$o.src" || fail "cannot create $o.src"
	printf '%s\n' 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"' 'NAME="Debian GNU/Linux"' \
		'ID=debian' 'VERSION_ID="12"' >"$o.src/os-release"
	printf '{"sha256":[{"pcrs":[11],"pol":"00"}]}\n' >"$o.src/pcrsig.json"
	if [ ! -s "$o.src/pcrpkey.pem" ]; then
		openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$o.src/key.pem" \
			>/dev/null 2>&1 || fail "openssl genpkey failed"
		openssl pkey -in "$o.src/key.pem" -pubout -out "$o.src/pcrpkey.pem" 2>/dev/null ||
			fail "openssl pkey -pubout failed"
	fi
	UKI=$o.efi
	test/linux/mkuki.sh "$UKI" --linux "$B/linux/cloud/vmlinuz" --initrd "$U_DIR/initrd.img" \
		--cmdline "$UKI_CMDLINE" --osrel "$o.src/os-release" --pcrsig "$o.src/pcrsig.json" \
		--pcrpkey "$o.src/pcrpkey.pem" || fail "mkuki.sh failed"
	UKI_DIR=$UKI.d
	UKI_PCR11=$("$measure" calculate --linux="$UKI_DIR/linux" --osrel="$UKI_DIR/osrel" \
		--cmdline="$UKI_DIR/cmdline" --initrd="$UKI_DIR/initrd" --pcrpkey="$UKI_DIR/pcrpkey" \
		--bank=sha256 --phase= 2>/dev/null | sed -n 's/^11:sha256=\([0-9a-f]*\).*/\1/p')
	[ ${#UKI_PCR11} = 64 ] || fail "systemd-measure calculate gave no PCR 11"
}

uki_boot() {
	# shellcheck disable=SC2034 # the image user_boot_again boots
	U_ESP=$1
	shift
	user_boot_again "$@"
	U_STUB=$(clean_log "$LOG" | sed -n 's/^linux-init: STUB //p' | tail -n 1)
}

# uki_stub KEY: a value of the STUB line ("" when absent)
uki_stub() {
	printf '%s\n' "$U_STUB" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

U_PCR() {
	printf '%s\n' "$U_PCRS" | tr ' ' '\n' | sed -n "s/^$1=//p" | tr 'A-F' 'a-f'
}

uki_var_hex() {
	local n=$1 i
	printf '06000000'
	for ((i = 0; i < ${#n}; i++)); do printf '%02x00' "'${n:i:1}"; done
	printf '0000\n'
}

# uki_files_ok: the kernel found .pcrsig and .pcrpkey under /.extra, byte
# for byte (the stub's cpio archives after .initrd)
uki_files_ok() {
	[ "$(uki_stub tpm2-pcr-signature.json)" = "$(sha256sum <"$UKI_DIR/pcrsig" | cut -d' ' -f1)" ] ||
		fail "boot $USER_BOOTS: /.extra/tpm2-pcr-signature.json is not .pcrsig (STUB: $U_STUB)"
	[ "$(uki_stub tpm2-pcr-public-key.pem)" = "$(sha256sum <"$UKI_DIR/pcrpkey" | cut -d' ' -f1)" ] ||
		fail "boot $USER_BOOTS: /.extra/tpm2-pcr-public-key.pem is not .pcrpkey (STUB: $U_STUB)"
}
