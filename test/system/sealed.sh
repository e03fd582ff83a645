#!/bin/bash
# sealed.sh - make test-system's scenario "sealed" (test/system/run.sh
# sealed): a LUKS2 data volume sealed to the loader's measurements
# survives a kernel update, and refuses an ESP changed from outside.
#
# The system: the image of test/system/build-image.sh sealed (the shared
# one with clevis, tpm2-tools, xxd).  The disk: an ESP that `make install`
# filled with the loader alone (\EFI\BOOT\BOOTX64.EFI, no Secure Boot,
# ALLOW=verbose), the root, and an empty data partition.  One TPM (swtpm)
# for all four boots (boot.sh --tpm-keep: what is sealed stays sealed, the
# PCRs start afresh each boot).  The guest's part is
# test/system/sealed-guest.sh, counting its boots:
#   boot 1  the package, install.conf with SEAL= the volume; the volume
#           made and bound with clevis's tpm2 pin to PCRs 4,5,7,9,12 as
#           `kaslr-pcr predict` gives them for the ESP as it is (which
#           must be this boot's own PCRs)
#   boot 2  unlocked at boot without a passphrase; `apt install` of the
#           second kernel's package reseals: a second binding, for the
#           predicted PCRs of the next boot, the first kept
#   boot 3  the new kernel, unlocked without a passphrase; the PCRs it
#           reads are the ones predicted in boot 2; kaslr-reseal.service
#           removed the old kernel's binding (stale, once this boot proved
#           the new one): one binding left
#   (then, from outside: a kaslr.seed line added to kaslr.conf on the
#   disk's ESP with mtools)
#   boot 4  not unlocked at boot (the settings in PCR 5 changed); the
#           binding left as it was, none added; the passphrase opens the
#           volume
# Prints "ok sealed: ..." / "FAIL sealed: ..." / "info sealed: ..." lines;
# the status is 1 when a check failed.  The predicted and read PCRs of the
# update are left in build/system/work/sealed/predicted and read.
# For work on the scenario itself: SEALED_KEEP=1 keeps the disk and the
# TPM after each boot N in after-N/; SEALED_FROM=N then starts a later run
# at boot N from after-(N-1)/, the boots before it judged from their logs.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/system/sealed
R=$B/system/work/sealed
T=${SYSTEM_TIMEOUT:-1500}
. test/system/image.conf
name=sealed
CMDLINE="root=UUID=$ROOT_UUID ro console=ttyS0"
ESP_MB=384 DATA_MB=64
DATA_PARTUUID=4b4c5352-0000-4000-8000-00000000000d # test/system/sealed-guest.sh
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
from=${SEALED_FROM:-1}
if [ "$from" = 1 ]; then
	rm -rf "$R"
	mkdir -p "$R" || die "cannot create $R"
else
	[ -f "$R/after-$((from - 1))/disk.img" ] || die "SEALED_FROM=$from: no $R/after-$((from - 1))/ (SEALED_KEEP=1)"
