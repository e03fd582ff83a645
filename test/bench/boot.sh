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
