#!/bin/bash
# run.sh - the documentation tier: what the documents say is checked
# against the tree and the code.
#   man pages    every page of docs/man/ renders without a warning, under
#                mandoc -T lint -W warning and groff -ww (-t -man, for the
#                terminal and the default device); no output at all
#   tables       kaslr.conf(5)'s option, Secure Boot and settings tables
#                are what build/tools/kaslr-policy prints from the code's
#                own tables (test/doc/tables.sh)
#   README       at most 250 lines, `make run` and `make test` as commands
#                in its first 60; every make target it names exists
#                (`make -n TARGET` succeeds)
#   citations    no document (README, docs/, include/PROTOCOL.md) cites a
#                repository file that does not exist, nor a kaslr man page
#                that docs/man/ does not hold
#   quick start  README's quick-start commands run as shown in a fresh
#                clone of the committed tree (git clone HEAD into a
#                temporary directory): `make run` builds everything there
#                and boots once, and must end with the test kernel's own
#                "payload: PASS" report; `make test` is this very suite, so
#                only `make -n test` is checked.  MAKEFLAGS=-j2 for the
#                build.  DOC_CLONE=0 skips this part (a SKIP line, counted
#                neither way); make test never sets it.
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "doc: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
# shellcheck source=test/tally.sh
. test/tally.sh
W=$B/doc
rm -rf "$W"
mkdir -p "$W"

# ---------------------------------------------------------------- man pages
pages=(docs/man/*.[1-8])
[ -e "${pages[0]}" ] || bad man-pages "no page in docs/man/"
for p in "${pages[@]}"; do
	[ -e "$p" ] || continue
	out=$( { mandoc -T lint -W warning "$p" 2>&1 || echo "mandoc: exit $?"; } |
		sed "s|^|mandoc: |")
	for dev in utf8 ps; do
		out+=$(groff -ww -z -t -man -T"$dev" "$p" 2>&1 | sed "s|^|groff -T$dev: |")
	done
	if ! grep -q '^\.SH NAME' "$p"; then out+="no NAME section"; fi
	if [ -z "$out" ]; then ok "renders $p"
	else bad "renders $p" "$(printf '%s\n' "$out" | head -n 4 | tr '\n' ' ')"; fi
done

# ---------------------------------------------------------------- tables
if [ -x "$B/tools/kaslr-policy" ] ||
	make --no-print-directory "$B/tools/kaslr-policy" >"$W/tool.txt" 2>&1; then
	while IFS= read -r l; do
		case $l in
		ok\ *) ok "tables: ${l#ok }" ;;
		FAIL\ *) bad "tables: ${l#FAIL }" ;;
		*) echo "$l" ;;
		esac
	done < <(test/doc/tables.sh docs/man/kaslr.conf.5 "$B/tools/kaslr-policy")
else
	bad tables "cannot build $B/tools/kaslr-policy: $(tail -n 2 "$W/tool.txt" | tr '\n' ' ')"
fi

# ---------------------------------------------------------------- README
n=$(wc -l <README)
if [ "$n" -le 250 ]; then ok "README is $n lines (at most 250)"
else bad readme-length "README is $n lines, more than 250"; fi
for c in 'make run' 'make test'; do
	at=$(grep -n -m 1 -x "    $c" README | cut -d: -f1)
	if [ -n "$at" ] && [ "$at" -le 60 ]; then ok "README shows '$c' at line $at"
	else bad "readme-$c" "no line '    $c' in README's first 60 (${at:-none})"; fi
done

# the make targets README names: `make X ...` in code spans, and code
# lines "make X ...  what it does" (the command ends at two blanks)
# shellcheck disable=SC2016
targets=$({
	grep -o '`make [^`]*`' README | sed 's/^`//; s/`$//'
	sed -n 's/^    \(make .*\)/\1/p' README | sed 's/  .*//'
} | awk '{for (i = 2; i <= NF; i++) if ($i !~ /=/) {print $i; break}}' |
	grep -E '^[a-z][A-Za-z0-9_./-]*$' | sort -u)
[ -n "$targets" ] || bad readme-targets "README names no make target"
for t in $targets; do
	if make -n --no-print-directory "$t" >"$W/make-n.txt" 2>&1; then ok "README's make $t exists"
	else bad "readme-target $t" "make -n $t: $(grep -m 1 -i 'no rule\|error' "$W/make-n.txt")"; fi
done

