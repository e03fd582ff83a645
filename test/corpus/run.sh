#!/bin/sh
# run.sh - build mkcorpus and check_corpus for the host (ASan + UBSan), write
# the malformed-kernel corpus into $BUILD/corpus/cases from the payload
# builds, and check every file's first error.  Last line:
#   corpus: N passed, N failed
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
CC=${HOSTCC:-gcc}
CFLAGS="-std=c11 -Wall -Wextra -Werror -g -O1 -fsanitize=address,undefined \
 -fno-sanitize-recover=undefined -fno-omit-frame-pointer -D_DEFAULT_SOURCE \
 -Iinclude -Itest/unit -Itest/corpus"
PIE=$B/payload/kernel-pie.elf
EXEC=$B/payload/kernel-exec.elf
out=$B/corpus

fail() { echo "corpus: $*"; echo "corpus: 0 passed, 1 failed"; exit 1; }

if [ ! -f "$PIE" ] || [ ! -f "$EXEC" ]; then
	make --no-print-directory BUILD="$B" payloads >/dev/null || fail "make payloads failed"
fi
mkdir -p "$out"
$CC $CFLAGS test/corpus/mkcorpus.c -lz -llzma -llz4 -lzstd -o "$out/mkcorpus" || fail "mkcorpus does not build"
$CC $CFLAGS test/corpus/check_corpus.c src/*.c -lz -llzma -llz4 -lzstd -o "$out/check_corpus" ||
	fail "check_corpus does not build"
rm -rf "$out/cases"
"$out/mkcorpus" "$out/cases" "$PIE" "$EXEC" || fail "mkcorpus failed"
"$out/check_corpus" "$out/cases" >"$out/check.txt" 2>&1
rc=$?
grep -v '^ok ' "$out/check.txt" | grep -v '^RESULT'
r=$(awk '/^RESULT/ {print $3, $4}' "$out/check.txt")
[ -n "$r" ] || { tail -n 20 "$out/check.txt"; fail "check_corpus crashed (rc=$rc)"; }
p=${r% *} f=${r#* }
[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
echo "corpus: $(ls "$out/cases" | wc -l) files in $out/cases"
echo "corpus: $p passed, $f failed"
[ "$f" -eq 0 ]
