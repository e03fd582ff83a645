#!/bin/bash
# laptop.sh - make test-system's scenario "laptop" (test/system/run.sh laptop):
# a Debian 12 machine as it comes, Secure Boot with Microsoft's keys only
# (OVMF_CODE_4M.ms.fd with OVMF_VARS_4M.ms.fd, the variable store kept from
# boot to boot) and a TPM, Debian's Microsoft-signed shim, GRUB and kernels;
# its administrator follows docs/admin-guide.md (set-up C: shim + MOK,
# TRUST=shim) word for word: the guide's commands are taken from the guide
# itself and run inside the machine (test/system/laptop-guest.sh), the one
# step at the console (MokManager) is typed by test/system/mokmanager.py.
# The boots, each checked from inside the system it reaches:
#   0 installer       from the removable path, the installer's last steps
#                     (grub-install, update-grub: Debian's files in
#                     \EFI\debian\, its Boot#### entry first in BootOrder)
#   1 first boot      shim -> GRUB -> Debian's kernel, Secure Boot on, locked
#                     down; the guide's install; mokutil --import
#   2 MokManager      enrolls the key (typed at the serial console)
#   3 shim -> loader  the install's Boot#### entry: shim, the loader signed
#                     with the MOK, Debian's kernel at the loader's placement;
#                     then a kernel update by apt
#   4 update          the new kernel through shim; an unsigned loader copied
#                     over the installed one
#   5 refusal         shim refuses the loader (its box, MokManager's prompt,
#                     got past), the firmware goes on to GRUB; the loader
#                     back, a kernel Debian did not sign named first
#   6 refusal         the loader refuses that kernel, the next one boots;
#                     apt purge kaslr-loader, mokutil --delete
#   7 MokManager      deletes the key
#   8 removed         shim -> GRUB again, BootOrder and the ESP as the
#                     installer left them, no MOK
# One line per check ("ok laptop-STAGE: ..." or "FAIL ..."), "info" lines
# for what is reported but not judged; run.sh counts them.
# For work on the scenario itself: LAPTOP_KEEP=1 keeps the machine (its disk,
# variable store and TPM) after each boot N in after-N/; LAPTOP_FROM=N then
# starts a later run at boot N from after-(N-1)/, the boots before it
# judged from their logs, with this tree's guest scripts and guide commands
# written into the restored disk (the .deb stays the one it was made with);
# LAPTOP_FROM=9 boots nothing and judges every boot again from its logs;
# with LAPTOP_UPGRADE=1 the restored system's kaslr-loader-update,
# kaslr-loader-install and kaslr-esp.sh are replaced by the current .deb's
# (a fix to them tried in the later boots).
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/system/laptop
R=$B/system/work/laptop
T=${SYSTEM_TIMEOUT:-1500}
. test/system/image.conf
ESP_MB=512
PW=kaslr-mok-1
GUIDE=docs/admin-guide.md
# the first stage
stage=laptop
nok=0
check() { # check LABEL COND-STATUS DETAIL
	if [ "$2" = 0 ]; then echo "ok $stage: $1${3:+ ($3)}"; else echo "FAIL $stage: $1${3:+: $3}"; nok=1; return 1; fi
}
info() { echo "info $stage: $*"; }
die() { echo "FAIL $stage: $*"; exit 1; }
first() { [ -e "$1" ] && printf '%s\n' "$1"; }
command -v sfdisk >/dev/null || PATH=$PATH:/usr/sbin:/sbin

from=${LAPTOP_FROM:-0}
if [ "$from" = 0 ]; then
	rm -rf "$R" && mkdir -p "$R" || exit 1
else
	[ -f "$R/after-$((from - 1))/disk.img" ] || die "LAPTOP_FROM=$from: no $R/after-$((from - 1))/ (LAPTOP_KEEP=1)"
