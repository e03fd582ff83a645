#!/bin/bash
# boot.sh [options] ESP.img - boot an ESP image under QEMU + OVMF (q35, TCG).
#   --show          serial console on stdout (make run), without the
#                   firmware's terminal escape codes, after the QEMU command
#                   itself (reusable: its variable store is kept beside
#                   ESP.img); default: to --log
#   --log FILE      serial output file (default: a temp file, printed on exit)
#   --mem SIZE      guest RAM (default 512M)
#   --cpu MODEL     QEMU CPU model (default max)
#   --rng           add virtio-rng-pci (OVMF then offers EFI_RNG_PROTOCOL)
#   --timeout S     kill QEMU after S seconds (default 90)
#   --until REGEX   stop QEMU as soon as a line of the serial log matches
#                   REGEX (a last line with no newline yet, once it has stood
#                   for a second: a prompt)
#   --disk IMG      an extra raw disk (e.g. a second volume)
#   --vdisk IMG     a raw disk on virtio-blk (the guest's /dev/vda)
#   --ro            ESP.img read-only, on virtio-blk (IDE takes no
#                   read-only disk): every write to it fails
#   --machine M     QEMU machine type (default q35; pc = i440fx)
#   --smp N         virtual CPUs (default 1)
#   --qemu ARG      one more QEMU argument, passed as is (repeatable)
#   --idle S        kill QEMU once the serial log, after its first byte, has
#                   not grown for S seconds (counted as --timeout is)
#   --secureboot    Secure Boot in force: Debian's Secure Boot OVMF
#                   (OVMF_CODE_4M.secboot.fd, SMM) with a copy of its variables
#                   that enroll the snakeoil test keys (OVMF_VARS_4M.snakeoil.fd;
#                   sign with /usr/share/ovmf/PkKek-1-snakeoil.key/.pem)
#   --ms            Secure Boot with Microsoft's keys, as on a machine sold
#                   with Windows: OVMF_CODE_4M.ms.fd with a copy of
#                   OVMF_VARS_4M.ms.fd (Microsoft's KEK and db, Secure Boot on)
#   --vars FILE     the variable store kept in FILE from one boot to the next
#                   (Boot####, BootOrder, shim's Mok* variables); made from the
#                   firmware's template when FILE does not exist
#   --save-vars FILE  the variable store as QEMU left it, copied to FILE
#   --console SOCK  the serial console also on the Unix socket SOCK (QEMU
#                   listens; a script connects to type at the firmware or at
#                   shim's MokManager), its output still in the log
#   --tpm DIR       a TPM 2.0 (swtpm, state in DIR) on tpm-tis; after QEMU
#                   exits its volatile state (PCRs) is saved in DIR, to be read
#                   with test/qemu/tpm-pcrs.sh DIR
#   --tpm-keep DIR  the same, but the TPM's permanent state (its seeds, and
#                   so what was sealed with it) is kept from one boot to the
#                   next, as a machine's TPM keeps it; --tpm starts afresh
#   --icount N      guest time from the instruction count (-icount
#                   shift=N,sleep=off: 2^N virtual ns per instruction), so
#                   the guest's own timings count work, not the host's load
#   --stutter       a loaded host, made to order: QEMU is stopped (SIGSTOP)
#                   for 40 ms of every 60 ms while it runs, so that the
#                   guest's clocks (TSC, PIT, PM timer: host time under TCG)
#                   run on while it cannot look at them
#   --stutter-fine  the same at a finer grain: stopped 0.8 ms of every 1.1 ms,
#                   so that no millisecond the guest waits for passes clean
# BOOT_PLAIN_VARS=FILE (make test sets it, test/qemu/plain-vars.sh makes
# FILE): a boot without --secureboot, --ms, --vars or --show runs Debian's
# 2 MiB OVMF build (OVMF_CODE.fd: no Secure Boot, no SMM) from a copy of
# FILE, a store that build has booted with once, and gives the ESP
# bootindex=1; a FILE of the 4 MiB build's store size (OVMF_VARS_4M.fd's,
# plain-vars.sh --4m) runs the 4 MiB build (OVMF_CODE_4M.fd) instead.  Under TCG the firmware is nearly all of a payload boot's
# cost: measured here, 4.8 CPU-seconds from the 4 MiB build's template,
# 3.7 from a booted 4 MiB store (no first-boot variable writes, each a
# trip through QEMU's I/O thread), 3.2 from a booted 2 MiB one (a smaller
# store to scan).  bootindex=1 makes OVMF put the ESP first in BootOrder
# whatever the store remembers: without it a store booted from a q35 IDE
# disk puts the UEFI shell before a virtio or i440fx one.  The matrix,
# the Secure Boot and kept-store boots and make run use the 4 MiB builds
# from their templates.
# Every boot without --tpm, --show or BOOT_NO_TPM=1 gets a TPM 1.2
# (swtpm, state in the temp directory).  Debian's OVMF probes for a TPM
# at 0xfed40000 early in PEI; with no device there QEMU reads 0, not the
# 0xff that would say "absent", so the firmware polls it to its timeout,
# twice 750 ms in 30-microsecond stalls that spin on the ACPI timer in
# real time: 1.45 CPU-seconds of every boot, half a payload boot,
# measured here by sampling the guest's RIP.  A TPM 1.2 answers at once,
# and the loader, which measures through EFI_TCG2_PROTOCOL only, takes
# the same path as with no TPM (payload: tpmlog=0).  A payload boot went
# from 2.9 to 1.9 CPU-seconds (QEMU and swtpm), a Linux boot from about
# 10.9 to 8.9.
# swtpm itself costs 0.08-0.4 CPU-seconds a boot, varying as a prime
# search does: perf shows it in OpenSSL's RSA key generation (BN_gcd) at
# every TPM 1.2 initialisation (QEMU's CMD_INIT), with a fresh state
# directory or one that swtpm_setup manufactured alike.
# Shim measures through a TPM 1.2 where it finds one; the loader's
# checks do not change.  BOOT_NO_TPM=1 (the matrix sets it: its machines
# are as sold, many without a TPM) and --show (make run: a command to
# reuse as shown) boot with no TPM device at all.
# Exit status: QEMU's (33 = payload PASS, 35 = payload FAIL via isa-debug-exit),
# 124 on timeout (or --idle), 0 when --until matched.
#
# --timeout and --idle do not count the time QEMU's threads waited for a
# host CPU (their run-queue delays, from /proc/PID/task/*/schedstat:
# src/tools/guest-clock.sh): on a loaded host a guest that is slow is not
# a guest that hangs, while a guest that halts or waits still times out as
# on a quiet one.  BOOT_WALL_FACTOR (default 4) times --timeout of plain
# wall-clock time ends any boot.
set -u
show=0 log='' mem=512M cpu=max rng=0 timeout=90 until='' extra=() machine=q35 smp=1 idle=0
sb=0 tpm='' tpm_keep=0 probe_tpm=0 tpm_sock='' esp_if=if=ide,index=0 stutter=0 keep_vars='' console='' save_vars=''
while [ $# -gt 1 ]; do
	case $1 in
	--show) show=1 ;;
	--log) log=$2; shift ;;
	--mem) mem=$2; shift ;;
	--cpu) cpu=$2; shift ;;
	--rng) rng=1 ;;
	--timeout) timeout=$2; shift ;;
	--until) until=$2; shift ;;
	--disk) extra+=(-drive "format=raw,file=$2,if=ide,index=1"); shift ;;
	--vdisk) extra+=(-drive "format=raw,file=$2,if=virtio,readonly=on"); shift ;;
	--ro) esp_if=if=virtio,readonly=on ;;
	--machine) machine=$2; shift ;;
	--smp) smp=$2; shift ;;
	--qemu) extra+=("$2"); shift ;;
	--idle) idle=$2; shift ;;
	--secureboot) sb=1 ;;
	--ms) sb=ms ;;
	--vars) keep_vars=$2; shift ;;
	--console) console=$2; shift ;;
	--save-vars) save_vars=$2; shift ;;
	--tpm) tpm=$2; shift ;;
	--tpm-keep) tpm=$2 tpm_keep=1; shift ;;
	--icount) extra+=(-icount "shift=$2,sleep=off"); shift ;;
	--stutter) stutter=1 ;;
	--stutter-fine) stutter=fine ;;
	*) echo "boot.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
