#!/bin/bash
# boot.sh - the boot benchmarks of `make bench` (QEMU + OVMF, TCG), as CSV
# rows "section,item,metric,value" on stdout (see test/bench/bench.h):
#   boot        wall time from starting test/qemu/boot.sh to the payload's
#               PASS line, BENCH_BOOTS quiet boots (median, min, max), and
#               when OVMF's "BdsDxe: starting" line came (firmware's share);
#               the same to "Linux version" for the Linux kernel
#   boot-steps  the loader's own per-step times ("time: STEP N us", TSC
#               calibrated against BS->Stall) from one verbose boot of the
#               payload, and of the Linux kernel when build/linux/vmlinux.gz
#               exists
#   linux-boot  test/linux/compare-boot.sh (QEMU start to "Linux version",
#               this loader against systemd-boot + the kernel's EFI stub)
#   fgk-boot    function-granular KASLR: kernel-fgk.elf (1202 function
#               sections) shuffled against the same file without its
#               functions note (objcopy -R .note.kaslr: relocated as a
#               whole, placed the same way), BENCH_BOOTS quiet boots of
#               each, alternating: wall seconds to the payload's PASS
#               line and milliseconds from OVMF's "BdsDxe: starting" to
#               it (the loader and the kernel, without firmware's noisy
#               seconds), medians, ratio, and the median of the paired
#               differences; then one verbose boot of each under QEMU's
#               -icount (guest time counts instructions, not the host's
#               load): the loader's parse step (where the functions note
#               is checked), its relocation (fgk_apply against
#               reloc_apply), and the differences
# Never fails on a number; a boot that does not finish becomes a row.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
RUNS=${BENCH_BOOTS:-5}
W=$B/bench/boot
mkdir -p "$W"
PAYLOAD=$B/payload/kernel-high.elf.gz
ITEM="kernel-high.elf.gz"
LINUX=${BENCH_LINUX:-$B/linux/vmlinux.gz}
NA_LINUX="n/a (no kernel: test/linux/fetch.sh failed, see bench.err)"

# CSV fields never hold commas or quotes: both become ';'
csvf() { printf '%s' "$1" | tr ',"' ';;'; }
row() { printf '%s,%s,%s,%s\n' "$1" "$(csvf "$2")" "$(csvf "$3")" "$(csvf "$4")"; }

