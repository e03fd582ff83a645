#!/bin/sh
# example.sh DOC DIR - the worked example of include/PROTOCOL.md, built from
# the document's own text: every fenced block introduced by a line
#   File `NAME`:
# is written to DIR/NAME, then DIR/build.sh runs there with KASLR_INCLUDE
# set to this tree's include/.  Fails when a block is missing or empty, or
# when the build fails, so the example in the document is the one tested.
set -eu
doc=$1 dir=$2
inc=$(cd "$(dirname "$0")/../include" && pwd)
rm -rf "$dir"
mkdir -p "$dir"
awk -v dir="$dir" '
	/^File `[^`]+`:$/ { name = $0; sub(/^File `/, "", name); sub(/`:$/, "", name); next }
	name != "" && !open && /^```/ { open = 1; out = dir "/" name; printf "" > out; next }
	open && /^```$/ { open = 0; close(out); name = ""; next }
	open { print > out }
' "$doc"
for f in kernel.lds entry.S kernel.c build.sh; do
	[ -s "$dir/$f" ] || { echo "example.sh: $doc has no block for $f" >&2; exit 1; }
done
cd "$dir"
KASLR_INCLUDE=$inc sh build.sh
[ -s kernel.elf ] || { echo "example.sh: build.sh made no kernel.elf" >&2; exit 1; }
echo "example.sh: $dir/kernel.elf built from $doc"
