#!/bin/bash
# boot.sh [options] ESP.img - boot an ESP image under QEMU + OVMF (q35, TCG).
#   --show          serial console on stdout (make run); default: to --log
#   --log FILE      serial output file (default: a temp file, printed on exit)
#   --mem SIZE      guest RAM (default 512M)
#   --cpu MODEL     QEMU CPU model (default max)
#   --rng           add virtio-rng-pci (OVMF then offers EFI_RNG_PROTOCOL)
#   --timeout S     kill QEMU after S seconds (default 90)
#   --until REGEX   stop QEMU as soon as the serial log matches REGEX
#   --disk IMG      an extra raw disk (e.g. a second volume)
#   --secureboot    Secure Boot in force: Debian's Secure Boot OVMF
#                   (OVMF_CODE_4M.secboot.fd, SMM) with a copy of its variables
#                   that enroll the snakeoil test keys (OVMF_VARS_4M.snakeoil.fd;
#                   sign with /usr/share/ovmf/PkKek-1-snakeoil.key/.pem)
#   --tpm DIR       a TPM 2.0 (swtpm, state in DIR) on tpm-tis; after QEMU
#                   exits its volatile state (PCRs) is saved in DIR, to be read
#                   with test/qemu/tpm-pcrs.sh DIR
# Exit status: QEMU's (33 = payload PASS, 35 = payload FAIL via isa-debug-exit),
# 124 on timeout, 0 when --until matched.
set -u
show=0 log='' mem=512M cpu=max rng=0 timeout=90 until='' extra=() sb=0 tpm=''
machine=q35
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
	--secureboot) sb=1 ;;
	--tpm) tpm=$2; shift ;;
	*) echo "boot.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
img=$1
code=/usr/share/OVMF/OVMF_CODE_4M.fd
vars_src=/usr/share/OVMF/OVMF_VARS_4M.fd
if [ "$sb" = 1 ]; then
	code=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
	vars_src=/usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd
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
trap 'tpm_stop; rm -rf "$tmp"' EXIT
cp "$vars_src" "$tmp/vars.fd"
if [ -n "$tpm" ]; then
	command -v swtpm >/dev/null || { echo "boot.sh: swtpm missing (run make deps)" >&2; exit 2; }
	mkdir -p "$tpm" && rm -f "$tpm"/tpm2-00.* "$tpm/ctrl.sock"
	swtpm socket --tpm2 --tpmstate "dir=$tpm" --ctrl "type=unixio,path=$tpm/ctrl.sock" \
		--log "file=$tpm/swtpm.log" &
	swtpm_pid=$!
	for _ in $(seq 50); do [ -S "$tpm/ctrl.sock" ] && break; sleep 0.1; done
	[ -S "$tpm/ctrl.sock" ] || { echo "boot.sh: swtpm did not start (see $tpm/swtpm.log)" >&2; exit 2; }
	extra+=(-chardev "socket,id=chrtpm,path=$tpm/ctrl.sock" -tpmdev "emulator,id=tpm0,chardev=chrtpm"
		-device "tpm-tis,tpmdev=tpm0")
fi
[ "$rng" = 1 ] && extra+=(-device virtio-rng-pci)
[ -n "$log" ] || log=$tmp/serial.log
: >"$log"

qemu=(qemu-system-x86_64 -machine "$machine" -m "$mem" -cpu "$cpu" -smp 1
	-drive "if=pflash,format=raw,unit=0,readonly=on,file=$code"
	-drive "if=pflash,format=raw,unit=1,file=$tmp/vars.fd"
	-drive "format=raw,file=$img,if=ide,index=0"
	-nic none -display none -no-reboot -monitor none
	-device "isa-debug-exit,iobase=0xf4,iosize=0x04"
	"${extra[@]}")

if [ "$show" = 1 ] && [ -z "$until" ]; then
	timeout --foreground "$timeout" "${qemu[@]}" -serial stdio | tee "$log"
	rc=${PIPESTATUS[0]}
	tpm_stop
	exit "$rc"
fi

# likewise a guest reset (a Linux panic) would end QEMU in order: with a TPM
# and --until, QEMU only stops, and is killed once the line is seen
[ -n "$tpm" ] && [ -n "$until" ] && qemu+=(-no-shutdown)
"${qemu[@]}" -serial "file:$log" 2>>"$tmp/qemu.err" &
pid=$!
# QEMU stopped by a signal it handles shuts its TPM backend down, and swtpm
# then exits without its PCRs; with a TPM attached it is killed outright
sig=TERM
[ -n "$tpm" ] && sig=KILL
deadline=$((SECONDS + timeout))
rc=
while kill -0 "$pid" 2>/dev/null; do
	if [ -n "$until" ] && tr -d '\r' <"$log" | grep -Eq -- "$until"; then
		sleep 0.5; kill -s "$sig" "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=0; break
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		kill -s "$sig" "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=124; break
	fi
	sleep 0.2
done
if [ -z "$rc" ]; then
	wait "$pid"; rc=$?
	# the line may have landed just before QEMU exited
	if [ -n "$until" ] && tr -d '\r' <"$log" | grep -Eq -- "$until"; then rc=0; fi
fi
tpm_stop
[ "$show" = 1 ] && cat "$log"
exit "$rc"