img=$1
code=/usr/share/OVMF/OVMF_CODE_4M.fd
vars_src=/usr/share/OVMF/OVMF_VARS_4M.fd
if [ "$sb" != 0 ]; then
	code=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
	vars_src=/usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd
	if [ "$sb" = ms ]; then
		code=/usr/share/OVMF/OVMF_CODE_4M.ms.fd
		vars_src=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
	fi
	machine=q35,smm=on
	extra+=(-global "driver=cfi.pflash01,property=secure,value=on")
fi
for f in "$code" "$vars_src" "$img"; do
	[ -f "$f" ] || { echo "boot.sh: missing $f (run make deps)" >&2; exit 2; }
done
tmp=$(mktemp -d)
swtpm_pid=
# the TPM's volatile state (PCRs) into $tpm, then swtpm stopped
tpm_stop() {
	[ -n "$swtpm_pid" ] || return 0
	local i
	# swtpm takes the next control connection once it has seen QEMU's close
	for i in $(seq 20); do
		swtpm_ioctl --unix "$tpm/ctrl.sock" -v >/dev/null 2>&1 && break
		sleep 0.25
	done
	[ -f "$tpm/tpm2-00.volatilestate" ] || echo "boot.sh: could not save the TPM state (try $i)" >&2
	kill "$swtpm_pid" 2>/dev/null; wait "$swtpm_pid" 2>/dev/null
	swtpm_pid=
}
probe_pid=
trap 'tpm_stop; [ -z "$probe_pid" ] || { kill "$probe_pid"; wait "$probe_pid"; } 2>/dev/null; rm -rf "$tmp"' EXIT
vars=$tmp/vars.fd
# a command shown for reuse must not name a file deleted on exit
[ "$show" = 1 ] && vars=${img%.img}.vars.fd
esp_drive=(-drive "format=raw,file=$img,$esp_if")
if [ -n "$keep_vars" ]; then
	vars=$keep_vars
	[ -f "$vars" ] || cp "$vars_src" "$vars"
