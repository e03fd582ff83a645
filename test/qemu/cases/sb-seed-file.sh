# sb-seed-file - Secure Boot in force on -cpu qemu64 (no RDRAND, no
# EFI_RNG_PROTOCOL) with \loader\random-seed on the ESP: the file is
# unauthenticated, so alone it does not count as entropy (as systemd-boot
# under Secure Boot): the payload sees the weak flag and no seed-file bit,
# the loader warns why - and the file is still replaced by new bytes
# placement: random - the seed file and its entropy do not depend on where the kernel lands
seed=$WORK/$NAME.seed
head -c 512 /dev/urandom >"$seed.0"
# place's options, which the policy allows
place
sb_install "$WORK/$NAME.esp" KERNEL="$P/kernel-pie.elf" ALLOW="$PLACE_ALLOW"
printf '%s\n' "${PLACE[@]}" >"$WORK/$NAME.esp/EFI/BOOT/kaslr.conf"
img=$(dir_img "$WORK/$NAME.esp" loader/random-seed="$seed.0")
boot_payload "$img" --secureboot --cpu qemu64 --timeout 120
expect_pass
src=$(kv "$LINE" sources)
[ "$(kv "$LINE" weak)" = 1 ] || fail "weak=$(kv "$LINE" weak): the seed file alone was trusted under Secure Boot"
[ $((src & 0x10)) = 0 ] || fail "sources=$src has the seed-file bit under Secure Boot with nothing else strong"
clean_log "$LOG" | grep -q 'random-seed not counted as entropy: Secure Boot is on' ||
	fail "no warning saying why the seed file was not counted"
mcopy -n -i "$img" ::/loader/random-seed "$seed.1" || fail "cannot read the seed file back"
cmp -s "$seed.0" "$seed.1" && fail "the seed file was not rewritten"
ok "sources=$src weak=1, file rewritten"
