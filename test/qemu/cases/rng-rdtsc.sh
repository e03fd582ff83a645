# rng-rdtsc - -cpu qemu64: only RDTSC, the weak flag is set and the loader warns
# placement: random - the entropy sources do not depend on where the kernel lands
place
boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")" --cpu qemu64
expect_pass
[ "$(kv "$LINE" rng)" = rdtsc ] || fail "rng=$(kv "$LINE" rng), want rdtsc"
[ "$(kv "$LINE" weak)" = 1 ] || fail "weak flag not set with RDTSC only"
clean_log "$LOG" | grep -q 'warning: only RDTSC' || fail "no weak-entropy warning"
ok