else
	if [ "$sb" = 0 ] && [ "$show" = 0 ] && [ -f "${BOOT_PLAIN_VARS:-}" ]; then
		code=/usr/share/OVMF/OVMF_CODE.fd vars_src=$BOOT_PLAIN_VARS
		[ "$(stat -c %s "$vars_src")" = "$(stat -c %s /usr/share/OVMF/OVMF_VARS_4M.fd)" ] &&
			code=/usr/share/OVMF/OVMF_CODE_4M.fd
		if [ "$esp_if" = if=ide,index=0 ]; then
			esp_drive=(-drive "if=none,id=esp,format=raw,file=$img"
				-device "ide-hd,drive=esp,bus=ide.0,unit=0,bootindex=1")
		else
			esp_drive=(-drive "if=none,id=esp,format=raw,readonly=on,file=$img"
				-device "virtio-blk-pci,drive=esp,bootindex=1")
		fi
	fi
	cp "$vars_src" "$vars"
fi
[ -z "$tpm" ] && [ "$show" = 0 ] && [ "${BOOT_NO_TPM:-0}" != 1 ] && probe_tpm=1
if [ -n "$tpm" ]; then
	command -v swtpm >/dev/null || { echo "boot.sh: swtpm missing (run make deps)" >&2; exit 2; }
	mkdir -p "$tpm" && rm -f "$tpm/tpm2-00.volatilestate" "$tpm/ctrl.sock"
	[ "$tpm_keep" = 1 ] || rm -f "$tpm"/tpm2-00.*
	swtpm socket --tpm2 --tpmstate "dir=$tpm" --ctrl "type=unixio,path=$tpm/ctrl.sock" \
		--log "file=$tpm/swtpm.log" &
	swtpm_pid=$!
	for _ in $(seq 50); do [ -S "$tpm/ctrl.sock" ] && break; sleep 0.1; done
	[ -S "$tpm/ctrl.sock" ] || { echo "boot.sh: swtpm did not start (see $tpm/swtpm.log)" >&2; exit 2; }
	tpm_sock=$tpm/ctrl.sock