fi
kernel=$(first "$D"/boot/vmlinuz-*) || die "no image in $D (test/system/build-image.sh laptop)"
ver=${kernel##*/vmlinuz-}
newdeb=$(cat "$B/system/update-kernel")
newver=$(dpkg-deb -f "$newdeb" Package | sed 's/^linux-image-//')
[ "$newver" != "$ver" ] || die "the second kernel ($newver) is the image's own"

# ---------------------------------------------------------------- the guide
# The administrator's commands, taken from the guide: a code block (lines
# indented by four spaces) is named by one of its lines.
g=$R/guide
mkdir -p "$g"
# block LINE: the code block holding LINE, unindented
block() {
	awk -v want="$1" '
		/^    / { b = b substr($0, 5) "\n"; if (substr($0, 5) == want) hit = 1; next }
		{ if (hit) exit; b = "" }
		END { if (hit) printf "%s", b }' "$GUIDE"
}
# after TEXT: the first code block after the line TEXT
after() {
	awk -v want="$1" '
		$0 == want { on = 1; next }
		on && /^    / { print substr($0, 5); got = 1; next }
		got { exit }' "$GUIDE"
}
# quoted CMD-START: the first `...` span of prose starting with CMD-START
quoted() {
	tr '\n' ' ' <"$GUIDE" | grep -o "\`$1[^\`]*\`" | head -n 1 | tr -d '\`'
}
take() { # take FILE TEXT...: the guide's text into FILE, or a failed check
	local f=$1
	shift
	if [ -n "$*" ]; then printf '%s\n' "$@" >"$g/$f"; else check "the guide has the command for $f" 1 "not found in $GUIDE"; fi
}
take pkgs.sh "$(block 'apt install sbsigntool efibootmgr shim-signed mokutil   # B, C' | grep '# B, C$')"
take deb.sh "$(block 'apt install ./kaslr-loader_*_amd64.deb')"
take keys.sh "$(block 'mkdir -p -m 0700 /etc/kaslr-loader/keys')"
take import.sh "$(quoted 'mokutil --import ')"
take cmdline.sh "$(block "sed 's/^BOOT_IMAGE=[^ ]* //' /proc/cmdline")"
take install.conf "$(after 'B, shim and a MOK:')" "$(after "C, shim and Debian's signed kernels: as B, plus")"
take install.sh "$(block 'kaslr-loader-update install')"
take check.sh "$(block 'kaslr-loader-update check')"
take purge.sh "$(block 'apt purge kaslr-loader')"
take delete.sh "$(block 'mokutil --delete db.cer')"
[ "$nok" = 0 ] || exit 1

# ---------------------------------------------------------------- the disk
disk=$R/disk.img
gd=/root/kaslr-system
# guest_files EXT4 [refresh]: this run's files into the root file system
# EXT4 (debugfs; "FILE?offset=N" for the one inside a disk): the guest's
# scripts and the guide's commands, and on a fresh one the packages too
guest_files() {
	echo "$PW" >"$R/mok-password"
	# the person answers apt's questions with yes
	echo 'APT::Get::Assume-Yes "true";' >"$R/apt.conf"
	{
		if [ -n "${2:-}" ]; then
			echo "rm $gd/run"
			echo "rm $gd/steps.sh"
			for f in "$g"/*; do echo "rm $gd/guide/${f##*/}"; done
			if [ -n "${LAPTOP_UPGRADE:-}" ]; then
				# the installed package's programs, as the current .deb has them
				rm -rf "$R/deb-x"
				dpkg-deb -x "$(first "$B"/deb/kaslr-loader_*.deb)" "$R/deb-x" || die "LAPTOP_UPGRADE: cannot unpack the .deb"
				for f in usr/sbin/kaslr-loader-update usr/sbin/kaslr-loader-install usr/lib/kaslr-loader/kaslr-esp.sh; do
					echo "rm /$f"
					echo "write $R/deb-x/$f /$f"
				done
			fi
		else
			echo report >"$R/step"
			echo "write $R/step $gd/step"
			echo "write $R/mok-password $gd/mok-password"
			echo "write $R/apt.conf /etc/apt/apt.conf.d/90kaslr-system"
			echo "mkdir $gd/guide"
			deb=$(first "$B"/deb/kaslr-loader_*.deb) && echo "write $deb $gd/${deb##*/}"
			echo "write $newdeb $gd/${newdeb##*/}"
		fi
		echo "write test/system/guest.sh $gd/run"
		echo "write test/system/laptop-guest.sh $gd/steps.sh"
		for f in "$g"/*; do echo "write $f $gd/guide/${f##*/}"; done
	} >"$R/debugfs.cmd"
	debugfs -w -f "$R/debugfs.cmd" "$1" >"$R/debugfs.log" 2>&1 || die "debugfs failed: $(tail -n 2 "$R/debugfs.log")"
	# debugfs exits 0 whatever failed: any line but its echo and banner is
	# an error (rm of a file an older run did not write is none)
	grep -v '^debugfs\|^Allocated inode\|^rm: File not found by ext2_lookup' "$R/debugfs.log" | grep -q . &&
		die "debugfs: $(grep -v '^debugfs\|^Allocated inode' "$R/debugfs.log" | head -n 2 | tr '\n' ' ')"
	return 0
}
# the machine as it is before its first boot
make_disk() {
	# The ESP as the installer's first boot finds it: nothing but the
	# removable path this test boots the installer's last steps from (shim,
	# GRUB and a grub.cfg naming the image's kernel); the signed binaries
	# are the image's.
	esp=$R/esp
	mkdir -p "$esp/EFI/BOOT"
	debugfs -R "dump /usr/lib/shim/shimx64.efi.signed $esp/EFI/BOOT/BOOTX64.EFI" "$D/root.ext4" 2>/dev/null
	debugfs -R "dump /usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed $esp/EFI/BOOT/grubx64.efi" "$D/root.ext4" 2>/dev/null
	if [ ! -s "$esp/EFI/BOOT/BOOTX64.EFI" ] || [ ! -s "$esp/EFI/BOOT/grubx64.efi" ]; then
		die "the image has no shimx64.efi.signed or grubx64.efi.signed"
	fi
	# Debian's signed GRUB reads \EFI\debian\grub.cfg, and without that
	# directory the grub.cfg beside itself
	printf '%s\n' 'set timeout=0' "search --no-floppy --fs-uuid --set=root $ROOT_UUID" \
		"linux /boot/vmlinuz-$ver root=UUID=$ROOT_UUID ro console=ttyS0" \
		"initrd /boot/initrd.img-$ver" boot >"$esp/EFI/BOOT/grub.cfg"
	mformat -i "$R/esp.img" -C -T $((ESP_MB * 2048)) -h 64 -s 32 -v ESP :: >/dev/null || die "mformat failed"
	mcopy -s -i "$R/esp.img" "$esp"/* ::/ || die "mcopy $esp failed"

	# this run's files into a copy of the root file system
	cp --sparse=always "$D/root.ext4" "$R/root.ext4" || die "cannot copy $D/root.ext4"
	guest_files "$R/root.ext4"

	# the GPT disk: ESP at 1 MiB, the root right after it
	esp_s=$((ESP_MB * 2048)) root_s=$(($(stat -c %s "$R/root.ext4") / 512))
	truncate -s $(((2048 + esp_s + root_s + 2048) * 512)) "$disk"
	printf 'label: gpt\nunit: sectors\nfirst-lba: 2048\n%s\n%s\n' \
		"start=2048, size=$esp_s, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$ESP_PARTUUID, name=ESP" \
		"start=$((2048 + esp_s)), size=$root_s, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=$ROOT_PARTUUID, name=root" |
		sfdisk -q "$disk" >/dev/null || die "sfdisk failed"
	dd if="$R/esp.img" of="$disk" bs=1M seek=1 conv=notrunc status=none || die "dd esp failed"
	dd if="$R/root.ext4" of="$disk" bs=4M oflag=seek_bytes seek=$(((2048 + esp_s) * 512)) \
		conv=sparse,notrunc status=none || die "dd root failed"
	rm -f "$R/root.ext4" "$R/esp.img"
}
[ "$from" = 0 ] && make_disk

# ---------------------------------------------------------------- the boots
# boot N [ACTION]: one power-on of the machine, until it powers off or
# resets; with ACTION, mokmanager.py answers shim's screens meanwhile
# (its lines and status in bootN.mok; when it fails, QEMU is stopped).  The console's text, without escape codes, is
# left in bootN.txt.
boot() {
	local n=$1 act=${2:-} log=$R/boot$1.log rc bpid t0=$SECONDS
	if [ "$n" -lt "$from" ]; then
		info "boot $n: as an earlier run left it"
		return
	elif [ "$from" != 0 ] && [ "$n" = "$from" ]; then
		cp --sparse=always "$R/after-$((n - 1))/disk.img" "$R/after-$((n - 1))/vars.fd" "$R/" ||
			die "cannot restore after-$((n - 1))/"
		rm -rf "$R/tpm"
		cp -a "$R/after-$((n - 1))/tpm" "$R/" || die "cannot restore after-$((n - 1))/tpm"
		guest_files "$disk?offset=$(((2048 + ESP_MB * 2048) * 512))" refresh
	fi
	rm -f "$R/qemu.pid"
	test/qemu/boot.sh --ms --vars "$R/vars.fd" --tpm "$R/tpm" --mem 1G --cpu max \
		--console "$R/console" --log "$log" --timeout "$T" --qemu -pidfile --qemu "$R/qemu.pid" \
		"$disk" 2>"$R/boot$n.err" &
	bpid=$!
	if [ -n "$act" ]; then
		test/system/mokmanager.py "$R/console" "$act" "$PW" >"$R/boot$n.mok" 2>&1
		rc=$?
		echo "$rc" >>"$R/boot$n.mok"
		# a step that failed leaves the machine waiting at its screen
		[ "$rc" = 0 ] || kill "$(cat "$R/qemu.pid" 2>/dev/null)" 2>/dev/null
	fi
	wait "$bpid"
	rc=$?
	tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g' >"$R/boot$n.txt"
	info "boot $n: QEMU ended with status $rc after $((SECONDS - t0)) s"
	if [ -n "${LAPTOP_KEEP:-}" ]; then
		rm -rf "$R/after-$n" && mkdir -p "$R/after-$n" &&
			cp --sparse=always "$disk" "$R/vars.fd" "$R/after-$n/" && cp -a "$R/tpm" "$R/after-$n/"
	fi
}
# val N KEY: the last value the system reported for KEY in boot N
val() { sed -n "s/^kaslr-system: $2=//p" "$R/boot$1.txt" | tail -n 1; }
# lines N KEY: the system's lines "KEY ..." of boot N
lines() { sed -n "s/^kaslr-system: $2 //p" "$R/boot$1.txt"; }
# the system's report, the basics: it ran, systemd is up, the kernel, Secure Boot
booted() { # booted N WANT-KERNEL
	local n=$1 c=$R/boot$1.txt
	if ! grep -q '^kaslr-system: end' "$c"; then
		check "boot $n: the system ran its report" 1 "last lines: $(grep -a . "$c" | tail -n 8 | tr '\n' '|')"
		return 1
	fi
	check "boot $n: the system ran its report" 0
	[ "$(val "$n" state)" = running ]
	check "boot $n: systemctl is-system-running" $? "$(val "$n" state)"
	[ "$(val "$n" failed)" = 0 ]
	check "boot $n: failed units" $? "$(val "$n" failed)$(lines "$n" failed-unit | sed 's/^/; /' | tr -d '\n')"
	[ "$(val "$n" kernel)" = "$2" ]
	check "boot $n: runs the kernel it should" $? "uname -r $(val "$n" kernel), want $2"
	[ "$(val "$n" sb-state)" = "SecureBoot enabled" ]
	check "boot $n: mokutil --sb-state" $? "$(val "$n" sb-state)"
	val "$n" lockdown | grep -q '\[integrity\]\|\[confidentiality\]'
	check "boot $n: the kernel locked itself down" $? "$(val "$n" lockdown)"
	return 0
}
# the boot went shim -> GRUB: Debian's entry, GRUB's BOOT_IMAGE
via_grub() { # via_grub N
	val "$1" bootcurrent | grep -q '^[0-9A-F]\{4\} debian$'
	check "boot $1: the firmware started Debian's entry" $? "BootCurrent $(val "$1" bootcurrent)"
	[ -n "$(val "$1" boot-image)" ]
	check "boot $1: GRUB started the kernel" $? "BOOT_IMAGE=$(val "$1" boot-image)"
}

# the boot went shim -> kaslr-loader: the install's entry, the loader as the
# current boot loader, the kernel where the loader put it (its verbose
# line against /proc/iomem and /proc/kallsyms), the MOK listed; status 1
# when a check failed
via_loader() { # via_loader N
	local n=$1 c=$R/boot$1.txt line p v l code text was=$nok
	nok=0
	val "$n" bootcurrent | grep -q '^[0-9A-F]\{4\} kaslr-loader$'
	check "boot $n: the firmware started the install's entry" $? "BootCurrent $(val "$n" bootcurrent)"
	[ -z "$(val "$n" boot-image)" ]
	check "boot $n: not through GRUB" $? "BOOT_IMAGE=$(val "$n" boot-image)"
	sed -n 's/^kaslr-system: bootctl *Product: //p' "$c" | grep -q '^kaslr-loader'
	check "boot $n: bootctl's current boot loader is kaslr-loader" $? "Product: $(sed -n 's/^kaslr-system: bootctl *Product: //p' "$c")"
	line=$(grep -a 'kaslr-loader: linux: physical base' "$c" | tail -n 1)
	p=$(printf '%s\n' "$line" | sed -n 's/.*physical base \(0x[0-9A-Fa-f]*\),.*/\1/p')
	v=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset \(0x[0-9A-Fa-f]*\) from.*/\1/p')
	l=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset 0x[0-9A-Fa-f]* from \(0x[0-9A-Fa-f]*\),.*/\1/p')
	code=$(val "$n" code) text=$(val "$n" text)
	if [ -z "$p" ] || [ -z "$v" ] || [ -z "$l" ] || [ -z "$code" ] || [ -z "$text" ]; then
		check "boot $n: Kernel code and _text where the loader put them" 1 "loader: '$line'; the system: code='$code' _text='$text'"
	else
		[ $((0x$code)) -eq $((p)) ] && [ $((0x$text)) -eq $((l + v)) ]
		check "boot $n: Kernel code and _text where the loader put them" $? \
			"Kernel code 0x$code, loader base $p; _text 0x$text, loader $l + $v"
		echo "laptop/$n 0x$text 0x$code" >>"$R/placements"
	fi
	# the guide: /proc/cmdline is install.conf's CMDLINE (its sed of GRUB's)
	[ -n "$(val "$n" cmdline)" ] && [ "$(val "$n" cmdline)" = "$(val 1 cmdline-from-guide)" ]
	check "boot $n: the kernel's command line is install.conf's CMDLINE" $? \
		"/proc/cmdline '$(val "$n" cmdline)', CMDLINE '$(val 1 cmdline-from-guide)'"
	lines "$n" mok | grep -q "SHA1 Fingerprint: $mok\$"
	check "boot $n: the MOK enrolled" $? "$mok"
	[ "$(val "$n" esp-kernel)" = "Debian's, as in /boot" ]
	check "boot $n: the kernel on the ESP is Debian's signed one" $? "$(val "$n" esp-kernel)"
	[ "$nok" = 0 ] || return 1
	nok=$was
}

