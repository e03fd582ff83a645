#!/bin/sh
# check-image.sh SO EFI [SBAT.csv | --no-policy] - link-time checks on an
# EFI image: no undefined symbols, only dynamic relocations gnu-efi's
# self-relocator applies (R_X86_64_RELATIVE / NONE), and a PE32+ EFI
# application came out, with the .kpolicy section the policy tool fills in
# (include/policy.h) unless --no-policy (the fault injector, which has
# none); and lean: no COFF symbol table, no dynamic symbols,
# zero-initialised data (.bss) taking no bytes in the file, and the loader
# at most IMAGE_MAX bytes (470000; not checked with --no-policy).  Given
# SBAT.csv, the image's .sbat section holds exactly its bytes, the last
# section, page-aligned, inside SizeOfImage.
so=$1 efi=$2 policy=${3:-}
u=$(nm -u "$so")
if [ -n "$u" ]; then echo "check-image: undefined symbols in $so:"; echo "$u"; exit 1; fi
bad=$(readelf -rW "$so" | awk '/^[0-9a-f]+ +[0-9a-f]+ R_X86_64_/ && $3 != "R_X86_64_RELATIVE" && $3 != "R_X86_64_NONE" {print $3}' | sort -u)
if [ -n "$bad" ]; then echo "check-image: unsupported dynamic relocations: $bad"; exit 1; fi
objdump -p "$efi" | grep -q 'Magic.*020b' || { echo "check-image: $efi is not PE32+"; exit 1; }
objdump -p "$efi" | grep -q 'Subsystem.*0000000a' || { echo "check-image: $efi is not an EFI application"; exit 1; }
[ "$policy" = --no-policy ] ||
objdump -h "$efi" | awk '$2 == ".kpolicy" && $3 == "00002000" {f = 1} END {exit !f}' ||
	{ echo "check-image: $efi has no 8 KiB .kpolicy section"; exit 1; }
objdump -t "$efi" | grep -q '^no symbols' || { echo "check-image: $efi has a symbol table (strip it)"; exit 1; }
if objdump -h "$efi" | awk '$2 == ".dynsym" || $2 == ".dynstr" {f = 1} END {exit !f}'; then
	echo "check-image: $efi carries .dynsym/.dynstr"; exit 1
fi
# .bss: allocated, no contents in the file
objdump -h "$efi" | awk '$2 == ".bss" {getline; f = 1; if ($0 ~ /CONTENTS/) bad = 1} END {exit !f || bad}' ||
	{ echo "check-image: $efi has no .bss without file bytes"; exit 1; }
if [ "$policy" != --no-policy ]; then
	max=${IMAGE_MAX:-470000}
	size=$(stat -c %s "$efi")
	[ "$size" -le "$max" ] || { echo "check-image: $efi is $size bytes, more than $max"; exit 1; }
fi
case $policy in '' | --no-policy) exit 0 ;; esac
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
{ objcopy -O binary -j .sbat "$efi" "$tmp" 2>/dev/null && cmp -s "$tmp" "$policy"; } ||
	{ echo "check-image: $efi: .sbat missing or not the text of $policy"; exit 1; }
objdump -h "$efi" | awk -v img="$(objdump -p "$efi" | awk '$1 == "SizeOfImage" {print $2}')" '
	function h(x) { return strtonum("0x" x) }
	/^ *[0-9]+ \./ { last = $2; vma = h($4); size = h($3); if (vma < end) bad = 1; end = vma + size }
	END { exit !(last == ".sbat" && !bad && vma % 4096 == 0 && end <= h(img)) }' ||
	{ echo "check-image: $efi: .sbat is not the last page-aligned section inside the image"; exit 1; }
exit 0
