# tally.sh - sourced by the standalone test scripts: counts checks and
# prints the one summary line run-all.sh adds up.
#   ok NAME            a check passed
#   bad NAME [WHY]     a check failed, with the reason on the same line
#   tally_end TIER     "TIER: N passed, N failed"; exits 0 only if none failed
# shellcheck shell=bash
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
tally_end() { echo "$1: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }
