#!/bin/sh
# mkesp.sh IMG LOADER KERNEL [NAME=SRC ...] - build a FAT ESP image with mtools:
#   \EFI\BOOT\BOOTX64.EFI = LOADER, \EFI\BOOT\kernel.elf = KERNEL (unless "-"),
#   and each NAME=SRC extra (NAME is a path inside the ESP, '/'-separated).
set -e
img=$1 loader=$2 kernel=$3
shift 3
rm -f "$img"
mkdir -p "$(dirname "$img")"
# 64 MiB: room for a compressed distribution kernel and its relocations
mformat -i "$img" -C -T 131072 -h 64 -s 32 -v ESP :: >/dev/null
mmd -i "$img" ::/EFI ::/EFI/BOOT
mcopy -i "$img" "$loader" ::/EFI/BOOT/BOOTX64.EFI
[ "$kernel" = - ] || mcopy -i "$img" "$kernel" ::/EFI/BOOT/kernel.elf
# the directories made so far: a level is made once (a process per level
# and per file was most of an image's cost)
made=' /EFI /EFI/BOOT '
set -f
for pair in "$@"; do
	name=${pair%%=*} src=${pair#*=}
	case $name in */*) dir=${name%/*} ;; *) dir= ;; esac
	# create each missing directory level
	d=
	IFS=/
	for part in $dir; do
		[ -n "$part" ] || continue
		d="$d/$part"
		case $made in *" $d "*) continue ;; esac
		mmd -i "$img" "::$d" 2>/dev/null || true
		made="$made$d "
	done
	unset IFS
	mcopy -o -i "$img" "$src" "::/$name"
done
