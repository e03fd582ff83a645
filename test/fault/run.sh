#!/bin/bash
# run.sh [REGEX] - every fault case of test/fault/cases (those whose name
# matches REGEX), under QEMU + OVMF, with the fault injector as
# \EFI\BOOT\BOOTX64.EFI and the real loader at \EFI\kaslr\loader.efi.
#
# Two lanes of boots run side by side, each on an ESP copy of its own
# (one after the other with FAULT_LANES=1).
# Cases whose loader returns share one boot: the injector runs them in
# sequence.  A case that boots the payload (or halts, or hangs) ends its
# boot, and the next boot starts at the case after it.  Before each plan
# the injector runs the loader once unjudged (_warmup) so that one-time
# firmware allocations (the first image load) do not show as a leak.
# Prints "ok NAME (outcome)" or "FAIL NAME: why" per case, a table
# (case, expected, outcome, verdict) and "fault: N passed, N failed".
# Logs: build/fault/run/.
set -u
cd "$(dirname "$0")/../.." || exit 1
NAME=fault
. test/qemu/lib.sh
FILTER=${1:-}
OUT=$B/fault/run
INJECT=$B/fault/INJECT.EFI
IDLE=${FAULT_IDLE:-20}
rm -rf "$OUT"
mkdir -p "$OUT"
for f in "$INJECT" "$LOADER" "$P/kernel-pie.elf" "$P/kernel-pie.elf.gz" "$P/kernel-exec.elf"; do
	[ -f "$f" ] || { echo "run.sh: missing $f (make fault-build all)"; echo "fault: 0 passed, 1 failed"; exit 1; }
done

# The loader's kaslr.conf sets a command line every boot must show; decoys
# at the volume root (another kernel variant, another command line) catch
# a loader that loses its own directory and reads the wrong files.
printf '# fault tests: the payload echoes this\ncmdline fault-conf\n' >"$OUT/kaslr.conf"
printf 'cmdline decoy-conf\n' >"$OUT/decoy.conf"
# a module the cases pin by its SHA-256 (test/fault/cases writes it out)
printf 'fault tests: a module file the cases pin\n' >"$OUT/mod.bin"
ESP=$OUT/esp.img
test/qemu/mkesp.sh "$ESP" "$INJECT" - EFI/kaslr/loader.efi="$LOADER" \
	EFI/kaslr/kernel.elf="$P/kernel-pie.elf" EFI/kaslr/kernel.elf.gz="$P/kernel-pie.elf.gz" \
	EFI/kaslr/kaslr.conf="$OUT/kaslr.conf" EFI/kaslr/mod.bin="$OUT/mod.bin" \
	kernel.elf="$P/kernel-exec.elf" kaslr.conf="$OUT/decoy.conf" || { echo "fault: 0 passed, 1 failed"; exit 1; }

# ---------------------------------------------------------------- the table
declare -a ORDER=()
declare -A EXPECT=() QOPT=() PLAN=() OUTCOME=() VERDICT=() WHY=()
add_case() { # NAME EXPECT QEMU PLAN
	[ -n "${EXPECT[$1]+x}" ] && { echo "run.sh: case $1 twice"; exit 1; }
	ORDER+=("$1")
	EXPECT[$1]=$2 QOPT[$1]=$3 PLAN[$1]=$4
}
while read -r name expect qemu plan; do
	case $name in '' | '#'*) continue ;; esac
	add_case "$name" "$expect" "$qemu" "$plan"
done <test/fault/cases

status_name() {
	case $1 in
	8000000000000001) echo LOAD_ERROR ;; 8000000000000002) echo INVALID_PARAMETER ;;
	8000000000000003) echo UNSUPPORTED ;; 8000000000000004) echo BAD_BUFFER_SIZE ;;
	8000000000000005) echo BUFFER_TOO_SMALL ;; 8000000000000006) echo NOT_READY ;;
	8000000000000007) echo DEVICE_ERROR ;; 8000000000000009) echo OUT_OF_RESOURCES ;;
	800000000000000C) echo NO_MEDIA ;; 800000000000000E) echo NOT_FOUND ;;
	800000000000001A) echo SECURITY_VIOLATION ;; 800000000000001F) echo END_OF_FILE ;;
	0) echo SUCCESS ;; *) echo "0x$1" ;;
	esac
}

