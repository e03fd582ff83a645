# fmt-linux-xz - the stock Debian kernel from its own bzImage's xz payload
# (x86 BCJ + LZMA2 with a 32 MiB dictionary, cut out of the file): liblzma
# inside the loader, at TPL_HIGH_LEVEL with its dictionary in an arena set
# aside beforehand, yields vmlinux.bin, and the kernel boots where the
# loader put it (every check of linux_boot)
. test/linux/lib.sh
. test/linux/payload.sh
linux_payload_esp generic xz
linux_boot --mem 1G
# the loader's own lines are the subject here: which format, and the arena
grep -qa 'decompressing [0-9]* bytes (xz)' "$WORK/$NAME.1.clean" || fail "no xz decompression line"
kib=$(sed -n 's/.*decompressor state: \([0-9]*\) KiB set aside.*/\1/p' "$WORK/$NAME.1.clean" | tail -n 1)
if [ -z "$kib" ] || [ "$kib" -lt $((32 * 1024)) ] || [ "$kib" -gt $((33 * 1024)) ]; then
	fail "arena for the 32 MiB dictionary: '${kib}' KiB"
fi
ok "phys=$LX_PHYS offset=$LX_VOFF; xz arena ${kib} KiB"
