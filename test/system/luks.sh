#!/bin/bash
# luks.sh - make test-system's scenario "luks" (test/system/run.sh luks): a
# LUKS2 data volume bound to a signed PCR 11 policy with systemd's own tools
# (Debian 12, systemd 252), unlocked after boots through kaslr-loader of a
# unified kernel image that is rebuilt and signed anew, without enrolling
# again.  Not the Debian system of the other scenarios: the UKIs are
# Debian's cloud kernel and an initrd of busybox, the kernel's modules and
# systemd-cryptsetup, systemd-cryptenroll and systemd-pcrphase with their
# libraries (test/system/luks-init.sh is its /init), built with Debian 12's
# linuxx64.efi.stub as test/linux/mkuki.sh builds them; the TPM is swtpm,
# its permanent state kept from boot to boot as a machine's TPM keeps it.
#
# On the host: a key pair for PCR policies (openssl), a LUKS2 volume with a
# passphrase (cryptsetup luksFormat on a file), and for each image
# `systemd-measure sign` of its sections for the phase enter-initrd, put in
# as its .pcrsig (.pcrpkey the public key).  The loader goes on the ESP with
# the image by make install (pinned), as an administrator installs it.
#   1 enroll   UKI A (its initrd holds the passphrase): systemd-cryptenroll
#              --tpm2-device=auto --tpm2-public-key=<the loader's
#              /.extra/tpm2-pcr-public-key.pem>, then systemd-cryptsetup
#              attach unlocks it with the TPM alone, and a marker is written
#   2 rebuilt  UKI B: another initrd (no passphrase in it), signed anew
#              with the same key, installed again: it unlocks, the marker
#              is there, the volume's LUKS header (its tokens and keyslots)
#              is what boot 1 left
#   3 stale    UKI B with A's signature (the policy not signed for it): the
#              volume stays locked
# Each boot: the files the loader handed over in /.extra are the image's
# .pcrsig and .pcrpkey, PCR 11 after systemd-pcrphase enter-initrd is what
# `systemd-measure calculate` predicts, and the loader says it booted the
# image as a UKI.  One "ok luks: ..." / "FAIL luks: ..." line per check.
# a step, then die: "A && B || die" is meant
# shellcheck disable=SC2015
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
R=$B/system/work/luks
T=${SYSTEM_TIMEOUT:-1500}
MEASURE=/lib/systemd/systemd-measure
CMDLINE='console=ttyS0 panic=-1 quiet no_timer_check'
PASS=kaslr-luks-passphrase
# the modules the initrd loads (their dependencies first)
MODS='efivarfs dm-mod dm-crypt xts ecb aesni-intel af_alg algif_skcipher virtio_pci virtio_blk'
nok=0
check() { # check LABEL COND-STATUS DETAIL
	if [ "$2" = 0 ]; then echo "ok luks: $1${3:+ ($3)}"; else echo "FAIL luks: $1${3:+: $3}"; nok=1; fi
}
die() { echo "FAIL luks: $*"; exit 1; }
for c in cryptsetup swtpm openssl mformat mcopy cpio gzip busybox objcopy; do
	command -v "$c" >/dev/null || die "$c missing (make deps)"
done
for f in "$MEASURE" /lib/systemd/systemd-cryptsetup /lib/systemd/systemd-pcrphase /usr/bin/systemd-cryptenroll; do
	[ -x "$f" ] || die "$f missing (Debian 12's systemd, make deps)"
done
rm -rf "$R" && mkdir -p "$R" || die "cannot create $R"

# ---------------------------------------------------------------- kernel, modules
kernel=$(test/linux/fetch.sh cloud 2>"$R/fetch.err") || die "no Debian cloud kernel: $(tail -n 1 "$R/fetch.err")"
deb=$(find "$B/linux/cloud" -maxdepth 1 -name 'linux-image-*.deb' | head -n 1)
[ -f "$deb" ] || die "no cloud kernel package in $B/linux/cloud"
K=$R/kpkg
dpkg-deb -x "$deb" "$K" || die "dpkg-deb -x $deb"
order=()
# add_mod NAME: its dependencies (its .modinfo's depends=), then the module
add_mod() {
	local n=$1 f d o
	f=$(find "$K/lib/modules" -name "$(printf '%s' "$n" | sed 's/[-_]/[-_]/g').ko" | head -n 1)
	[ -n "$f" ] || return 0 # built in
	for o in "${order[@]}"; do [ "$o" = "$f" ] && return 0; done
	objcopy -O binary -j .modinfo "$f" "$R/modinfo.bin" || die "objcopy -j .modinfo $f"
	for d in $(tr '\0' '\n' <"$R/modinfo.bin" | sed -n 's/^depends=//p' | tr ',' ' '); do add_mod "$d"; done
	order+=("$f")
}
for m in $MODS; do add_mod "$m"; done

