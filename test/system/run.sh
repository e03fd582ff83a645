#!/bin/bash
# run.sh [SCENARIO...] - make test-system: a real Debian 12 system booted
# through kaslr-loader under QEMU + OVMF, checked from inside.
#
# The image (test/system/build-image.sh: mmdebstrap, linux-image-amd64,
# initramfs-tools, systemd; cached under build/system/) becomes, for each
# scenario, a GPT disk of its own: an ESP (FAT, made with mtools from a
# staging directory that `make install` filled with the image's own
# /boot/vmlinuz-* and initrd.img-*, ALLOW=verbose and a kaslr.conf saying
# verbose, so the loader prints its placement) and a copy of the root file
# system into which debugfs writes this run's files (test/system/guest.sh,
# the .deb of `make deb`, the second kernel's package, install.conf).
#
# Scenarios (default: all; SYSTEM_JOBS=N runs N at a time, default 2):
#   sdboot      systemd-boot as \EFI\BOOT\BOOTX64.EFI, its default entry the
#               one make install wrote for \EFI\kaslr\kaslr-loader.efi; then a
#               kernel update inside the system, and a second boot
#   sdboot-sb   the same under Secure Boot (systemd-boot and the loader
#               snakeoil-signed) with a TPM (swtpm); one boot
#   alone       the loader alone as \EFI\BOOT\BOOTX64.EFI; one boot
#   alone-sb    the loader alone, signed, Secure Boot and a TPM; then a kernel
#               update inside the system (install.conf with SIGN_KEY), and a
#               second boot
#   laptop      a machine with Microsoft's keys only, Debian's signed shim,
#               GRUB and kernels, and an image of its own (build-image.sh
#               laptop); its administrator follows docs/admin-guide.md from
#               the first install through MokManager, an update and two
#               refusals to the removal: test/system/laptop.sh
#   sealed      a LUKS2 data volume bound with clevis's tpm2 pin to the
#               predicted PCRs 4,5,7,9,12, across a kernel update (resealed
#               by the hooks), refused after an ESP changed from outside;
#               an image of its own (build-image.sh sealed: clevis,
#               tpm2-tools): test/system/sealed.sh (four boots, one TPM)
#   luks        a LUKS2 volume bound with systemd-cryptenroll to a signed PCR
#               11 policy (systemd-measure sign) unlocks after a boot of a
#               unified kernel image through the loader, and again after the
#               image is rebuilt with another initrd and signed anew; not
#               this Debian system but Debian's cloud kernel and an initrd of
#               busybox and systemd's own cryptsetup tools: test/system/luks.sh
#
# Each boot: the guest's report (state, failed units, uname -r, _text from
# /proc/kallsyms, "Kernel code" from /proc/iomem, lockdown, crng, bootctl)
# is checked: systemd "running" with no failed unit, the expected kernel,
# "Kernel code" at the loader's physical base and _text at its link
# address plus the loader's virtual offset, lockdown under Secure Boot, the
# ESP mounted, bootctl naming the first-stage loader.  After every boot: no
# two boots with the same placement.  An update: the .deb installs with apt,
# dpkg -i of the second kernel succeeds, and the next boot runs it.
# With the loader as the first stage, bootctl must list the loader's
# features and a random seed passed to the OS.  Prints one line per check
# ("ok ..." or "FAIL ..."), "info" lines for what is reported but not
# judged (when crng was ready: with RDRAND the kernel is ready at once
# whatever the loader did; lockdown without Secure Boot; behind
# systemd-boot, its features and seed), and last "system: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/system
W=$D/work
T=${SYSTEM_TIMEOUT:-1500}
. test/system/image.conf
CMDLINE="root=UUID=$ROOT_UUID ro console=ttyS0"
ESP_MB=384
SB_KEY_ENC=/usr/share/ovmf/PkKek-1-snakeoil.key
SB_CERT=/usr/share/ovmf/PkKek-1-snakeoil.pem
SDBOOT=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
# the longest first: they run side by side
ALL='laptop sealed sdboot alone-sb sdboot-sb alone luks'
command -v sfdisk >/dev/null || PATH=$PATH:/usr/sbin:/sbin
# first PATTERN-EXPANSION...: the first file a glob matched, if any
first() { [ -e "$1" ] && printf '%s\n' "$1"; }

