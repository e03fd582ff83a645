# tsc-stutter - the payload's TSC check holds on a loaded host: QEMU is
# stopped for 40 ms of every 60 ms (boot.sh --stutter), so the guest's
# clocks run on while it cannot read them; the payload's PIT measurement
# (each end a latched count bracketed by TSC reads) must still agree with
# the loader's tsc_hz, to within 10 % (the check itself allows 2x)
# placement: random - the clocks it compares do not depend on where the kernel lands
place
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
boot_payload "$esp" --cpu max --stutter --timeout 300
expect_pass
t=$(kv "$LINE" tsc_khz) p=$(kv "$LINE" pit_khz)
{ [ -n "$t" ] && [ -n "$p" ]; } || fail "no tsc_khz/pit_khz in the payload's line"
[ $((p * 10 >= t * 9 && p * 10 <= t * 11)) = 1 ] || fail "pit_khz=$p against tsc_khz=$t"
ok "tsc_khz=$t pit_khz=$p"