# 0: the installer's last steps
stage=laptop-installer
boot 0
booted 0 "$ver" || exit 1
for k in grub-install update-grub scaffold-removed; do
	[ "$(val 0 "$k")" = 0 ]
	check "boot 0: $k" $? "status $(val 0 "$k")$(lines 0 "$k" | tail -n 2 | sed 's/^/; /' | tr -d '\n')"
done
lines 0 installed-entry | while read -r x; do info "boot 0: $x"; done

# 1: the first boot of the installed machine
stage=laptop-first-boot
boot 1
booted 1 "$ver" || exit 1
via_grub 1
# the ESP as grub-install leaves it: shim, GRUB, MokManager, fallback and
# its list, the grub.cfg that finds /boot/grub
want='EFI/debian/BOOTX64.CSV EFI/debian/fbx64.efi EFI/debian/grub.cfg EFI/debian/grubx64.efi EFI/debian/mmx64.efi EFI/debian/shimx64.efi'
[ "$(lines 1 esp-file | tr '\n' ' ' | sed 's/ $//')" = "$want" ]
check "boot 1: the ESP holds Debian's boot files only" $? "$(lines 1 esp-file | tr '\n' ' ')"
bo=$(val 1 bootorder) deb=$(val 1 bootcurrent | cut -d' ' -f1)
[ "${bo%%,*}" = "$deb" ]
check "boot 1: Debian's entry first in BootOrder" $? "BootOrder $bo, Debian's $deb"
lines 1 entry | while read -r x; do info "boot 1: $x"; done