# ---------------------------------------------------------------- citations
docs=(README docs/*.md include/PROTOCOL.md "${pages[@]}")
# text of a document with roff's escapes undone (a page), or as it is
plain() {
	case $1 in
	docs/man/*) sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\%//g' "$1" ;;
	*) cat "$1" ;;
	esac
}
for d in "${docs[@]}"; do
	[ -f "$d" ] || { bad "cites $d" "no such document"; continue; }
	missing=()
	# repository paths: a top directory of the tree, after a blank, a
	# bracket, a quote or a backtick (not inside /usr/lib/..., build/...)
	while IFS= read -r f; do
		f=${f#?}
		case $f in
		*'*'*) compgen -G "$f" >/dev/null || missing+=("$f") ;;
		*) [ -e "$f" ] || echo "$f" | grep -Eq 'NAME|AREA|PAGE|TIER|KIND|REGEX|VERSION' ||
			missing+=("$f") ;;
		esac
	done < <(plain "$d" | grep -oE "(^|[][ (\`'\"])(docs|src|efi|include|test|payload)/[A-Za-z0-9_.*+/-]*[A-Za-z0-9_*/]" |
		sed 's/^\([^a-z]\)/\1/; s/^\([a-z]\)/ \1/')
	# Markdown links to files, relative to the document
	while IFS= read -r f; do
		case $f in http*://* | '#'*) continue ;; esac
		[ -e "$(dirname "$d")/${f%%#*}" ] || missing+=("$f")
	done < <(plain "$d" | grep -oE '\]\([^)]+\)' | sed 's/^](//; s/)$//')
	# the project's man pages, name(N) (roff: name (N))
	while IFS= read -r m; do
		page=docs/man/${m% *}
		[ -f "$page" ] || missing+=("$m: no $page")
	done < <(plain "$d" | grep -oE '\bkaslr[a-z.-]*[a-z] ?\([1-8]\)' |
		sed 's/ *(\([1-8]\))$/.\1 (\1)/' | sort -u)
	# LICENSE, where a document says "see LICENSE"
	if plain "$d" | grep -q 'see LICENSE' && [ ! -f LICENSE ]; then missing+=(LICENSE); fi
	if [ ${#missing[@]} -eq 0 ]; then ok "every file $d cites exists"
	else bad "cites $d" "missing: $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"; fi
done

# ---------------------------------------------------------------- quick start
# the first block of indented lines after the "Quick start" heading
quick=$(awk '/^Quick start$/ {q = 1; next} q && /^    / {print substr($0, 5); b = 1; next}
	q && b {exit}' README)
if [ -z "$quick" ]; then
	bad quickstart "README has no indented command block under 'Quick start'"
elif [ "${DOC_CLONE:-1}" = 0 ]; then
	echo "SKIP quick start in a fresh clone (DOC_CLONE=0)"
elif ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	bad quickstart "not a git checkout: nothing to clone"
else
	C=$(mktemp -d) || exit 1
	trap 'rm -rf "$C"' EXIT
	if ! git clone -q --no-hardlinks "$PWD" "$C/tree" >"$W/clone.txt" 2>&1; then
		bad quickstart-clone "$(tail -n 2 "$W/clone.txt" | tr '\n' ' ')"
	else
		ok "git clone of the committed tree ($(git -C "$C/tree" rev-parse --short HEAD))"
		i=0
		while IFS= read -r cmd; do
			i=$((i + 1))
			[ -n "$cmd" ] || continue
			log=$W/quick-$i.txt
			case $cmd in
			'make test'*)
				# this suite itself: only that it is a target
				if (cd "$C/tree" && make -n --no-print-directory test) >"$log" 2>&1; then
					ok "quick start '$cmd' (this suite: make -n test in the clone)"
				else bad "quick start '$cmd'" "make -n test: $(tail -n 1 "$log")"; fi
				continue ;;
			esac
			start=$SECONDS
			if (cd "$C/tree" && env -u BUILD MAKEFLAGS=-j2 bash -c "$cmd") >"$log" 2>&1 </dev/null; then
				if [[ $cmd == *'make run'* ]] &&
					! tr -d '\r' <"$log" | grep -aq '^payload: PASS '; then
					bad "quick start '$cmd'" "exit 0 but no 'payload: PASS' report: $(tail -n 2 "$log" | tr '\n' ' ')"
				else
					ok "quick start '$cmd' in the clone ($((SECONDS - start)) s)"
				fi
			else
				bad "quick start '$cmd'" "failed in the clone: $(tail -n 3 "$log" | tr '\n' ' ')"
			fi
		done <<<"$quick"
	fi
fi

tally_end doc
