#!/bin/bash
# kaslr-install.sh - put kaslr-loader, a kernel and its initrds into an EFI
# system partition, with the policy written into the loader (and the loader
# signed when a key is given).  `make install` and the kernel hooks
# (src/tools/hooks/) both run it; installed as /usr/sbin/kaslr-loader-install.
#
#   kaslr-install.sh --esp DIR --loader UNSIGNED.efi --tool kaslr-policy
#       --kernel FILE [--initrd FILE]... [--cmdline TEXT] [--allow KEY]...
#       [--install-path EFI/BOOT/BOOTX64.EFI] [--sign-key KEY --sign-cert CERT]
#       [--conf FILE] [--repack kaslr-repack.sh] [--entry auto|yes|no] [--force]
#       [--shim SHIM.efi] [--trust pins|shim]
#
# Safe by default:
#   - an existing file at the install path that is not kaslr-loader (e.g.
#     systemd-boot's or shim's BOOTX64.EFI) is never replaced, unless --force,
#     which first keeps it as NAME.kaslr-backup;
#   - the kernel is copied as it is and keeps its name (a Debian bzImage
#     boots as shipped); only with --repack is a bzImage repacked to
#     vmlinux-VERSION.gz (kaslr-repack.sh: quicker to decompress under an
#     emulator); the policy pins the installed copies' SHA-256;
#   - an existing kaslr.conf is kept, except a `kernel` line naming another
#     file, which is pointed at the new kernel;
#   - with systemd-boot on the ESP (loader/entries/) the entry
#     loader/entries/kaslr-loader.conf is written (README, Secure Boot and TPM).
#   - with --shim, shim goes to the install path and the loader beside it as
#     grubx64.efi, the name shim starts (mmx64.efi too when it lies beside
#     SHIM); the default install path is then EFI/kaslr-loader/shimx64.efi
#     with a Boot#### entry (efibootmgr) when the ESP is the running
#     system's, else the fallback path EFI/BOOT/BOOTX64.EFI, no entry.
#   - --trust shim writes a policy under which a kernel boots if its pin
#     matches or shim verifies its signature, and kaslr.conf may name the
#     kernel and initrds (README, Through shim); the default is pins only.
# Every file written is named on stdout.
set -u
me=kaslr-install
die() { echo "$me: $*" >&2; exit 1; }

# ---- shim (--shim): shim at the install path, the loader as its grubx64.efi
# the running system's ESP: EFI booted, ESP a mount point of a partition
# whose type is the EFI system partition's
shim_live_esp() {
	local src
	[ -d /sys/firmware/efi ] && mountpoint -q "$esp" 2>/dev/null || return 1
	src=$(findmnt -n -o SOURCE --target "$esp" 2>/dev/null) || return 1
	[ "$(lsblk -n -o PARTTYPE "$src" 2>/dev/null)" = c12a7328-f81f-11d2-ba4b-00a0c93ec93b ]
}
shim_default_path() {
	[ -n "$path" ] && return
	if [ -n "$shim" ] && shim_live_esp; then
		path=EFI/kaslr-loader/shimx64.efi
	else
		path=EFI/BOOT/BOOTX64.EFI
	fi
}
# the loader goes beside shim as grubx64.efi; shim's own file must be shim
# or kaslr-loader (an earlier install without shim) unless --force
shim_paths() {
	[ -f "$shim" ] || die "shim $shim: no such file"
	shim_dest=$dest
	dest=$dir/grubx64.efi
	if [ -e "$shim_dest" ] && ! shim_is_shim "$shim_dest" && ! "$tool" show "$shim_dest" >/dev/null 2>&1; then
		[ "$force" = 1 ] ||
			die "refusing to replace $shim_dest: it is neither shim nor kaslr-loader; install elsewhere (INSTALL_PATH=EFI/kaslr-loader/shimx64.efi) or force it (FORCE=1 keeps a backup)"
		cp "$shim_dest" "$shim_dest.kaslr-backup" || die "cannot back up $shim_dest"
		echo "$me: kept the previous $path as $shim_dest.kaslr-backup"
	fi
}
# shim's .sbat names the component shim
shim_is_shim() {
	objcopy --dump-section .sbat=/dev/stdout "$1" 2>/dev/null | grep -q '^shim,'
}
# shim and MokManager (mmx64.efi[.signed] beside SHIM) into the install directory
shim_install() {
	local mm
	{ cp "$shim" "$shim_dest.new" && mv "$shim_dest.new" "$shim_dest"; } || die "cannot write $shim_dest"
	echo "$me: shim    $shim -> $shim_dest (starts $dest)"
	for mm in "$(dirname "$shim")/mmx64.efi.signed" "$(dirname "$shim")/mmx64.efi"; do
		[ -f "$mm" ] || continue
		cp "$mm" "$dir/mmx64.efi" || die "cannot write $dir/mmx64.efi"
		echo "$me: shim    $mm -> $dir/mmx64.efi"
		break
	done
	shim_live_esp && shim_boot_entry
	return 0
}
# a Boot#### entry for shim on the running system (once: by its label)
shim_boot_entry() {
	local src disk part loader_path
	command -v efibootmgr >/dev/null || { echo "$me: warning: efibootmgr missing: no Boot#### entry for $path"; return 0; }
	efibootmgr 2>/dev/null | grep -q '^Boot[0-9A-F]\{4\}\*\{0,1\} kaslr-loader\b' &&
		{ echo "$me: entry   Boot#### kaslr-loader exists"; return 0; }
	src=$(findmnt -n -o SOURCE --target "$esp")
	disk=/dev/$(lsblk -n -o PKNAME "$src" | head -n 1)
	part=$(lsblk -n -o PARTN "$src" 2>/dev/null | head -n 1)
	[ -n "$part" ] || part=$(cat "/sys/class/block/$(basename "$src")/partition" 2>/dev/null)
	loader_path=\\$(printf '%s' "$path" | sed 's|/|\\|g')
	efibootmgr --create --disk "$disk" --part "$part" --label kaslr-loader --loader "$loader_path" >/dev/null ||
		{ echo "$me: warning: efibootmgr could not add a Boot#### entry for $path"; return 0; }
	echo "$me: entry   Boot#### kaslr-loader -> $loader_path on $disk partition $part"
}

