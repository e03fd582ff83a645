# shellcheck shell=bash disable=SC2154
# sealed-guest.sh - the sealed scenario inside the machine
# (test/system/sealed.sh writes it as /root/kaslr-system/steps.sh; guest.sh
# runs it in its shell after its report, with d, say and each).  It counts
# its boots and reports, as "kaslr-system: KEY=VALUE" lines, how the LUKS2
# data volume came up (only a clevis tpm2 binding can unlock it at boot:
# crypttab names no key file and nobody types), its bindings, what
# kaslr-reseal.service said this boot, and the PCRs; then the boot's step:
#   1  install kaslr-loader's .deb and install.conf (SEAL= the volume);
#      make the volume (passphrase $SEAL_PASS, a marker file), its crypttab
#      line; bind it with clevis's tpm2 pin to PCRs 4,5,7,9,12
#      as kaslr-pcr predicts them for the ESP as it is
#   2  apt install the second kernel's package: the kernel hooks put it on
#      the ESP and kaslr-reseal binds the next boot's PCRs; kaslr-pcr's
#      prediction for that boot
#   3  nothing more (kaslr-reseal.service's work is reported above)
#   4  open the volume with the passphrase: the way back when the TPM
#      refuses
# (SC2154: d is guest.sh's.)
sealed_dev=/dev/disk/by-partuuid/4b4c5352-0000-4000-8000-00000000000d
SEAL_PASS=kaslr-sealed-test
n=$(($(cat "$d/sealed-boot" 2>/dev/null || echo 0) + 1))
echo "$n" >"$d/sealed-boot"
say "sealed-boot=$n"
# unlocked at boot: the mapping crypttab names is there (nothing mounts
# it at boot: its marker is read here)
if [ -b /dev/mapper/data ]; then
	say "data=unlocked"
	mkdir -p /data
	mount -o ro /dev/mapper/data /data && say "data-marker=$(cat /data/marker 2>/dev/null)" && umount /data
else
	say "data=locked"
fi
say "cryptsetup-unit=$(systemctl show -p Result --value systemd-cryptsetup@data.service 2>/dev/null)"
say "askpass-unit=$(systemctl show -p ActiveState --value clevis-luks-askpass.path 2>/dev/null)"
journalctl -b -o cat -u kaslr-reseal.service 2>/dev/null | grep '^kaslr-reseal: ' | each reseal-boot
say "reseal-unit=$(systemctl show -p Result --value kaslr-reseal.service 2>/dev/null)"
journalctl -b -o cat -u systemd-cryptsetup@data.service -u clevis-luks-askpass.service 2>/dev/null | tail -n 6 | each crypt-log
bindings() { clevis luks list -d "$sealed_dev" 2>/dev/null | each binding; }
bindings
# this boot's PCRs, in kaslr-pcr's form
tpm2_pcrread sha256:4,5,7,9,12 2>/dev/null | sed -n 's/^ *\([0-9]*\) *: 0x\([0-9A-F]*\)$/\1:sha256=\2/p' |
	tr 'A-F' 'a-f' | each pcr

case $n in
1)
	apt-get install -y "$d"/kaslr-loader_*.deb >"$d/apt.log" 2>&1
	say "deb-install=$?"
	grep -v 'Reading database' "$d/apt.log" | tail -n 3 | each apt
	cp "$d/install.conf" /etc/kaslr-loader/install.conf
	printf '%s' "$SEAL_PASS" | cryptsetup luksFormat --type luks2 --pbkdf pbkdf2 \
		--pbkdf-force-iterations 1000 --batch-mode --key-file=- "$sealed_dev"
	say "luks-format=$?"
	mkdir -p /data
	{ printf '%s' "$SEAL_PASS" | cryptsetup open --key-file=- "$sealed_dev" data &&
		mkfs.ext4 -q /dev/mapper/data && mount /dev/mapper/data /data &&
		echo sealed-data >/data/marker && umount /data && cryptsetup close data; }
	say "data-made=$?"
	# at boot: unlocked by clevis's askpass agent (it takes a minute or two
	# under an emulator), or after 240 s not at all
	echo "data $sealed_dev none luks,nofail,timeout=240s" >>/etc/crypttab
	# the ESP as it is: the prediction is this boot's own PCRs
	kaslr-pcr predict --esp /boot/efi 2>"$d/predict.err" | each predicted-same
	digest=$(kaslr-pcr predict --esp /boot/efi --format clevis 2>>"$d/predict.err")
	say "predict=$?"
	each predict-err <"$d/predict.err"
	printf '%s' "$SEAL_PASS" | clevis luks bind -y -d "$sealed_dev" -k - tpm2 \
		"{\"pcr_bank\":\"sha256\",\"pcr_ids\":\"4,5,7,9,12\",\"pcr_digest\":\"$digest\"}" >"$d/bind.log" 2>&1
	say "bind=$?"
	each bind <"$d/bind.log"
	bindings
	/usr/lib/kaslr-loader/kaslr-reseal status 2>&1 | each reseal-status
	;;
2)
	apt-get install -y "$d"/linux-image-*.deb >"$d/apt.log" 2>&1
	say "kernel-install=$?"
	grep -a 'kaslr-reseal\|kaslr-loader-update' "$d/apt.log" | each apt
	find /boot/efi -type f | sort | each esp-file
	bindings
	kaslr-pcr predict --esp /boot/efi 2>&1 | each predicted
	/usr/lib/kaslr-loader/kaslr-reseal status 2>&1 | each reseal-status
	;;
4)
	mkdir -p /data
	{ printf '%s' "$SEAL_PASS" | cryptsetup open --key-file=- "$sealed_dev" data &&
		mount -o ro /dev/mapper/data /data; }
	say "passphrase-open=$?"
	say "passphrase-marker=$(cat /data/marker 2>/dev/null)"
	;;
esac
