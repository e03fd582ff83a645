#!/bin/sh
# run.sh - build mkcorpus and check_corpus (make corpus-tools: host, ASan +
# UBSan) and the payloads, write the malformed-kernel corpus into
# $BUILD/corpus/cases from the payload builds, and check every file's first
# error.  Last line:
#   corpus: N passed, N failed
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
PIE=$B/payload/kernel-pie.elf
EXEC=$B/payload/kernel-exec.elf
out=$B/corpus

fail() { echo "corpus: $*"; echo "corpus: 0 passed, 1 failed"; exit 1; }

mkdir -p "$out"
if ! make --no-print-directory BUILD="$B" corpus-tools payloads >"$out/build.txt" 2>&1; then
	tail -n 30 "$out/build.txt"
	fail "make corpus-tools payloads failed"
fi
rm -rf "$out/cases"
"$out/mkcorpus" "$out/cases" "$PIE" "$EXEC" || fail "mkcorpus failed"
"$out/check_corpus" "$out/cases" >"$out/check.txt" 2>&1
rc=$?
grep -v '^ok ' "$out/check.txt" | grep -v '^RESULT'
r=$(awk '/^RESULT/ {print $3, $4}' "$out/check.txt")
[ -n "$r" ] || { tail -n 20 "$out/check.txt"; fail "check_corpus crashed (rc=$rc)"; }
p=${r% *} f=${r#* }
[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
echo "corpus: $(find "$out/cases" -type f | wc -l) files in $out/cases"
echo "corpus: $p passed, $f failed"
[ "$f" -eq 0 ]