fi
kernel=$(first "$D"/boot/vmlinuz-*) initrd=$(first "$D"/boot/initrd.img-*)
{ [ -n "$kernel" ] && [ -n "$initrd" ]; } || die "no image in $D (test/system/build-image.sh sealed)"
ver=${kernel##*/vmlinuz-}
newdeb=$(cat "$B/system/update-kernel" 2>/dev/null)
[ -f "$newdeb" ] || die "no second kernel's package (run.sh downloads it)"
newver=$(dpkg-deb -f "$newdeb" Package | sed 's/^linux-image-//')
[ "$newver" != "$ver" ] || die "the second kernel ($newver) is the image's own"
deb=$(first "$B"/deb/kaslr-loader_*.deb) || die "no $B/deb/kaslr-loader_*.deb (make deb)"
disk=$R/disk.img

make_disk() {
	# the ESP: the loader alone, as the alone scenario installs it
	local esp=$R/esp ipath=EFI/BOOT/BOOTX64.EFI g=/root/kaslr-system esp_s root_s data_s
	mkdir -p "$esp"
	make --no-print-directory install ESP="$esp" INSTALL_PATH="$ipath" KERNEL="$kernel" INITRD="$initrd" \
		CMDLINE="$CMDLINE" ALLOW=verbose >"$R/install.log" 2>&1 || die "make install: $(tail -n 2 "$R/install.log")"
	echo verbose >"$esp/EFI/BOOT/kaslr.conf"
	mformat -i "$R/esp.img" -C -T $((ESP_MB * 2048)) -h 64 -s 32 -v ESP :: >/dev/null || die "mformat failed"
	mcopy -s -i "$R/esp.img" "$esp"/* ::/ || die "mcopy $esp failed"

	# the root with this run's files
	cp --sparse=always "$D/root.ext4" "$R/root.ext4" || die "cannot copy $D/root.ext4"
	printf '%s\n' "ESP=/boot/efi" "INSTALL_PATH=$ipath" "CMDLINE=\"$CMDLINE\"" "ALLOW=verbose" \
		"SEAL=/dev/disk/by-partuuid/$DATA_PARTUUID" >"$R/install.conf"
	echo report >"$R/step"
	# the update makes its initrd inside the VM, which can see its disk
	echo MODULES=dep >"$R/initramfs.conf"
	printf '%s\n' "write test/system/guest.sh $g/run" "write test/system/sealed-guest.sh $g/steps.sh" \
		"write $R/step $g/step" "write $R/install.conf $g/install.conf" \
		"write $deb $g/${deb##*/}" "write $newdeb $g/${newdeb##*/}" \
		"rm /etc/initramfs-tools/conf.d/kaslr-system" \
		"write $R/initramfs.conf /etc/initramfs-tools/conf.d/kaslr-system" >"$R/debugfs.cmd"
	debugfs -w -f "$R/debugfs.cmd" "$R/root.ext4" >"$R/debugfs.log" 2>&1 || die "debugfs failed"
	# debugfs exits 0 whatever failed: any line but its echo and banner is an error
	grep -v '^debugfs\|^Allocated inode' "$R/debugfs.log" | grep -q . &&
		die "debugfs: $(grep -v '^debugfs\|^Allocated inode' "$R/debugfs.log" | head -n 2 | tr '\n' ' ')"

	# the GPT disk: ESP, root, data
	esp_s=$((ESP_MB * 2048)) root_s=$(($(stat -c %s "$R/root.ext4") / 512)) data_s=$((DATA_MB * 2048))
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
}
[ "$from" = 1 ] && make_disk

val() { sed -n "s/^kaslr-system: $1=//p" "$c" | tail -n 1; }
lines() { sed -n "s/^kaslr-system: $1 //p" "$c"; }
# the key slots of the clevis tpm2 bindings to PCRs 4,5,7,9,12 the guest
# listed last
slots() { lines binding | sed -n 's/^\([0-9]*\): tpm2 .*"pcr_ids":"4,5,7,9,12".*/\1/p' | sort -u | tr '\n' ' '; }
# boot N WANT-KERNEL: one boot, its report in $R/bootN.txt (c)
boot() {
	local n=$1 want=$2 log=$R/boot$1.log rc t=$SECONDS
	c=$R/boot$n.txt
	if [ "$n" -lt "$from" ]; then
		info "boot $n: as an earlier run left it"
	else
		if [ "$from" != 1 ] && [ "$n" = "$from" ]; then
			rm -rf "$R/tpm"
			{ cp -a "$R/after-$((n - 1))/tpm" "$R/tpm" &&
				cp --sparse=always "$R/after-$((n - 1))/disk.img" "$disk"; } || die "cannot restore after-$((n - 1))/"
		fi
		test/qemu/boot.sh --log "$log" --timeout "$T" --until '^kaslr-system: end' \
			--mem 1G --cpu max --tpm-keep "$R/tpm" "$disk" 2>"$R/boot$n.err"
		rc=$?
		tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g' >"$c"
		info "boot $n: QEMU ended with status $rc after $((SECONDS - t)) s"
		if [ -n "${SEALED_KEEP:-}" ]; then
			rm -rf "$R/after-$n" && mkdir -p "$R/after-$n" && cp -a "$R/tpm" "$R/after-$n/tpm" &&
				cp --sparse=always "$disk" "$R/after-$n/"
		fi
	fi
	if ! grep -q '^kaslr-system: end' "$c"; then
		check "boot $n: the system ran its report" 1 "last lines: $(grep -a . "$c" | tail -n 8 | tr '\n' '|')"
		return 1
	fi
	check "boot $n: the system ran its report" 0
	[ "$(val sealed-boot)" = "$n" ]
	check "boot $n: the guest's boot count" $? "$(val sealed-boot)"
	[ "$(val kernel)" = "$want" ]
	check "boot $n: runs $want" $? "uname -r $(val kernel)"
	# the loader's placement (verbose) against the kernel's own view, and
	# for run.sh's check that no two boots share one
	local line p v l code text
	line=$(grep -a 'kaslr-loader: linux: physical base' "$c" | tail -n 1)
	p=$(printf '%s\n' "$line" | sed -n 's/.*physical base \(0x[0-9A-Fa-f]*\),.*/\1/p')
	v=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset \(0x[0-9A-Fa-f]*\) from.*/\1/p')
	l=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset 0x[0-9A-Fa-f]* from \(0x[0-9A-Fa-f]*\),.*/\1/p')
	code=$(val code) text=$(val text)
	if [ -z "$p" ] || [ -z "$v" ] || [ -z "$l" ] || [ -z "$code" ] || [ -z "$text" ]; then
		check "boot $n: Kernel code and _text where the loader put them" 1 "loader: '$line'; the system: code='$code' _text='$text'"
	else
		[ $((0x$code)) -eq $((p)) ] && [ $((0x$text)) -eq $((l + v)) ]
		check "boot $n: Kernel code and _text where the loader put them" $? \
			"Kernel code 0x$code, loader base $p; _text 0x$text, loader $l + $v"
		echo "$name/$n 0x$text 0x$code" >>"$R/placements"
	fi
	info "boot $n: failed units: $(val failed) $(lines failed-unit | tr '\n' ' ')"
	info "boot $n: clevis-luks-askpass.path $(val askpass-unit), systemd-cryptsetup@data $(val cryptsetup-unit), kaslr-reseal.service $(val reseal-unit)"
	lines reseal-boot | while read -r x; do info "boot $n: kaslr-reseal.service: $x"; done
	lines crypt-log | while read -r x; do info "boot $n: journal: $x"; done
	lines pcr | while read -r x; do info "boot $n: read $x"; done
	return 0
}

# ---- boot 1: set up and seal
boot 1 "$ver" || exit 1
for k in deb-install luks-format data-made predict bind; do
	[ "$(val "$k")" = 0 ]
	check "boot 1: $k" $? "status $(val "$k") $(lines "$k" | tail -n 2 | tr '\n' ' ')$(lines predict-err | tr '\n' ' ')"
done
[ -n "$(lines pcr)" ] && [ "$(lines predicted-same)" = "$(lines pcr)" ]
check "boot 1: kaslr-pcr predicts the unchanged ESP's boot as this boot's own PCRs" $? \
	"read: $(lines pcr | tr '\n' ' '); predicted: $(lines predicted-same | tr '\n' ' ')"
[ "$(slots)" = "1 " ]
check "boot 1: the volume has one tpm2 binding, to PCRs 4,5,7,9,12" $? "$(lines binding | tr '\n' '|')"
lines reseal-status | while read -r x; do info "boot 1: kaslr-reseal status: $x"; done
old=$(slots)
old=${old% }

# ---- boot 2: unlocked by the TPM; the update reseals
boot 2 "$ver" || exit 1
[ "$(val data)" = unlocked ] && [ "$(val data-marker)" = sealed-data ]
check "boot 2: the volume unlocked without a passphrase" $? "$(val data), marker $(val data-marker)"
[ "$(val kernel-install)" = 0 ]
check "boot 2: apt install ${newdeb##*/}" $? "status $(val kernel-install)"
lines apt | while read -r x; do info "boot 2: hooks: $x"; done
lines esp-file | while read -r x; do info "boot 2: ESP file after the update: $x"; done
lines apt | grep -q "^kaslr-reseal: .*bound key slot [0-9]* to the next boot's PCRs sha256:4,5,7,9,12"
check "boot 2: the hooks bound the next boot's PCRs (kaslr-reseal)" $? "$(lines apt | grep kaslr-reseal | tr '\n' '|')"
new=$(slots)
[ "$(wc -w <<<"$new")" = 2 ] && case " $new" in *" $old "*) true ;; *) false ;; esac
check "boot 2: two bindings after the update, the first kept" $? "slots $new (the first: $old)"
lines reseal-status | while read -r x; do info "boot 2: kaslr-reseal status: $x"; done
lines predicted >"$R/predicted"
new=$(echo " $new" | sed "s/ $old / /" | tr -d ' ')

