# fmt-linux-xz - the stock Debian kernel from its own bzImage's xz payload
# (x86 BCJ + LZMA2, its dictionary as large as its header says - 32 MiB
# in Debian 12's -, cut out of the file): liblzma inside the loader, at
# TPL_HIGH_LEVEL with its dictionary in an arena set aside beforehand,
# yields vmlinux.bin, and the kernel boots where the loader put it (every
# check of linux_boot)
# placement: random - linux-rootfs boots this vmlinux at the edges with the same memory: the same places, whether the loader unpacks it from the bzImage or is given it
. test/linux/lib.sh
. test/linux/payload.sh
place
linux_payload_esp generic xz "${PLACE[@]}"
# the dictionary the stream's block header names (xz's filter chain, e.g.
# "--lzma2=dict=32MiB"), in KiB
dict=$(xz --robot -lvv "$LINUX_STREAM" | awk -F '\t' '$1 == "block" { print $NF }' |
	sed -n 's/.*dict=\([0-9]*\)\([KMG]i\)\{0,1\}B.*/\1 \2/p' | head -n 1)
read -r n u <<<"$dict"
case ${u:-} in Ki) dict=$n ;; Mi) dict=$((n << 10)) ;; Gi) dict=$((n << 20)) ;; *) dict=$((${n:-0} >> 10)) ;; esac
[ "$dict" -gt 0 ] || fail "xz names no dictionary size for $LINUX_STREAM"
linux_boot --mem 1G
# the loader's own lines are the subject here: which format, and the arena
grep -qa 'decompressing [0-9]* bytes (xz)' "$WORK/$NAME.1.clean" || fail "no xz decompression line"
kib=$(sed -n 's/.*decompressor state: \([0-9]*\) KiB set aside.*/\1/p' "$WORK/$NAME.1.clean" | tail -n 1)
# the dictionary, and no more than 1 MiB of the decoder's own state besides
if [ -z "$kib" ] || [ "$kib" -lt "$dict" ] || [ "$kib" -gt $((dict + 1024)) ]; then
	fail "arena for the stream's $dict KiB dictionary: '${kib}' KiB"
fi
ok "phys=$LX_PHYS offset=$LX_VOFF; xz arena ${kib} KiB for a $dict KiB dictionary"
