#!/bin/sh
# payload/check-elf.sh VARIANT FILE - link-time checks of a payload kernel:
# ELF type, three PT_LOADs and none W+X, link-base symbols equal to the
# lowest p_vaddr/p_paddr, the crash-site symbol, and the relocations the
# loader must apply (pie: only R_X86_64_RELATIVE, no TEXTREL/NEEDED/INTERP;
# exec/high/small/shared/upper: --emit-relocs RELA sections with the
# expected types; shared: text and rodata share the page holding _start).
# Prints one summary line; exits non-zero with a reason on the first failure.
set -eu
variant=$1
elf=$2
name=$(basename "$elf" .tmp)

die() { echo "check-elf: $name: $*" >&2; exit 1; }
# hex without 0x and leading zeros: compared as strings, since sh
# arithmetic is signed 64-bit and higher-half addresses overflow it
hex() { echo "$1" | sed -e 's/^0x//' -e 's/^0*//' -e 's/^$/0/' | tr A-F a-f; }

hdr=$(readelf -hW "$elf")
phdrs=$(readelf -lW "$elf")
syms=$(nm "$elf")

etype=$(echo "$hdr" | awk '/^ *Type:/ {print $2}')
machine=$(echo "$hdr" | awk -F: '/^ *Machine:/ {gsub(/^ +/, "", $2); print $2}')
entry=$(echo "$hdr" | awk '/Entry point address/ {print $4}')
[ "$machine" = "Advanced Micro Devices X86-64" ] || die "machine is $machine"

nload=$(echo "$phdrs" | grep -c '^ *LOAD ' || true)
[ "$nload" -eq 3 ] || die "$nload PT_LOAD segments, want 3"
# flags are the columns after MemSiz: R, RW, R E, RWE
echo "$phdrs" | awk '/^ *LOAD / { f = substr($0, index($0, $6) + length($6)); \
    if (f ~ /W/ && f ~ /E/) exit 1 }' || die "a PT_LOAD is writable and executable"
echo "$phdrs" | grep -q '^ *INTERP ' && die "has PT_INTERP"

lowv=$(echo "$phdrs" | awk '/^ *LOAD / {print $3}' | sort | head -n1)
lowp=$(echo "$phdrs" | awk '/^ *LOAD / {print $4}' | sort | head -n1)
symv=$(echo "$syms" | awk '$3 == "payload_link_base" {print $1}')
symp=$(echo "$syms" | awk '$3 == "payload_link_phys" {print $1}')
[ "$(hex "$lowv")" = "$(hex "$symv")" ] || die "payload_link_base $symv != lowest p_vaddr $lowv"
[ "$(hex "$lowp")" = "$(hex "$symp")" ] || die "payload_link_phys $symp != lowest p_paddr $lowp"
# 2 MiB divides 16^6, so the low six hex digits decide the alignment
[ $((0x$(hex "$lowv" | tail -c 7) % 0x200000)) -eq 0 ] || die "link base $lowv not 2 MiB-aligned"
start=$(echo "$syms" | awk '$3 == "_start" {print $1}')
[ "$(hex "$entry")" = "$(hex "$start")" ] || die "e_entry $entry is not _start"
echo "$syms" | grep -q ' [Tt] payload_crash_site$' || die "no payload_crash_site symbol"

# relocations against allocated sections only (debug-section RELA ignored)
relocs=$(readelf -rW "$elf" | awk '
    /^Relocation section/ { s = $3; gsub(/\x27/, "", s); next }
    /R_X86_64_/ && s !~ /^\.rela\.debug/ { print s, $3 }')
types=$(echo "$relocs" | awk '{print $2}' | sort | uniq -c | awk '{printf "%s %s ", $2, $1}')

case $variant in
pie)
	[ "$etype" = DYN ] || die "type $etype, want DYN"
	echo "$phdrs" | grep -q '^ *DYNAMIC ' || die "no PT_DYNAMIC"
	dyn=$(readelf -dW "$elf")
	echo "$dyn" | grep -q '(NEEDED)' && die "has DT_NEEDED"
	echo "$dyn" | grep -q 'TEXTREL' && die "has TEXTREL"
	bad=$(echo "$relocs" | awk '$2 != "R_X86_64_RELATIVE"' | head -n1)
	[ -z "$bad" ] || die "dynamic relocation other than RELATIVE: $bad"
	allowed="R_X86_64_RELATIVE" ;;
exec)
	[ "$etype" = EXEC ] || die "type $etype, want EXEC"
	allowed="R_X86_64_64 R_X86_64_PC32 R_X86_64_PLT32" ;;
upper)
	[ "$etype" = EXEC ] || die "type $etype, want EXEC"
	# the point of this variant: upper half, below 0xffffffff80000000
	case $(hex "$lowv") in ffff8*) ;; *) die "link base $lowv is not in the upper half's bottom" ;; esac
	allowed="R_X86_64_64 R_X86_64_PC32 R_X86_64_PLT32" ;;
high)
	[ "$etype" = EXEC ] || die "type $etype, want EXEC"
	allowed="R_X86_64_64 R_X86_64_32S R_X86_64_PC32 R_X86_64_PLT32" ;;
shared)
	[ "$etype" = EXEC ] || die "type $etype, want EXEC"
	# the point of this variant: the last text page is rodata's first,
	# and _start lies in it
	pg() { echo $(( 0x$(hex "$1") >> 12 )); }
	tend=$(echo "$syms" | awk '$3 == "payload_text_end" {print $1}')
	rstart=$(echo "$syms" | awk '$3 == "payload_rodata_start" {print $1}')
	if [ -z "$tend" ] || [ -z "$rstart" ]; then die "no payload_text_end/payload_rodata_start"; fi
	[ "$(pg "$tend")" -gt "$(pg "$rstart")" ] && die "rodata starts past the text's last page"
	[ "$(( (0x$(hex "$tend") - 1) >> 12 ))" = "$(pg "$rstart")" ] ||
		die "text (ends $tend) and rodata (starts $rstart) share no page"
	[ "$(pg "$start")" = "$(pg "$rstart")" ] || die "_start $start is not in the shared page"
	allowed="R_X86_64_64 R_X86_64_PC32 R_X86_64_PLT32" ;;
small)
	[ "$etype" = EXEC ] || die "type $etype, want EXEC"
	# the point of this variant: absolute 32-bit fields of both kinds
	for t in R_X86_64_32 R_X86_64_32S; do
		echo "$relocs" | grep -q " $t\$" || die "no $t relocation (built with -mcmodel=small?)"
	done
	allowed="R_X86_64_64 R_X86_64_32 R_X86_64_32S R_X86_64_PC32 R_X86_64_PLT32" ;;
*)
	die "unknown variant $variant" ;;
esac
for t in $(echo "$relocs" | awk '{print $2}' | sort -u); do
	case " $allowed " in *" $t "*) ;; *) die "unexpected relocation type $t" ;; esac
done
# two tables of 48 pointers each: at least 96 64-bit/RELATIVE relocations
n64=$(echo "$relocs" | grep -cE 'R_X86_64_(64|RELATIVE)$' || true)
[ "$n64" -ge 96 ] || die "only $n64 pointer relocations"

echo "check-elf: $name ok: $etype, 3 PT_LOAD (no W+X), relocs: $types"