# ---- boot 3: the new kernel, unlocked; the stale binding gone
boot 3 "$newver" || exit 1
[ "$(val data)" = unlocked ] && [ "$(val data-marker)" = sealed-data ]
check "boot 3: the volume unlocked without a passphrase, running $newver" $? "$(val data), marker $(val data-marker)"
lines pcr >"$R/read"
[ -s "$R/read" ] && cmp -s "$R/read" "$R/predicted"
check "boot 3: PCRs 4,5,7,9,12 as kaslr-pcr predicted them in boot 2" $? \
	"read: $(tr '\n' ' ' <"$R/read"); predicted: $(tr '\n' ' ' <"$R/predicted")"
[ "$(slots)" = "$new " ]
check "boot 3: the old kernel's binding (slot $old) gone after this proved boot, the new one (slot $new) left" $? \
	"slots $(slots)"
lines reseal-boot | grep -q "removed key slot $old, "
check "boot 3: kaslr-reseal.service removed it" $? "$(lines reseal-boot | tr '\n' '|')"

# ---- from outside: a kaslr.seed line in kaslr.conf on the ESP
if [ "$from" -le 4 ]; then
	mtype -i "$disk@@1M" ::/EFI/BOOT/kaslr.conf >"$R/kaslr.conf" 2>/dev/null || die "mtype kaslr.conf failed"
	echo "kaslr.seed $SEED" >>"$R/kaslr.conf"
	mcopy -o -i "$disk@@1M" "$R/kaslr.conf" ::/EFI/BOOT/kaslr.conf || die "mcopy kaslr.conf failed"
fi

# ---- boot 4: the passphrase, and nothing resealed
boot 4 "$newver" || exit 1
[ "$(val data)" = locked ]
check "boot 4: after a kaslr.seed line on the ESP the TPM does not unlock the volume" $? \
	"$(val data), systemd-cryptsetup@data $(val cryptsetup-unit)"
[ "$(slots)" = "$new " ]
check "boot 4: the binding left as it was, none added" $? "slots $(slots), before $new"
lines reseal-boot | grep -q 'no binding to PCRs sha256:4,5,7,9,12 matches this boot'
check "boot 4: kaslr-reseal.service says no binding matches this boot" $? "$(lines reseal-boot | tr '\n' '|')"
[ "$(val passphrase-open)" = 0 ] && [ "$(val passphrase-marker)" = sealed-data ]
check "boot 4: the passphrase opens it" $? "status $(val passphrase-open), marker $(val passphrase-marker)"
info "$((SECONDS - t0)) s in all"
exit "$nok"
