# forced - kaslr.phys=ADDR and kaslr.virt=OFFSET put the kernel exactly there:
# the payload finds itself running at physical 64 MiB (its own page walk)
# and 16 MiB below its link address (the lowest virtual slot, which it
# checks against the hand-off's virt_slot), with FORCED (0x40) set,
# VIRT_KASLR (0x8) clear, the warning said, and the slot counts still whole
# placement: no edge - its subject is a placement it forces itself (kaslr.phys=0x4000000, kaslr.virt=-16M)
esp=$(mkesp "$NAME" "$P/kernel-high.elf" EFI/BOOT/kaslr.conf="$(conf 'kaslr.phys 0x4000000' 'kaslr.virt -16M')")
boot_payload "$esp" --cpu max
expect_pass
[ "$(kv "$LINE" phys)" = 0x4000000 ] || fail "phys=$(kv "$LINE" phys), want 0x4000000"
[ "$(kv "$LINE" voffset)" = 0xffffffffff000000 ] || fail "voffset=$(kv "$LINE" voffset), want -16 MiB"
[ "$(kv "$LINE" vslot)" = 0 ] || fail "vslot=$(kv "$LINE" vslot), want 0"
[ $(( $(kv "$LINE" flags) & 0x48 )) = $((0x40)) ] || fail "flags=$(kv "$LINE" flags): want FORCED, not VIRT_KASLR"
vs=$(virt_slots "$P/kernel-high.elf") || fail "no program headers in kernel-high.elf"
{ [ "$(kv "$LINE" slots)" -gt 1 ] && [ "$(kv "$LINE" vslots)" = "$vs" ]; } ||
	fail "slots=$(kv "$LINE" slots) vslots=$(kv "$LINE" vslots): the counts should be whole"
loader_said 'warning: kaslr.phys=/kaslr.virt= given'
ok "phys=$(kv "$LINE" phys) voffset=$(kv "$LINE" voffset) pslot=$(kv "$LINE" pslot) of $(kv "$LINE" slots)"
