#!/bin/bash
# build.sh CELL - one cell of the kernel-configuration matrix built from
# Debian's linux-source-6.1 (test/kconfig/fetch.sh), cached; prints the
# cell's directory, build/kconfig/cells/CELL/, holding
#
#   bzImage   the kernel as `make bzImage` wrote it
#   config    its final .config
#   cost      "wall=S cpu=S tree=NAME": what the build took here (CPU is
#             user + system of make and its children; tree: the build
#             tree it was made in, and what that tree held before)
#   key       what the cache is keyed on (see below)
#
# A cell is test/kconfig/cells/CELL.config: a configuration fragment whose
# header says how to start -
#   # base: TARGET [FRAGMENT...]   make TARGET (tinyconfig, x86_64_defconfig)
#                                  then merge each FRAGMENT (a file of
#                                  test/kconfig/) and the cell's own lines
#   # tree: CELL                   optional: build in that cell's build
#                                  tree (reconfigured; the cells take turns
#                                  under a lock), so that make rebuilds only
#                                  what the differing options touch.  A copy
#                                  of a tree would not do: its objtool is
#                                  built with absolute paths, so a copy
#                                  rebuilds objtool, and every object with it.
# Every option line of every merged fragment ("CONFIG_X=y", "# CONFIG_X is
# not set") must hold in the final .config (olddefconfig may not drop one
# for an unmet dependency): otherwise the build fails naming it.
#
# Out-of-tree: a cell's objects in build/kconfig/obj/CELL, or its tree's
# (kept: the next build in it is incremental).  Cached on the key: the
# source package, the compiler's version, the base target and the option
# lines of every fragment; a different key rebuilds.  KCONFIG_JOBS
# (default 2) is make's -j.  Serialised per cell with flock.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
T=test/kconfig
die() { echo "build.sh: $*" >&2; exit 1; }
cell=${1:-}
cells() { for f in "$T"/cells/*.config; do basename "$f" .config; done | tr '\n' ' '; }
[ -n "$cell" ] || die "usage: build.sh CELL (one of: $(cells))"
frag=$T/cells/$cell.config
[ -f "$frag" ] || die "no cell '$cell' ($frag missing)"
jobs=${KCONFIG_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "KCONFIG_JOBS '$jobs' is not a positive number"

hdr() { sed -n "s/^# $1: *//p" "$frag" | head -n 1; }
read -r -a base <<<"$(hdr base)"
tree=$(hdr tree)
tree=${tree:-$cell}
[ -f "$T/cells/$tree.config" ] || die "$frag: no cell '$tree' for its tree"
[ "${#base[@]}" -ge 1 ] || die "$frag has no '# base:' line"
frags=()
for f in "${base[@]:1}"; do
	[ -f "$T/$f" ] || die "$frag: fragment $T/$f missing"
	frags+=("$T/$f")
done
frags+=("$frag")

S=$(test/kconfig/fetch.sh) || die "test/kconfig/fetch.sh failed"
S=$(cd "$S" && pwd)
C=$B/kconfig/cells/$cell
O=$(mkdir -p "$B/kconfig/obj" && cd "$B/kconfig/obj" && pwd)/$tree
mkdir -p "$C" || die "cannot create $C"
exec 9>"$C/.lock" || die "cannot open $C/.lock"
flock 9 || die "cannot lock $C/.lock"

# opts FRAGMENT: its option lines, what the build depends on (a comment or
# the tree a cell is built in changes no byte of the kernel)
opts() { grep -E '^(CONFIG_[A-Za-z0-9_]+=|# CONFIG_[A-Za-z0-9_]+ is not set$)' "$1"; }
key=$( {
	cat "$B/kconfig/src/package"
	gcc --version | head -n 1
	echo "base ${base[0]}"
	for f in "${frags[@]}"; do echo "== $f"; opts "$f"; done
} | sha256sum | cut -d' ' -f1)
if [ -s "$C/bzImage" ] && [ -s "$C/cost" ] && [ "$(cat "$C/key" 2>/dev/null)" = "$key" ]; then
	echo "$C"
	exit 0
fi
rm -f "$C/bzImage" "$C/config" "$C/cost" "$C/key"

# one build at a time in a tree; what it held before, for the cost line
exec 8>"$O.lock" || die "cannot open $O.lock"
flock 8 || die "cannot lock $O.lock"
mkdir -p "$O" || die "cannot create $O"
before=$(cat "$O/.kconfig-cell" 2>/dev/null || echo empty)

log=$C/build.log
echo "build.sh: building $cell in $O (log: $log)" >&2
TIMEFORMAT='%R %U %S'
{ time {
	make -C "$S" O="$O" "${base[0]}" >"$log" 2>&1 &&
	"$S/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "${frags[@]}" >>"$log" 2>&1 &&
	make -C "$S" O="$O" olddefconfig >>"$log" 2>&1
} ; } 2>"$C/time.config" || die "configuring $cell failed (see $log)"

# every option the fragments set (the last one's word for it, as
# merge_config.sh merges them), as the final .config has it
while read -r opt want; do
	have=$(grep -E "^($opt=|# $opt is not set\$)" "$O/.config")
	# "is not set" and absent (an unmet dependency hides it) agree
	[ "$have" = "$want" ] || { [ -z "$have" ] && [[ $want == '# '* ]]; } ||
		die "$cell: the fragments want '$want', the .config has '${have:-nothing}' (an unmet dependency?)"
done < <(cat "${frags[@]}" | awk '
	/^CONFIG_[A-Za-z0-9_]+=/ { o = $0; sub(/=.*/, "", o); last[o] = $0; if (!(o in seen)) { seen[o] = 1; order[n++] = o } }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { o = $2; last[o] = $0; if (!(o in seen)) { seen[o] = 1; order[n++] = o } }
	END { for (i = 0; i < n; i++) print order[i], last[order[i]] }')

{ time make -C "$S" O="$O" -j"$jobs" bzImage >>"$log" 2>&1 ; } 2>"$C/time.build" ||
	die "building $cell failed (see the end of $log)"
{ cp "$O/arch/x86/boot/bzImage" "$C/bzImage" && cp "$O/.config" "$C/config"; } ||
	die "cannot copy $cell's bzImage"
echo "$cell" >"$O/.kconfig-cell"
awk -v t="$tree (held $before)" '{ w += $1; c += $2 + $3 } END { printf "wall=%.0f cpu=%.0f tree=%s\n", w, c, t }' \
	"$C/time.config" "$C/time.build" >"$C/cost"
echo "$key" >"$C/key"
echo "$C"
