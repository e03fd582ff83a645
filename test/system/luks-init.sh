#!/bin/busybox sh
# shellcheck shell=dash
# luks-init.sh - the /init of the initrds of make test-system's scenario
# "luks" (test/system/luks.sh): inside a unified kernel image booted
# through kaslr-loader, what systemd's initrd does for a LUKS2 volume bound
# to a signed PCR 11 policy, with systemd's own tools (Debian 12, systemd
# 252) on busybox:
#   - the modules of /etc/modules.order (efivarfs, device mapper,
#     dm-crypt, the ciphers, virtio) loaded in that order;
#   - systemd-pcrphase enter-initrd: the phase systemd's initrd measures
#     into PCR 11 first (systemd-pcrphase-initrd.service), the one the
#     policy is signed for;
#   - /etc/luks-stage "enroll": systemd-cryptenroll binds the volume
#     (/dev/vda) to the TPM with the public key the loader handed over as
#     /.extra/tpm2-pcr-public-key.pem (the UKI's .pcrpkey), unlocking it
#     with the passphrase in /etc/luks-pass; only this initrd carries one;
#   - systemd-cryptsetup attach, headless (no passphrase can be asked for):
#     the TPM2 token, with the signature the loader handed over as
#     /.extra/tpm2-pcr-signature.json (the UKI's .pcrsig);
#   - unlocked: "enroll" writes a random marker into the first block of the
#     opened volume, every stage reads it back.
# Lines "luks-init: KEY ..." on the console (ttyS0); the last one is
# "luks-init: end".  Powers off.
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/usr/lib/systemd
say() { echo "luks-init: $*"; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
while read -r m; do
	insmod "/lib/modules/$m" 2>/dev/null || say "FAIL insmod $m"
done </etc/modules.order
# the Stub* variables (systemd-pcrphase measures only after a stub that did)
mount -t efivarfs efivarfs /sys/firmware/efi/efivars || say "FAIL mount efivarfs"
i=0
while { [ ! -b /dev/vda ] || [ ! -c /dev/tpmrm0 ]; } && [ "$i" -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
pcr11() { tr 'A-F' 'a-f' </sys/class/tpm/tpm0/pcr-sha256/11 2>/dev/null; }
stage=$(cat /etc/luks-stage)
# where the kernel runs: _text, and where "Kernel code" starts
text=$(sed -n '/ [Tt] _text$/ { s/^\([0-9a-f]*\) .*/\1/p; q }' /proc/kallsyms)
code=$(sed -n 's/^ *\([0-9a-f]*\)-[0-9a-f]* : Kernel code$/\1/p' /proc/iomem | head -n 1)
say "START stage=$stage build=$(cat /etc/luks-build) text=$text code=$code pcr11=$(pcr11)"
for f in tpm2-pcr-signature.json tpm2-pcr-public-key.pem; do
	say "EXTRA $f=$(sha256sum "/.extra/$f" 2>/dev/null | cut -d' ' -f1)"
done
# libdevmapper makes the /dev/mapper nodes itself: no udev here
export DM_DISABLE_UDEV=1
systemd-pcrphase enter-initrd
say "PHASE rc=$? pcr11=$(pcr11)"
if [ "$stage" = enroll ]; then
	PASSWORD=$(cat /etc/luks-pass) systemd-cryptenroll --tpm2-device=auto \
		--tpm2-public-key=/.extra/tpm2-pcr-public-key.pem --tpm2-public-key-pcrs=11 /dev/vda
	say "ENROLL rc=$?"
fi
# its debug lines on the console: why a token did not unlock, if it did not
SYSTEMD_LOG_LEVEL=debug systemd-cryptsetup attach data /dev/vda - \
	tpm2-device=auto,headless=1,tpm2-signature=/.extra/tpm2-pcr-signature.json >/run/attach.log 2>&1
rc=$?
grep -v '^Requesting JSON for token' /run/attach.log
if [ -b /dev/mapper/data ]; then
	if [ "$stage" = enroll ]; then
		m=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
		printf 'kaslr-luks %s\n' "$m" | dd of=/dev/mapper/data bs=4096 count=1 conv=sync 2>/dev/null
		sync
	fi
	say "UNLOCKED rc=$rc marker=$(head -c 4096 /dev/mapper/data | head -n 1 | sed -n 's/^kaslr-luks //p')"
	systemd-cryptsetup detach data
else
	say "LOCKED rc=$rc"
fi
sync
say end
poweroff -f
