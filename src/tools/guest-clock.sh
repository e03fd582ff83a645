# guest-clock.sh - sourced by kaslr-sweep and test/qemu/boot.sh: a clock for
# the time limits of a QEMU guest that a busy host does not run down.
#
# guest_us PID: microseconds of the wall clock now, less the time PID's
# busiest thread (under TCG, the guest's CPU) spent runnable but waiting
# for a host CPU (its run-queue delay, the second field of
# /proc/PID/task/TID/schedstat).  A guest that computes is timed by the
# CPU it got; one that halts or waits for a device, by the wall clock.
# Fails (prints nothing) once PID has no thread left to read: it exited.
# shellcheck shell=bash
guest_us() {
	local st f best=-1 delay=0
	for st in /proc/"$1"/task/*/schedstat; do
		{ read -ra f <"$st"; } 2>/dev/null || continue
		[ "${f[0]}" -gt "$best" ] && best=${f[0]} delay=${f[1]}
	done
	[ "$best" -ge 0 ] || return 1
	echo $((${EPOCHREALTIME//[!0-9]/} - delay / 1000))
}