# field of a fault-result line: rfield LINE KEY
rfield() { kv_word "$1" "$2"; }

# judge_reported SEG RESULT -> "" or why not: the loader returned an EFI
# error and printed exactly one error line (what every returned error owes)
judge_reported() {
	local seg=$1 res=$2 st errs why=
	st=$(rfield "$res" status)
	case $st in 8*) ;; *) why="returned $(status_name "$st"), not an error" ;; esac
	errs=$(grep -c '^kaslr-loader: error:' "$seg")
	[ "$errs" = 1 ] || why="${why:+$why; }$errs error lines, want 1"
	printf '%s' "$why"
}

# judge_error SEG RESULT EXPECTED -> "" (fine) or why not; EXPECTED
# error:NAME or either:NAME also wants that status (status_name's spelling)
judge_error() {
	local seg=$1 res=$2 exp=$3 st why
	why=$(judge_reported "$seg" "$res")
	st=$(rfield "$res" status)
	case $exp in
	*:*) [ "$(status_name "$st")" = "${exp#*:}" ] ||
		why="${why:+$why; }returned $(status_name "$st"), want ${exp#*:}" ;;
	esac
	for k in leak_pages leak_pool badfree files violations; do
		[ "$(rfield "$res" $k)" = 0 ] || why="${why:+$why; }$k=$(rfield "$res" $k)"
	done
	[ "$(rfield "$res" map)" = same ] || why="${why:+$why; }memory map $(rfield "$res" map) entries"
	[ "$(rfield "$res" tpl)" = ok ] || why="${why:+$why; }TPL $(rfield "$res" tpl)"
	printf '%s' "$why"
}

# judge_boot SEG RC CHECKS -> "" or why not
judge_boot() {
	local seg=$1 rc=$2 checks=$3 line ebs v why='' c k want got
	line=$(payload_line "$seg")
	case $line in "payload: PASS "*) ;; *) printf 'no payload PASS (%s)' "${line:-none}"; return ;; esac
	[ "$rc" = 33 ] || why="qemu status $rc"
	ebs=$(grep -a '^fault-ebs:' "$seg" | tail -n 1)
	v=$(rfield "$ebs" violations)
	case $v in 0 | "") ;; *) why="${why:+$why; }violations=$v" ;; esac
	# every boot: the kernel and the kaslr.conf it was given, not the decoys
	for c in variant=pie cmdline=fault-conf ${checks//,/ }; do
		case $c in
		warn) grep -q '^kaslr-loader: warning:' "$seg" || why="${why:+$why; }no loader warning" ;;
		ebs.*=*) k=${c#ebs.} want=${c#*=}; k=${k%%=*}; got=$(rfield "$ebs" "$k")
			[ "$got" = "$want" ] || why="${why:+$why; }fault-ebs $k=$got, want $want" ;;
		*!=*) k=${c%%!=*} want=${c#*!=}; got=$(kv "$line" "$k")
			[ "$got" != "$want" ] || why="${why:+$why; }$k=$got" ;;
		*=*) k=${c%%=*} want=${c#*=}; got=$(kv "$line" "$k")
			[ "$got" = "$want" ] || why="${why:+$why; }$k=$got, want $want" ;;
		esac
	done
	printf '%s' "$why"
}