elif [ "$probe_tpm" = 1 ]; then
	swtpm socket --tpmstate "dir=$tmp" --ctrl "type=unixio,path=$tmp/tpm12.sock" --terminate 2>/dev/null &
	probe_pid=$!
	for _ in {1..100}; do [ -S "$tmp/tpm12.sock" ] && break; sleep 0.02; done
	[ -S "$tmp/tpm12.sock" ] || { echo "boot.sh: swtpm (TPM 1.2) did not start" >&2; exit 2; }
	tpm_sock=$tmp/tpm12.sock
fi
[ -z "$tpm_sock" ] || extra+=(-chardev "socket,id=chrtpm,path=$tpm_sock"
	-tpmdev "emulator,id=tpm0,chardev=chrtpm" -device "tpm-tis,tpmdev=tpm0")
[ "$rng" = 1 ] && extra+=(-device virtio-rng-pci)
[ -n "$log" ] || log=$tmp/serial.log
: >"$log"

qemu=(qemu-system-x86_64 -machine "$machine" -m "$mem" -cpu "$cpu" -smp "$smp"
	-drive "if=pflash,format=raw,unit=0,readonly=on,file=$code"
	-drive "if=pflash,format=raw,unit=1,file=$vars"
	"${esp_drive[@]}"
	-nic none -display none -no-reboot -monitor none
	-device "isa-debug-exit,iobase=0xf4,iosize=0x04"
	"${extra[@]}")

# what a terminal should not get from the firmware's console: CSI sequences
# (colours, screen clears; a cursor move becomes a line break, squeezed),
# character-set selections, resets, and the CR of every CRLF
unescape() {
	sed -u -e 's/\x1b\[[0-9]*;[0-9]*H/\n/g' -e 's/\x1b\[[0-9;?=]*[A-Za-z]//g' \
		-e 's/\x1b[()][0-9A-Za-z]//g' -e 's/\x1b[cDEHM78=>]//g' -e 's/\r//g' | cat -s
}

if [ "$show" = 1 ] && [ -z "$until" ]; then
	echo "QEMU command (run it again from this directory):"
	for a in "${qemu[@]}" -serial stdio; do
		# quoted only where the shell needs it
		if [[ $a =~ ^[][A-Za-z0-9_./=,:+@%-]+$ ]]; then printf ' %s' "$a"; else printf ' %q' "$a"; fi
	done
	printf '\n'
	timeout --foreground "$timeout" "${qemu[@]}" -serial stdio | tee "$log" | unescape
	rc=${PIPESTATUS[0]}
	tpm_stop
	exit "$rc"
fi

# likewise a guest reset (a Linux panic) would end QEMU in order: with a TPM
# and --until, QEMU only stops, and is killed once the line is seen
[ -n "$tpm" ] && [ -n "$until" ] && qemu+=(-no-shutdown)
serial=(-serial "file:$log")
[ -n "$console" ] && rm -f "$console" &&
	serial=(-chardev "socket,id=ser0,path=$console,server=on,wait=off,logfile=$log" -serial chardev:ser0)
"${qemu[@]}" "${serial[@]}" 2>>"$tmp/qemu.err" &
pid=$!
stutter_pid=
if [ "$stutter" = 1 ]; then
	while kill -STOP "$pid" 2>/dev/null; do
		sleep 0.04
		kill -CONT "$pid" 2>/dev/null
		sleep 0.02
	done &
	stutter_pid=$!
elif [ "$stutter" = fine ]; then
	python3 -c '
