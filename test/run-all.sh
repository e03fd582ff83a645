#!/bin/bash
# run-all.sh - every test tier.  All their work runs as jobs in a pool of
# TEST_JOBS (default: one more than the CPUs) at a time, the longest
# first, so that every core stays busy to the end; then each tier's
# report in tier order with its time, "make test took ...", and the
# last line "N passed, N failed".
#   tier 0: shellcheck over every shell script, the boot cases' placement
#           lines (test/lint.sh)
#   tier 0b: the documentation (test/doc: man pages, kaslr.conf(5)'s
#           tables against the code, README's targets and citations, its
#           quick start in a fresh clone)
#   tier 1: host unit tests (ASan + UBSan); 1b-1g: the malformed-kernel
#           corpus, make install, make deb, the install commit, the hooks,
#           SEAL= resealing
#   tier 2: fuzz targets, a short bounded pass; a quick make bench
#   tier 3: QEMU + OVMF boots, one job each: every case at random, the
#           cases whose checks depend on where the kernel lands at both
#           edges too; TEST_SEED (printed) derives every kaslr.seed=
#   tier 4: firmware fault injection (test/fault: every case of the plan)
#   tier 5: the compatibility matrix's fast cells (test/matrix; make
#           test-matrix runs them all)
#   tier 6: placement sweeps with build/tools/kaslr-sweep (test/sweep)
#   tier 7: kernel configurations the loader refused before, made from
#           Debian's kernel (test/kconfig --quick; make test-kconfig builds
#           and sweeps them all)
# run-all.sh --job NAME runs one job (what the pool calls): its output
# into build/test-results/NAME.txt, its seconds into NAME.took.
set -u
self=$(realpath "$0")
cd "$(dirname "$0")/.." || exit 1
B=${BUILD:-build}
out=$B/test-results

if [ "${1:-}" = --job ]; then
	name=$2 t=$SECONDS
	case $name in
	lint) test/lint.sh ;;
	doc) test/doc/run.sh ;;
	unit) make --no-print-directory unit ;;
	corpus) test/corpus/run.sh ;;
	install) test/install/run.sh ;;
	deb) test/install/deb.sh ;;
	commit) test/install/commit.sh ;;
	hooks) test/install/hooks.sh ;;
	reseal) test/install/reseal.sh ;;
	fuzz) test/fuzz/run-smoke.sh ;;
	bench) test/bench/smoke.sh ;;
	# the fault tier, the longest job, runs its two lanes side by side
	# (else it is the last job running), on the 2 MiB firmware build as
	# the other plain boots do (0.6 CPU-seconds a boot less than the 4 MiB
	# one).  Its memory-map check holds there since the boots have a TPM
	# 1.2: with no TPM device that build's pool took pages for itself at
	# calls its warm-up run did not absorb (a free range 7 pages shorter
	# after ap-6, the loader's own pages all returned)
	fault) test/fault/run.sh ;;
	# the pool is the parallelism: the other tiers that run lanes of their
	# own run one here; the matrix's cells boot Debian's default 4 MiB
	# firmware builds
	matrix) BOOT_PLAIN_VARS='' MATRIX_JOBS=1 test/matrix/run.sh --fast ;;
	sweep) SWEEP_JOBS=1 test/sweep/run.sh ;;
	kconfig) KCONFIG_JOBS=1 test/kconfig/run.sh --quick ;;
	boot-*@*) c=${name#boot-} && TEST_PLACEMENT=${c#*@} test/qemu/case.sh "${c%@*}" ;;
	boot-*) TEST_PLACEMENT=random test/qemu/case.sh "${name#boot-}" ;;
	*) echo "run-all.sh: no job $name"; false ;;
	esac >"$out/$name.txt" 2>&1
	echo $((SECONDS - t)) >"$out/$name.took"
	# and the CPU seconds it and its children used (user + system)
	# (times itself, not in a pipe: a subshell would count its own)
	times >"$out/$name.cpu"
	awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%d\n", n }' \
		"$out/$name.cpu" >"$out/$name.cpu.n" && mv "$out/$name.cpu.n" "$out/$name.cpu"
	# the host and slow tiers say when they are done (a boot says nothing
	# until the end: there are about 130)
	case $name in boot-*) ;; *) echo "  ($name done after $((SECONDS - t)) s)" ;; esac
	exit 0
fi

passed=0 failed=0
rm -rf "$out"; mkdir -p "$out"
t_all=$SECONDS

TEST_SEED=${TEST_SEED:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}
export TEST_SEED
echo "TEST_SEED=$TEST_SEED (TEST_SEED=... make test boots the same draws again)"

# the plain boots (no Secure Boot, no kept store) start from a store the
# 2 MiB firmware build has booted with once (test/qemu/boot.sh says why)
mkdir -p "$B/qemu"
if test/qemu/plain-vars.sh "$B/qemu/plain-vars.fd"; then
	BOOT_PLAIN_VARS=$(realpath "$B/qemu/plain-vars.fd") && export BOOT_PLAIN_VARS
else
	echo "(every boot starts from the 4 MiB firmware's own template)"
fi

