# fmt-linux-zstd - the stock Debian kernel's vmlinux.bin recompressed with
# zstd (content size and checksum in the frame, as the zstd tool writes for
# a file): libzstd decodes straight into the output buffer one block per
# call, with only its context and one block set aside, and the kernel boots
# where the loader put it (every check of linux_boot)
# placement: random - linux-rootfs boots this vmlinux at the edges; how it is compressed does not change where it lands
. test/linux/lib.sh
. test/linux/payload.sh
place
linux_payload_esp generic xz "${PLACE[@]}"
linux_recompressed_esp zst zstd -q -3 -T2 -c
linux_boot --mem 1G
grep -qa 'decompressing [0-9]* bytes (zstd)' "$WORK/$NAME.1.clean" || fail "no zstd decompression line"
kib=$(sed -n 's/.*decompressor state: \([0-9]*\) KiB set aside.*/\1/p' "$WORK/$NAME.1.clean" | tail -n 1)
[ "${kib:-9999}" -le 512 ] || fail "zstd state set aside: '${kib}' KiB, want a context and a block"
rm -f "$LINUX_BIN"
ok "phys=$LX_PHYS offset=$LX_VOFF; zstd state ${kib} KiB"