# the install, inside the first boot
stage=laptop-install
# nothing but the command's own lines (a tool it runs complaining on
# stderr is something the administrator sees)
own() { # own N NAME LABEL
	! lines "$1" "$2" | grep -qv '^kaslr-loader-update: '
	check "boot $1: $3 printed its own lines only" $? "$(lines "$1" "$2" | grep -v '^kaslr-loader-update: ' | head -n 2 | tr '\n' '|')"
}
# status 0 from the guide's command NAME in boot N, its last lines otherwise
ran() { # ran N NAME LABEL
	if [ "$(val "$1" "$2")" = 0 ]; then
		check "boot $1: $3" 0 "status 0"
	else
		check "boot $1: $3" 1 "status $(val "$1" "$2")$(lines "$1" "$2" | tail -n 3 | sed 's/^/; /' | tr -d '\n')"
	fi
}
ran 1 pkgs "the guide's packages for B and C: $(cat "$g/pkgs.sh")"
ran 1 deb "$(cat "$g/deb.sh")"
ran 1 keys "the guide's key commands"
# the guide: the key 0600 in a directory 0700
lines 1 key-mode | grep -qx '700 /etc/kaslr-loader/keys' && lines 1 key-mode | grep -qx '600 /etc/kaslr-loader/keys/db.key'
check "boot 1: the key's modes" $? "$(lines 1 key-mode | tr '\n' ' ')"
ran 1 install "$(cat "$g/install.sh")"
ran 1 check "$(cat "$g/check.sh")"
own 1 check "$(cat "$g/check.sh")"
# the install's entry, first in BootOrder, for shim in its directory
ent=$(lines 1 installed-entry | grep -i 'kaslr-loader' | head -n 1)
num=$(printf '%s\n' "$ent" | sed -n 's/^Boot\([0-9A-F]\{4\}\).*/\1/p')
bo=$(lines 1 installed-entry | sed -n 's/^BootOrder: //p')
[ -n "$num" ] && [ "${bo%%,*}" = "$num" ] && printf '%s\n' "$ent" | grep -qi 'File(\\EFI\\kaslr-loader\\shimx64.efi)'
check "boot 1: the install's Boot#### entry starts shim, first in BootOrder" $? "${ent:-no entry}; BootOrder $bo"
ran 1 import "mokutil --import as the guide says"
ran 1 key-moved "set-up C: the key leaves the machine"