# the boots: "CASE" at random, "CASE@EDGE" for the cases whose checks
# depend on where the kernel lands (test/qemu/cases.list --edges)
mapfile -t boots < <(test/qemu/cases.list | sed 's/^/boot-/'
	test/qemu/cases.list --edges | sed 's/^\(.*\) \(.*\)$/boot-\1@\2/')
# the order the pool takes them in, longest first (list scheduling: what
# is left at the end is short, so both lanes end about together): the
# fault tier (about 75 boots), the multi-boot and Linux cases, the host
# tiers by their usual length, then every other boot
long='^boot-(bases|multi|linux|fmt-linux|tsc-stutter|fgk-shuffle|shim|uki|seed-planted|starved|sha256|modules|small-8G)'
jobs=(fault)
for j in "${boots[@]}"; do [[ $j =~ $long ]] && jobs+=("$j"); done
jobs+=(commit fuzz deb sweep lint kconfig doc matrix install unit hooks reseal corpus bench)
for j in "${boots[@]}"; do [[ $j =~ $long ]] || jobs+=("$j"); done
# one job more than the CPUs: a boot leaves its CPU idle while the guest
# waits on a timer and the firmware on QEMU's I/O thread (two jobs kept 1.5
# of 2 cores busy)
TEST_JOBS=${TEST_JOBS:-$(($(nproc) + 1))}
echo "== ${#jobs[@]} jobs, $TEST_JOBS at a time"
printf '%s\n' "${jobs[@]}" | xargs -P "$TEST_JOBS" -n 1 "$self" --job

count() { # count FILE: add the "N passed, N failed" line of a tier
	local l np nf
	l=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$l" ]; then failed=$((failed + 1)); return; fi
	read -r _ np _ nf _ <<<"$l"
	passed=$((passed + np)); failed=$((failed + nf))
}
took() { # took NAME: the job's own time
	local d
	d=$(cat "$out/$1.took" 2>/dev/null || echo 0)
	printf '(took %dm%02ds)\n' $((d / 60)) $((d % 60))
}
# tier TITLE NAME LINES: the job's last LINES lines other than "ok ...",
# its tally, its time
tier() {
	echo "== $1"
	grep -v '^ok ' "$out/$2.txt" | tail -n "$3"
	count "$out/$2.txt"
	took "$2"
}

tier "tier 0: shellcheck" lint 40
tier "tier 0b: documentation" doc 20

echo "== tier 1: host unit tests"
grep -E '^(  |unit:|FAIL)' "$out/unit.txt" | grep -v ': 0 failed' | tail -n 40
grep -E '^unit:' "$out/unit.txt" || { tail -n 30 "$out/unit.txt"; echo "unit: 0 passed, 1 failed" >>"$out/unit.txt"; }
count "$out/unit.txt"
took unit

tier "tier 1b: malformed-kernel corpus" corpus 3
tier "tier 1c: make install (host)" install 3
tier "tier 1d: make deb, dpkg in a root of its own, the kernel hooks (host)" deb 8
tier "tier 1e: the install commit under failures and power cuts (host)" commit 8
tier "tier 1f: the kernel hooks against a hostile ESP, TRUST=shim's kernels (host)" hooks 8
tier "tier 1g: SEAL= resealing with clevis and a software TPM (host)" reseal 8
tier "tier 2: fuzz smoke" fuzz 12
tier "bench smoke (make bench runs; no numbers asserted)" bench 2

echo "== tier 3: QEMU + OVMF boots"
bp=0 bf=0 edges=0 bt=0
for j in "${boots[@]}"; do
	l=${j#boot-}
	[[ $l == *@* ]] && edges=$((edges + 1))
	r=$out/$j.txt
	if grep -q "^ok $l\( \|\$\)" "$r"; then
		grep "^ok $l" "$r"; bp=$((bp + 1))
	else
		cat "$r"; bf=$((bf + 1))
	fi
	bt=$((bt + $(cat "$out/$j.took" 2>/dev/null || echo 0)))
done
echo "($(test/qemu/cases.list | wc -l) cases at random, $((edges / 2)) of them at both edges too: $edges edge runs)"
echo "boot: $bp passed, $bf failed" | tee "$out/boot.txt"
count "$out/boot.txt"
printf '(%d runs, %dm%02ds of boot time in all)\n' ${#boots[@]} $((bt / 60)) $((bt % 60))

echo "== tier 4: firmware fault injection"
grep -E '^(FAIL|    \|)' "$out/fault.txt" | tail -n 40
grep -E '^\([0-9]+ boots' "$out/fault.txt"
tail -n 1 "$out/fault.txt"
count "$out/fault.txt"
took fault

tier "tier 5: compatibility matrix (fast cells)" matrix 20

echo "== tier 6: placement sweeps (kaslr-sweep)"
grep -E '^(FAIL|sweep:|planted bug: random)' "$out/sweep.txt" | tail -n 20
count "$out/sweep.txt"
took sweep

echo "== tier 7: kernel configurations (derived from Debian's kernel)"
grep -E '^(FAIL|kconfig:)' "$out/kconfig.txt" | tail -n 20
count "$out/kconfig.txt"
took kconfig

d=$((SECONDS - t_all))
printf 'make test took %dm%02ds\n' $((d / 60)) $((d % 60))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
