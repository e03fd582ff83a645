# entry-state - the CPU state PROTOCOL.md promises at entry, as the payload
# read it before touching anything: CR4 exactly PAE, OSFXSR, OSXMMEXCPT
# (and MCE as firmware had it), x87 as after FNINIT, MXCSR 0x1F80, XMM
# registers zero (the payload fails on any of those), PICs and local APIC
# LVT entries masked, and a TSC frequency the PIT agrees with
# placement: random - the CPU state at entry does not depend on where the kernel lands
place
boot_payload "$(mkesp "$NAME" "$P/kernel-high.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")" --cpu max
expect_pass
cr4=$(kv "$LINE" cr4)
[ $((cr4 & ~0x40)) = $((0x620)) ] || fail "cr4=$cr4, want 0x620 (| 0x40)"
[ "$(kv "$LINE" lvt_masked)" -ge 3 ] || fail "lvt_masked=$(kv "$LINE" lvt_masked), want >= 3"
tsc=$(kv "$LINE" tsc_khz) pit=$(kv "$LINE" pit_khz)
{ [ "$tsc" -gt 0 ] && [ "$pit" -gt 0 ]; } || fail "tsc_khz=$tsc pit_khz=$pit"
ok "cr4=$cr4 lvt_masked=$(kv "$LINE" lvt_masked) tsc_khz=$tsc pit_khz=$pit"
