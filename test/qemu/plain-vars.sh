#!/bin/bash
# plain-vars.sh FILE [--4m] - a variable store for Debian's 2 MiB OVMF
# build (OVMF_CODE.fd; with --4m the 4 MiB one, OVMF_CODE_4M.fd) that the
# firmware has booted with once, for make test's plain boots to start from
# (test/qemu/boot.sh, BOOT_PLAIN_VARS): one boot of the loader and the
# native test kernel from the firmware's template (OVMF_VARS.fd,
# OVMF_VARS_4M.fd), which must reach the payload's PASS.  Exit status 0
# when FILE was written.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
out=$1 d=$B/qemu/plain-vars tpl=/usr/share/OVMF/OVMF_VARS.fd
[ "${2:-}" = --4m ] && d=$B/qemu/plain-vars-4m tpl=/usr/share/OVMF/OVMF_VARS_4M.fd
rm -rf "$d" "$out"; mkdir -p "$d"
test/qemu/mkesp.sh "$d/esp.img" "$B/BOOTX64.EFI" "$B/payload/kernel-pie.elf" || exit 1
BOOT_PLAIN_VARS=$tpl test/qemu/boot.sh --log "$d/serial.log" \
	--timeout 90 --save-vars "$d/vars.fd" "$d/esp.img"
rc=$?
[ "$rc" = 33 ] || { echo "plain-vars.sh: the boot ended with $rc, not the payload's PASS (see $d/serial.log)"; exit 1; }
mv "$d/vars.fd" "$out"