# ---------------------------------------------------------------- one scenario
# run.sh --scenario NAME: its lines go to stdout (the caller keeps them)
if [ "${1:-}" = --scenario ]; then
	name=$2
	# the laptop's own script keeps its work directory when resuming
	[ "$name" = laptop ] && exec test/system/laptop.sh
	R=$W/$name
	# laptop and sealed keep their own directories (LAPTOP_FROM,
	# SEALED_FROM start from what an earlier run kept there)
	case $name in
	laptop) exec test/system/laptop.sh ;;
	sealed) exec test/system/sealed.sh ;;
	esac
	rm -rf "$R" && mkdir -p "$R" || exit 1
	nok=0
	check() { # check LABEL COND-STATUS DETAIL
		if [ "$2" = 0 ]; then echo "ok $name: $1${3:+ ($3)}"; else echo "FAIL $name: $1${3:+: $3}"; nok=1; fi
	}
	info() { echo "info $name: $*"; }
	die() { echo "FAIL $name: $*"; exit 1; }
	case $name in
	luks) exec test/system/luks.sh ;;
	sdboot) path=sdboot sb=0 update=1 ;;
	sdboot-sb) path=sdboot sb=1 update=0 ;;
	alone) path=alone sb=0 update=0 ;;
	alone-sb) path=alone sb=1 update=1 ;;
	*) die "unknown scenario (one of: $ALL)" ;;
	esac
	kernel=$(first "$D"/boot/vmlinuz-*) initrd=$(first "$D"/boot/initrd.img-*)
	ver=${kernel##*/vmlinuz-}
	newdeb=$(cat "$D/update-kernel")
	newver=$(dpkg-deb -f "$newdeb" Package | sed 's/^linux-image-//')

	# the ESP's staging directory
	esp=$R/esp
	mkdir -p "$esp"
	signargs=()
	if [ "$sb" = 1 ]; then
		key=$D/snakeoil.key
		signargs=(SIGN_KEY="$key" SIGN_CERT="$SB_CERT")
	fi
	if [ "$path" = sdboot ]; then
		ipath=EFI/kaslr/kaslr-loader.efi
		mkdir -p "$esp/EFI/systemd" "$esp/EFI/BOOT" "$esp/loader/entries" "$esp/$MACHINE_ID"
		if [ "$sb" = 1 ]; then
			sbsign --key "$key" --cert "$SB_CERT" --output "$esp/EFI/systemd/systemd-bootx64.efi" \
				"$SDBOOT" >/dev/null 2>&1 || die "sbsign systemd-boot failed"
		else
			cp "$SDBOOT" "$esp/EFI/systemd/systemd-bootx64.efi"
		fi
		cp "$esp/EFI/systemd/systemd-bootx64.efi" "$esp/EFI/BOOT/BOOTX64.EFI"
		printf 'default kaslr-loader.conf\ntimeout 0\n' >"$esp/loader/loader.conf"
	else
		ipath=EFI/BOOT/BOOTX64.EFI
	fi
	make --no-print-directory install ESP="$esp" INSTALL_PATH="$ipath" KERNEL="$kernel" INITRD="$initrd" \
		CMDLINE="$CMDLINE" ALLOW=verbose "${signargs[@]}" >"$R/install.log" 2>&1 ||
		die "make install: $(tail -n 2 "$R/install.log")"
	# the policy allows verbose; kaslr.conf asks for it (the checks read the
	# loader's placement line)
	echo verbose >"$esp/$(dirname "$ipath")/kaslr.conf"
	mformat -i "$R/esp.img" -C -T $((ESP_MB * 2048)) -h 64 -s 32 -v ESP :: >/dev/null ||
		die "mformat failed"
	mcopy -s -i "$R/esp.img" "$esp"/* ::/ || die "mcopy $esp failed"

	# this run's files into a copy of the root file system
	cp --sparse=always "$D/root.ext4" "$R/root.ext4" || die "cannot copy $D/root.ext4"
	g=/root/kaslr-system
	{
		echo "write test/system/guest.sh $g/run"
		if [ "$update" = 1 ]; then
			echo update >"$R/step"
			{
				echo "ESP=/boot/efi"
				echo "INSTALL_PATH=$ipath"
				echo "CMDLINE=\"$CMDLINE\""
				echo "ALLOW=verbose"
				[ "$sb" = 1 ] && echo "SIGN_KEY=$g/db.key" && echo "SIGN_CERT=$g/db.crt"
			} >"$R/install.conf"
			echo "write $R/install.conf $g/install.conf"
			# the update makes its initrd inside the VM, which can see its disk:
			# MODULES=dep, as on an installed system (most takes minutes there)
			echo MODULES=dep >"$R/initramfs.conf"
			echo "rm /etc/initramfs-tools/conf.d/kaslr-system"
			echo "write $R/initramfs.conf /etc/initramfs-tools/conf.d/kaslr-system"
			deb=$(first "$B"/deb/kaslr-loader_*.deb)
			echo "write $deb $g/${deb##*/}"
			echo "write $newdeb $g/${newdeb##*/}"
			if [ "$sb" = 1 ]; then
				echo "write $key $g/db.key"
				echo "write $SB_CERT $g/db.crt"
			fi
		else
			echo report >"$R/step"
		fi
		echo "write $R/step $g/step"
	} >"$R/debugfs.cmd"
	debugfs -w -f "$R/debugfs.cmd" "$R/root.ext4" >"$R/debugfs.log" 2>&1 || die "debugfs failed: $(tail -n 2 "$R/debugfs.log")"
	# debugfs exits 0 whatever failed: any line but its echo and banner is an error
	grep -v '^debugfs\|^Allocated inode' "$R/debugfs.log" | grep -q . &&
		die "debugfs: $(grep -v '^debugfs\|^Allocated inode' "$R/debugfs.log" | head -n 2 | tr '\n' ' ')"

	# the GPT disk: ESP at 1 MiB, the root right after it
	esp_s=$((ESP_MB * 2048)) root_s=$(($(stat -c %s "$R/root.ext4") / 512))
	disk=$R/disk.img
	truncate -s $(((2048 + esp_s + root_s + 2048) * 512)) "$disk"
	printf 'label: gpt\nunit: sectors\nfirst-lba: 2048\n%s\n%s\n' \
		"start=2048, size=$esp_s, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$ESP_PARTUUID, name=ESP" \
		"start=$((2048 + esp_s)), size=$root_s, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=$ROOT_PARTUUID, name=root" |
		sfdisk -q "$disk" >/dev/null || die "sfdisk failed"
	dd if="$R/esp.img" of="$disk" bs=1M seek=1 conv=notrunc status=none || die "dd esp failed"
	dd if="$R/root.ext4" of="$disk" bs=4M oflag=seek_bytes seek=$(((2048 + esp_s) * 512)) \
		conv=sparse,notrunc status=none || die "dd root failed"
	rm -f "$R/root.ext4" "$R/esp.img"

	# boot N [WANT-KERNEL]: one boot and the checks on its report
	boot() {
		local n=$1 want=$2 log=$R/boot$1.log c L args=(--mem 1G --cpu max) rc p v l line code text
		[ "$sb" = 1 ] && args+=(--secureboot --tpm "$R/tpm")
		local t0=$SECONDS
		test/qemu/boot.sh --log "$log" --timeout "$T" --until '^kaslr-system: end' "${args[@]}" "$disk" 2>"$R/boot$n.err"
		rc=$?
		c=$R/boot$n.txt
		tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g' >"$c"
		L="boot $n"
		val() { sed -n "s/^kaslr-system: $1=//p" "$c" | tail -n 1; }
		if ! grep -q '^kaslr-system: end' "$c"; then
			check "$L: the system ran its report" 1 "boot.sh status $rc (124: no 'end' line within ${T}s); last lines: $(grep -a . "$c" | tail -n 8 | tr '\n' '|')"
			return 1
		fi
		check "$L: the system ran its report" 0 "$((SECONDS - t0)) s"
		[ "$(val state)" = running ]
		check "$L: systemctl is-system-running" $? "$(val state)"
		[ "$(val failed)" = 0 ]
		check "$L: failed units" $? "$(val failed)$(sed -n 's/^kaslr-system: failed-unit /; /p' "$c" | tr -d '\n')"
		[ "$(val kernel)" = "$want" ]
		check "$L: runs the kernel it should" $? "uname -r $(val kernel), want $want"
		val esp | grep -q ',vfat$'
		check "$L: the ESP is mounted at /boot/efi" $? "$(val esp)"
		# the loader's placement (verbose) against the kernel's own view
		line=$(grep -a 'kaslr-loader: linux: physical base' "$c" | tail -n 1)
		p=$(printf '%s\n' "$line" | sed -n 's/.*physical base \(0x[0-9A-Fa-f]*\),.*/\1/p')
		v=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset \(0x[0-9A-Fa-f]*\) from.*/\1/p')
		l=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset 0x[0-9A-Fa-f]* from \(0x[0-9A-Fa-f]*\),.*/\1/p')
		code=$(val code) text=$(val text)
		if [ -z "$p" ] || [ -z "$v" ] || [ -z "$l" ]; then
			check "$L: Kernel code and _text where the loader put them" 1 "no 'linux: physical base' line from the loader (verbose)"
		elif [ -z "$code" ] || [ -z "$text" ]; then
			check "$L: Kernel code and _text where the loader put them" 1 "the guest read no address (code='$code' _text='$text')"
		else
			[ $((0x$code)) -eq $((p)) ] && [ $((0x$text)) -eq $((l + v)) ]
			check "$L: Kernel code and _text where the loader put them" $? \
				"Kernel code 0x$code, loader base $p; _text 0x$text, loader $l + $v"
			echo "$name/$n 0x$text 0x$code" >>"$R/placements"
		fi
		if [ "$sb" = 1 ]; then
			val lockdown | grep -q '\[integrity\]\|\[confidentiality\]'
			check "$L: Secure Boot: the kernel locked itself down" $? "$(val lockdown)"
			grep -q '^kaslr-system: bootctl *Secure Boot: enabled' "$c"
			check "$L: bootctl: Secure Boot enabled" $? "$(sed -n 's/^kaslr-system: bootctl *Secure Boot: //p' "$c")"
		fi
		# bootctl names the first stage: systemd-boot, or the loader
		local prod first
		prod=$(sed -n 's/^kaslr-system: bootctl *Product: //p' "$c")
		if [ "$path" = sdboot ]; then first=systemd-boot; else first=kaslr-loader; fi
		case $prod in "$first"*) true ;; *) false ;; esac
		check "$L: bootctl's current boot loader is $first" $? "Product: $prod"
		# the loader features bootctl lists as present (one line each, the
		# first after "Features:"), and whether a seed reached the OS
		local feat seed
		feat=$(sed -n 's/^kaslr-system: bootctl *\(Features: \)\{0,1\}✓ //p' "$c" | paste -sd, -)
		seed=$(sed -n 's/^kaslr-system: bootctl *Passed to OS: //p' "$c")
		info "$L: crng init done at $(val crng) s; lockdown $(val lockdown)"
		if [ "$path" = sdboot ]; then
			# systemd-boot's own features and seed: reported, not judged
			info "$L: bootctl loader features: ${feat:-none}"
			info "$L: bootctl random seed passed to OS: $seed"
		else
			# the loader as the first stage: bootctl lists what it sets
			case ,$feat, in *",Support for passing random seed to OS,"*) ;; *) false ;; esac &&
				case ,$feat, in *",Boot loader sets ESP information,"*) ;; *) false ;; esac
			check "$L: bootctl lists the loader's features" $? "${feat:-none}"
			[ "$seed" = yes ]
			check "$L: bootctl: random seed passed to OS" $? "${seed:-no line}"
		fi
		return 0
	}

	if boot 1 "$ver" && [ "$update" = 1 ]; then
		c=$R/boot1.txt
		st=$(sed -n 's/^kaslr-system: deb-install=//p' "$c")
		[ "$st" = 0 ]
		check "update: apt-get install ./kaslr-loader_*.deb" $? "status $st$(sed -n 's/^kaslr-system: apt /; /p' "$c" | tail -n 2 | tr -d '\n')"
		st=$(sed -n 's/^kaslr-system: update=//p' "$c")
		[ "$st" = 0 ]
		check "update: dpkg -i ${newdeb##*/}" $? "status $st$(sed -n 's/^kaslr-system: dpkg /; /p' "$c" | tail -n 4 | tr -d '\n')"
		# the kernel hooks put the new kernel on the ESP (the guest listed it)
		grep -q "^kaslr-system: esp-file .*/vmlinu[xz]-$newver\(\.gz\)\{0,1\}\$" "$c"
		check "update: the kernel hooks put $newver on the ESP" $? \
			"ESP: $(sed -n 's|^kaslr-system: esp-file /boot/efi/||p' "$c" | tr '\n' ' ')"
		sed -n 's/^kaslr-system: dpkg /dpkg: /p' "$c" | while read -r x; do info "update: $x"; done
		sed -n 's/^kaslr-system: esp-file /ESP file after the update: /p' "$c" | while read -r x; do info "update: $x"; done
		boot 2 "$newver"
	fi
	exit "$nok"
