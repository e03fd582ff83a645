#!/bin/bash
# smoke.sh - checks that `make bench` runs (in its quick mode: few samples,
# no QEMU) and writes the CSV, the Markdown and the SVG with the rows it
# promises.  It checks shapes and the numbers that are exact (slot counts
# fixed by arithmetic, the loader's size), never a timing.
# Last line: "bench: N passed, N failed".
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
# its own output directory: a quick run must not replace a full run's tables
D=$B/bench/smoke
csv=$D/bench.csv
md=$D/bench.md
svg=$D/slots-2G.svg
log=$D/smoke.log
. test/tally.sh

check() { # check NAME REASON COMMAND...
	local name=$1 why=$2
	shift 2
	if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name" "$why"; fi
}

# the value of section,item,metric in the CSV (first match)
val() { awk -F, -v s="$1" -v i="$2" -v m="$3" '$1 == s && $2 == i && $3 == m {print $4; exit}' "$csv"; }
is_num() { printf '%s' "$1" | grep -Eq '^-?[0-9]+(\.[0-9]+)?$'; }
# shellcheck disable=SC2317  # called through check
num_or_na() { is_num "$1" || case $1 in "n/a"*) true ;; *) false ;; esac; }

rm -f "$csv" "$md" "$svg"
mkdir -p "$D"
BENCH_OUT=$D make --no-print-directory bench BENCH_QUICK=1 BUILD="$B" >"$log" 2>&1
rc=$?
check "make-bench-runs" "make bench BENCH_QUICK=1 exited $rc (see $log)" test "$rc" -eq 0
check "csv-written" "$csv missing or empty" test -s "$csv"
check "md-written" "$md missing or empty" test -s "$md"
if [ ! -s "$csv" ]; then
	echo "bench: $passed passed, $((failed + 1)) failed"
	exit 1
fi

check "csv-header" "first line is not the header" \
	test "$(head -n 1 "$csv")" = "section,item,metric,value"
check "csv-4-fields" "a row without exactly 4 fields" \
	test "$(awk -F, 'NF != 4' "$csv" | wc -l)" -eq 0

for s in machine pipeline pipeline-steps fgkaslr sha256 entropy-phys entropy-virt uniformity boot boot-steps linux-boot fgk-boot count size; do
	check "section-$s" "no rows of section $s" grep -q "^$s," "$csv"
done

# pipeline: every compressed payload measured, against its library, with a ratio
for f in kernel-pie.elf.gz kernel-exec.elf.gz kernel-high.elf.gz kernel-pie.elf.zlib kernel-high.elf.zlib \
	kernel-pie.elf.xz kernel-high.elf.lz4 kernel-exec.elf.zst; do
	p=$(val pipeline "$f" "pipeline ms") z=$(val pipeline "$f" "library ms")
	r=$(val pipeline "$f" "decomp_image/library") n=$(val pipeline "$f" "relocations")
	if is_num "$p" && is_num "$z" && is_num "$r" && is_num "$n" &&
	   awk -v r="$r" -v n="$n" 'BEGIN {exit !(r > 0 && n > 0)}'; then
		ok "pipeline-$f"
	else
		bad "pipeline-$f" "pipeline=$p library=$z ratio=$r relocations=$n"
	fi
done
for item in "vmlinux.gz (Linux)" "Debian generic bzImage (xz)" "Debian cloud bzImage (lz4)" "vmlinux.bin zstd -19"; do
	lv=$(val pipeline "$item" "pipeline ms")
	check "pipeline-linux-row $item" "row is '$lv', want a number or n/a" num_or_na "$lv"
done
s5=$(val pipeline-steps kernel-high.elf.gz "pagetable ms")
check "pipeline-steps" "pagetable ms is '$s5'" is_num "$s5"

# function-granular KASLR: both synthetic kernels, their exact sizes and
# entropy, a time and a ratio against plain relocation of the same image
for n in 1000 40000; do
	it="$n functions"
	f=$(val fgkaslr "$it" functions) e=$(val fgkaslr "$it" "entropy bits")
	t=$(val fgkaslr "$it" "fgk ms") r=$(val fgkaslr "$it" "load+fgk / load+reloc")
	if [ "$f" = "$n" ] && [ "$e" = 256.0 ] && is_num "$t" && is_num "$r"; then
		ok "fgkaslr-$n"
	else
		bad "fgkaslr-$n" "functions=$f entropy=$e fgk ms=$t ratio=$r"
	fi
