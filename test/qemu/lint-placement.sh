#!/bin/bash
# lint-placement.sh [DIR] - every boot case (DIR/*.sh, default
# test/qemu/cases) says in exactly one line of a fixed form where make test
# boots it:
#   # placement: edges           at random and at both edges (TEST_PLACEMENT)
#   # placement: random - WHY    at random only, WHY not at the edges; it
#                                honours TEST_PLACEMENT all the same
#   # placement: no edge - WHY   it cannot take a forced edge, WHY
# and a case of the first two kinds honours TEST_PLACEMENT: it calls place
# (test/qemu/lib.sh) on a line of its own, outside a comment, so that its
# boots get place's options.  A "no edge" case does not call place (its
# boots are the loader's own draws, or placed by the case itself).
# One "ok placement NAME" or "FAIL placement NAME: why" line per case; the
# last line is "placement: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
dir=${1:-test/qemu/cases}
passed=0 failed=0
for f in "$dir"/*.sh; do
	n=$(basename "$f" .sh)
	lines=$(grep -c '^# placement:' "$f")
	kind=$(sed -n 's/^# placement: \(edges\|random\|no edge\)\( - ..*\)\{0,1\}$/\1/p' "$f")
	why=''
	calls=$(grep -cE '^[[:space:]]*place[[:space:]]*$' "$f")
	if [ "$lines" = 0 ]; then
		why="no '# placement: edges|random - WHY|no edge - WHY' line"
	elif [ "$lines" != 1 ]; then
		why="$lines '# placement:' lines, want one"
	elif [ -z "$kind" ]; then
		why="'$(grep '^# placement:' "$f")' is not 'edges', 'random - WHY' or 'no edge - WHY'"
	elif [ "$kind" != edges ] && ! grep -qE "^# placement: $kind - ..*\$" "$f"; then
		why="'$kind' without ' - WHY'"
	elif [ "$kind" != "no edge" ] && [ "$calls" = 0 ]; then
		why="'$kind' but it does not honour TEST_PLACEMENT: no line calls place"
	elif [ "$kind" = "no edge" ] && [ "$calls" != 0 ]; then
		why="'no edge' but it calls place (its boots would be placed by TEST_PLACEMENT)"
	fi
	if [ -n "$why" ]; then
		echo "FAIL placement $n: $why"
		failed=$((failed + 1))
	else
		echo "ok placement $n ($kind)"
		passed=$((passed + 1))
	fi
done
echo "placement: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