fi

# ---------------------------------------------------------------- the tier
t0=$SECONDS
mkdir -p "$W" || exit 1
# shellcheck disable=SC2086
[ $# -gt 0 ] || set -- $ALL
# the images the scenarios boot: the shared one, the laptop's and the
# sealed scenario's own
images=
for s in "$@"; do
	case $s in laptop | sealed) i=$s ;; luks) continue ;; *) i=default ;; esac
	case " $images " in *" $i "*) ;; *) images="$images $i" ;; esac
done
for i in $images; do
	[ "$i" = default ] && i=
	test/system/build-image.sh ${i:+"$i"} || { echo "system: 0 passed, 1 failed (no image: build-image.sh $i failed)"; exit 1; }
done
# what the Debian system's scenarios need (luks boots none of it)
debian=0
for s in "$@"; do [ "$s" = luks ] || debian=1; done
# the second kernel: the one the registry's linux-image-amd64 (security
# updates included) points to, newer than the image's point-release kernel;
# downloaded once
if [ "$debian" = 1 ] && { [ ! -s "$D/update-kernel" ] || [ ! -s "$(cat "$D/update-kernel")" ]; }; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
	have=$(first "$D"/boot/vmlinuz-* || first "$D"/laptop/boot/vmlinuz-*)
	have=$(printf '%s\n' "$have" | sed 's|.*/vmlinuz-|linux-image-|')
	if [ -z "$pkg" ] || [ "$pkg" = "$have" ]; then
		echo "system: 0 passed, 1 failed (no second kernel: linux-image-amd64 points to '${pkg:-nothing}', the image has $have; run apt-get update)"
		exit 1
	fi
	echo "run.sh: apt-get download $pkg (about 70 MB, once)" >&2
	(cd "$D" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) ||
		{ echo "system: 0 passed, 1 failed (apt-get download $pkg failed)"; exit 1; }
	first "$D/${pkg}"_*.deb >"$D/update-kernel"
