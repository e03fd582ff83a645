# guest-clock.sh - sourced by kaslr-sweep and test/qemu/boot.sh: a clock for
# the time limits of a QEMU guest that a busy host does not run down.
#
# guest_us PID: microseconds of the wall clock now, less the time PID's
# threads spent runnable but waiting for a host CPU (their run-queue
# delays, the second field of /proc/PID/task/TID/schedstat, summed).
# Under TCG the guest's CPU is one thread, but it also waits for the main
# loop's, which holds the lock every device access takes: on a starved
# host that thread, preempted with the lock held, held the guest up as
# long again, and the waits of the guest's thread alone were not enough
# to leave out.  A guest that computes is timed by the CPU it got; one
# that halts or waits for a device, by the wall clock.  Fails (prints
# nothing) once PID has no thread left to read: it exited.
# shellcheck shell=bash
guest_us() {
	local st f n=0 delay=0
	for st in /proc/"$1"/task/*/schedstat; do
		{ read -ra f <"$st"; } 2>/dev/null || continue
		n=$((n + 1)) delay=$((delay + f[1]))
	done
	[ "$n" -gt 0 ] || return 1
	echo $((${EPOCHREALTIME//[!0-9]/} - delay / 1000))
}
