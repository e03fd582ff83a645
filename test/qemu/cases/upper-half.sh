# upper-half - a kernel linked in the upper half but below the top 2 GiB
# (0xffff800001000000) gets no virtual base of its own: it is relocated to
# run identity-mapped at its physical address (the payload checks virt =
# phys), and in verbose mode the loader says so in a warning
# placement: edges
place
esp=$(mkesp "$NAME" "$P/kernel-upper.elf" EFI/BOOT/kaslr.conf="$(conf verbose "${PLACE[@]}")")
boot_payload "$esp" --cpu max
expect_pass
[ "$(kv "$LINE" variant)" = upper ] || fail "variant=$(kv "$LINE" variant), want upper"
[ "$(kv "$LINE" virt)" = "$(kv "$LINE" phys)" ] || fail "virt $(kv "$LINE" virt) != phys $(kv "$LINE" phys)"
[ "$(kv "$LINE" vslots)" = 1 ] || fail "vslots=$(kv "$LINE" vslots), want 1"
want='kaslr-loader: warning: \EFI\BOOT\kernel.elf is linked at 0xffff800001000000, in the upper half but below 0xffffffff80000000: it runs identity-mapped at its physical address, with no virtual KASLR'
# (firmware's Print writes hex digits in upper case)
clean_log "$LOG" | grep -qixF "$want" || fail "no line '$want'"
ok "phys=$(kv "$LINE" phys)"
