#!/bin/bash
# run-all.sh - every test tier; after each its duration, then "make test
# took ..." and the last line "N passed, N failed".
#   tier 0: shellcheck over every shell script, the boot cases' placement
#           lines (test/lint.sh)
#   tier 0b: the documentation (test/doc: man pages, kaslr.conf(5)'s
#           tables against the code, README's targets and citations, its
#           quick start in a fresh clone)
#   tier 1: host unit tests (ASan + UBSan)
#   tier 2: fuzz targets, a short bounded pass
#   tier 3: QEMU + OVMF boots, two at a time: every case at random, the
#           cases whose checks depend on where the kernel lands at both
#           edges too; TEST_SEED (printed) derives every kaslr.seed=
#   tier 4: firmware fault injection (test/fault: every case of the plan);
#           its boots run beside tiers 0-2, which leave a core idle
#   tier 5: the compatibility matrix's fast cells, two at a time
#           (test/matrix; make test-matrix runs them all)
#   tier 6: placement sweeps with build/tools/kaslr-sweep (test/sweep)
#   tier 7: kernel configurations the loader refused before, made from
#           Debian's kernel (test/kconfig --quick; make test-kconfig builds
#           and sweeps them all)
set -u
cd "$(dirname "$0")/.." || exit 1
B=${BUILD:-build}
passed=0 failed=0
out=$B/test-results
rm -rf "$out"; mkdir -p "$out"

# took: how long the tier begun at $t0 took, and the next tier begins
t_all=$SECONDS t0=$SECONDS
took() {
	local d=$((SECONDS - t0))
	printf '(took %dm%02ds)\n' $((d / 60)) $((d % 60))
	t0=$SECONDS
}

count() { # count FILE: add the "N passed, N failed" line of a tier
	local l np nf
	l=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$l" ]; then failed=$((failed + 1)); return; fi
	read -r _ np _ nf _ <<<"$l"
	passed=$((passed + np)); failed=$((failed + nf))
}

# tier TITLE NAME LINES COMMAND...: COMMAND's output into $out/NAME.txt,
# its last LINES lines other than "ok ..." shown, its tally added, its
# duration printed
tier() {
	local title=$1 name=$2 n=$3
	shift 3
	echo "== $title"
	"$@" >"$out/$name.txt" 2>&1
	grep -v '^ok ' "$out/$name.txt" | tail -n "$n"
	count "$out/$name.txt"
	took
}

# tier 4's boots (one QEMU at a time, the injector's plan in order) run
# beside the host tiers 0-2, which are mostly one process each and would
# leave the second core idle; its report comes in its place below
fault_tier() {
	local t=$SECONDS
	if make --no-print-directory fault-build >"$out/fault.txt" 2>&1; then
		test/fault/run.sh >>"$out/fault.txt" 2>&1
	else
		echo "fault: 0 passed, 1 failed (make fault-build failed)" >>"$out/fault.txt"
	fi
	echo "(the fault tier itself: $((SECONDS - t)) s)" >"$out/fault-took.txt"
}
fault_tier &
fault_pid=$!

tier "tier 0: shellcheck" lint 40 test/lint.sh

tier "tier 0b: documentation" doc 20 test/doc/run.sh

echo "== tier 1: host unit tests"
make --no-print-directory unit >"$out/unit.txt" 2>&1
grep -E '^(  |unit:|FAIL)' "$out/unit.txt" | grep -v ': 0 failed' | tail -n 40
grep -E '^unit:' "$out/unit.txt" || { tail -n 30 "$out/unit.txt"; echo "unit: 0 passed, 1 failed" >>"$out/unit.txt"; }
count "$out/unit.txt"
took

echo "== tier 1b: malformed-kernel corpus"
test/corpus/run.sh >"$out/corpus.txt" 2>&1
tail -n 3 "$out/corpus.txt"
count "$out/corpus.txt"
took

echo "== tier 1c: make install (host)"
test/install/run.sh >"$out/install.txt" 2>&1
tail -n 3 "$out/install.txt"
count "$out/install.txt"
took

tier "tier 1d: make deb, dpkg in a root of its own, the kernel hooks (host)" deb 8 test/install/deb.sh