esp='' loader='' tool='' kernel='' cmdline='' have_cmdline=0 path=''
key='' cert='' conf='' repack='' entry=auto force=0 shim='' trust=pins
initrds=() allows=()
while [ $# -gt 0 ]; do
	case $1 in
	--force) force=1; shift; continue ;;
	esac
	[ $# -ge 2 ] || die "$1 needs a value"
	case $1 in
	--esp) esp=$2 ;;
	--loader) loader=$2 ;;
	--tool) tool=$2 ;;
	--kernel) kernel=$2 ;;
	--initrd) initrds+=("$2") ;;
	--cmdline) cmdline=$2; have_cmdline=1 ;;
	--allow) allows+=("$2") ;;
	--install-path) path=$2 ;;
	--sign-key) key=$2 ;;
	--sign-cert) cert=$2 ;;
	--conf) conf=$2 ;;
	--repack) repack=$2 ;;
	--entry) entry=$2 ;;
	--shim) shim=$2 ;;
	--trust) trust=$2 ;;
	*) die "unknown argument $1" ;;
	esac
	shift 2
done

[ -n "$esp" ] || die "no ESP given (the mounted EFI system partition)"
[ -d "$esp" ] || die "ESP $esp is not a directory"
[ -n "$kernel" ] || die "no kernel given"
[ -f "$kernel" ] || die "kernel $kernel: no such file"
for f in "$loader" "$tool"; do [ -f "$f" ] || die "$f missing (build it first)"; done
for f in "${initrds[@]}"; do [ -f "$f" ] || die "initrd $f: no such file"; done
{ [ -z "$key$cert" ] || { [ -n "$key" ] && [ -n "$cert" ]; }; } || die "signing needs both a key and a certificate"
if [ -n "$key" ]; then
	command -v sbsign >/dev/null || die "sbsign missing (Debian package sbsigntool)"
	for f in "$key" "$cert"; do [ -r "$f" ] || die "cannot read $f"; done