done
check "sha256-portable" "portable MB/s is '$(val sha256 "16 MiB" "portable MB/s")'" \
	is_num "$(val sha256 "16 MiB" "portable MB/s")"
check "sha256-extensions" "SHA extensions MB/s is '$(val sha256 "16 MiB" "SHA extensions MB/s")'" \
	num_or_na "$(val sha256 "16 MiB" "SHA extensions MB/s")"
check "fgkaslr-relocs" "40000 functions: $(val fgkaslr "40000 functions" relocations) relocations, want >= 500000" \
	test "$(val fgkaslr "40000 functions" relocations)" -ge 500000
# log2(1000!) = 8529.398...
check "fgkaslr-log2" "log2(1000!) = $(val fgkaslr "1000 functions" "log2(n!) bits")" \
	test "$(val fgkaslr "1000 functions" "log2(n!) bits")" = 8529.4

# entropy: every fixture, loader <= theoretical, exact virtual counts
for f in test/fixtures/*.mmap; do
	m=$(basename "$f" .mmap)
	l=$(val entropy-phys "$m / 16 MiB" "loader slots")
	t=$(val entropy-phys "$m / 16 MiB" "theoretical")
	x=$(val entropy-phys "$m / 16 MiB" "Linux rule slots")
	if is_num "$l" && is_num "$t" && is_num "$x" && [ "$l" -le "$t" ]; then
		ok "entropy-$m"
	else
		bad "entropy-$m" "loader=$l theoretical=$t linux=$x"
	fi
done
# (0xffffffffffe00000 - 0xffffffff80000000 - 58 MiB) / 2 MiB + 1 = 995;
# (1 GiB - 16 MiB - 58 MiB) / 2 MiB + 1 = 476
check "entropy-virt-58M" "loader slots $(val entropy-virt "58 MiB" "loader slots"), want 995" \
	test "$(val entropy-virt "58 MiB" "loader slots")" = 995
check "entropy-virt-linux" "Linux slots $(val entropy-virt "58 MiB" "Linux slots (1 GiB window)"), want 476" \
	test "$(val entropy-virt "58 MiB" "Linux slots (1 GiB window)")" = 476

# uniformity: the histogram is consistent with uniform, and drawn
z=$(val uniformity "ovmf-q35-2G.mmap / payload" z)
check "uniformity-z" "z = '$z'" awk -v z="$z" 'BEGIN {exit !(z ~ /^-?[0-9.]+$/ && z > -5 && z < 5)}'
slots=$(val uniformity "ovmf-q35-2G.mmap / payload" slots)
check "svg-shape" "$svg is not an SVG ending in </svg>" \
	sh -c "head -n 2 '$svg' | grep -q '<svg' && tail -n 1 '$svg' | grep -q '</svg>'"
# one bar per slot plus the background rectangle
check "svg-bars" "$(grep -c '<rect' "$svg" 2>/dev/null) rects for $slots slots" \
	test "$(grep -c '<rect' "$svg" 2>/dev/null)" = "$((slots + 1))"

# boots are skipped in quick mode, and say so; their script at least parses
check "boot-script-syntax" "bash -n test/bench/boot.sh failed" bash -n test/bench/boot.sh
check "boot-skipped-row" "boot row: $(val boot kernel-high.elf.gz runs)" \
	sh -c "printf '%s' '$(val boot kernel-high.elf.gz runs)' | grep -q '^n/a'"

# size: the real byte count of the loader
own=$(stat -c %s "$B/BOOTX64.EFI" 2>/dev/null)
L="BOOTX64.EFI (this loader; with zlib/liblzma/liblz4/libzstd)"
check "size-loader" "size row $(val size "$L" bytes), file $own" test "$(val size "$L" bytes)" = "$own"

# Markdown: one heading and one table per section, also on stdout
nsec=$(awk -F, 'NR > 1 {print $1}' "$csv" | sort -u | wc -l)
check "md-headings" "$(grep -c '^### ' "$md") headings for $nsec sections" \
	test "$(grep -c '^### ' "$md")" -eq "$nsec"
check "md-tables" "table separators != sections" \
	test "$(grep -c '^|---' "$md")" -eq "$nsec"
check "md-on-stdout" "the pipeline table is not in make bench's output" \
	grep -qF "$(grep -m 1 '^| kernel-pie.elf.gz ' "$md")" "$log"

tally_end bench
