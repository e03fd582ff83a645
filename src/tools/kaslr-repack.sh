#!/bin/bash
# kaslr-repack.sh BZIMAGE OUT.gz - turn a Linux/x86 bzImage into the loader's
# input: the ELF vmlinux.bin with its appended relocation table, gzipped.
#
# The loader boots a bzImage as shipped too (src/bzimage.c); repacking is
# what make install and the kernel hooks do because a gzip'd vmlinux
# decompresses several times faster under the loader than Debian's xz
# payload.  The cost is a host-side step and a larger file (gzip ~2x xz)
# to read.
#
# The setup header (Documentation/arch/x86/boot.rst):
#   0x1f1 u8  setup_sects   (0 means 4); protected-mode code at (n+1)*512
#   0x202 u32 "HdrS"        0x206 u16 version (payload_* need 2.08+)
#   0x248 u32 payload_offset (from the protected-mode code)
#   0x24c u32 payload_length
# The payload (xz here) is followed by the 4-byte little-endian size of
# the decompressed data (the kernel build's size_append), which is checked.
set -u
die() { echo "kaslr-repack.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: kaslr-repack.sh BZIMAGE OUT.gz"
in=$1 out=$2
[ -s "$in" ] || die "$in: missing or empty"
command -v xz >/dev/null || die "xz not found (Debian package xz-utils)"

u() { # u OFFSET SIZE: unsigned little-endian integer from the file
	od -An -t u"$2" -j "$1" -N "$2" "$in" | tr -d ' \n'
}
fsize=$(stat -c %s "$in")
[ "$fsize" -ge 1024 ] || die "$in: too short for a setup header"
[ "$(od -An -c -j $((0x202)) -N 4 "$in" | tr -d ' \n')" = HdrS ] ||
	die "$in: no HdrS magic at 0x202: not a bzImage"
ver=$(u $((0x206)) 2)
[ "$ver" -ge $((0x208)) ] || die "$in: boot protocol $(printf %x "$ver") has no payload fields (needs 2.08)"
sects=$(u $((0x1f1)) 1)
[ "$sects" -eq 0 ] && sects=4
pm=$(((sects + 1) * 512))
poff=$(u $((0x248)) 4)
plen=$(u $((0x24c)) 4)
[ "$plen" -gt 4 ] || die "$in: payload_length $plen"
{ [ $((pm + poff)) -le "$fsize" ] && [ "$plen" -le $((fsize - pm - poff)) ]; } ||
	die "$in: payload [$((pm + poff)), +$plen) outside the $fsize-byte file"
start=$((pm + poff))
magic=$(od -An -t x1 -j "$start" -N 6 "$in" | tr -d ' \n')
[ "$magic" = fd377a585a00 ] || die "$in: payload is not xz (magic $magic); only xz kernels are handled"

tmp=$(mktemp -d) || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
tail -c +$((start + 1)) "$in" | head -c "$plen" >"$tmp/payload" || die "cut payload"
want=$(od -An -t u4 -j $((plen - 4)) -N 4 "$tmp/payload" | tr -d ' \n')
xz -dc --single-stream <"$tmp/payload" >"$tmp/vmlinux.bin" || die "xz -dc failed on the payload"
got=$(stat -c %s "$tmp/vmlinux.bin")
[ "$got" = "$want" ] || die "decompressed $got bytes, the image says $want"
[ "$(od -An -c -N 4 "$tmp/vmlinux.bin" | tr -d ' \n')" = 177ELF ] ||
	die "decompressed payload is not ELF"
# facts the boot tests compare with the kernel's own report: the link
# addresses of .text and of .brk (which setup_arch reserves by itself)
command -v readelf >/dev/null || die "readelf not found (Debian package binutils)"
sec() {
	readelf -SW "$tmp/vmlinux.bin" |
		sed -n "s/^ *\[ *[0-9]*\] \\$1  *[A-Z]*  *\([0-9a-f]*\) .*/\1/p"
}
text=$(sec .text) brk=$(sec .brk)
{ [ -n "$text" ] && [ -n "$brk" ]; } || die "no .text/.brk section headers in vmlinux.bin"
printf 'text_link=0x%s\nbrk_link=0x%s\n' "$text" "$brk" >"$out.facts" || die "cannot write $out.facts"
gzip -n -6 <"$tmp/vmlinux.bin" >"$tmp/out.gz" || die "gzip failed"
mv "$tmp/out.gz" "$out" || die "cannot write $out"
echo "kaslr-repack.sh: $in -> $out ($got bytes of vmlinux.bin + relocations, $(stat -c %s "$out") gzipped)" >&2
