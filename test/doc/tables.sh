#!/bin/bash
# tables.sh [--update] PAGE [TOOL] - the tables of a man page that are the
# code's own: each region between
#     .\" BEGIN kaslr-policy ARGS          and   .\" END kaslr-policy
# must be exactly what `TOOL ARGS` prints (TOOL: build/tools/kaslr-policy),
# where @EXAMPLE@ in ARGS stands for a file holding the page's region
#     .\" BEGIN example NAME   ...   .\" END example
# read back as text (its .RS/.nf/.fi/.RE lines dropped, roff escapes
# undone).  The page must hold the keys, rules and settings (of no
# options) regions.  The tags of the OPTIONS section's .TP list must name the keys
# of `TOOL keys`, in its order.  One "ok"/"FAIL" line per check; with
# --update the regions are rewritten from the tool instead.
set -u
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
page=${1:?usage: tables.sh [--update] PAGE [TOOL]}
tool=${2:-${BUILD:-build}/tools/kaslr-policy}
[ -x "$tool" ] || { echo "FAIL tables: no $tool (make builds it)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0
out=$tmp/page
: >"$out"

# roff text of an example region back to the file it shows
unroff() {
	sed -e '/^\.\(RS\|RE\|nf\|fi\)$/d' -e 's/^\\&//' -e 's/\\e/\\/g' -e 's/\\-/-/g' \
		-e "s/\\\\(aq/'/g"
}

region='' args='' body=$tmp/body
while IFS= read -r l || [ -n "$l" ]; do
	if [ -z "$region" ]; then
		printf '%s\n' "$l" >>"$out"
		case $l in
		'.\" BEGIN kaslr-policy '*) region=tool args=${l#.\\\" BEGIN kaslr-policy } ;;
		'.\" BEGIN example '*) region=example ;;
		*) continue ;;
		esac
		: >"$body"
		continue
	fi
	case $region:$l in
	tool:'.\" END kaslr-policy' | example:'.\" END example') ;;
	*) printf '%s\n' "$l" >>"$body"; continue ;;
	esac
	if [ "$region" = example ]; then
		unroff <"$body" >"$tmp/example"
		cat "$body" >>"$out"
	else
		# ARGS are words (no quoting); @EXAMPLE@ is the last example read
		read -r -a argv <<<"${args//@EXAMPLE@/$tmp/example}"
		if ! "$tool" "${argv[@]}" >"$tmp/want" 2>"$tmp/err"; then
			echo "FAIL $page: kaslr-policy $args: $(head -n 2 "$tmp/err" | tr '\n' ' ')"
			rc=1
			cat "$body" >>"$out"
		elif [ "$update" = 1 ]; then
			cat "$tmp/want" >>"$out"
		elif cmp -s "$body" "$tmp/want"; then
			echo "ok $page: kaslr-policy $args"
		else
			echo "FAIL $page: the region differs from kaslr-policy $args (tables.sh --update rewrites it):"
			diff "$body" "$tmp/want" | head -n 12 | sed 's/^/    /'
			rc=1
			cat "$body" >>"$out"
		fi
	fi
	printf '%s\n' "$l" >>"$out"
	region=''
done <"$page"
if [ -n "$region" ]; then
	echo "FAIL $page: a BEGIN $region without its END"; rc=1
fi
# the three tables the page must carry, whatever else it shows
for want in 'keys --man' 'rules --man' 'settings --man'; do
	grep -qxF ".\\\" BEGIN kaslr-policy $want" "$page" ||
		{ echo "FAIL $page: no region for kaslr-policy $want"; rc=1; }
done

# the OPTIONS section's .TP tags, in order, against the key table
tags=$(awk '/^\.SH / {s = ($2 == "OPTIONS")} s && tp {sub(/^\.B[IR]? /, ""); print $1; tp = 0; next}
	s && /^\.TP/ {tp = 1}' "$page")
keys=$("$tool" keys 2>/dev/null | awk 'NR > 1 {print $1}')
if [ -z "$keys" ]; then
	echo "FAIL $page: kaslr-policy keys printed no key"; rc=1
elif [ "$tags" = "$keys" ]; then
	echo "ok $page: OPTIONS describes every key in the key table's order"
else
	echo "FAIL $page: OPTIONS tags differ from the key table (left: page, right: kaslr-policy keys):"
	diff <(echo "$tags") <(echo "$keys") | head -n 12 | sed 's/^/    /'
	rc=1
fi

if [ "$update" = 1 ] && ! cmp -s "$out" "$page"; then
	cat "$out" >"$page" && echo "updated $page"
fi
exit "$rc"
