#!/bin/sh
# run-smoke.sh - the short bounded fuzz pass of `make test`: builds the
# targets and runs each for about 12 s (about a minute in all).
# Last line: fuzz: N passed, N failed
exec "$(dirname "$0")/run.sh" "${FUZZ_SMOKE_SECONDS:-12}"
