# fmt-linux-lz4 - Debian's cloud kernel from its own bzImage's LZ4 legacy
# payload (8 MiB blocks, each one LZ4_decompress_safe call at
# TPL_HIGH_LEVEL, no library state): the kernel boots where the loader put
# it (every check of linux_boot)
# placement: random - linux-user-cloud boots this vmlinux at the edges, in the same memory (from the bzImage, through systemd-boot)
. test/linux/lib.sh
. test/linux/payload.sh
place
linux_payload_esp cloud lz4 "${PLACE[@]}"
linux_boot --mem 1G
grep -qa 'decompressing [0-9]* bytes (lz4)' "$WORK/$NAME.1.clean" || fail "no lz4 decompression line"
grep -qa 'decompressor state:' "$WORK/$NAME.1.clean" && fail "pages set aside for LZ4, which keeps no state"
ok "phys=$LX_PHYS offset=$LX_VOFF"
