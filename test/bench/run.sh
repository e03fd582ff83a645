#!/bin/bash
# run.sh - `make bench`: every benchmark in one run, written as
# build/bench/bench.csv (rows "section,item,metric,value"), the same as
# Markdown tables in build/bench/bench.md (also printed on stdout), and the
# slot-choice histogram build/bench/slots-2G.svg.
#   BENCH_QUICK=1   few samples, fewer draws, no QEMU and no Linux kernel
#                   (what test/bench/smoke.sh runs)
# A full run fetches Debian's generic (xz) and cloud (LZ4) kernels with
# test/linux/fetch.sh (cached in build/linux/) and recompresses the generic
# kernel's vmlinux.bin with zstd -19 (cached in build/bench/).
#   BENCH_BOOTS=N   quiet QEMU boots to time (default 5)
#   COUNT_RUNS=N    counted boots of each path (test/bench/count.sh; default 2)
#   BENCH_OUT=DIR   where the CSV, Markdown and SVG go (default build/bench)
#   BENCH_LINUX=F   the repacked Linux kernel (default build/linux/vmlinux.gz,
#                   made by test/linux/fetch.sh)
# Benchmarks never fail on a number: a missing input or a failed step is a
# row saying so.  The host programs come from test/bench/bench.mk.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
D=$B/bench
P=$B/payload
LINUX=${BENCH_LINUX:-$B/linux/vmlinux.gz}
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

for prog in bench_pipeline bench_entropy bench_plot bench_fgkaslr bench_sha256; do
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
for f in kernel-pie.elf.gz kernel-exec.elf.gz kernel-high.elf.gz kernel-pie.elf.zlib kernel-high.elf.zlib \
	kernel-pie.elf.xz kernel-high.elf.lz4 kernel-exec.elf.zst; do
	if [ -s "$P/$f" ]; then
		inputs+=("$f=$P/$f")
	else
		row pipeline "$f" "pipeline ms" "n/a ($P/$f missing: make payloads)"
	fi
done
GENERIC="Debian generic bzImage (xz)" CLOUD="Debian cloud bzImage (lz4)"
ZST="vmlinux.bin zstd -19" GZ="vmlinux.gz (Linux)" ZL="vmlinux.zlib (Linux; no size hint)"
if [ -z "$QUICK" ]; then
	# the kernels as Debian ships them, fetched (and cached) here
	echo "bench: fetching Debian's kernels (cached in $B/linux)" >&2
	if BUILD=$B test/linux/fetch.sh generic >/dev/null 2>>"$O/bench.err" && [ -s "$LINUX" ]; then
		inputs+=("$GENERIC=$B/linux/vmlinuz" "$GZ=$LINUX")
		# the same vmlinux.bin as a zlib stream (no size in the trailer:
		# the buffer grows) and as zstd -19
		lz=$D/vmlinux.zlib zst=$D/vmlinux.zst
		if [ ! -s "$lz" ] || [ ! -s "$zst" ] || [ "$LINUX" -nt "$lz" ] || [ "$LINUX" -nt "$zst" ]; then
			echo "bench: recompressing vmlinux.bin (zlib, zstd -19: about a minute)" >&2
			rm -f "$lz" "$zst"
			if gzip -dc "$LINUX" >"$D/vmlinux.elf"; then
				if ! { [ -x "$P/mkzlib" ] && "$P/mkzlib" "$D/vmlinux.elf" "$lz"; }; then
					rm -f "$lz"
				fi
				zstd -q -19 -T2 "$D/vmlinux.elf" -o "$zst" || rm -f "$zst"
			fi
			rm -f "$D/vmlinux.elf"
		fi
		if [ -s "$zst" ]; then inputs+=("$ZST=$zst")
		else row pipeline "$ZST" "pipeline ms" "error: could not make $zst"; fi
		if [ -s "$lz" ]; then inputs+=("$ZL=$lz")
		else row pipeline "$ZL" "pipeline ms" "error: could not make $lz"; fi
	else
		for item in "$GENERIC" "$GZ" "$ZST"; do
			row pipeline "$item" "pipeline ms" "error: test/linux/fetch.sh generic failed (see bench.err)"
		done
	fi
	if BUILD=$B test/linux/fetch.sh cloud >/dev/null 2>>"$O/bench.err"; then
		inputs+=("$CLOUD=$B/linux/cloud/vmlinuz")
	else
		row pipeline "$CLOUD" "pipeline ms" "error: test/linux/fetch.sh cloud failed (see bench.err)"
	fi
fi
echo "bench: pipeline (${#inputs[@]} inputs, $samples samples each)" >&2
"$D/bench_pipeline" -n "$samples" -m "$min_ms" "${inputs[@]}" >>"$tmp" 2>>"$O/bench.err"
if [ -n "$QUICK" ]; then
	for item in "$GENERIC" "$CLOUD" "$ZST" "$GZ"; do
		row pipeline "$item" "pipeline ms" "n/a (skipped: BENCH_QUICK)"
	done
fi

# ---- function-granular KASLR on synthetic kernels of 1000 and 40000 functions
echo "bench: function-granular KASLR ($samples samples)" >&2
"$D/bench_fgkaslr" -n "$samples" -m "$min_ms" >>"$tmp" 2>>"$O/bench.err"

# ---- SHA-256 of a kernel-sized buffer: portable code and SHA extensions
echo "bench: SHA-256 ($samples samples)" >&2
"$D/bench_sha256" -n "$samples" -m "$min_ms" >>"$tmp" 2>>"$O/bench.err"

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
	row fgk-boot "kernel-fgk.elf shuffled" "boots" "n/a (skipped: BENCH_QUICK)"
	row count "all" "result" "n/a (skipped: BENCH_QUICK)"
else
	echo "bench: QEMU boots (${BENCH_BOOTS:-5} timed + verbose; a few minutes)" >&2
	BUILD=$B test/bench/boot.sh >>"$tmp" 2>>"$O/bench.err"
	echo "bench: counted Linux boots (${COUNT_RUNS:-2} of each path and kernel, with and without TPM; about 10 minutes on a quiet machine)" >&2
	BUILD=$B test/bench/count.sh >>"$tmp" 2>>"$O/bench.err"
fi

# ---- size
sdboot=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
own=$(stat -c %s "$B/BOOTX64.EFI" 2>/dev/null)
sd=$(stat -c %s "$sdboot" 2>/dev/null)
row size "BOOTX64.EFI (this loader; with zlib/liblzma/liblz4/libzstd)" bytes "${own:-n/a (make loader)}"
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
