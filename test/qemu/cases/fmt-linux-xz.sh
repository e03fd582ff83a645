# fmt-linux-xz - the stock Debian kernel from its own bzImage's xz payload
# (x86 BCJ + LZMA2 with a 32 MiB dictionary, cut out of the file): liblzma
# inside the loader, at TPL_HIGH_LEVEL with its dictionary in an arena set
# aside beforehand, yields vmlinux.bin, and the kernel boots where the
# loader put it (every check of linux_boot)
. test/linux/lib.sh
gz=$(test/linux/fetch.sh) || fail "no Debian kernel: test/linux/fetch.sh failed (message above)"
# shellcheck disable=SC1090
. "$gz.facts" || fail "missing $gz.facts"
TEXT_LINK=$text_link BRK_LINK=$brk_link
bz=$(dirname "$gz")/vmlinuz
u() { od -An -t u"$2" -j "$1" -N "$2" "$bz" | tr -d ' \n'; }
sects=$(u $((0x1f1)) 1)
[ "$sects" -eq 0 ] && sects=4
start=$(((sects + 1) * 512 + $(u $((0x248)) 4))) plen=$(u $((0x24c)) 4)
xzf=$WORK/$NAME.xz
# the payload less its appended size word is one xz stream
tail -c +$((start + 1)) "$bz" | head -c $((plen - 4)) >"$xzf" || fail "cannot cut the payload"
xz -t "$xzf" || fail "the cut payload is not an xz stream"
cf=$(conf 'kernel vmlinux.xz' verbose "cmdline $LINUX_CMDLINE")
LINUX_ESP=$(mkesp "$NAME" - EFI/BOOT/vmlinux.xz="$xzf" EFI/BOOT/kaslr.conf="$cf")
linux_boot --mem 1G
# the loader's own lines are the subject here: which format, and the arena
grep -qa 'decompressing [0-9]* bytes (xz)' "$WORK/$NAME.1.clean" || fail "no xz decompression line"
kib=$(sed -n 's/.*decompressor state: \([0-9]*\) KiB set aside.*/\1/p' "$WORK/$NAME.1.clean" | tail -n 1)
[ -n "$kib" ] && [ "$kib" -ge $((32 * 1024)) ] && [ "$kib" -le $((33 * 1024)) ] ||
	fail "arena for the 32 MiB dictionary: '${kib}' KiB"
ok "phys=$LX_PHYS offset=$LX_VOFF; xz arena ${kib} KiB"