# outcome of a case that ended its boot: SEG RC -> a word
terminal_outcome() {
	local seg=$1 rc=$2 line
	line=$(payload_line "$seg")
	case $line in
	"payload: PASS "*) echo "boot(rng=$(kv "$line" rng),bli=$(kv "$line" bli))"; return ;;
	"payload: FAIL "*) echo "payload-fail=$(printf '%s\n' "$line" | awk '{print $3}')"; return ;;
	esac
	if ! grep -q '^fault-ebs:' "$seg" && grep -q '^kaslr-loader: early exception\|^payload' "$seg"; then
		# the kernel (or the loader's post-handoff exception stubs) ran, yet
		# ExitBootServices never reached the firmware
		echo "kernel-ran-without-ExitBootServices"
	elif grep -q '^kaslr-loader: fatal' "$seg"; then echo fatal
	elif grep -q '^kaslr-loader: early exception' "$seg"; then
		echo "exception-after-handoff($(sed -n 's/.*early exception \(vector=[0-9]*\).*/\1/p' "$seg" | head -n 1))"
	elif grep -q '!!!! X64 Exception' "$seg"; then echo "crash($(grep -o 'Exception Type - [0-9A-F]*([^)]*)' "$seg" | head -n 1 | sed 's/.*(//; s/)//'))"
	elif [ "$rc" = 124 ]; then
		if grep -q '^fault-ebs:' "$seg"; then echo "hang-after-ebs"; else echo hang; fi
	elif [ "$rc" = 0 ] && ! grep -q '^fault-done' "$seg"; then
		# -no-reboot: QEMU exits 0 when the guest resets (a triple fault)
		echo "reset"
	else echo "machine-stopped(rc=$rc)"
	fi
}

record() { # NAME OUTCOME WHY("" = pass)
	OUTCOME[$1]=$2 WHY[$1]=$3
	# also on file: a lane (below) runs in a subshell of its own
	printf '%s\t%s\t%s\n' "$1" "$2" "$(printf '%s' "$3" | tr '\t\n' '  ')" >>"$OUT/records"
	if [ -z "$3" ]; then VERDICT[$1]=ok; echo "ok $1 ($2)"
	else VERDICT[$1]=FAIL; echo "FAIL $1: $3 [outcome $2; log $OUT/$1.log]"
		tail -n 12 "$OUT/$1.log" | sed 's/^/    | /'
	fi
}

# judge a case whose fault-result line came back (the loader returned)
judge_returned() {
	local n=$1 seg=$2 res=$3 st exp=${EXPECT[$1]} why out
	st=$(rfield "$res" status)
	out="error($(status_name "$st"))"
	[ -n "$(rfield "$res" injector-error)" ] && { record "$n" injector-error "injector could not start the loader: $res"; return; }
	case $exp in
	error* | either*) why=$(judge_error "$seg" "$res" "$exp") ;;
	abandon) why=$(judge_abandon "$seg" "$res") ;;
	*) why="loader returned $(status_name "$st"), want ${exp}" ;;
	esac
	record "$n" "$out" "$why"
}

# judge_abandon SEG RESULT -> "" or why not: after ExitBootServices failed
# for good the loader returns an error with one line and calls nothing but
# GetMemoryMap and ExitBootServices (so it may not free what it holds)
judge_abandon() {
	local seg=$1 res=$2 why
	why=$(judge_reported "$seg" "$res")
	[ "$(rfield "$res" violations)" = 0 ] ||
		why="${why:+$why; }violations=$(rfield "$res" violations): $(grep -a '^fault-violation:' "$seg" | head -n 1)"
	[ "$(rfield "$res" files)" = 0 ] || why="${why:+$why; }files=$(rfield "$res" files)"
	printf '%s' "$why"
}

# judge a case that ended the boot
judge_terminal() {
	local n=$1 seg=$2 rc=$3 exp=${EXPECT[$1]} out why=
	out=$(terminal_outcome "$seg" "$rc")
	case $exp in
	boot* | either*)
		why=$(judge_boot "$seg" "$rc" "$(printf '%s' "$exp" | sed -n 's/^[a-z]*,//p')") ;;
	abandon)
		why="want an error returned after ExitBootServices failed, got $out"
		payload_line "$seg" | grep -q PASS && why="$why; the payload ran with boot services alive" ;;
	payload-fail=*)
		[ "$out" = "$exp" ] || why="outcome $out, want $exp" ;;
	error*) why="want an error returned, got $out" ;;
	esac
	record "$n" "$out" "$why"
}