tier "tier 1e: the install commit under failures and power cuts (host)" commit 8 test/install/commit.sh

tier "tier 1f: the kernel hooks against a hostile ESP, TRUST=shim's kernels (host)" hooks 8 test/install/hooks.sh

tier "tier 1g: SEAL= resealing with clevis and a software TPM (host)" reseal 8 test/install/reseal.sh

if [ -x test/fuzz/run-smoke.sh ]; then
	echo "== tier 2: fuzz smoke"
	test/fuzz/run-smoke.sh >"$out/fuzz.txt" 2>&1
	tail -n 12 "$out/fuzz.txt"
	count "$out/fuzz.txt"
	took
fi

echo "== bench smoke (make bench runs; no numbers asserted)"
test/bench/smoke.sh >"$out/bench.txt" 2>&1
tail -n 2 "$out/bench.txt"
count "$out/bench.txt"
took

echo "== tier 3: QEMU + OVMF boots"
# every case at random, and the cases whose checks depend on where the
# kernel lands at both edges as well (test/qemu/cases.list --edges); every
# boot's kaslr.seed= derives from TEST_SEED (test/qemu/lib.sh, place), so
# TEST_SEED=... make test boots the same draws again
TEST_SEED=${TEST_SEED:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}
export TEST_SEED
echo "TEST_SEED=$TEST_SEED"
# "NAME PLACEMENT" lines, the long ones first (Linux, the multi-boot
# cases) so that the two parallel lanes finish together
mapfile -t jobs < <({ test/qemu/cases.list | sed 's/$/ random/'; test/qemu/cases.list --edges; } |
	awk '/^(bases|multi|linux|fmt-linux|tsc-stutter|fgk-shuffle)/ {print 0, $0; next} {print 1, $0}' |
	sort -s -k1,1n | cut -d' ' -f2-)
# two at a time; $1 (the output directory), $2 (the case) and $3 (the
# placement) are the inner sh's arguments, expanded there (SC2016)
# shellcheck disable=SC2016
printf '%s\n' "${jobs[@]}" |
	xargs -P 2 -L 1 sh -c 'l=$2; [ "$3" = random ] || l=$2@$3
		TEST_PLACEMENT=$3 test/qemu/case.sh "$2" >"$1/boot-$l.txt" 2>&1' sh "$out"
bp=0 bf=0 edges=0
for j in "${jobs[@]}"; do
	read -r c p <<<"$j"
	l=$c
	[ "$p" = random ] || { l=$c@$p; edges=$((edges + 1)); }
	r=$out/boot-$l.txt
	if grep -q "^ok $l\( \|\$\)" "$r"; then
		grep "^ok $l" "$r"; bp=$((bp + 1))
	else
		cat "$r"; bf=$((bf + 1))
	fi
done
echo "($(test/qemu/cases.list | wc -l) cases at random, $((edges / 2)) of them at both edges too: $edges edge runs)"
echo "boot: $bp passed, $bf failed" | tee "$out/boot.txt"
count "$out/boot.txt"
took

echo "== tier 4: firmware fault injection (ran beside tiers 0-2)"
wait "$fault_pid"
grep -E '^(FAIL|    \|)' "$out/fault.txt" | tail -n 40
grep -E '^\([0-9]+ boots' "$out/fault.txt"
cat "$out/fault-took.txt"
tail -n 1 "$out/fault.txt"
count "$out/fault.txt"
took

tier "tier 5: compatibility matrix (fast cells)" matrix 20 env MATRIX_JOBS=2 test/matrix/run.sh --fast

echo "== tier 6: placement sweeps (kaslr-sweep)"
test/sweep/run.sh >"$out/sweep.txt" 2>&1
grep -E '^(FAIL|sweep:|planted bug: random)' "$out/sweep.txt" | tail -n 20
count "$out/sweep.txt"
took

echo "== tier 7: kernel configurations (derived from Debian's kernel)"
test/kconfig/run.sh --quick >"$out/kconfig.txt" 2>&1
grep -E '^(FAIL|kconfig:)' "$out/kconfig.txt" | tail -n 20
count "$out/kconfig.txt"
took

d=$((SECONDS - t_all))
printf 'make test took %dm%02ds\n' $((d / 60)) $((d % 60))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
