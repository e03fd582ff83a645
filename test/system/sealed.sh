#!/bin/bash
# sealed.sh - make test-system's scenario `sealed` (test/system/run.sh
# runs it as its scenario, after the tier's image, second kernel and .deb
# are there): a LUKS2 data volume sealed to the measurements survives a
# kernel update, and refuses an ESP changed from outside.
#
# The disk: the shared image's root, an ESP that `make install` filled with
# the loader alone (\EFI\BOOT\BOOTX64.EFI, no Secure Boot, ALLOW=verbose),
# and an empty data partition.  One TPM (swtpm) for all four boots
# (BOOT_TPM_KEEP=1: what is sealed stays sealed).  The guest's part is
# test/system/sealed-step.sh, counting its boots:
#   boot 1  the package, install.conf with SEAL= the volume, the volume
#           made and bound with clevis's tpm2 pin to PCRs 4,5,7,9,12 as
#           `kaslr-pcr predict` gives them
#   boot 2  unlocked at boot without a passphrase; `apt install` of the
#           second kernel reseals: a second binding, for the predicted
#           PCRs of the next boot, the first kept
#   boot 3  the new kernel, unlocked without a passphrase; the PCRs it
#           reads are the ones predicted in boot 2; kaslr-reseal.service
#           removed the binding of the old kernel (the stale one, once
#           this boot proved the new one): one binding left
#   (then, from outside: a kaslr.seed line added to kaslr.conf on the
#   disk's ESP with mtools)
#   boot 4  not unlocked at boot: the changed settings are in PCR 5; the
#           binding is left as it was; the passphrase opens the volume
# Prints "ok sealed: ..." / "FAIL sealed: ..." / "info sealed: ..." lines;
# the status is 1 when a check failed.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/system
W=$D/work
T=${SYSTEM_TIMEOUT:-1500}
. test/system/image.conf
name=sealed
R=$W/$name
CMDLINE="root=UUID=$ROOT_UUID ro console=ttyS0"
ESP_MB=384 DATA_MB=64
DATA_PARTUUID=4b4c5352-0000-4000-8000-00000000000d # test/system/sealed-step.sh
SEED=5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed
command -v sfdisk >/dev/null || PATH=$PATH:/usr/sbin:/sbin
nok=0
check() { # check LABEL STATUS DETAIL
	if [ "$2" = 0 ]; then echo "ok $name: $1${3:+ ($3)}"; else echo "FAIL $name: $1${3:+: $3}"; nok=1; fi
}
info() { echo "info $name: $*"; }
die() { echo "FAIL $name: $*"; exit 1; }
first() { [ -e "$1" ] && printf '%s\n' "$1"; }
t0=$SECONDS
rm -rf "$R"
mkdir -p "$R" || die "cannot create $R"
kernel=$(first "$D"/boot/vmlinuz-*) initrd=$(first "$D"/boot/initrd.img-*)
ver=${kernel##*/vmlinuz-}
newdeb=$(cat "$D/update-kernel" 2>/dev/null)
[ -f "$newdeb" ] || die "no second kernel's package (run.sh downloads it)"
newver=$(dpkg-deb -f "$newdeb" Package | sed 's/^linux-image-//')
deb=$(first "$B"/deb/kaslr-loader_*.deb) || die "no $B/deb/kaslr-loader_*.deb (make deb)"

# the ESP: the loader alone, as the alone scenario installs it
esp=$R/esp
ipath=EFI/BOOT/BOOTX64.EFI
mkdir -p "$esp"
make --no-print-directory install ESP="$esp" INSTALL_PATH="$ipath" KERNEL="$kernel" INITRD="$initrd" \
	CMDLINE="$CMDLINE" ALLOW=verbose >"$R/install.log" 2>&1 || die "make install: $(tail -n 2 "$R/install.log")"
echo verbose >"$esp/EFI/BOOT/kaslr.conf"
mformat -i "$R/esp.img" -C -T $((ESP_MB * 2048)) -h 64 -s 32 -v ESP :: >/dev/null || die "mformat failed"
mcopy -s -i "$R/esp.img" "$esp"/* ::/ || die "mcopy $esp failed"

# the root with this run's files
cp --sparse=always "$D/root.ext4" "$R/root.ext4" || die "cannot copy $D/root.ext4"
g=/root/kaslr-system
printf '%s\n' "ESP=/boot/efi" "INSTALL_PATH=$ipath" "CMDLINE=\"$CMDLINE\"" "ALLOW=verbose" \
	"SEAL=/dev/disk/by-partuuid/$DATA_PARTUUID" >"$R/install.conf"
echo report >"$R/step"
# the update makes its initrd inside the VM, which can see its disk
echo MODULES=dep >"$R/initramfs.conf"
printf '%s\n' "write test/system/guest.sh $g/run" "write test/system/sealed-step.sh $g/step.sh" \
	"write $R/step $g/step" "write $R/install.conf $g/install.conf" \
	"write $deb $g/${deb##*/}" "write $newdeb $g/${newdeb##*/}" \
	"rm /etc/initramfs-tools/conf.d/kaslr-system" \
	"write $R/initramfs.conf /etc/initramfs-tools/conf.d/kaslr-system" >"$R/debugfs.cmd"
debugfs -w -f "$R/debugfs.cmd" "$R/root.ext4" >"$R/debugfs.log" 2>&1 || die "debugfs failed"
grep -v '^debugfs\|^Allocated inode' "$R/debugfs.log" | grep -q . &&
	die "debugfs: $(grep -v '^debugfs\|^Allocated inode' "$R/debugfs.log" | head -n 2 | tr '\n' ' ')"

# the GPT disk: ESP, root, data
esp_s=$((ESP_MB * 2048)) root_s=$(($(stat -c %s "$R/root.ext4") / 512)) data_s=$((DATA_MB * 2048))
disk=$R/disk.img
truncate -s $(((2048 + esp_s + root_s + data_s + 2048) * 512)) "$disk"
printf 'label: gpt\nunit: sectors\nfirst-lba: 2048\n%s\n%s\n%s\n' \
	"start=2048, size=$esp_s, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$ESP_PARTUUID, name=ESP" \
	"start=$((2048 + esp_s)), size=$root_s, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=$ROOT_PARTUUID, name=root" \
	"start=$((2048 + esp_s + root_s)), size=$data_s, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=$DATA_PARTUUID, name=data" |
	sfdisk -q "$disk" >/dev/null || die "sfdisk failed"
dd if="$R/esp.img" of="$disk" bs=1M seek=1 conv=notrunc status=none || die "dd esp failed"
dd if="$R/root.ext4" of="$disk" bs=4M oflag=seek_bytes seek=$(((2048 + esp_s) * 512)) \
	conv=sparse,notrunc status=none || die "dd root failed"
rm -f "$R/root.ext4" "$R/esp.img"

# boot N WANT-KERNEL: one boot, its report in $R/bootN.txt; val KEY, lines KEY
boot() {
	local n=$1 want=$2 log=$R/boot$1.log rc t=$SECONDS
	BOOT_TPM_KEEP=1 test/qemu/boot.sh --log "$log" --timeout "$T" --until '^kaslr-system: end' \
		--mem 1G --cpu max --tpm "$R/tpm" "$disk" 2>"$R/boot$n.err"
	rc=$?
	c=$R/boot$n.txt
	tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g' >"$c"
	if ! grep -q '^kaslr-system: end' "$c"; then
		check "boot $n: the system ran its report" 1 "boot.sh status $rc; last lines: $(grep -a . "$c" | tail -n 8 | tr '\n' '|')"
		return 1
	fi
	check "boot $n: the system ran its report" 0 "$((SECONDS - t)) s"
	[ "$(val sealed-boot)" = "$n" ]
	check "boot $n: the guest's boot count" $? "$(val sealed-boot)"
	[ "$(val kernel)" = "$want" ]
	check "boot $n: runs $want" $? "uname -r $(val kernel)"
	info "boot $n: failed units: $(val failed) $(lines failed-unit | tr '\n' ' ')"
	lines reseal-boot | while read -r x; do info "boot $n: kaslr-reseal.service: $x"; done
	return 0
}
val() { sed -n "s/^kaslr-system: $1=//p" "$c" | tail -n 1; }
lines() { sed -n "s/^kaslr-system: $1 //p" "$c"; }
# the clevis tpm2 bindings the guest listed last: their slots
slots() { lines binding | sed -n 's/^\([0-9]*\): tpm2 .*"pcr_ids":"4,5,7,9,12".*/\1/p'; }

# ---- boot 1: set up and seal
if boot 1 "$ver"; then
	for k in deb-install luks-format data-made predict bind; do
		[ "$(val "$k")" = 0 ]
		check "boot 1: $k" $? "status $(val "$k") $(lines "$k" | tail -n 2 | tr '\n' ' ')"
	done
	[ "$(lines binding | grep -c ': tpm2 ')" = 1 ]
	check "boot 1: the volume has one tpm2 binding, to PCRs 4,5,7,9,12" $? "$(lines binding | tr '\n' ' ')"
else
	exit 1
fi

# ---- boot 2: unlocked by the TPM; the update reseals
if boot 2 "$ver"; then
	[ "$(val data)" = unlocked ] && [ "$(val data-marker)" = sealed-data ]
	check "boot 2: the volume unlocked without a passphrase" $? "$(val data), unit $(val cryptsetup-unit)"
	[ "$(val kernel-install)" = 0 ]
	check "boot 2: apt install ${newdeb##*/}" $? "status $(val kernel-install)"
	lines apt | while read -r x; do info "boot 2: hooks: $x"; done
	lines apt | grep -q 'kaslr-reseal: .*bound key slot'
	check "boot 2: the hooks bound the next boot's PCRs (kaslr-reseal)" $? "$(lines apt | tr '\n' '|')"
	old=$(slots | head -n 1)
	[ "$(slots | wc -l)" = 2 ] && [ "$old" = "$(sed -n 's/^kaslr-system: binding \([0-9]*\): tpm2 .*/\1/p' "$R/boot1.txt" | head -n 1)" ]
	check "boot 2: two bindings after the update, the first kept" $? "slots $(slots | tr '\n' ' ')"
	predicted=$(lines predicted)
else
	exit 1
fi

# ---- boot 3: the new kernel, unlocked; the stale binding gone
if boot 3 "$newver"; then
	[ "$(val data)" = unlocked ] && [ "$(val data-marker)" = sealed-data ]
	check "boot 3: the volume unlocked without a passphrase, running $newver" $? "$(val data), unit $(val cryptsetup-unit)"
	read_pcrs=$(lines pcr)
	[ -n "$read_pcrs" ] && [ "$read_pcrs" = "$predicted" ]
	check "boot 3: PCRs 4,5,7,9,12 as kaslr-pcr predicted them in boot 2" $? \
		"read: $(echo "$read_pcrs" | tr '\n' ' '); predicted: $(echo "$predicted" | tr '\n' ' ')"
	printf '%s\n' "$predicted" >"$R/predicted"
	printf '%s\n' "$read_pcrs" >"$R/read"
	[ "$(slots | wc -l)" = 1 ] && [ "$(slots)" != "$old" ]
	check "boot 3: the old kernel's binding gone after this proved boot, the new one left" $? \
		"slots $(slots | tr '\n' ' ') (the old one was $old)"
	lines reseal-boot | grep -q "removed key slot $old"
	check "boot 3: kaslr-reseal.service removed it" $? "$(lines reseal-boot | tr '\n' '|')"
	kept=$(slots)
else
	exit 1
fi

# ---- from outside: a kaslr.seed line in kaslr.conf on the ESP
mtype -i "$disk@@1M" ::/EFI/BOOT/kaslr.conf >"$R/kaslr.conf" 2>/dev/null || die "mtype kaslr.conf failed"
echo "kaslr.seed $SEED" >>"$R/kaslr.conf"
mcopy -o -i "$disk@@1M" "$R/kaslr.conf" ::/EFI/BOOT/kaslr.conf || die "mcopy kaslr.conf failed"

# ---- boot 4: the passphrase, and nothing resealed
if boot 4 "$newver"; then
	[ "$(val data)" = locked ]
	check "boot 4: a kaslr.seed line on the ESP: the TPM does not unlock the volume" $? \
		"$(val data), unit $(val cryptsetup-unit)"
	[ "$(slots)" = "$kept" ]
	check "boot 4: the binding left as it was, none added" $? "slots $(slots | tr '\n' ' '), before $kept"
	lines reseal-boot | grep -q 'no binding to PCRs 4,5,7,9,12 matches this boot'
	check "boot 4: kaslr-reseal.service says no binding matches this boot" $? "$(lines reseal-boot | tr '\n' '|')"
	[ "$(val passphrase-open)" = 0 ] && [ "$(val passphrase-marker)" = sealed-data ]
	check "boot 4: the passphrase opens it" $? "status $(val passphrase-open)"
fi
info "$((SECONDS - t0)) s in all"
exit "$nok"
