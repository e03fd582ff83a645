# seed - kaslr.seed= makes placement reproducible (flagged, warned) while the
# other entropy (virtio-rng) still differs; a different seed moves the kernel
# placement: no edge - kaslr.seed= is its subject: its own two seeds, twice one of them
s1=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
s2=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
esp=$(mkesp "$NAME" "$P/kernel-high.elf" EFI/BOOT/kaslr.conf="$(conf "kaslr.seed $s1")")
boot_payload "$esp" --cpu max --rng
expect_pass
a="$(kv "$LINE" phys) $(kv "$LINE" virt)"
clean_log "$LOG" | grep -q 'warning: kaslr.seed' || fail "no fixed-seed warning"
[ $(( $(kv "$LINE" flags) & 2 )) = 2 ] || fail "FIXED_SEED flag not set"
boot_payload "$esp" --cpu max --rng
expect_pass
b="$(kv "$LINE" phys) $(kv "$LINE" virt)"
[ "$a" = "$b" ] || fail "same seed, different placement: $a vs $b"
esp=$(mkesp "$NAME" "$P/kernel-high.elf" EFI/BOOT/kaslr.conf="$(conf "kaslr.seed $s2")")
boot_payload "$esp" --cpu max --rng
expect_pass
c="$(kv "$LINE" phys) $(kv "$LINE" virt)"
[ "$a" != "$c" ] || fail "different seeds, same placement: $a"
ok "$a / $c"
