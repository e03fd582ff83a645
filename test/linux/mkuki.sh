#!/bin/bash
# mkuki.sh OUT [--stub F] [--linux F] [--initrd F] [--cmdline TEXT]
#          [--osrel F] [--pcrsig F] [--pcrpkey F] [--splash F] [--dtb F]
# - a unified kernel image built as linuxx64.efi.stub(7) shows: objcopy
# adds each file as a section (--add-section NAME=FILE) at an address of
# its own past the stub's image (--change-section-vma), in the order
# .osrel .cmdline .splash .dtb .pcrsig .pcrpkey .linux .initrd, each on a
# 64 KiB boundary after the one before, so no two overlap.  --stub
# defaults to Debian's /usr/lib/systemd/boot/efi/linuxx64.efi.stub
# (package systemd-boot-efi); --cmdline writes TEXT and a newline to a
# file first, as `echo TEXT >cmdline` would.  Sections not given are left
# out.  The files each section came from are kept beside OUT as
# OUT.d/NAME (for systemd-measure calculate --NAME=OUT.d/NAME).
set -u
die() { echo "mkuki.sh: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: mkuki.sh OUT [--stub F] [--linux F] [--initrd F] [--cmdline TEXT] [--osrel F] [--pcrsig F] [--pcrpkey F] [--splash F] [--dtb F]"
out=$1
shift
stub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
declare -A file=()
d=$out.d
{ rm -rf "$d" && mkdir -p "$d"; } || die "cannot create $d"
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 wants a value"
	case $1 in
	--stub) stub=$2 ;;
	--cmdline) printf '%s\n' "$2" >"$d/cmdline" || die "cannot write $d/cmdline"; file[cmdline]=$d/cmdline ;;
	--linux | --initrd | --osrel | --pcrsig | --pcrpkey | --splash | --dtb)
		n=${1#--}
		[ -f "$2" ] || die "$1: no file $2"
		cp "$2" "$d/$n" || die "cannot copy $2"
		file[$n]=$d/$n ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
command -v objcopy >/dev/null || die "objcopy missing (Debian package binutils)"
[ -f "$stub" ] || die "no stub $stub (Debian package systemd-boot-efi)"
# the first address past the stub's image, 64 KiB-aligned
end=$(objdump -p "$stub" | awk '$1 == "SizeOfImage" {print $2}')
[ -n "$end" ] || die "$stub: no SizeOfImage (not a PE image?)"
addr=$(((0x$end + 0xffff) & ~0xffff))
args=()
for n in osrel cmdline splash dtb pcrsig pcrpkey linux initrd; do
	f=${file[$n]:-}
	[ -n "$f" ] || continue
	args+=(--add-section ".$n=$f" --change-section-vma ".$n=$(printf '0x%x' "$addr")")
	addr=$(((addr + $(stat -c %s "$f") + 0xffff) & ~0xffff))
done
objcopy "${args[@]}" "$stub" "$out" || die "objcopy failed"