# 2: MokManager
stage=laptop-mok-enrolled
boot 2 enroll
[ "$(tail -n 1 "$R/boot2.mok")" = 0 ]
check "boot 2: MokManager enrolled the key at the console" $? "$(grep '^mokmanager:' "$R/boot2.mok" | tr '\n' '|')" || exit 1
boot 3
booted 3 "$ver" || exit 1
# shim lists its own certificate (Debian's CA) among them
mok=$(lines 1 mok-new | sed -n 's/^SHA1 Fingerprint: //p')
[ -n "$mok" ] && lines 3 mok | grep -q "SHA1 Fingerprint: $mok\$"
check "boot 3: mokutil --list-enrolled lists the imported key" $? \
	"imported ${mok:-none}; enrolled $(lines 3 mok | sed -n 's/^SHA1 Fingerprint: //p' | tr '\n' ' ')"

# through shim to the loader
stage=laptop-shim-loader
# what follows needs the loader booted through shim
via_loader 3 || exit 1

# a kernel update by apt, inside boot 3
stage=laptop-update
ran 3 update "apt install ./${newdeb##*/}"
# nothing the key signs: the loader on the ESP is the one installed, and
# the hooks said nothing was skipped
[ "$(val 3 loader-unchanged)" = yes ]
check "boot 3: the loader on the ESP unchanged by the update (TRUST=shim)" $? "$(val 3 loader-unchanged)"
! lines 3 update | grep -q 'skipped'
check "boot 3: the hooks skipped nothing" $? "$(lines 3 update | grep skipped | head -n 1)"
[ "$(lines 3 kaslr.conf | grep '^kernel' | head -n 1)" = "kernel vmlinuz-$newver" ]
check "boot 3: kaslr.conf names $newver first" $? "$(lines 3 kaslr.conf | grep '^kernel' | tr '\n' ' ')"
ran 3 check "$(cat "$g/check.sh") after the update"
own 3 check "$(cat "$g/check.sh") after the update"
boot 4
booted 4 "$newver" || exit 1
via_loader 4
# no prompt: neither shim's box nor MokManager's countdown
! grep -aq 'Verification failed\|perform MOK management' "$R/boot4.txt"
check "boot 4: no prompt on the console" $? "$(grep -ao 'Verification failed[^|]*\|perform MOK management' "$R/boot4.txt" | head -n 1)"

