# starved - a boot on a host with no CPU to spare is slow, not hung:
# QEMU shares one host CPU with busy loops, so the payload's boot takes
# several times as long by the wall clock as it needs, longer than its
# --timeout; boot.sh's limits leave out the time the guest's CPU waited
# for the host's, so the boot still ends with the payload's PASS, and the
# wall clock it took is more than the limit (else the case proved nothing
# about load).  The limit is five times the CPU time QEMU used for the
# same boot just before, on that CPU alone: CPU time, not that boot's
# wall clock, which the host's other jobs stretch as they come and go
# (a limit of four wall-clock times, taken while the host was busy, was
# longer than the starved boot).  Eight loops leave QEMU a ninth of the
# CPU or a little more (its main loop is a second runnable thread); should
# the starved boot still end within the limit, it is booted once more
# beside sixteen.
# placement: random - its subject is the time limits on a starved host, not where the kernel lands
place
esp=$(mkesp "$NAME" "$P/kernel-pie.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")
# the CPU this shell may run on; the loops and QEMU all get that one
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
taskset -pc "$cpu" $$ >/dev/null || fail "taskset could not pin the case to CPU $cpu"
# the same boot on that CPU without the loops: the CPU time it used (its
# children's, waited for: boot.sh and QEMU), in clock ticks
ticks() { local f; read -r -a f </proc/$$/stat; echo $((f[15] + f[16])); }
hz=$(getconf CLK_TCK)
c0=$(ticks)
boot_payload "$esp" --cpu max
expect_pass
alone=$(($(ticks) - c0))
limit=$(((5 * alone + hz - 1) / hz))
[ "$limit" -ge 5 ] || limit=5
hogs=()
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
# starve N: the boot beside N busy loops; sets wall
starve() {
	local t0 _
	for _ in $(seq "$1"); do
		sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	t0=$SECONDS
	# boot.sh's plain wall-clock backstop (BOOT_WALL_FACTOR times the
	# limit, 4 by default) is not this case's subject: on a shared host
	# whose other jobs also land on this CPU the starved boot has needed
	# more than twelve times its time alone, so the backstop is widened
	# to 30 times the limit
	BOOT_WALL_FACTOR=30 boot_payload "$esp" --cpu max --timeout "$limit" 2>"$WORK/$NAME.err"
	wall=$((SECONDS - t0))
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	hogs=()
	[ "$RC" != 124 ] || fail "beside $1 loops: timed out after ${wall}s by the wall clock, against a ${limit}s limit (alone: $((alone * 1000 / hz)) ms of CPU): the guest's waits were counted ($(tail -n 1 "$WORK/$NAME.err"))"
	expect_pass
}
starve 8
loops=8
if [ "$wall" -le "$limit" ]; then
	starve 16
	loops=16
fi
[ "$wall" -gt "$limit" ] || fail "the boot took ${wall}s, within the ${limit}s limit, beside $loops loops: the host was not starved"
ok "${wall}s by the wall clock beside $loops loops against a ${limit}s limit (alone: $((alone * 1000 / hz)) ms of CPU)"
