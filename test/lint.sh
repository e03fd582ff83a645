#!/bin/bash
# lint.sh - shellcheck over every shell script of the repository: each *.sh
# (the sourced ones included) and each other file whose first line is a sh,
# bash, dash or ksh shebang, found anew on every run, so a new script is
# checked without being listed anywhere.  Sourced files are followed (-x).
# One "ok FILE" / "FAIL FILE" line (then shellcheck's findings) per script;
# then the boot cases' placement lines (test/qemu/lint-placement.sh); the
# last line is "lint: N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 1

if ! command -v shellcheck >/dev/null; then
	echo "lint: shellcheck missing (Debian package shellcheck: make deps)"
	echo "lint: 0 passed, 1 failed"
	exit 1
fi

# every file of the tree: git's list (tracked, and untracked but not
# ignored) in a checkout, else all files outside .git and build directories
files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files --cached --others --exclude-standard
	else
		find . -path ./.git -prune -o -path './build*' -prune -o -type f -print |
			sed 's|^\./||'
	fi
}

# is_script FILE: NAME.sh, or a first line that runs sh, bash, dash or ksh
# (read by the shell itself: a head and a grep for each of some 400 files,
# twice, were a third of this tier's time)
shebang='^#! *[^ ]*/(env +)?(ba|da|k)?sh( |$)'
is_script() {
	local first=''
	case $1 in *.sh) return 0 ;; esac
	IFS= read -r -n 200 first <"$1" 2>/dev/null
	[[ $first =~ $shebang ]]
}

scripts=()
while IFS= read -r f; do
	[ -f "$f" ] && is_script "$f" && scripts+=("$f")
done < <(files | sort -u)

# one run over them all (its -f gcc lines start with the file's name); a
# file with findings is checked again alone, for them in the usual format
passed=0 failed=0
all=$(shellcheck -x -f gcc -- "${scripts[@]}" 2>&1)
rc=$?
declare -A flagged=()
while IFS= read -r l; do
	[ -n "$l" ] && flagged[${l%%:*}]=1
done <<<"$all"
for f in "${scripts[@]}"; do
	if [ -n "${flagged[$f]:-}" ]; then
		echo "FAIL $f"
		shellcheck -x "$f" 2>&1 | sed 's/^/    /'
		failed=$((failed + 1))
	else
		echo "ok $f"
		passed=$((passed + 1))
	fi
done
# findings for no file of the list (shellcheck itself failing)
if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
	echo "FAIL shellcheck: exit $rc"
	printf '%s\n' "$all" | head -n 20 | sed 's/^/    /'
	failed=$((failed + 1))
fi

# objcopy writes its output through a temporary file that it renames over the
# target when the target resolves to a regular file: handed /dev/stdout (or
# /dev/stderr) by root while that stream is a file, it deletes the device
# link and leaves a regular file in its place, breaking /dev/stdout for every
# later program on the machine.  No script may name a /dev path as objcopy's
# output.
if hits=$(grep -HnE '^[^#]*\<objcopy[[:space:]][^|;#]*[[:space:]]/dev/std(out|err)\>' -- "${scripts[@]}") && [ -n "$hits" ]; then
	echo "FAIL objcopy-dev-output: a standard stream's /dev link named as an objcopy output"
	printf '%s\n' "$hits" | sed 's/^/    /'
	failed=$((failed + 1))
else
	echo "ok objcopy-dev-output"
	passed=$((passed + 1))
fi

# every boot case says where make test boots it, and honours TEST_PLACEMENT
# unless it says why it cannot (test/qemu/lint-placement.sh)
out=$(test/qemu/lint-placement.sh)
grep -v '^ok ' <<<"$out"
p=$(grep -c '^ok ' <<<"$out") f=$(grep -c '^FAIL ' <<<"$out")
passed=$((passed + p)) failed=$((failed + f))
# and that check fails on a case that does neither, planted in a directory
# of its own
planted=$(mktemp -d)
# shellcheck disable=SC2016 # the planted case's own text
printf '%s\n' '# planted - boots at random with no word on its placement' \
	'boot_payload "$(mkesp "$NAME" "$P/kernel-pie.elf")"' >"$planted/planted.sh"
if test/qemu/lint-placement.sh "$planted" | grep -q '^FAIL placement planted: no .# placement:'; then
	echo "ok placement: a planted case with no placement line fails"
	passed=$((passed + 1))
else
	echo "FAIL placement: a planted case with no placement line passes"
	failed=$((failed + 1))
fi
rm -rf "$planted"
echo "lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
