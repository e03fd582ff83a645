#!/bin/bash
# check.sh - make check, the edit-compile-test loop: the build (make -j2),
# the host unit tests, shellcheck and the placement lines (test/lint.sh),
# and three boots: the native PIE test kernel (fmt-pie-gz), the
# higher-half one (fmt-high) and Debian's generic kernel to userspace
# (linux-user-generic), each at a random placement drawn from TEST_SEED
# (test/qemu/lib.sh).  Two lanes at a time: the unit tests; the boots,
# then shellcheck.  make test is the complete suite.  The last lines are
# "make check took MmSSs" and "check: N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1
B=${BUILD:-build}
out=$B/check-results
t0=$SECONDS
rm -rf "$out"; mkdir -p "$out"
BOOTS=(fmt-pie-gz fmt-high linux-user-generic)
TEST_SEED=${TEST_SEED:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}
export TEST_SEED

passed=0 failed=0
count() { # count FILE: add the "N passed, N failed" line of a step
	local l np nf
	l=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$l" ]; then failed=$((failed + 1)); return; fi
	read -r _ np _ nf _ <<<"$l"
	passed=$((passed + np)); failed=$((failed + nf))
}
took() { printf '%dm%02ds' $((($1) / 60)) $((($1) % 60)); }

echo "== build (make -j2: the image, the test kernels, the unit tests)"
if ! make --no-print-directory -j2 all unit-bins >"$out/build.txt" 2>&1; then
	tail -n 30 "$out/build.txt"
	echo "make check took $(took $((SECONDS - t0)))"
	echo "check: 0 passed, 1 failed (the build)"
	exit 1
fi
echo "(built in $(took $((SECONDS - t0))))"

echo "== unit tests | boots (TEST_SEED=$TEST_SEED) and lint, side by side"
make --no-print-directory unit >"$out/unit.txt" 2>&1 &
unit=$!
{
	for c in "${BOOTS[@]}"; do test/qemu/case.sh "$c" >"$out/boot-$c.txt" 2>&1; done
	test/lint.sh >"$out/lint.txt" 2>&1
} &
wait "$unit"
wait

grep -E '^(  |FAIL)' "$out/unit.txt" | grep -v ': 0 failed' | tail -n 40
grep -E '^unit:' "$out/unit.txt" || { tail -n 30 "$out/unit.txt"; echo "unit: 0 passed, 1 failed" >>"$out/unit.txt"; }
count "$out/unit.txt"
bp=0 bf=0
for c in "${BOOTS[@]}"; do
	if grep -q "^ok $c\\( \\|\$\\)" "$out/boot-$c.txt"; then
		grep "^ok $c" "$out/boot-$c.txt"; bp=$((bp + 1))
	else
		cat "$out/boot-$c.txt"; bf=$((bf + 1))
	fi
done
echo "boot: $bp passed, $bf failed" | tee "$out/boot.txt"
count "$out/boot.txt"
grep -v '^ok ' "$out/lint.txt" | tail -n 40
count "$out/lint.txt"

echo "make check took $(took $((SECONDS - t0)))"
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