# the refusals: an unsigned loader, then a kernel Debian did not sign
stage=laptop-refusals
[ "$(val 4 unsigned-loader)" = 0 ]
check "boot 4: the unsigned loader copied over the installed one" $? "status $(val 4 unsigned-loader)"
boot 5 refused
grep -q '^mokmanager: OK on .Verification failed' "$R/boot5.mok" &&
	grep -q "^mokmanager: a key at MokManager's countdown" "$R/boot5.mok" &&
	grep -q '^mokmanager: then: GRUB' "$R/boot5.mok" && [ "$(tail -n 1 "$R/boot5.mok")" = 0 ]
check "boot 5: shim refused the loader (its box, MokManager's prompt), then GRUB" $? "$(grep '^mokmanager:' "$R/boot5.mok" | tr '\n' '|')"
booted 5 "$newver" || exit 1
via_grub 5
[ "$(val 5 unsigned-kernel)" = 0 ]
check "boot 5: the kernel put first carries no signature" $? "$(val 5 unsigned-kernel) signatures"
boot 6
booted 6 "$newver" || exit 1
via_loader 6
# the loader's one line for the refused kernel (a warning, since the next
# one boots), naming it, shim and the next; that kernel not loaded
n=$(grep -ac '^kaslr-loader: \(warning\|error\): .*vmlinuz-unsigned' "$R/boot6.txt")
[ "$n" = 1 ] && grep -aq "^kaslr-loader: warning: .*vmlinuz-unsigned: not booted (shim: .*vmlinuz-$newver\$" "$R/boot6.txt" &&
	! grep -aq '^kaslr-loader: loading .*vmlinuz-unsigned' "$R/boot6.txt"
