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
#               each, alternating, to the payload's PASS line (wall
#               seconds, medians, and the median of the paired
#               differences); then one verbose boot of each under QEMU's
#               -icount (guest time counts instructions, not the host's
#               load): the loader's parse step (the functions note is
#               checked there), its relocation (fgk_apply against
#               reloc_apply), and the difference
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

# ---- function-granular KASLR: the shuffled test kernel against itself
# without the note.  fgk_rows ITEM LOG: the loader's own times from one
# verbose -icount boot ("time: parse N us", "... relocations applied in N us")
FGK=$B/payload/kernel-fgk.elf
FGK_ICOUNT=3
fgk_us() { clean "$1" | sed -n "s/.*kaslr-loader: $2.* \([0-9][0-9]*\) us\$/\1/p" | head -n 1; }
fgk_rows() {
	local item=$1 log=$2 parse rel
	parse=$(fgk_us "$log" 'time: parse')
	rel=$(fgk_us "$log" 'kernel at phys .* relocations applied in')
	row fgk-boot "$item" "icount: parse ms" "$(awk -v u="${parse:-x}" 'BEGIN {
		if (u == "x") print "error: no parse time"; else printf "%.1f", u / 1000 }')"
	row fgk-boot "$item" "icount: relocate ms" "$(awk -v u="${rel:-x}" 'BEGIN {
		if (u == "x") print "error: no relocation time"; else printf "%.1f", u / 1000 }')"
	echo "${parse:-0} ${rel:-0}"
}
if [ -s "$FGK" ]; then
	fref=$W/kernel-fgk-nonote.elf
	printf 'cmdline fgk.expect=moved\n' >"$W/fgk.conf"
	printf 'cmdline fgk.expect=linked\n' >"$W/fgk-ref.conf"
	printf 'verbose\ncmdline fgk.expect=moved\n' >"$W/fgk-v.conf"
	printf 'verbose\ncmdline fgk.expect=linked\n' >"$W/fgk-ref-v.conf"
	if objcopy -R .note.kaslr "$FGK" "$fref" &&
		test/qemu/mkesp.sh "$W/fgk.img" "$B/BOOTX64.EFI" "$FGK" \
			EFI/BOOT/kaslr.conf="$W/fgk.conf" >/dev/null 2>&1 &&
		test/qemu/mkesp.sh "$W/fgk-ref.img" "$B/BOOTX64.EFI" "$fref" \
			EFI/BOOT/kaslr.conf="$W/fgk-ref.conf" >/dev/null 2>&1 &&
		test/qemu/mkesp.sh "$W/fgk-v.img" "$B/BOOTX64.EFI" "$FGK" \
			EFI/BOOT/kaslr.conf="$W/fgk-v.conf" >/dev/null 2>&1 &&
		test/qemu/mkesp.sh "$W/fgk-ref-v.img" "$B/BOOTX64.EFI" "$fref" \
			EFI/BOOT/kaslr.conf="$W/fgk-ref-v.conf" >/dev/null 2>&1; then
		: >"$W/fgk-times.txt"
		: >"$W/fgk-ref-times.txt"
		for i in $(seq 1 "$RUNS"); do
			timed_boot "$W/fgk.img" "$W/fgk-$i.log" 'payload: PASS' >>"$W/fgk-times.txt"
			timed_boot "$W/fgk-ref.img" "$W/fgk-ref-$i.log" 'payload: PASS' >>"$W/fgk-ref-times.txt"
		done
		S="kernel-fgk.elf shuffled" R="the same without its note (reference)"
		read -r ms _ < <(awk '$2 != "-" {print $2}' "$W/fgk-times.txt" | stats)
		read -r mr _ < <(awk '$2 != "-" {print $2}' "$W/fgk-ref-times.txt" | stats)
		row fgk-boot "$S" "boots" "$RUNS"
		row fgk-boot "$S" "wall: median s" "$ms"
		row fgk-boot "$R" "boots" "$RUNS"
		row fgk-boot "$R" "wall: median s" "$mr"
		row fgk-boot "shuffled / reference" "wall: median s" "$(awk -v a="$ms" -v b="$mr" 'BEGIN {
			if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "n/a (a boot did not finish)" }')"
		# a pair is one shuffled boot and the reference boot right after it
		read -r md _ < <(paste "$W/fgk-times.txt" "$W/fgk-ref-times.txt" |
			awk '$2 != "-" && $4 != "-" {printf "%.3f\n", ($2 - $4) * 1000}' | stats)
		row fgk-boot "shuffled - reference" "wall: median of paired differences ms" "$md"
		test/qemu/boot.sh --log "$W/fgk-v.log" --timeout 300 --cpu max --icount "$FGK_ICOUNT" \
			"$W/fgk-v.img" >/dev/null 2>&1
		read -r ps rs < <(fgk_rows "$S" "$W/fgk-v.log")
		test/qemu/boot.sh --log "$W/fgk-ref-v.log" --timeout 300 --cpu max --icount "$FGK_ICOUNT" \
			"$W/fgk-ref-v.img" >/dev/null 2>&1
		read -r pr rr < <(fgk_rows "$R" "$W/fgk-ref-v.log")
		row fgk-boot "shuffled - reference" "icount: parse ms" "$(awk -v a="$ps" -v b="$pr" 'BEGIN { printf "%.1f", (a - b) / 1000 }')"
		row fgk-boot "shuffled - reference" "icount: relocate ms" "$(awk -v a="$rs" -v b="$rr" 'BEGIN { printf "%.1f", (a - b) / 1000 }')"
		row fgk-boot "shuffled / reference" "icount: relocate ms" "$(awk -v a="$rs" -v b="$rr" 'BEGIN {
			if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
		row fgk-boot "$S" "moved (payload)" "$(clean "$W/fgk-v.log" | sed -n 's/^fgk: .* moved=\([0-9]*\) .*/\1/p' | head -n 1)"
		row fgk-boot "$S" "entropy bits (hand-off)" "$(clean "$W/fgk-v.log" |
			sed -n 's/^fgk: .* handoff_millibits=\([0-9]*\).*/\1/p' | awk '{printf "%.3f", $1 / 1000}')"
	else
		row fgk-boot "kernel-fgk.elf" "boots" "error: objcopy or mkesp failed"
	fi
else
	row fgk-boot "kernel-fgk.elf" "boots" "n/a ($FGK missing: make payloads)"
fi

if [ -s "$LINUX" ] && [ -x test/linux/compare-boot.sh ]; then
	# its lines: "compare-boot: NAME (WHAT): T1 T2 ... s; mean M s" per way
	# of booting, then "compare-boot: ratio A / B = R"
	echo "bench: test/linux/compare-boot.sh $LRUNS" >&2
	BUILD=$B test/linux/compare-boot.sh "$LRUNS" >"$W/compare-boot.txt" 2>&1
	rc=$?
	tr -d '\r' <"$W/compare-boot.txt" | awk -v rc="$rc" -v f="$W/compare-boot.txt" '
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
				printf "linux-boot,compare-boot.sh,result,error: %s\n", fail
			} else {
				printf "linux-boot,compare-boot.sh,result,error: unrecognised output (exit %s; see %s)\n", rc, f
			}
		}'
elif [ -s "$LINUX" ]; then
	row linux-boot "compare-boot.sh" "result" "n/a (test/linux/compare-boot.sh not there yet)"
else
	row linux-boot "compare-boot.sh" "result" "$NA_LINUX"
fi
exit 0
