#!/bin/bash
# case.sh NAME - run one QEMU + OVMF boot test, test/qemu/cases/NAME.sh.
# The assertions are on what the payload measured about itself (its
# PASS/FAIL line and key=values), not on what the loader printed, except
# where the loader's output is the subject of the test.
#   TEST_PLACEMENT=random|lowest|highest  where the kernel lands (default
#                  random; test/qemu/lib.sh, place)
#   TEST_SEED=HEX  the seed this run's kaslr.seed= values derive from
# The last line is "ok NAME[@EDGE] (...)" or, after "FAIL NAME[@EDGE]: why"
# and the serial log's tail, "reproduce: COMMAND", which runs it again with
# the same seeds at the same placement.  Status 2: the case cannot take
# the placement asked for (its "# placement: no edge - WHY" line).
set -u
NAME=$1
f=test/qemu/cases/$NAME.sh
[ -f "$f" ] || { echo "FAIL $NAME: no such case"; exit 1; }
PLACE_KIND=$(sed -n 's/^# placement: \(edges\|random\|no edge\)\( - .*\)\{0,1\}$/\1/p' "$f")
. test/qemu/lib.sh
if [ "$PLACE_KIND" = "no edge" ] && edge; then
	echo "$NAME cannot take TEST_PLACEMENT=$TEST_PLACEMENT: $(sed -n 's/^# placement: no edge - //p' "$f")"
	exit 2
fi
echo "placement: $TEST_PLACEMENT, TEST_SEED=$CASE_SEED"
# each case file is checked on its own (test/lint.sh)
# shellcheck source=/dev/null
. "$f"
fail "case ended without a verdict"