# ---------------------------------------------------------------- initrds
# mkinitrd OUT STAGE BUILD [PASSPHRASE]
mkinitrd() {
	local out=$1 st=$2 build=$3 pw=${4:-} t=$R/tree-$2-$3 f p l
	rm -rf "$t"
	mkdir -p "$t"/{bin,dev,proc,sys,run,tmp,etc,.extra,usr/bin,usr/lib/systemd,usr/lib/modules,usr/lib64,usr/lib/x86_64-linux-gnu} ||
		return 1
	ln -s usr/lib "$t/lib" && ln -s usr/lib64 "$t/lib64" || return 1
	cp "$(command -v busybox)" "$t/bin/busybox" && cp test/system/luks-init.sh "$t/init" && chmod 755 "$t/init" || return 1
	for f in "${order[@]}"; do
		cp "$f" "$t/usr/lib/modules/" && basename "$f" >>"$t/etc/modules.order" || return 1
	done
	cp /lib/systemd/systemd-cryptsetup /lib/systemd/systemd-pcrphase "$t/usr/lib/systemd/" &&
		cp /usr/bin/systemd-cryptenroll "$t/usr/bin/" || return 1
	# the libraries they link, and those opened at run time (the TPM
	# software stack: esys, rc, mu and the device TCTI; libcryptsetup's
	# token plugin for systemd-tpm2 tokens, through which systemd-cryptsetup
	# unlocks), with theirs
	local dl=(/usr/lib/x86_64-linux-gnu/libtss2-{esys,rc,mu,tcti-device,tctildr}.so.0
		/usr/lib/x86_64-linux-gnu/cryptsetup/libcryptsetup-token-systemd-tpm2.so)
	for p in $({
		ldd /lib/systemd/systemd-cryptsetup /lib/systemd/systemd-pcrphase /usr/bin/systemd-cryptenroll "${dl[@]}"
		printf '%s\n' "${dl[@]}"
	} | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\// && $i ~ /\.so/) { sub(/:$/, "", $i); print $i } }' | sort -u); do
		# merged /usr: /lib is usr/lib here too
		l=/usr${p#/usr}
		mkdir -p "$t$(dirname "$l")" && cp -L "$p" "$t$l" || return 1
	done
	echo "$st" >"$t/etc/luks-stage" && echo "$build" >"$t/etc/luks-build" || return 1
	[ -z "$pw" ] || printf '%s' "$pw" >"$t/etc/luks-pass" || return 1
	(cd "$t" && find . | sort | cpio -o -H newc --quiet) | gzip -6 >"$out"
}
mkinitrd "$R/initrd-a" enroll 1 "$PASS" || die "cannot build initrd A"
mkinitrd "$R/initrd-b" unlock 2 || die "cannot build initrd B"
cmp -s "$R/initrd-a" "$R/initrd-b" && die "initrds A and B are the same"

# ---------------------------------------------------------------- images
# systemd 252's `systemd-measure sign` asks a TPM for the policy's digest:
# a swtpm of its own, through tpm2-tss's swtpm TCTI (PATH and PATH.ctrl)
S=$R/sign-tpm
mkdir -p "$S"
swtpm socket --tpm2 --tpmstate "dir=$S" --server "type=unixio,path=$S/sock" --ctrl "type=unixio,path=$S/sock.ctrl" \
	--flags not-need-init,startup-clear >"$S/log" 2>&1 &
sign_tpm=$!
trap 'kill "$sign_tpm" 2>/dev/null' EXIT
for _ in $(seq 50); do [ -S "$S/sock.ctrl" ] && break; sleep 0.1; done
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$R/pcr-private.pem" >/dev/null 2>&1 &&
	openssl pkey -in "$R/pcr-private.pem" -pubout -out "$R/pcr-public.pem" 2>/dev/null || die "openssl genpkey"
printf '%s\n' 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"' 'ID=debian' 'VERSION_ID="12"' >"$R/os-release"
# sections NAME: systemd-measure's arguments for UKI NAME's sections
sections() {
	local d=$R/$1.efi.d
	echo "--linux=$d/linux" "--osrel=$d/osrel" "--cmdline=$d/cmdline" "--initrd=$d/initrd" "--pcrpkey=$d/pcrpkey"
}
# mkimage NAME INITRD [SIGNATURE]: UKI NAME, with SIGNATURE as .pcrsig (by
# default its own: systemd-measure sign of its sections for enter-initrd;
# .pcrsig itself is not measured), and PCR11_NAME the value predicted after
# enter-initrd
mkimage() {
	local n=$1 rd=$2 sig=${3:-} args
	args=(--linux "$kernel" --initrd "$rd" --cmdline "$CMDLINE" --osrel "$R/os-release" --pcrpkey "$R/pcr-public.pem")
	test/linux/mkuki.sh "$R/$n.efi" "${args[@]}" || return 1
	if [ -z "$sig" ]; then
		sig=$R/$n.pcrsig.json
		# shellcheck disable=SC2046 # one argument per section
		"$MEASURE" sign $(sections "$n") --bank=sha256 --phase=enter-initrd --tpm2-device="swtpm:path=$S/sock" \
			--private-key="$R/pcr-private.pem" --public-key="$R/pcr-public.pem" >"$sig" 2>"$R/$n.sign.log" || return 1
	fi
	cp "$sig" "$R/$n.sig"
	test/linux/mkuki.sh "$R/$n.efi" "${args[@]}" --pcrsig "$R/$n.sig" || return 1
	# shellcheck disable=SC2046
	printf -v "PCR11_$n" '%s' "$("$MEASURE" calculate $(sections "$n") --bank=sha256 --phase=enter-initrd 2>/dev/null |
		sed -n 's/^11:sha256=\([0-9a-f]*\).*/\1/p')"
}
mkimage a "$R/initrd-a" || die "cannot build UKI A"
mkimage b "$R/initrd-b" || die "cannot build UKI B"
mkimage stale "$R/initrd-b" "$R/a.pcrsig.json" || die "cannot build UKI B with A's signature"
kill "$sign_tpm" 2>/dev/null
# shellcheck disable=SC2154 # set by mkimage through printf -v
[ ${#PCR11_a} = 64 ] && [ ${#PCR11_b} = 64 ] && [ "$PCR11_a" != "$PCR11_b" ] ||
	die "systemd-measure calculate: PCR 11 '$PCR11_a' for A, '$PCR11_b' for B"

# ---------------------------------------------------------------- the volume
truncate -s 48M "$R/data.img"
printf '%s' "$PASS" >"$R/pass"
cryptsetup luksFormat --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --batch-mode \
	--key-file "$R/pass" "$R/data.img" >"$R/luksformat.log" 2>&1 || die "cryptsetup luksFormat: $(tail -n 1 "$R/luksformat.log")"
# the LUKS header's tokens and keyslots, as cryptsetup shows them
header() { cryptsetup luksDump "$R/data.img" 2>/dev/null | sed -n '/^Keyslots:/,$p'; }

# ---------------------------------------------------------------- boots
# boot N NAME: NAME's image installed on a fresh ESP (make install: the
# loader alone at the fallback path, pinning it), one boot with the TPM
# and the volume; its console in $R/bootN.txt
boot() {
	local n=$1 name=$2 esp=$R/esp$1 c=$R/boot$1.txt rc t0=$SECONDS
	mkdir -p "$esp"
	make --no-print-directory install ESP="$esp" INSTALL_PATH=EFI/BOOT/BOOTX64.EFI KERNEL="$R/$name.efi" \
		ALLOW=verbose >"$R/install$n.log" 2>&1 || { check "boot $n: make install" 1 "$(tail -n 1 "$R/install$n.log")"; return 1; }
	echo verbose >"$esp/EFI/BOOT/kaslr.conf"
	rm -f "$R/esp.img"
	mformat -i "$R/esp.img" -C -T $((128 * 2048)) -h 64 -s 32 -v ESP :: >/dev/null && mcopy -s -i "$R/esp.img" "$esp"/* ::/ ||
		{ check "boot $n: the ESP image" 1 "mformat, mcopy"; return 1; }
	test/qemu/boot.sh --log "$R/boot$n.log" --timeout "$T" --until '^luks-init: end' --mem 1G \
		--tpm-keep "$R/tpm" --qemu -drive --qemu "format=raw,file=$R/data.img,if=virtio" "$R/esp.img" 2>"$R/boot$n.err"
	rc=$?
	tr -d '\r' <"$R/boot$n.log" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g' >"$c"
	if ! grep -q '^luks-init: end' "$c"; then
		check "boot $n ($name): the initrd ran to its end" 1 "boot.sh status $rc; last lines: $(grep -a . "$c" | tail -n 6 | tr '\n' '|')"
		return 1
	fi
	check "boot $n ($name): the initrd ran to its end" 0 "$((SECONDS - t0)) s"
	grep -q "^kaslr-loader: .*$name.efi: UKI, systemd-stub 252" "$c"
	check "boot $n: the loader booted $name.efi as a UKI" $? "$(grep -a "UKI, systemd-stub" "$c" | head -n 1)"
	[ "$(val "EXTRA tpm2-pcr-signature.json")" = "$(sha256sum <"$R/$name.sig" | cut -d' ' -f1)" ] &&
		[ "$(val "EXTRA tpm2-pcr-public-key.pem")" = "$(sha256sum <"$R/pcr-public.pem" | cut -d' ' -f1)" ]
	check "boot $n: /.extra holds the image's .pcrsig and .pcrpkey" $? "$(grep '^luks-init: EXTRA' "$c" | tr '\n' ' ')"
	# the kernel runs where the loader put it (its verbose placement line)
	local p text code
	p=$(sed -n 's/.*kaslr-loader: linux: physical base \(0x[0-9A-Fa-f]*\),.*/\1/p' "$c" | tail -n 1)
	text=$(field START text) code=$(field START code)
	[ -n "$p" ] && [ -n "$code" ] && [ $((p)) = $((0x$code)) ]
	check "boot $n: Kernel code at the loader's physical base" $? "code 0x$code, loader ${p:-none}"
	[ -n "$text" ] && [ -n "$code" ] && echo "luks/$n 0x$text 0x$code" >>"$R/placements"
	return 0
}
# val KEY: the rest of boot's console line "luks-init: KEY=..." or "KEY ..."
val() { sed -n "s/^luks-init: $1[= ]//p" "$c" | tail -n 1; }
field() { sed -n "s/^luks-init: $1 .*$2=\([^ ]*\).*/\1/p" "$c" | tail -n 1; }

c=$R/boot1.txt
if boot 1 a; then
	[ "$(field PHASE pcr11)" = "$PCR11_a" ]
	check "boot 1: PCR 11 after enter-initrd is systemd-measure's prediction" $? "$(field PHASE pcr11), want $PCR11_a"
	[ "$(field ENROLL rc)" = 0 ]
	check "boot 1: systemd-cryptenroll --tpm2-device=auto --tpm2-public-key" $? "status $(field ENROLL rc)"
	marker=$(field UNLOCKED marker)
	[ "$(field UNLOCKED rc)" = 0 ] && [ ${#marker} = 32 ]
	check "boot 1: systemd-cryptsetup attach unlocked the volume with the TPM" $? "$(grep -a '^luks-init: \(UNLOCKED\|LOCKED\)' "$c")"
fi
header >"$R/header1"
grep -q 'systemd-tpm2' "$R/header1"
check "the volume carries a systemd-tpm2 token" $? "$(grep -c 'systemd-tpm2' "$R/header1") token(s)"

c=$R/boot2.txt
if boot 2 b; then
	[ "$(field PHASE pcr11)" = "$PCR11_b" ]
	check "boot 2: PCR 11 after enter-initrd is systemd-measure's prediction for the rebuilt image" $? "$(field PHASE pcr11), want $PCR11_b"
	[ "$(field UNLOCKED rc)" = 0 ] && [ "$(field UNLOCKED marker)" = "${marker:-none}" ]
	check "boot 2: the rebuilt image, signed anew, unlocks the volume" $? "$(grep -a '^luks-init: \(UNLOCKED\|LOCKED\)' "$c"), want marker ${marker:-none}"
	! grep -q '^luks-init: ENROLL' "$c" && [ ! -e "$R/tree-unlock-2/etc/luks-pass" ]
	check "boot 2: no passphrase in its initrd, nothing enrolled" $?
fi
header >"$R/header2"
cmp -s "$R/header1" "$R/header2"
check "boot 2 left the volume's tokens and keyslots as enrolled" $? "$(diff "$R/header1" "$R/header2" | head -n 4 | tr '\n' '|')"

c=$R/boot3.txt
if boot 3 stale; then
	# systemd-cryptsetup's word (its debug lines) on why: no signature for
	# this PCR 11
	[ "$(field PHASE pcr11)" = "$PCR11_b" ] && grep -q '^luks-init: LOCKED' "$c" && ! grep -q '^luks-init: UNLOCKED' "$c" &&
		grep -q "^Couldn't find signature for this PCR bank, PCR index and public key" "$c"
	check "boot 3: with a signature for another image the volume stays locked" $? "$(grep -a '^luks-init: \(UNLOCKED\|LOCKED\|PHASE\)\|^Couldn.t find signature' "$c" | tr '\n' ' ')"
fi
exit "$nok"
