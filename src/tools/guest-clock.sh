# guest-clock.sh - sourced by kaslr-sweep and test/qemu/boot.sh: a clock for
# the time limits of a QEMU guest that a busy host does not run down.
#
# guest_clock PID: sets GUEST_US to the microseconds of the wall clock now,
# less the time PID's threads spent runnable but waiting for a host CPU
# (their run-queue delays, the second field of
# /proc/PID/task/TID/schedstat, summed).  Under TCG the guest's CPU is one
# thread, but it also waits for the main loop's, which holds the lock
# every device access takes: on a starved host that thread, preempted
# with the lock held, held the guest up as long again, and the waits of
# the guest's thread alone were not enough to leave out.  QEMU's I/O
# workers come and go (one idle for 10 s exits), and the guest waited for
# them too: each thread's last delay seen is kept (GUEST_DELAYS), so a
# thread's waits still count once it is gone, and the clock never jumps
# forward when one exits.  A guest that computes is timed by the CPU it
# got; one that halts or waits for a device, by the wall clock.  Fails
# once PID has no thread left to read: it exited.  Called in the shell
# that polls (not in a subshell, which would forget GUEST_DELAYS, and a
# poll loop that looks several times a second should not fork).
# shellcheck shell=bash
declare -gA GUEST_DELAYS=()
guest_clock() {
	local st f n=0 delay=0 t
	for st in /proc/"$1"/task/*/schedstat; do
		{ read -ra f <"$st"; } 2>/dev/null || continue
		t=${st%/schedstat} n=$((n + 1))
		GUEST_DELAYS[$1/${t##*/}]=${f[1]}
	done
	[ "$n" -gt 0 ] || return 1
	for t in "${!GUEST_DELAYS[@]}"; do
		[[ $t == "$1"/* ]] && delay=$((delay + GUEST_DELAYS[$t]))
	done
	# shellcheck disable=SC2034 # the result, read by the caller
	GUEST_US=$((${EPOCHREALTIME//[!0-9]/} - delay / 1000))
}
