#!/bin/bash
# check-bzimage.sh - the loader's bzImage parser and decompressors on the
# kernels Debian ships (fetched and cached by fetch.sh): the generic kernel
# (xz), the cloud kernel (LZ4 legacy) and the signed generic kernel (a PE
# signature after the bzImage).  Each must parse, decompress to the size it
# records, and be an ELF with Linux's relocation table; the generic
# kernel's vmlinux.bin must be the bytes repack.sh got with xz(1), and the
# signed kernel's the same as the unsigned one's.
# Last line: "check-bzimage: N passed, N failed".  A kernel that cannot be
# fetched is a failure, not a skip.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
out=$B/linux/bzcheck
. test/tally.sh
finish() { tally_end check-bzimage; }

mkdir -p "$B/linux"
make --no-print-directory BUILD="$B" "$out" >"$B/linux/bzcheck-build.txt" 2>&1 ||
	{ tail -n 20 "$B/linux/bzcheck-build.txt"; bad "bzcheck does not build"; finish; }
args=()
for k in generic:xz cloud:lz4 signed:xz; do
	kind=${k%:*} fmt=${k#*:}
	if test/linux/fetch.sh "$kind" >/dev/null; then
		case $kind in
		generic) f=$B/linux/vmlinuz ;;
		*) f=$B/linux/$kind/vmlinuz ;;
		esac
		args+=("$kind=$f:$fmt")
	else
		bad "$kind: test/linux/fetch.sh $kind failed (message above)"
	fi
done
[ ${#args[@]} -gt 0 ] || finish
log=$B/linux/bzcheck.txt
"$out" "${args[@]}" >"$log" 2>&1
grep -E '^(ok|FAIL) ' "$log"
r=$(sed -n 's/^bzcheck: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
[ -n "$r" ] || { tail -n 20 "$log"; bad "bzcheck crashed"; finish; }
passed=$((passed + ${r% *})) failed=$((failed + ${r#* }))

sha() { sed -n "s/^sha256 $1 //p" "$log"; }
g=$(sha generic) s=$(sha signed)
if [ -n "$g" ]; then
	x=$(gzip -dc "$B/linux/vmlinux.gz" | sha256sum | cut -d' ' -f1)
	if [ "$g" = "$x" ]; then ok "generic: vmlinux.bin is what xz(1) made of the payload"
	else bad "generic: vmlinux.bin differs from repack.sh's ($g vs $x)"; fi
fi
if [ -n "$g" ] && [ -n "$s" ]; then
	if [ "$g" = "$s" ]; then ok "signed: the same vmlinux.bin as the unsigned kernel"
	else bad "signed: vmlinux.bin differs from the unsigned kernel's"; fi
fi
finish
