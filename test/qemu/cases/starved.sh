# starved - a boot on a host with no CPU to spare is slow, not hung:
# QEMU shares one host CPU with five busy loops, so the payload's boot
# takes about six times as long by the wall clock as it needs, longer
# than its --timeout; boot.sh's limits leave out the time the guest's CPU
# waited for the host's, so the boot still ends with the payload's PASS,
# and the wall clock it took is more than the limit (else the case proved
# nothing about load).  The limit is four times what the same boot took
# on that CPU alone just before, on this host as it is now (three was too
# few in make test's pool: QEMU's I/O thread waits for the CPU too, and
# only its busiest thread's waits are left out): the starved
# boot needs about six times that by the wall clock, and no more than that
# of the guest's own time.
# placement: random - its subject is the time limits on a starved host, not where the kernel lands
place
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
# the CPU this shell may run on; the loops and QEMU all get that one
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
taskset -pc "$cpu" $$ >/dev/null || fail "taskset could not pin the case to CPU $cpu"
# the same boot on that CPU without the loops: its wall-clock time, in ms
t=${EPOCHREALTIME/./}
boot_payload "$esp" --cpu max
expect_pass
alone=$(((${EPOCHREALTIME/./} - t) / 1000))
limit=$(((4 * alone + 999) / 1000))
hogs=()
for _ in 1 2 3 4 5; do
	sh -c 'while :; do :; done' &
	hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
t0=$SECONDS
# boot.sh's plain wall-clock backstop (BOOT_WALL_FACTOR times the limit,
# 4 by default) is not this case's subject: on a shared host whose other
# jobs also land on this CPU the starved boot has needed more than twelve
# times its time alone, so the backstop is widened to 30 times the limit
BOOT_WALL_FACTOR=30 boot_payload "$esp" --cpu max --timeout "$limit"
wall=$((SECONDS - t0))
kill "${hogs[@]}" 2>/dev/null
[ "$RC" != 124 ] || fail "timed out after ${wall}s by the wall clock: the guest's waits were counted"
expect_pass
[ "$wall" -gt "$limit" ] || fail "the boot took ${wall}s, within the ${limit}s limit: the host was not starved"
ok "${wall}s by the wall clock against a ${limit}s limit (alone: ${alone} ms)"
