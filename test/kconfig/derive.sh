#!/bin/bash
# derive.sh - two bzImages made from Debian's cloud kernel (test/linux/
# fetch.sh cloud) that stand in, in make test, for the kernel
# configurations the matrix builds from source (test/kconfig/run.sh):
#
#   notable.bzImage  the same kernel without its relocation table, as
#                    Linux's build leaves vmlinux.bin without RANDOMIZE_BASE:
#                    the payload decompressed (LZ4), cut after its section
#                    headers (the ELF's end; the table follows them),
#                    gzip'd, and put back with payload_length, syssize and
#                    the size word to match.  A kernel without the table
#                    runs only at its link-time virtual address, anywhere
#                    physically (x86-64 kernels move physically without
#                    relocations).
#   fixed.bzImage    the kernel with its header's relocatable_kernel byte
#                    (0x234) cleared, as a kernel built without RELOCATABLE
#                    says it: the loader must put it at its pref_address.
#
# Cached in build/kconfig/derived/ (rebuilt when the kernel or this script
# is newer); prints that directory.  Every step checks what it reads.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/kconfig/derived
die() { echo "derive.sh: $*" >&2; exit 1; }
test/linux/fetch.sh cloud >/dev/null || die "test/linux/fetch.sh cloud failed"
bz=$B/linux/cloud/vmlinuz
for c in lz4 gzip od dd; do command -v "$c" >/dev/null || die "$c missing (make deps)"; done
mkdir -p "$D" || die "cannot create $D"
exec 9>"$D/.lock" || die "cannot open $D/.lock"
flock 9 || die "cannot lock $D/.lock"
fresh=1
for f in notable.bzImage fixed.bzImage; do
	{ [ -s "$D/$f" ] && [ "$D/$f" -nt "$bz" ] && [ "$D/$f" -nt "$0" ]; } || fresh=0
done
if [ "$fresh" = 1 ]; then
	echo "$D"
	exit 0
fi

u() { # u FILE OFFSET SIZE: unsigned little-endian integer
	od -An -t u"$3" -j "$2" -N "$3" "$1" | tr -d ' \n'
}
le32() { # le32 VALUE: four bytes, little-endian (octal escapes for %b)
	printf '%b' "$(printf '\\0%03o\\0%03o\\0%03o\\0%03o' $(($1 & 255)) $((($1 >> 8) & 255)) \
		$((($1 >> 16) & 255)) $((($1 >> 24) & 255)))"
}
put32() { # put32 FILE OFFSET VALUE
	le32 "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# ---- fixed: one header byte
cp "$bz" "$D/fixed.tmp" || die "cp $bz"
[ "$(u "$D/fixed.tmp" $((0x234)) 1)" = 1 ] || die "$bz: relocatable_kernel is not 1"
printf '\000' | dd of="$D/fixed.tmp" bs=1 seek=$((0x234)) conv=notrunc status=none
mv "$D/fixed.tmp" "$D/fixed.bzImage" || die "cannot write $D/fixed.bzImage"

# ---- notable: the payload without the table
sects=$(u "$bz" $((0x1f1)) 1)
[ "$sects" -eq 0 ] && sects=4
pm=$(((sects + 1) * 512))
poff=$(u "$bz" $((0x248)) 4) plen=$(u "$bz" $((0x24c)) 4)
start=$((pm + poff))
[ "$(od -An -t x1 -j "$start" -N 4 "$bz" | tr -d ' \n')" = 02214c18 ] ||
	die "$bz: the payload is not LZ4's legacy format"
tmp=$D/tmp
{ rm -rf "$tmp" && mkdir -p "$tmp"; } || die "cannot create $tmp"
# the stream without the size word Linux appends
tail -c +$((start + 1)) "$bz" | head -c $((plen - 4)) | lz4 -dc >"$tmp/all" 2>/dev/null ||
	die "lz4 -dc failed on the payload"
want=$(u "$bz" $((start + plen - 4)) 4)
[ "$(stat -c %s "$tmp/all")" = "$want" ] || die "the payload decompressed to another size than it records"
[ "$(od -An -c -N 4 "$tmp/all" | tr -d ' \n')" = 177ELF ] || die "the payload is not ELF"
shoff=$(u "$tmp/all" 40 8) shnum=$(u "$tmp/all" 60 2) shentsize=$(u "$tmp/all" 58 2)
end=$((shoff + shnum * shentsize))
# what follows must be a Linux table: whole words, the first a 0 separator
{ [ "$shnum" -gt 0 ] && [ "$end" -lt "$want" ] && [ $(((want - end) % 4)) = 0 ] &&
	[ "$(u "$tmp/all" "$end" 4)" = 0 ]; } ||
	die "no relocation table after the section headers (end $end of $want bytes)"
head -c "$end" "$tmp/all" | gzip -n -1 >"$tmp/payload" || die "gzip failed"
# gzip's last four bytes are the size (mod 2^32), as Linux's size word
[ "$(u "$tmp/payload" $(($(stat -c %s "$tmp/payload") - 4)) 4)" = "$end" ] ||
	die "gzip's size field is not the ELF's size"
n=$(stat -c %s "$tmp/payload")
{ head -c "$start" "$bz" && cat "$tmp/payload" &&
	head -c $(((16 - (start + n) % 16) % 16)) /dev/zero; } >"$tmp/bz" || die "cannot assemble"
put32 "$tmp/bz" $((0x24c)) "$n"
put32 "$tmp/bz" $((0x1f4)) $((($(stat -c %s "$tmp/bz") - pm) / 16))
mv "$tmp/bz" "$D/notable.bzImage" || die "cannot write $D/notable.bzImage"
echo "derive.sh: $(basename "$bz"): table of $((want - end)) bytes dropped, $n bytes of gzip" >&2
rm -rf "$tmp"
echo "$D"
