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
for pair in "$@"; do
	name=${pair%%=*} src=${pair#*=}
	dir=$(dirname "$name")
	# create each missing directory level
	d=
	for part in $(echo "$dir" | tr '/' ' '); do
		d="$d/$part"
		mmd -i "$img" "::$d" 2>/dev/null || true
	done
	mcopy -o -i "$img" "$src" "::/$name"
done