fi
shim_default_path
case $path in /* | *..*) die "install path $path: give it relative to the ESP, e.g. EFI/kaslr/kaslr-loader.efi" ;; esac
case $entry in auto | yes | no) ;; *) die "--entry auto|yes|no" ;; esac
case $trust in pins | shim) ;; *) die "--trust pins|shim" ;; esac

dest=$esp/$path
reldir=$(dirname "$path")
dir=$esp/$reldir
shim_dest=''
[ -n "$shim" ] && shim_paths
# the ESP path of a file in the install directory, as the policy pins it
esp_path() { printf '/%s/%s' "$reldir" "$1" | sed 's|^/\./|/|; s|//*|/|g'; }

# 1. never replace what is not ours
if [ -e "$dest" ] && ! "$tool" show "$dest" >/dev/null 2>&1; then
	[ "$force" = 1 ] ||
		die "refusing to replace $dest: it is not kaslr-loader (another boot loader?); install elsewhere (INSTALL_PATH=EFI/kaslr/kaslr-loader.efi) or force it (FORCE=1 keeps a backup)"
	backup=$dest.kaslr-backup
	[ -e "$backup" ] && backup=$dest.kaslr-backup-$(date +%Y%m%d%H%M%S)
	cp "$dest" "$backup" || die "cannot back up $dest" # no -p: FAT keeps no modes
	echo "$me: kept the previous $path as $backup"
fi

tmp=$(mktemp -d) || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir" || die "cannot create $dir"

# 2. the kernel, under its own name; with --repack a bzImage becomes a gzip'd ELF
kname=$(basename "$kernel")
if [ -n "$repack" ] && [ "$(od -An -c -j 514 -N 4 "$kernel" 2>/dev/null | tr -d ' \n')" = HdrS ]; then
	case $kname in vmlinuz-*) kname=vmlinux-${kname#vmlinuz-}.gz ;; *) kname=$kname.elf.gz ;; esac
	"$repack" "$kernel" "$tmp/$kname" 2>"$tmp/repack.log" ||
		die "repacking $kernel failed: $(tail -n 1 "$tmp/repack.log")"
	cp "$tmp/$kname" "$dir/$kname" || die "cannot write $dir/$kname"
else
	cp "$kernel" "$dir/$kname" || die "cannot write $dir/$kname"
fi
echo "$me: kernel  $kernel -> $dir/$kname"
pol=(--kernel "$(esp_path "$kname")=$dir/$kname")
for f in "${initrds[@]}"; do
	n=$(basename "$f")
	cp "$f" "$dir/$n" || die "cannot write $dir/$n"
	echo "$me: initrd  $f -> $dir/$n"
	pol+=(--initrd "$(esp_path "$n")=$dir/$n")
done
[ "$have_cmdline" = 1 ] && pol+=(--cmdline "$cmdline")
for a in "${allows[@]}"; do pol+=(--allow "$a"); done
pol+=(--trust "$trust")

# 3. the policy into the unsigned image, then the signature over both
"$tool" write --loader "$loader" --out "$tmp/loader.efi" "${pol[@]}" || die "writing the policy failed"
img=$tmp/loader.efi
if [ -n "$key" ]; then
	sbsign --key "$key" --cert "$cert" --output "$tmp/signed.efi" "$img" >"$tmp/sbsign.log" 2>&1 ||
		die "sbsign failed: $(tail -n 1 "$tmp/sbsign.log")"
	sbverify --cert "$cert" "$tmp/signed.efi" >/dev/null 2>&1 || die "the signed loader does not verify with $cert"
	img=$tmp/signed.efi
	how="signed with $cert"
else
	how="unsigned: its policy is the default only, Secure Boot would refuse it"
fi
{ cp "$img" "$dest.new" && mv "$dest.new" "$dest"; } || die "cannot write $dest"
echo "$me: loader  $dest ($how)"
[ -n "$shim" ] && shim_install
"$tool" show "$dest" | sed "s/^/$me: policy  /"

# 4. kaslr.conf beside the loader
kc=$dir/kaslr.conf
if [ -n "$conf" ]; then
	cp "$conf" "$kc" || die "cannot write $kc"
	echo "$me: config  $conf -> $kc"
elif [ -e "$kc" ]; then
	old=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([^#[:space:]]*\).*/\1/p' "$kc" | tail -n 1)
	abs=$(esp_path "$kname" | sed 's|/|\\|g') # with backslashes
	if [ -n "$old" ] && [ "$old" != "$kname" ] && [ "$old" != "$abs" ]; then
		sed -i "s|^\([[:space:]]*kernel[[:space:]]\{1,\}\)[^#[:space:]]*|\1$kname|" "$kc" || die "cannot update $kc"
		echo "$me: config  $kc: kernel $old -> $kname"
	else
		echo "$me: config  $kc kept"
	fi
else
	cat >"$kc" <<EOF || die "cannot write $kc"
# kaslr.conf - options of kaslr-loader (see its README, Options).
# One "key value" per line; '#' starts a comment.  Load options (e.g. a
# systemd-boot entry's "options") override what is set here; under Secure
# Boot only what the signed policy allows is taken (README, Secure Boot and TPM).
# The kernel, its initrds and command line come from the loader's policy
# (kaslr-policy show $path).
#
# kernel     $kname
# cmdline    console=ttyS0       (the rest of the line is the command line)
# verbose                        (print addresses and timings: leaks the layout)
# kaslr.min  16M
# kaslr.max  4G
EOF
	echo "$me: config  $kc (commented defaults)"
fi

# 5. the systemd-boot entry
if [ "$entry" = yes ] || { [ "$entry" = auto ] && [ -d "$esp/loader/entries" ]; }; then
	mkdir -p "$esp/loader/entries" || die "cannot create $esp/loader/entries"
	e=$esp/loader/entries/kaslr-loader.conf
	printf 'title   kaslr-loader\nefi     /%s\n' "$path" >"$e" || die "cannot write $e"
	echo "$me: entry   $e"
fi
