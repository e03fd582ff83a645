#!/bin/sh
# run-smoke.sh - the short bounded fuzz pass of `make test`: builds the
# targets and runs each for about 4 s (under a minute in all; make fuzz
# runs them longer).
# Last line: fuzz: N passed, N failed
exec "$(dirname "$0")/run.sh" "${FUZZ_SMOKE_SECONDS:-4}"