# ---------------------------------------------------------------- boots
BOOTS=0 LANE=''
# run_group QEMU NAME... : as few boots as the outcomes allow
run_group() {
	local q=$1 opts=() tok rest=() n i log seg res rc started
	shift
	for tok in ${q//+/ }; do
		[ "$tok" = - ] && continue
		# tpm: a TPM 2.0 whose state lives with the logs
		[ "$tok" = tpm ] && { rm -rf "$OUT/tpm$LANE"; opts+=(--tpm "$OUT/tpm$LANE"); continue; }
		opts+=("--${tok%%:*}")
		case $tok in *:*) opts+=("${tok#*:}") ;; esac
	done
	rest=("$@")
	while [ ${#rest[@]} -gt 0 ]; do
		BOOTS=$((BOOTS + 1))
		log=$OUT/boot-$LANE$BOOTS.log
		{
			echo "_warmup :: kernel=warmup-absent.elf"
			for n in "${rest[@]}"; do echo "$n ${PLAN[$n]}"; done
		} >"$OUT/plan-$LANE$BOOTS"
		mcopy -o -i "$ESP" "$OUT/plan-$LANE$BOOTS" ::/fault.plan || { echo "run.sh: mcopy failed"; exit 1; }
		nice -n 10 test/qemu/boot.sh --log "$log" --timeout $((90 + 30 * ${#rest[@]})) \
			--idle "$IDLE" "${opts[@]}" "$ESP" 2>"$OUT/boot-$LANE$BOOTS.err"
		rc=$?
		clean_log "$log" >"$log.txt"
		if ! grep -q '^fault-plan:' "$log.txt" && [ "${retried:-}" != "$BOOTS" ]; then
			# the firmware never started the injector (a starved host): once more
			echo "(boot $BOOTS never reached the injector; again)"
			retried=$((BOOTS + 1))
			continue
		fi
		if grep -q '^fault-plan-error' "$log.txt"; then
			grep '^fault-plan-error' "$log.txt"
			for n in "${rest[@]}"; do record "$n" plan-error "the injector rejected the plan"; done
			return
		fi
		started=0 next=${#rest[@]}
		for i in "${!rest[@]}"; do
			n=${rest[$i]}
			# this case's part of the log: from its fault-begin to the next one
			awk -v n="$n" '$0 == "fault-begin: " n {on=1} on && /^fault-begin: / && $0 != "fault-begin: " n {exit} on' \
				"$log.txt" >"$OUT/$n.log"
			if [ ! -s "$OUT/$n.log" ]; then
				next=$i
				if [ "$started" = 0 ]; then
					cp "$log.txt" "$OUT/$n.log"
					record "$n" "not-started(rc=$rc)" "the injector never reached this case (boot $BOOTS)"
					next=$((i + 1))
				fi
				break
			fi
			started=1
			res=$(grep -a "^fault-result: $n " "$OUT/$n.log" | tail -n 1)
			if [ -n "$res" ]; then
				judge_returned "$n" "$OUT/$n.log" "$res"
				continue
			fi
			judge_terminal "$n" "$OUT/$n.log" "$rc"
			next=$((i + 1))
			break
		done
		rest=("${rest[@]:$next}")
	done
}

selected() { [ -z "$FILTER" ] || printf '%s\n' "$1" | grep -Eq -- "$FILTER"; }

# calls=ap:N,pool:M,... of a clean boot -> "N M"
clean_counts() {
	local ebs
	ebs=$(grep -a '^fault-ebs:' "$OUT/$1.log" 2>/dev/null | tail -n 1)
	printf '%s\n' "$ebs" | sed -n 's/.* calls=ap:\([0-9]*\),pool:\([0-9]*\),.*/\1 \2/p'
}

t0=$SECONDS
# 1. the baselines, alone (their counts size the sweeps); skipped when
# REGEX selects neither them nor a sweep
sweep=0
for probe in clean clean-gz ap-1 ap-from-1 pool-1 pool-from-1 ap-gz-1 pool-gz-1; do
	selected "$probe" && sweep=1
done
if [ "$sweep" = 1 ]; then
	run_group - clean
	run_group - clean-gz
fi

# 2. the sweeps
for base in clean clean-gz; do
	[ "$sweep" = 1 ] || break
	read -r -a counts <<<"$(clean_counts "$base")"
	set -- "${counts[@]}"
	[ $# = 2 ] || { echo "run.sh: no call counts from $base: no sweep"; continue; }
	sfx='' opt=''
	[ "$base" = clean-gz ] && sfx=-gz opt=" :: kernel=kernel.elf.gz"
	echo "sweep$sfx: the loader made $1 AllocatePages and $2 AllocatePool calls"
	for ((k = 1; k <= $1; k++)); do
		add_case "ap$sfx-$k" either:OUT_OF_RESOURCES - "ap.fail=$k$opt"
		add_case "ap$sfx-from-$k" either:OUT_OF_RESOURCES - "ap.fail=$k+$opt"
	done
	for ((k = 1; k <= $2; k++)); do
		add_case "pool$sfx-$k" either:OUT_OF_RESOURCES - "pool.fail=$k$opt"
		add_case "pool$sfx-from-$k" either:OUT_OF_RESOURCES - "pool.fail=$k+$opt"
	done
done

# 3. everything else, grouped by QEMU options, the table's order within a group
declare -A GROUP=()
declare -a GROUPS_SEEN=()
for n in "${ORDER[@]}"; do
	case $n in clean | clean-gz) continue ;; esac
	selected "$n" || continue
	q=${QOPT[$n]}
	[ -n "${GROUP[$q]+x}" ] || GROUPS_SEEN+=("$q")
	GROUP[$q]="${GROUP[$q]:-} $n"
done
# two lanes, one QEMU each, an ESP (and a TPM) of their own: the groups
# alternate between them, and the long group of the default machine ("-")
# is dealt out case by case, so that each lane gets about half the boots
declare -a LANE_Q=() LANE_N=()
for q in "${GROUPS_SEEN[@]}"; do
	read -r -a names <<<"${GROUP[$q]}"
	if [ "$q" = - ]; then
		a='' b=''
		for i in "${!names[@]}"; do
			if [ $((i % 2)) = 0 ]; then a="$a ${names[$i]}"; else b="$b ${names[$i]}"; fi
		done
		LANE_Q+=(- -) LANE_N+=("0$a" "1$b")
	else
		LANE_N+=("$((${#LANE_Q[@]} % 2)) ${names[*]}")
		LANE_Q+=("$q")
	fi
done
run_lane() { # run_lane N: lane N's groups, in a subshell of its own
	local i l names
	LANE=l$1- ESP=$OUT/esp-$1.img
	BOOTS=0
	cp "$OUT/esp.img" "$ESP"
	for i in "${!LANE_Q[@]}"; do
		read -r l names <<<"${LANE_N[$i]}"
		if [ "$l" = "$1" ] && [ -n "$names" ]; then
			# shellcheck disable=SC2086
			run_group "${LANE_Q[$i]}" $names
		fi
	done
	echo "$BOOTS" >"$OUT/boots-$1"
}
# FAULT_LANES=1: the two lanes one after the other
if [ "${FAULT_LANES:-2}" = 1 ]; then
	run_lane 0 >"$OUT/lane-0.txt" 2>&1
	run_lane 1 >"$OUT/lane-1.txt" 2>&1
else
	run_lane 0 >"$OUT/lane-0.txt" 2>&1 &
	run_lane 1 >"$OUT/lane-1.txt" 2>&1 &
	wait
fi
for lane in 0 1; do
	cat "$OUT/lane-$lane.txt"
	BOOTS=$((BOOTS + $(cat "$OUT/boots-$lane" 2>/dev/null || echo 0)))
done
# the verdicts the lanes recorded
while IFS=$'\t' read -r n o w; do
	OUTCOME[$n]=$o WHY[$n]=$w
	if [ -z "$w" ]; then VERDICT[$n]=ok; else VERDICT[$n]=FAIL; fi
done <"$OUT/records"

# ---------------------------------------------------------------- report
passed=0 failed=0
echo
printf '%-24s %-28s %-28s %s\n' case expected outcome verdict
for n in "${ORDER[@]}"; do
	[ -n "${VERDICT[$n]+x}" ] || continue
	printf '%-24s %-28s %-28s %s\n' "$n" "${EXPECT[$n]}" "${OUTCOME[$n]}" "${VERDICT[$n]}${WHY[$n]:+: ${WHY[$n]}}"
	if [ "${VERDICT[$n]}" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "($BOOTS boots, $((SECONDS - t0)) s)"
echo "fault: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
