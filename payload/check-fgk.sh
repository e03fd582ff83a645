#!/bin/sh
# payload/check-fgk.sh FILE N - link-time checks of kernel-fgk.elf, the
# function-granular KASLR test kernel, beyond check-elf.sh's: each of the N
# generated functions is an output section of its own with its own .rela
# section; their switches became jump tables (R_X86_64_64 entries in
# .rodata against the functions' sections, the dispatcher's among them);
# the functions note is there; the link-address symbols are absolute;
# functions are linked in id order (the tables are sorted as linked); the
# only function sections are the N functions, fgk_direct and _start (the
# kernel counts its moved functions among exactly these).
# Prints one summary line; exits non-zero with a reason on the first failure.
set -eu
elf=$1
n=$2
name=$(basename "$elf" .tmp)

die() { echo "check-fgk: $name: $*" >&2; exit 1; }

sections=$(readelf -SW "$elf")
nfn=$(echo "$sections" | grep -c ' \.text\.fgk_fn_[0-9]* *PROGBITS' || true)
[ "$nfn" -eq "$n" ] || die "$nfn sections .text.fgk_fn_*, want $n (one per function)"
nrela=$(echo "$sections" | grep -c ' \.rela\.text\.fgk_fn_[0-9]* *RELA' || true)
[ "$nrela" -eq "$n" ] || die "$nrela sections .rela.text.fgk_fn_*, want $n"
ntext=$(echo "$sections" | grep -c ' \.text\.[^ ]* *PROGBITS' || true)
[ "$ntext" -eq $((n + 2)) ] ||
	die "$ntext sections .text.*, want $((n + 2)) (the functions, .text.fgk_direct, .text._start)"
for s in fgk_direct _start; do
	echo "$sections" | grep -q " \.text\.$s *PROGBITS" || die "no section .text.$s"
done

# jump-table entries: absolute 64-bit relocations in .rodata whose symbol is
# a function's section (a case label), at least one per function's switch
# plus one per dispatcher case
rodata=$(readelf -rW "$elf" | awk '
    /^Relocation section/ { s = $3; gsub(/\x27/, "", s); next }
    s == ".rela.rodata" && $3 == "R_X86_64_64" { print $5 }')
njt=$(echo "$rodata" | grep -c '^\.text\.fgk_fn_' || true)
ndisp=$(echo "$rodata" | grep -c '^\.text\.fgk_direct$' || true)
[ "$njt" -ge "$n" ] || die "only $njt jump-table entries into the functions, want >= $n"
[ "$ndisp" -ge "$n" ] || die "only $ndisp dispatcher jump-table entries, want >= $n"

# readelf names type 2 of an unknown owner NT_ARCH; the size is 8 + 2 * 48
# and the descriptor starts with version 1, two tables
readelf -nW "$elf" | grep -q 'KASLR *0x00000068.*description data: 01 00 00 00 02 00 00 00' ||
	die "no KASLR functions note (type 2) naming two tables"

syms=$(nm -n "$elf")
nabs=$(echo "$syms" | grep -c ' A fgk_link_[0-9]*$' || true)
[ "$nabs" -eq "$n" ] || die "$nabs absolute fgk_link_* symbols, want $n"
for s in direct start; do
	echo "$syms" | grep -q " A fgk_link_$s\$" || die "no absolute symbol fgk_link_$s"
done
echo "$syms" | awk '/ [Tt] fgk_fn_[0-9]+$/ { id = substr($3, 8) + 0;
    if (id != want) { print id; exit 1 } want++ }' >/dev/null ||
	die "functions are not linked in id order"

echo "check-fgk: $name ok: $ntext function sections, $njt + $ndisp jump-table entries, note"