fi
if [ "$debian" = 1 ] && [ ! -s "$D/snakeoil.key" ]; then
	openssl rsa -passin pass:snakeoil -in "$SB_KEY_ENC" -out "$D/snakeoil.key" >/dev/null 2>&1 ||
		{ echo "system: 0 passed, 1 failed (cannot decrypt $SB_KEY_ENC: make deps installs ovmf)"; exit 1; }
fi
if [ "$debian" = 1 ]; then
	first "$B"/deb/kaslr-loader_*.deb >/dev/null || { echo "system: 0 passed, 1 failed (no $B/deb/kaslr-loader_*.deb: make deb)"; exit 1; }
	[ -f "$SDBOOT" ] || { echo "system: 0 passed, 1 failed (no $SDBOOT: make deps installs systemd-boot-efi)"; exit 1; }
fi

rm -f "$W"/*/placements
# $0, $1 and $2 are the inner sh's arguments, expanded there
# shellcheck disable=SC2016
printf '%s\n' "$@" | xargs -P "${SYSTEM_JOBS:-2}" -I{} sh -c '"$0" --scenario "$1" >"$2/$1.out" 2>&1' "$0" {} "$W"
passed=0 failed=0
for s in "$@"; do
	cat "$W/$s.out"
	passed=$((passed + $(grep -c '^ok ' "$W/$s.out")))
	failed=$((failed + $(grep -c '^FAIL ' "$W/$s.out")))
done
# every boot's placement its own (_text and Kernel code together: a
# repeat of both by chance is about one in 200,000 per pair)
cat "$W"/*/placements 2>/dev/null >"$W/placements"
n=$(wc -l <"$W/placements")
dup=$(cut -d' ' -f2- "$W/placements" | sort | uniq -d)
if [ "$n" -lt 2 ]; then
	echo "FAIL placements differ between boots: only $n boots with a placement"; failed=$((failed + 1))
elif [ -n "$dup" ]; then
	echo "FAIL placements differ between boots: $dup repeats"; failed=$((failed + 1))
else
	echo "ok placements differ between boots ($n boots: $(cut -d' ' -f2 "$W/placements" | tr '\n' ' '))"
	passed=$((passed + 1))
fi
echo "($((SECONDS - t0)) s)"
echo "system: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
