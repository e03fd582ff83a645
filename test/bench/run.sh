#!/bin/bash
# run.sh - `make bench`: every benchmark of issue 8 in one run, written as
# build/bench/bench.csv (rows "section,item,metric,value"), the same as
# Markdown tables in build/bench/bench.md (also printed on stdout), and the
# slot-choice histogram build/bench/slots-2G.svg.
#   BENCH_QUICK=1   few samples, fewer draws, no QEMU and no Linux kernel
#                   (what test/bench/smoke.sh runs)
#   BENCH_BOOTS=N   quiet QEMU boots to time (default 5)
#   BENCH_OUT=DIR   where the CSV, Markdown and SVG go (default build/bench)
#   BENCH_LINUX=F   the repacked Linux kernel (default build/linux/vmlinux.gz,
#                   made by test/linux/fetch.sh)
# Benchmarks never fail on a number: a missing input or a failed step is a
# row saying so.  The host programs come from test/bench/bench.mk.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
D=$B/bench
P=$B/payload
LINUX=${BENCH_LINUX:-$B/linux/vmlinux.gz}
NA_LINUX="n/a (run test/linux/fetch.sh)"
QUICK=${BENCH_QUICK:-}
[ "$QUICK" = 0 ] && QUICK=
mkdir -p "$D"
O=${BENCH_OUT:-$D}
mkdir -p "$O"
csv=$O/bench.csv
tmp=$O/bench.csv.part
: >"$tmp"
: >"$O/bench.err"

# CSV fields never hold commas or quotes: both become ';'
csvf() { printf '%s' "$1" | tr ',"' ';;'; }
row() { printf '%s,%s,%s,%s\n' "$1" "$(csvf "$2")" "$(csvf "$3")" "$(csvf "$4")" >>"$tmp"; }

for prog in bench_pipeline bench_entropy bench_plot bench_fgkaslr; do
	[ -x "$D/$prog" ] || { echo "run.sh: $D/$prog missing (make bench builds it)" >&2; exit 2; }
done

# ---- machine
row machine "date (UTC)" value "$(date -u '+%Y-%m-%d %H:%M')"
row machine "commit" value "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo ' + local changes')"
row machine "cpu" value "$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1)"
row machine "cpus" value "$(nproc)"
row machine "load average at start" value "$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$QUICK" ]; then mode="quick (BENCH_QUICK=1)"; else mode=full; fi
row machine "mode" value "$mode"
row machine "command" value "make bench${QUICK:+ BENCH_QUICK=1}"

# ---- pipeline on the host
if [ -n "$QUICK" ]; then samples=3 min_ms=2 draws=100000; else samples=11 min_ms=50 draws=1000000; fi
inputs=()
for f in kernel-pie.elf.gz kernel-exec.elf.gz kernel-high.elf.gz kernel-pie.elf.zlib kernel-high.elf.zlib; do
	if [ -s "$P/$f" ]; then
		inputs+=("$f=$P/$f")
	else
		row pipeline "$f" "pipeline ms" "n/a ($P/$f missing: make payloads)"
	fi
done
if [ -s "$LINUX" ] && [ -z "$QUICK" ]; then
	inputs+=("vmlinux.gz (Linux)=$LINUX")
	# the same kernel as a zlib stream: no size in the trailer, so the
	# wrapper has to grow its buffer (gzip's ISIZE sizes it exactly)
	lz=$D/vmlinux.zlib
	if [ ! -s "$lz" ] || [ "$LINUX" -nt "$lz" ]; then
		gzip -dc "$LINUX" >"$D/vmlinux.elf" && [ -x "$P/mkzlib" ] &&
			"$P/mkzlib" "$D/vmlinux.elf" "$lz" || rm -f "$lz"
		rm -f "$D/vmlinux.elf"
	fi
	if [ -s "$lz" ]; then
		inputs+=("vmlinux.zlib (Linux; no size hint)=$lz")
	else
		row pipeline "vmlinux.zlib (Linux; no size hint)" "pipeline ms" "error: could not make $lz"
	fi
fi
echo "bench: pipeline (${#inputs[@]} inputs, $samples samples each)" >&2
"$D/bench_pipeline" -n "$samples" -m "$min_ms" "${inputs[@]}" >>"$tmp" 2>>"$O/bench.err"
if [ ! -s "$LINUX" ]; then
	row pipeline "vmlinux.gz (Linux)" "pipeline ms" "$NA_LINUX"
elif [ -n "$QUICK" ]; then
	row pipeline "vmlinux.gz (Linux)" "pipeline ms" "n/a (skipped: BENCH_QUICK)"
fi

# ---- function-granular KASLR on synthetic kernels of 1000 and 40000 functions
echo "bench: function-granular KASLR ($samples samples)" >&2
"$D/bench_fgkaslr" -n "$samples" -m "$min_ms" >>"$tmp" 2>>"$O/bench.err"

# ---- entropy and uniformity on the captured maps
echo "bench: entropy and uniformity" >&2
"$D/bench_entropy" "$P/kernel-pie.elf" "$P/kernel-high.elf" test/fixtures/*.mmap \
	>>"$tmp" 2>>"$O/bench.err"
"$D/bench_plot" -d "$draws" test/fixtures/ovmf-q35-2G.mmap "$P/kernel-pie.elf" \
	"$O/slots-2G.svg" >>"$tmp" 2>>"$O/bench.err"

# ---- boots under QEMU
if [ -n "$QUICK" ]; then
	row boot "kernel-high.elf.gz" "runs" "n/a (skipped: BENCH_QUICK)"
	row boot-steps "kernel-high.elf.gz (verbose)" "total us" "n/a (skipped: BENCH_QUICK)"
	row linux-boot "compare-boot.sh" "result" "n/a (skipped: BENCH_QUICK)"
else
	echo "bench: QEMU boots (${BENCH_BOOTS:-5} timed + verbose; a few minutes)" >&2
	BUILD=$B test/bench/boot.sh >>"$tmp" 2>>"$O/bench.err"
fi

# ---- size
sdboot=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
own=$(stat -c %s "$B/BOOTX64.EFI" 2>/dev/null)
sd=$(stat -c %s "$sdboot" 2>/dev/null)
row size "BOOTX64.EFI (this loader; zlib linked in)" bytes "${own:-n/a (make loader)}"
row size "systemd-bootx64.efi (Debian)" bytes "${sd:-n/a (install systemd-boot-efi)}"
if [ -n "$own" ] && [ -n "$sd" ]; then
	row size "ratio loader / systemd-boot" bytes "$(awk -v a="$own" -v b="$sd" 'BEGIN {printf "%.2f", a / b}')"
fi

{ echo "section,item,metric,value"; cat "$tmp"; } >"$csv"
rm -f "$tmp"
awk -F, -f test/bench/render.awk "$csv" >"$O/bench.md"
cat "$O/bench.md"
echo "bench: wrote $csv, $O/bench.md, $O/slots-2G.svg"
exit 0