check "boot 6: the loader refused the unsigned kernel in one line, the next one booted" $? \
	"$n lines: $(grep -a '^kaslr-loader: \(warning\|error\): .*vmlinuz-unsigned' "$R/boot6.txt" | head -n 2 | tr '\n' '|')"

# the removal: apt purge, the MOK deleted at MokManager
stage=laptop-removed
ran 6 delete "$(cat "$g/delete.sh") as the guide says"
ran 6 purge "$(cat "$g/purge.sh")"
boot 7 delete
[ "$(tail -n 1 "$R/boot7.mok")" = 0 ]
check "boot 7: MokManager deleted the key at the console" $? "$(grep '^mokmanager:' "$R/boot7.mok" | tr '\n' '|')" || exit 1
boot 8
booted 8 "$newver" || exit 1
via_grub 8
[ "$(val 8 bootorder)" = "$(val 8 bootorder-first)" ]
check "boot 8: BootOrder as the installer left it" $? "$(val 8 bootorder), first boot $(val 8 bootorder-first)"
! lines 8 entry | grep -qi kaslr
check "boot 8: no kaslr-loader boot entry" $? "$(lines 8 entry | grep -i kaslr | head -n 1)"
[ -z "$(lines 8 esp-diff)" ]
check "boot 8: the ESP holds what the installer left" $? "$(lines 8 esp-diff | tr '\n' ' ')"
! lines 8 mok | grep -q "SHA1 Fingerprint: $mok\$"
check "boot 8: the MOK is gone" $? "enrolled $(lines 8 mok | sed -n 's/^SHA1 Fingerprint: //p' | tr '\n' ' ')"
exit "$nok"
