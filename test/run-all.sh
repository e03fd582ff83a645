#!/bin/bash
# run-all.sh - every test tier; the last line is "N passed, N failed".
#   tier 0: shellcheck over every shell script (test/lint.sh)
#   tier 1: host unit tests (ASan + UBSan)
#   tier 2: fuzz targets, a short bounded pass
#   tier 3: QEMU + OVMF boots, two at a time
#   tier 4: firmware fault injection (test/fault: every case of the plan)
#   tier 5: the compatibility matrix's fast cells (test/matrix; make
#           test-matrix runs them all)
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

count() { # count FILE: add the "N passed, N failed" line of a tier
	local l np nf
	l=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$l" ]; then failed=$((failed + 1)); return; fi
	read -r _ np _ nf _ <<<"$l"
	passed=$((passed + np)); failed=$((failed + nf))
}

echo "== tier 0: shellcheck"
test/lint.sh >"$out/lint.txt" 2>&1
grep -v '^ok ' "$out/lint.txt" | tail -n 40
count "$out/lint.txt"

echo "== tier 1: host unit tests"
make --no-print-directory unit >"$out/unit.txt" 2>&1
grep -E '^(  |unit:|FAIL)' "$out/unit.txt" | grep -v ': 0 failed' | tail -n 40
grep -E '^unit:' "$out/unit.txt" || { tail -n 30 "$out/unit.txt"; echo "unit: 0 passed, 1 failed" >>"$out/unit.txt"; }
count "$out/unit.txt"

echo "== tier 1b: malformed-kernel corpus"
test/corpus/run.sh >"$out/corpus.txt" 2>&1
tail -n 3 "$out/corpus.txt"
count "$out/corpus.txt"

echo "== tier 1c: make install (host)"
test/install/run.sh >"$out/install.txt" 2>&1
tail -n 3 "$out/install.txt"
count "$out/install.txt"

echo "== tier 1d: make deb, dpkg in a root of its own, the kernel hooks (host)"
test/install/deb.sh >"$out/deb.txt" 2>&1
grep -v '^ok ' "$out/deb.txt" | tail -n 8
count "$out/deb.txt"

if [ -x test/fuzz/run-smoke.sh ]; then
	echo "== tier 2: fuzz smoke"
	test/fuzz/run-smoke.sh >"$out/fuzz.txt" 2>&1
	tail -n 12 "$out/fuzz.txt"
	count "$out/fuzz.txt"
fi

echo "== bench smoke (make bench runs; no numbers asserted)"
test/bench/smoke.sh >"$out/bench.txt" 2>&1
tail -n 2 "$out/bench.txt"
count "$out/bench.txt"

echo "== tier 3: QEMU + OVMF boots"
mapfile -t cases < <(test/qemu/cases.list)
# two at a time; $1 (the case) and $2 (the output directory) are the inner
# sh's arguments, expanded there (SC2016)
# shellcheck disable=SC2016
printf '%s\n' "${cases[@]}" |
	xargs -P 2 -I{} sh -c 'test/qemu/case.sh "$1" >"$2/boot-$1.txt" 2>&1' sh {} "$out"
bp=0 bf=0
for c in "${cases[@]}"; do
	r=$out/boot-$c.txt
	if grep -q "^ok $c" "$r"; then
		grep "^ok $c" "$r"; bp=$((bp + 1))
	else
		cat "$r"; bf=$((bf + 1))
	fi
done
echo "boot: $bp passed, $bf failed" | tee "$out/boot.txt"
count "$out/boot.txt"

echo "== tier 4: firmware fault injection"
if make --no-print-directory fault-build >"$out/fault.txt" 2>&1; then
	test/fault/run.sh >>"$out/fault.txt" 2>&1
else
	echo "fault: 0 passed, 1 failed (make fault-build failed)" >>"$out/fault.txt"
fi
grep -E '^(FAIL|    \|)' "$out/fault.txt" | tail -n 40
grep -E '^\([0-9]+ boots' "$out/fault.txt"
tail -n 1 "$out/fault.txt"
count "$out/fault.txt"

echo "== tier 5: compatibility matrix (fast cells)"
test/matrix/run.sh --fast >"$out/matrix.txt" 2>&1
grep -v '^ok ' "$out/matrix.txt" | tail -n 20
count "$out/matrix.txt"

echo "== tier 6: placement sweeps (kaslr-sweep)"
test/sweep/run.sh >"$out/sweep.txt" 2>&1
grep -E '^(FAIL|sweep:|planted bug: random)' "$out/sweep.txt" | tail -n 20
count "$out/sweep.txt"

echo "== tier 7: kernel configurations (derived from Debian's kernel)"
test/kconfig/run.sh --quick >"$out/kconfig.txt" 2>&1
grep -E '^(FAIL|kconfig:)' "$out/kconfig.txt" | tail -n 20
count "$out/kconfig.txt"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
