#!/bin/bash
# case.sh NAME - run one QEMU + OVMF boot test, test/qemu/cases/NAME.sh.
# The assertions are on what the payload measured about itself (its
# PASS/FAIL line and key=values), not on what the loader printed, except
# where the loader's output is the subject of the test.
set -u
NAME=$1
. test/qemu/lib.sh
[ -f "test/qemu/cases/$NAME.sh" ] || { echo "FAIL $NAME: no such case"; exit 1; }
# each case file is checked on its own (test/lint.sh)
# shellcheck source=/dev/null
. "test/qemu/cases/$NAME.sh"
fail "case ended without a verdict"