clean() { tr -d '\r' <"$1" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g'; }

# median/min/max of the numbers on stdin (one a line): "MED MIN MAX N"
stats() {
	sort -g | awk '{v[NR] = $1} END {
		if (NR == 0) { print "n/a n/a n/a 0"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f %.2f %d\n", m, v[1], v[NR], NR }'
}

# seconds since $1 (an $EPOCHREALTIME value), 3 decimals
since() { echo "$EPOCHREALTIME $1" | awk '{printf "%.3f", $1 - $2}'; }

# timed_boot ESP LOG PATTERN [boot.sh options]: boots once and prints
# "T_BDS T_HIT": seconds from the start to OVMF's "BdsDxe: starting" line and
# to the first line matching PATTERN ("-" for a line that never came).  The
# serial log is a file QEMU writes unbuffered; it is polled every 20 ms.
timed_boot() {
	local esp=$1 log=$2 pat=$3 start pid alive t_bds=- t_hit=-
	shift 3
	: >"$log"
	start=$EPOCHREALTIME
	test/qemu/boot.sh --log "$log" --timeout 240 --cpu max "$@" "$esp" \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	while :; do
		alive=0
		kill -0 "$pid" 2>/dev/null && alive=1
		[ "$t_bds" = - ] && grep -aq 'BdsDxe: starting' "$log" && t_bds=$(since "$start")
		if grep -aEq -- "$pat" "$log"; then
			t_hit=$(since "$start")
			break
		fi
		[ "$alive" = 1 ] || break
		sleep 0.02
	done
	wait "$pid" 2>/dev/null
	echo "$t_bds $t_hit"
}

# time_rows ITEM RUNS TARGET TIMES_FILE: rows from "T_BDS T_HIT" lines
time_rows() {
	local item=$1 runs=$2 what=$3 f=$4 med lo hi
	row boot "$item" "target line" "$what"
	row boot "$item" "runs" "$runs"
	row boot "$item" "reached" "$(awk '$2 != "-"' "$f" | wc -l)"
	read -r med lo hi _ < <(awk '$2 != "-" {print $2}' "$f" | stats)
	row boot "$item" "median s" "$med"
	row boot "$item" "min s" "$lo"
	row boot "$item" "max s" "$hi"
	read -r med _ < <(awk '$1 != "-" {print $1}' "$f" | stats)
	row boot "$item" "firmware: to BdsDxe start median s" "$med"
	read -r med _ < <(awk '$1 != "-" && $2 != "-" {print $2 - $1}' "$f" | stats)
	row boot "$item" "BdsDxe start to target median s" "$med"
}

# step_rows ITEM LOG: the loader's "time: STEP N us" lines as rows
step_rows() {
	local item=$1 log=$2 found=0 step us total=0
	while IFS='|' read -r step us; do
		row boot-steps "$item" "$step us" "$us"
		total=$((total + us)); found=1
	done < <(clean "$log" | sed -n 's/.*kaslr-loader: time: \(.*\) \([0-9][0-9]*\) us$/\1|\2/p')
	if [ "$found" = 1 ]; then
		row boot-steps "$item" "total us" "$total"
	else
		row boot-steps "$item" "total us" "error: no time lines (see $log)"
	fi
}

if ! command -v qemu-system-x86_64 >/dev/null || [ ! -f /usr/share/OVMF/OVMF_CODE_4M.fd ]; then
	row boot "$ITEM" "runs" "n/a (QEMU/OVMF missing: make deps)"
	exit 0
fi

# ---- the payload: quiet boots, then one verbose boot
esp=$W/payload.img
test/qemu/mkesp.sh "$esp" "$B/BOOTX64.EFI" "$PAYLOAD" >/dev/null 2>&1 ||
	{ row boot "$ITEM" "runs" "error: mkesp failed"; exit 0; }
: >"$W/times.txt"
for i in $(seq 1 "$RUNS"); do
	timed_boot "$esp" "$W/payload-$i.log" 'payload: PASS' >>"$W/times.txt"
done
time_rows "$ITEM" "$RUNS" "payload: PASS" "$W/times.txt"

printf 'verbose\n' >"$W/verbose.conf"
vesp=$W/payload-verbose.img
if test/qemu/mkesp.sh "$vesp" "$B/BOOTX64.EFI" "$PAYLOAD" \
	EFI/BOOT/kaslr.conf="$W/verbose.conf" >/dev/null 2>&1; then
	test/qemu/boot.sh --log "$W/payload-verbose.log" --timeout 180 --cpu max "$vesp" \
		>/dev/null 2>&1
	step_rows "$ITEM (verbose)" "$W/payload-verbose.log"
else
	row boot-steps "$ITEM (verbose)" "total us" "error: mkesp failed"
fi

# ---- the Linux kernel, when test/linux/fetch.sh has made it: this
# loader's boots to "Linux version" (fewer: each is ~15 s under TCG), then
# one verbose boot for the per-step times
LRUNS=$((RUNS < 3 ? RUNS : 3))
if [ -s "$LINUX" ]; then
	printf 'cmdline console=ttyS0 panic=-1\n' >"$W/linux-quiet.conf"
	qesp=$W/linux.img
	if test/qemu/mkesp.sh "$qesp" "$B/BOOTX64.EFI" "$LINUX" \
		EFI/BOOT/kaslr.conf="$W/linux-quiet.conf" >/dev/null 2>&1; then
		: >"$W/linux-times.txt"
		for i in $(seq 1 "$LRUNS"); do
			timed_boot "$qesp" "$W/linux-$i.log" 'Linux version' --mem 1G \
				--until 'Linux version' >>"$W/linux-times.txt"
		done
		time_rows "vmlinux.gz (this loader)" "$LRUNS" "Linux version" "$W/linux-times.txt"
	else
		row boot "vmlinux.gz (this loader)" "runs" "error: mkesp failed"
	fi
	printf 'verbose\ncmdline console=ttyS0 panic=-1\n' >"$W/linux.conf"
	lesp=$W/linux-verbose.img
	if test/qemu/mkesp.sh "$lesp" "$B/BOOTX64.EFI" "$LINUX" \
		EFI/BOOT/kaslr.conf="$W/linux.conf" >/dev/null 2>&1; then
		test/qemu/boot.sh --log "$W/linux-verbose.log" --timeout 240 --mem 1G --cpu max \
			--until 'Linux version' "$lesp" >/dev/null 2>&1
		step_rows "vmlinux.gz (verbose)" "$W/linux-verbose.log"
	else
		row boot-steps "vmlinux.gz (verbose)" "total us" "error: mkesp failed"
	fi
else
	row boot "vmlinux.gz (this loader)" "runs" "$NA_LINUX"
	row boot-steps "vmlinux.gz (verbose)" "total us" "$NA_LINUX"
fi

# ---- function-granular KASLR: the shuffled test kernel against the same
# file without its functions note
FGK=$B/payload/kernel-fgk.elf
FGK_ICOUNT=3
FS="kernel-fgk.elf shuffled" FR="the same without its note (reference)"
FQ="shuffled / reference" FD="shuffled - reference"

# fgk_us LOG PATTERN: N from the first loader line "PATTERN ... N us"
fgk_us() { clean "$1" | sed -n "s/.*kaslr-loader: $2.* \([0-9][0-9]*\) us\$/\1/p" | head -n 1; }
# fgk_calc AWK-EXPR a b: the expression of two numbers, or n/a when one is missing
fgk_calc() {
	awk -v a="$2" -v b="$3" "BEGIN { if (a !~ /^-?[0-9.]+\$/ || b !~ /^-?[0-9.]+\$/ || b + 0 == 0) print \"n/a\"; else printf $1 }"
}
# fgk_med FILE total|bds: median over the boots that reached PASS of the
# seconds from the start, or of the ms from "BdsDxe: starting"
fgk_med() {
	awk -v m="$2" '$1 != "-" && $2 != "-" {print m == "total" ? $2 : ($2 - $1) * 1000}' "$1" |
		stats | cut -d' ' -f1
}

fgk_bench() {
	local ref=$W/kernel-fgk-nonote.elf k i ws wr bs br d ps pr rs rr
	objcopy -R .note.kaslr "$FGK" "$ref" || { row fgk-boot "$FS" "boots" "error: objcopy failed"; return; }
	for k in fgk fgk-ref; do
		if [ "$k" = fgk ]; then set -- "$FGK" moved; else set -- "$ref" linked; fi
		printf 'cmdline fgk.expect=%s\n' "$2" >"$W/$k.conf"
		printf 'verbose\ncmdline fgk.expect=%s\n' "$2" >"$W/$k-v.conf"
		if ! test/qemu/mkesp.sh "$W/$k.img" "$B/BOOTX64.EFI" "$1" \
			EFI/BOOT/kaslr.conf="$W/$k.conf" >/dev/null 2>&1 ||
			! test/qemu/mkesp.sh "$W/$k-v.img" "$B/BOOTX64.EFI" "$1" \
				EFI/BOOT/kaslr.conf="$W/$k-v.conf" >/dev/null 2>&1; then
			row fgk-boot "$FS" "boots" "error: mkesp failed"
			return
		fi
		: >"$W/$k-times.txt"
	done
	# alternating: a pair is one shuffled boot and the reference right after
	for i in $(seq 1 "$RUNS"); do
		for k in fgk fgk-ref; do
			timed_boot "$W/$k.img" "$W/$k-$i.log" 'payload: PASS' >>"$W/$k-times.txt"
		done
	done
	ws=$(fgk_med "$W/fgk-times.txt" total) wr=$(fgk_med "$W/fgk-ref-times.txt" total)
	bs=$(fgk_med "$W/fgk-times.txt" bds) br=$(fgk_med "$W/fgk-ref-times.txt" bds)
	d=$(paste "$W/fgk-times.txt" "$W/fgk-ref-times.txt" |
		awk '$1 != "-" && $2 != "-" && $3 != "-" && $4 != "-" {print (($2 - $1) - ($4 - $3)) * 1000}' |
		stats | cut -d' ' -f1)
	row fgk-boot "$FS" "boots" "$RUNS"
	row fgk-boot "$FR" "boots" "$RUNS"
	row fgk-boot "$FS" "wall s" "$ws"
	row fgk-boot "$FR" "wall s" "$wr"
	row fgk-boot "$FQ" "wall s" "$(fgk_calc '"%.3f", a / b' "$ws" "$wr")"
	row fgk-boot "$FS" "BdsDxe to PASS ms" "$bs"
	row fgk-boot "$FR" "BdsDxe to PASS ms" "$br"
	row fgk-boot "$FQ" "BdsDxe to PASS ms" "$(fgk_calc '"%.2f", a / b' "$bs" "$br")"
	row fgk-boot "$FD" "BdsDxe to PASS ms" "$d"
	# one verbose boot each with guest time counted in instructions
	for k in fgk fgk-ref; do
		test/qemu/boot.sh --log "$W/$k-icount.log" --timeout 300 --cpu max \
			--icount "$FGK_ICOUNT" "$W/$k-v.img" >/dev/null 2>&1
	done
	ps=$(fgk_us "$W/fgk-icount.log" 'time: parse') pr=$(fgk_us "$W/fgk-ref-icount.log" 'time: parse')
	rs=$(fgk_us "$W/fgk-icount.log" 'kernel at phys .* relocations applied in')
	rr=$(fgk_us "$W/fgk-ref-icount.log" 'kernel at phys .* relocations applied in')
	row fgk-boot "$FS" "icount: parse ms" "$(fgk_calc '"%.1f", a / b' "$ps" 1000)"
	row fgk-boot "$FR" "icount: parse ms" "$(fgk_calc '"%.1f", a / b' "$pr" 1000)"
	row fgk-boot "$FD" "icount: parse ms" "$(fgk_calc '"%.1f", (a - b) / 1000' "$ps" "$pr")"
	row fgk-boot "$FS" "icount: relocate ms" "$(fgk_calc '"%.1f", a / b' "$rs" 1000)"
	row fgk-boot "$FR" "icount: relocate ms" "$(fgk_calc '"%.1f", a / b' "$rr" 1000)"
	row fgk-boot "$FD" "icount: relocate ms" "$(fgk_calc '"%.1f", (a - b) / 1000' "$rs" "$rr")"
	row fgk-boot "$FQ" "icount: relocate ms" "$(fgk_calc '"%.2f", a / b' "$rs" "$rr")"
	row fgk-boot "$FS" "relocations" \
		"$(clean "$W/fgk-icount.log" | sed -n 's/.*, \([0-9]*\) relocations applied in .*/\1/p' | head -n 1)"
	row fgk-boot "$FR" "relocations" \
		"$(clean "$W/fgk-ref-icount.log" | sed -n 's/.*, \([0-9]*\) relocations applied in .*/\1/p' | head -n 1)"
	row fgk-boot "$FS" "moved (payload)" \
		"$(clean "$W/fgk-icount.log" | sed -n 's/^fgk: .* moved=\([0-9]*\) .*/\1/p' | head -n 1)"
	row fgk-boot "$FS" "entropy bits (hand-off)" "$(clean "$W/fgk-icount.log" |
		sed -n 's/^fgk: .* handoff_millibits=\([0-9]*\).*/\1/p' | awk '{printf "%.3f", $1 / 1000}')"
}
if [ -s "$FGK" ]; then
	fgk_bench
else
	row fgk-boot "$FS" "boots" "n/a ($FGK missing: make payloads)"
fi

if [ -s "$LINUX" ] && [ -x test/linux/compare-boot.sh ]; then
  # the generic (xz) and the cloud (LZ4) kernel, each as Debian ships it
  for kind in generic cloud; do
	# its lines: "compare-boot: NAME (WHAT): T1 T2 ... s; mean M s" per way
	# of booting, then "compare-boot: ratio A / B = R"
	echo "bench: test/linux/compare-boot.sh $LRUNS $kind" >&2
	cb=$W/compare-boot-$kind.txt
	BUILD=$B test/linux/compare-boot.sh "$LRUNS" "$kind" >"$cb" 2>&1
	rc=$?
	tr -d '\r' <"$cb" | awk -v rc="$rc" -v f="$cb" -v kind="$kind" '
		function med(s,   n, v, i, j, t) {
			n = split(s, v, " ")
			for (i = 1; i <= n; i++)
				for (j = i + 1; j <= n; j++)
					if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		/^compare-boot: FAIL/ { sub(/^compare-boot: /, ""); fail = $0; next }
		/^compare-boot: .*\): .* s; mean [0-9.]+ s/ {
			line = $0
			sub(/^compare-boot: +/, "", line)
			name = line; sub(/: .*/, "", name); gsub(/  +/, " ", name)
			runs = line; sub(/^[^:]*: +/, "", runs); sub(/ s;.*/, "", runs)
			mean = line; sub(/.*mean /, "", mean); sub(/ s$/, "", mean)
			n++; nm[n] = name; md[n] = med(runs)
			printf "linux-boot,%s,runs s,%s\n", name, runs
			printf "linux-boot,%s,median s,%.2f\n", name, md[n]
			printf "linux-boot,%s,mean s,%s\n", name, mean
			next
		}
		/^compare-boot: ratio .* = [0-9.]+$/ { ratio = $NF }
		END {
			if (n >= 2) {
				printf "linux-boot,%s / %s,ratio of means,%s\n", nm[1], nm[2], ratio
				printf "linux-boot,%s / %s,ratio of medians,%.2f\n", nm[1], nm[2], md[1] / md[2]
			} else if (fail != "") {
				gsub(/,/, ";", fail)
				printf "linux-boot,compare-boot.sh %s,result,error: %s\n", kind, fail
			} else {
				printf "linux-boot,compare-boot.sh %s,result,error: unrecognised output (exit %s; see %s)\n", kind, rc, f
			}
		}'
  done
elif [ -s "$LINUX" ]; then
	row linux-boot "compare-boot.sh" "result" "n/a (test/linux/compare-boot.sh not there yet)"
else
	row linux-boot "compare-boot.sh" "result" "$NA_LINUX"
fi
exit 0
