# linux-seed - Debian's kernel to userspace on -cpu qemu64 (no RDRAND, no
# EFI_RNG_PROTOCOL) with systemd's \loader\random-seed on the ESP.  From
# inside the running system: the kernel's RNG was ready at 0.000000 (it
# credited the seed the loader derived from a pool the file made strong),
# LoaderFeatures through efivarfs has systemd's random-seed bit and no
# other, LoaderRandomSeed (what systemd 252 credits, and bootctl's "Passed
# to OS") holds 32 bytes; the loader did not warn about weak entropy; the file on the disk
# image holds new bytes afterwards.
# placement: random - linux-rootfs boots this kernel at the edges; the seed file does not change where it lands
. test/linux/user.sh
seed=$WORK/$NAME.seed
head -c 512 /dev/urandom >"$seed.0"
USER_ESP_FILES="loader/random-seed=$seed.0"
place
user_boot generic 'console=ttyS0 panic=-1 quiet no_timer_check' "${PLACE[@]}" -- --cpu qemu64
user_check_common
[ "$U_CRNG" = 0.000000 ] || fail "crng init done at '$U_CRNG', want 0.000000 (a credited seed from the loader)"
[ "$U_RSEED" = 32 ] || fail "LoaderRandomSeed through efivarfs: '$U_RSEED' bytes, want 32"
[ "$U_FEATURES" = 0x0000000000000040 ] || fail "LoaderFeatures through efivarfs is '$U_FEATURES', want 0x40 (random-seed)"
clean_log "$LOG" | grep -q 'warning: only RDTSC' && fail "weak-entropy warning with a seed file"
mcopy -n -i "$U_ESP" ::/loader/random-seed "$seed.1" || fail "cannot read the seed file back"
[ "$(stat -c %s "$seed.1")" = 512 ] || fail "the file is $(stat -c %s "$seed.1") bytes after the boot, want 512"
cmp -s "$seed.0" "$seed.1" && fail "the seed file was not rewritten"
ok "crng ready at $U_CRNG, LoaderFeatures=$U_FEATURES, text=$U_TEXT"
