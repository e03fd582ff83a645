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
#   --vdisk IMG     a raw disk on virtio-blk (the guest's /dev/vda)
#   --icount N      guest time from the instruction count (-icount
#                   shift=N,sleep=off: 2^N virtual ns per instruction), so
#                   the guest's own timings count work, not the host's load
# Exit status: QEMU's (33 = payload PASS, 35 = payload FAIL via isa-debug-exit),
# 124 on timeout, 0 when --until matched.
set -u
show=0 log='' mem=512M cpu=max rng=0 timeout=90 until='' extra=()
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
	--icount) extra+=(-icount "shift=$2,sleep=off"); shift ;;
	*) echo "boot.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
img=$1
code=/usr/share/OVMF/OVMF_CODE_4M.fd
vars_src=/usr/share/OVMF/OVMF_VARS_4M.fd
for f in "$code" "$vars_src" "$img"; do
	[ -f "$f" ] || { echo "boot.sh: missing $f (run make deps)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$vars_src" "$tmp/vars.fd"
[ "$rng" = 1 ] && extra+=(-device virtio-rng-pci)
[ -n "$log" ] || log=$tmp/serial.log
: >"$log"

qemu=(qemu-system-x86_64 -machine q35 -m "$mem" -cpu "$cpu" -smp 1
	-drive "if=pflash,format=raw,unit=0,readonly=on,file=$code"
	-drive "if=pflash,format=raw,unit=1,file=$tmp/vars.fd"
	-drive "format=raw,file=$img,if=ide,index=0"
	-nic none -display none -no-reboot -monitor none
	-device "isa-debug-exit,iobase=0xf4,iosize=0x04"
	"${extra[@]}")

if [ "$show" = 1 ] && [ -z "$until" ]; then
	timeout --foreground "$timeout" "${qemu[@]}" -serial stdio | tee "$log"
	exit "${PIPESTATUS[0]}"
fi

"${qemu[@]}" -serial "file:$log" 2>>"$tmp/qemu.err" &
pid=$!
deadline=$((SECONDS + timeout))
rc=
while kill -0 "$pid" 2>/dev/null; do
	if [ -n "$until" ] && tr -d '\r' <"$log" | grep -Eq -- "$until"; then
		sleep 0.5; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=0; break
	fi
	if [ "$SECONDS" -ge "$deadline" ]; then
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rc=124; break
	fi
	sleep 0.2
done
if [ -z "$rc" ]; then
	wait "$pid"; rc=$?
	# the line may have landed just before QEMU exited
	if [ -n "$until" ] && tr -d '\r' <"$log" | grep -Eq -- "$until"; then rc=0; fi
fi
[ "$show" = 1 ] && cat "$log"
exit "$rc"
