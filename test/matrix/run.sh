#!/bin/bash
# run.sh [--fast] [REGEX] - the compatibility matrix: every cell of
# test/matrix/cells (with --fast those marked 1; with REGEX those whose name
# matches), one QEMU + OVMF boot each, MATRIX_JOBS at a time (default 1).
# Prints "ok CELL (...) [Ns]" or "FAIL CELL: why [Ns]" per cell, a table
# of cell x outcome with durations, and "matrix: N passed, N failed".
#   run.sh --cell NAME   one cell only (what the parallel lanes run)
# Logs: build/matrix/.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
OUT=$B/matrix
mkdir -p "$OUT"
# the cells are machines as sold, many without a TPM: no TPM device
# (test/qemu/boot.sh gives other boots a TPM 1.2 for the firmware's probe)
export BOOT_NO_TPM=1

# cell NAME -> "FAST KERNEL CHECKS OPTIONS..." from the table
cell_line() { awk -v n="$1" '$1 == n {$1 = ""; sub(/^ /, ""); print; exit}' test/matrix/cells; }

if [ "${1:-}" = --cell ]; then
	NAME=$2
	. test/qemu/lib.sh
	WORK=$OUT
	# shellcheck disable=SC2046
	set -- $(cell_line "$NAME")
	[ $# -ge 3 ] || fail "no cell $NAME in test/matrix/cells"
	kernel=$2 checks=$3
	shift 3
	# @RAM@: a file for guest RAM (see cells), gone when the cell ends
	ram=$OUT/$NAME.ram
	set -- "${@//@RAM@/$ram}"
	t0=$SECONDS
	trap 'rm -f "$ram"; echo "[$((SECONDS - t0))s]"' EXIT
	if [ "$kernel" = linux ]; then
		. test/linux/lib.sh
		# no extra kaslr.conf lines for the matrix's Linux cells
		# shellcheck disable=SC2119
		linux_esp
		linux_boot "$@"
		ok "phys=$LX_PHYS offset=$LX_VOFF e820=$LX_E820 entries; sources:$LX_RNG"
	fi
	boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")" --timeout 300 --idle 120 "$@"
	expect_pass
	[ "$checks" = - ] && checks=
	for c in ${checks//,/ }; do
		case $c in
		*!=*) k=${c%%!=*} want=${c#*!=}; got=$(kv "$LINE" "$k"); [ "$got" != "$want" ] || fail "$k=$got" ;;
		*'>'*) k=${c%%>*} want=${c#*>}; got=$(kv "$LINE" "$k"); [ "${got:-0}" -gt "$want" ] || fail "$k=$got, want more than $want" ;;
		*'<'*) k=${c%%<*} want=${c#*<}; got=$(kv "$LINE" "$k"); [ "${got:-0}" -lt "$want" ] || fail "$k=$got, want fewer than $want" ;;
		*=*) k=${c%%=*} want=${c#*=}; got=$(kv "$LINE" "$k"); [ "$got" = "$want" ] || fail "$k=$got, want $want" ;;
		esac
	done
	ok "slots=$(kv "$LINE" slots) rng=$(kv "$LINE" rng) weak=$(kv "$LINE" weak) phys=$(kv "$LINE" phys)"
fi

fast=0
[ "${1:-}" = --fast ] && { fast=1; shift; }
FILTER=${1:-}
JOBS=${MATRIX_JOBS:-1}
cells=$(awk -v fast=$fast '!/^#/ && NF >= 4 && (!fast || $2 == 1) {print $1}' test/matrix/cells)
if [ -n "$FILTER" ]; then
	# shellcheck disable=SC2086 # cells is a list of words
	cells=$(printf '%s\n' $cells | grep -E -- "$FILTER")
fi
[ -n "$cells" ] || { echo "run.sh: no cell selected"; echo "matrix: 0 passed, 1 failed"; exit 1; }

t0=$SECONDS
# shellcheck disable=SC2086 # cells is a list of words
printf '%s\n' $cells | xargs -P "$JOBS" -I{} sh -c \
	'nice -n 10 test/matrix/run.sh --cell {} >'"$OUT"'/{}.txt 2>&1; grep -E "^(ok|FAIL) {}" '"$OUT"'/{}.txt | head -n 1'

passed=0 failed=0
echo
printf '%-18s %-6s %-6s %-8s %s\n' cell kernel fast seconds outcome
for c in $cells; do
	r=$OUT/$c.txt
	read -r -a fields <<<"$(cell_line "$c")"
	set -- "${fields[@]}"
	secs=$(sed -n 's/^\[\([0-9]*\)s\]$/\1/p' "$r" | tail -n 1)
	if grep -q "^ok $c" "$r"; then
		passed=$((passed + 1)); v=$(grep "^ok $c" "$r" | head -n 1 | sed "s/^ok $c //")
		v="ok $v"
	else
		failed=$((failed + 1)); v=$(grep "^FAIL $c" "$r" | head -n 1 | sed "s/^FAIL $c: //")
		v="FAIL ${v:-no verdict (see $r)}"
	fi
	printf '%-18s %-6s %-6s %-8s %s\n' "$c" "$2" "$1" "${secs:-?}" "$v"
done
# shellcheck disable=SC2086 # cells is a list of words
echo "(matrix: $((SECONDS - t0)) s for $(printf '%s\n' $cells | wc -l) cells, $JOBS at a time)"
echo "matrix: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
