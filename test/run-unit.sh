#!/bin/sh
# run-unit.sh BIN... - run host unit tests; print one "unit: N passed, N failed"
# line from the RESULT lines they print (a crash counts as one failure).
p=0; f=0
for t in "$@"; do
	out=$("$t" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -v '^RESULT' | sed "s|^|  $(basename "$t"): |"
	r=$(printf '%s\n' "$out" | awk '/^RESULT/ {p+=$3; f+=$4; n++} END {if (n) print p, f}')
	if [ -z "$r" ]; then echo "  $(basename "$t"): crashed (rc=$rc)"; f=$((f+1)); continue; fi
	tp=${r% *}; tf=${r#* }
	[ "$rc" -ne 0 ] && [ "$tf" -eq 0 ] && tf=1
	echo "  $(basename "$t"): $tp passed, $tf failed"
	p=$((p+tp)); f=$((f+tf))
done
echo "unit: $p passed, $f failed"
[ "$f" -eq 0 ]