import os, signal, sys, time
pid = int(sys.argv[1])
try:
    while True:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.0008)
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.0003)
except ProcessLookupError:
    pass' "$pid" &
	stutter_pid=$!
fi
# QEMU stopped by a signal it handles shuts its TPM backend down, and swtpm
# then exits without its PCRs; with a TPM attached it is killed outright
sig=TERM
[ -n "$tpm" ] && sig=KILL
# now_us: the guest's microseconds since QEMU started (guest_clock)
# shellcheck source=src/tools/guest-clock.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../src/tools/guest-clock.sh"
guest_clock "$pid" || GUEST_US=${EPOCHREALTIME//[!0-9]/}
t0_us=$GUEST_US now_us=0
started=$SECONDS deadline=$((SECONDS + ${BOOT_WALL_FACTOR:-4} * timeout))
# Each look at the guest costs no process: the clock is read in this shell,
# the serial log from a descriptor of its own as it grows (only what is
# new), the pause is a read that times out on a FIFO nobody writes.  A
# look with stat, tr and grep over the whole log took 40 ms of CPU: at five
# a second, a fifth of a CPU beside each QEMU.
exec {logfd}<"$log"
mkfifo "$tmp/tick" && exec {tickfd}<>"$tmp/tick"
part='' part_us=0 any=0 matched=0
# take_log: reads what the log gained; grew=1 if anything, matched=1 once a
# line matches --until.  The unfinished last line is matched once it has
# stood for a second of guest time, as a prompt does: a line still being
# written may match by its first words, and a boot stopped then leaves it
# cut short for the case's checks (once QEMU has exited, the whole log is
# matched below).
take_log() {
	local line
	grew=0
	while IFS= read -r -u "$logfd" line; do
		grew=1 any=1
		seen_line "$part$line"
		part=''
	done
	# (read leaves the unfinished line in line)
	if [ -n "$line" ]; then
		grew=1 any=1 part+=$line part_us=$now_us
	fi
	[ -z "$part" ] || [ $((now_us - part_us)) -lt 1000000 ] || seen_line "$part"
	return 0
}
seen_line() { [ -z "$until" ] || [[ ! ${1//$'\r'/} =~ $until ]] || matched=1; }
rc='' quiet_since=0
while kill -0 "$pid" 2>/dev/null; do
	# no thread left to read: QEMU exited, its status is collected below
	guest_clock "$pid" || break
	now_us=$((GUEST_US - t0_us))
	take_log
	if [ "$idle" != 0 ]; then
		if [ "$grew" = 1 ]; then quiet_since=$now_us
		elif [ "$any" = 1 ] && [ $((now_us - quiet_since)) -ge $((idle * 1000000)) ]; then
			kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=124; break
		fi
	fi
	if [ "$matched" = 1 ]; then
		read -r -t 0.5 -u "$tickfd"; kill -s "$sig" "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=0; break
	fi
	if [ "$now_us" -ge $((timeout * 1000000)) ] || [ "$SECONDS" -ge "$deadline" ]; then
		kill -s "$sig" "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=124
		echo "boot.sh: stopped at $((now_us / 1000000)) s of guest time, $((SECONDS - started)) s by the wall clock (--timeout $timeout)" >&2
		break
	fi
	read -r -t 0.2 -u "$tickfd"
done
if [ -n "$stutter_pid" ]; then
	kill "$stutter_pid" 2>/dev/null; wait "$stutter_pid" 2>/dev/null
	kill -CONT "$pid" 2>/dev/null
fi
if [ -z "$rc" ]; then
	wait "$pid"; rc=$?
	# the line may have landed just before QEMU exited
	if [ -n "$until" ] && tr -d '\r' <"$log" | grep -Eq -- "$until"; then rc=0; fi
fi
tpm_stop
[ -n "$save_vars" ] && cp "$vars" "$save_vars"
[ "$show" = 1 ] && unescape <"$log"
# QEMU's own complaints (a bad option, a machine it cannot build)
[ -s "$tmp/qemu.err" ] && cat "$tmp/qemu.err" >&2
exit "$rc"
