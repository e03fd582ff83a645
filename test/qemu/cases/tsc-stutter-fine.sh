# tsc-stutter-fine - the loader's TSC frequency holds on a host that stops
# QEMU for 0.8 ms of every 1.1 ms (boot.sh --stutter-fine): every short
# wait the loader could time against the firmware's Stall runs late, so
# only a measurement that reads its reference clock between two TSC reads
# comes out right.  The payload's own PIT measurement (bracketed the same
# way) must agree with the loader's tsc_hz to within 10 % (its check
# allows 2x)
# placement: random - the clocks it compares do not depend on where the kernel lands
place
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
boot_payload "$esp" --cpu max --stutter-fine --timeout 300
expect_pass
t=$(kv "$LINE" tsc_khz) p=$(kv "$LINE" pit_khz)
{ [ -n "$t" ] && [ -n "$p" ]; } || fail "no tsc_khz/pit_khz in the payload's line"
[ $((p * 10 >= t * 9 && p * 10 <= t * 11)) = 1 ] || fail "pit_khz=$p against tsc_khz=$t"
ok "tsc_khz=$t pit_khz=$p"
