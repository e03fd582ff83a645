#!/bin/bash
# test/install/commit.sh - kaslr-loader-install's commit under failure and
# power loss.  Wrappers for cp, mv, rm, mkdir, rmdir and sync (first on
# PATH) number every call the install makes, record it, and either run
# it and copy the ESP as it then is (a "power cut" after that step), or
# fail it (the Nth call: a failure injected there).  Two updates of an
# installed ESP are driven through every N:
#   refresh  the same kernel, its initrd rebuilt under the same name (what
#            update-initramfs -u does);
#   upgrade  a new kernel version and its initrd (the old ones go).
# After each failure, and in each state a power cut could leave, the
# loader at the install path must pin files whose bytes the ESP holds
# (kaslr-policy show against sha256sum), no NAME.kaslr-new is left after a
# failure, a failure says one line, and where the ESP changed the same
# install run again succeeds with every file on the ESP listed in its
# manifest.  The record
# of one whole run must show a flush (sync) between the last write of a
# file the new loader pins and the loader's rename, and between that
# rename and the removal of a file the old loader pinned.  Last, the
# review's case: a mv that fails only for the loader's temporary name.
# One "ok NAME" / "FAIL NAME: why" line per check; the last line is
# "commit: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
LOADER=$B/BOOTX64.EFI
TOOL=$B/tools/kaslr-policy
INST=$PWD/src/tools/kaslr-install.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. test/tally.sh
sha() { sha256sum "$1" | cut -d' ' -f1; }

for f in "$LOADER" "$TOOL" "$B/payload/kernel-pie.elf" "$B/payload/kernel-high.elf"; do
	[ -f "$f" ] || { bad setup "$f missing (run make)"; tally_end commit; }
done
IP=EFI/kaslr/kaslr-loader.efi
S=$T/src; mkdir "$S"
cp "$B/payload/kernel-pie.elf" "$S/vmlinuz-1"
cp "$B/payload/kernel-high.elf" "$S/vmlinuz-2"
printf 'initrd of 1\n' >"$S/initrd.img-1"
printf 'initrd of 2\n' >"$S/initrd.img-2"
mkdir "$S/rebuilt"; printf 'initrd of 1, rebuilt\n' >"$S/rebuilt/initrd.img-1"

# install ESP KERNEL INITRD: kaslr-loader-install, unsigned (the commit
# is the same signed or not; sbsign is not what is tested here)
install() {
	"$INST" --esp "$1" --install-path "$IP" --loader "$LOADER" --tool "$TOOL" \
		--kernel "$2" --initrd "$3" --cmdline "console=ttyS0 commit"
}

# the wrappers: $W/NAME runs the real NAME unless it is call number
# $FAIL_AT (or NAME is $FAIL_CMD and its arguments hold $FAIL_MATCH); with $SNAP set, the ESP
# ($ESPDIR) is copied to $SNAP/N after call N ran.  sync is recorded, not
# run: what it orders is read from the record and the power cut is the
# snapshot, while a real flush of the host's disk (shared, busy) took
# seconds a call and most of this tier's time
W=$T/wrap; mkdir "$W"
for c in cp mv rm mkdir rmdir sync; do
	real=$(command -v "$c") || { bad setup "no $c"; tally_end commit; }
	[ "$c" = sync ] && real=:
	cat >"$W/$c" <<EOF
#!/bin/bash
read -r n <"\$COUNT"
n=\$((n + 1))
echo "\$n" >"\$COUNT"
printf '%s %s' "\$n" $c >>"\$OPS"; printf ' %s' "\$@" >>"\$OPS"; echo >>"\$OPS"
if [ "\$n" = "\${FAIL_AT:-0}" ] || { [ "\${FAIL_CMD:-}" = $c ] && [[ " \$* " == *"\$FAIL_MATCH"* ]]; }; then
	echo "$c: injected failure" >&2
	exit 1
fi
$real "\$@"
st=\$?
[ -z "\${SNAP:-}" ] || /bin/cp -a "\$ESPDIR" "\$SNAP/\$n"
exit \$st
EOF
	chmod +x "$W/$c"
done
export COUNT=$T/count OPS=$T/ops
# wrapped RUN: the install with the wrappers first on PATH; out and err logs
wrapped() { echo 0 >"$COUNT"; : >"$OPS"; PATH=$W:$PATH "$@" >"$T/out" 2>"$T/err"; }

# bootable DIR: the loader at the install path pins only files the ESP
# holds with the pinned bytes (and pins a kernel); else why not
bootable() {
	local d=$1 k p h n=0 f
	[ -f "$d/$IP" ] || { echo "no loader at $IP"; return 1; }
	"$TOOL" show "$d/$IP" >"$T/show" 2>&1 || { echo "kaslr-policy show: $(head -n 1 "$T/show")"; return 1; }
	while read -r k p h; do
		f=$d/$(printf '%s' "${p#\\}" | tr '\134' /)
		[ -f "$f" ] || { echo "$k $p pinned, not on the ESP"; return 1; }
		[ "$(sha "$f")" = "$h" ] || { echo "$k $p: the ESP's bytes are not the pinned ones"; return 1; }
		n=$((n + 1))
	done < <(sed -n 's/^\(kernel\|initrd\) *\([^ ]*\) sha256=\([0-9a-f]*\)$/\1 \2 \3/p' "$T/show")
	grep -q '^kernel ' "$T/show" || { echo "no kernel pinned"; return 1; }
	[ "$n" -ge 2 ] || { echo "$n files pinned, want the kernel and its initrd"; return 1; }
}
# listed DIR: every file on the ESP but the manifest is in the manifest
listed() {
	local f r m=$1/EFI/kaslr-loader.manifest
	while read -r f; do
		r=${f#"$1"/}
		[ "$r" = EFI/kaslr-loader.manifest ] && continue
		grep -qx "file $r" "$m" || { echo "$r is not listed in the manifest"; return 1; }
	done < <(find "$1" -type f)
}
# pins_new DIR KERNEL INITRD: the loader pins exactly these two files' bytes
pins_new() {
	local got
	got=$("$TOOL" show "$1/$IP" 2>/dev/null | sed -n 's/^\(kernel\|initrd\) .* sha256=\([0-9a-f]*\)$/\1 \2/p' | tr '\n' ' ')
	[ "$got" = "kernel $(sha "$2") initrd $(sha "$3") " ] || { echo "pins: $got"; return 1; }
}

BASE=$T/base
mkdir "$BASE"
install "$BASE" "$S/vmlinuz-1" "$S/initrd.img-1" >"$T/base.log" 2>&1 ||
	{ bad setup "the first install: $(tail -n 1 "$T/base.log")"; tally_end commit; }
why=$(bootable "$BASE") || { bad setup "the first install does not boot: $why"; tally_end commit; }
ESPDIR=$T/esp
export ESPDIR

# scenario NAME KERNEL INITRD: every failure point, every power-cut state
scenario() {
	local name=$1 k=$2 i=$3 total n rc why fails=() snaps=() l lr j ops
	# one clean run: how many calls, the states after each, the order
	rm -rf "$ESPDIR"; cp -a "$BASE" "$ESPDIR"
	mkdir -p "$T/snap-$name"
	SNAP=$T/snap-$name wrapped install "$ESPDIR" "$k" "$i"
	rc=$?
	total=$(cat "$COUNT")
	cp "$OPS" "$T/ops-$name"
	if [ "$rc" != 0 ] || ! pins_new "$ESPDIR" "$k" "$i" >/dev/null; then
		bad "$name-clean" "the install failed: $(tail -n 1 "$T/err")"; return
	fi
	ok "$name-clean ($total calls)"
	# the power cut: each state after each call
	for ((n = 1; n <= total; n++)); do
		[ -d "$T/snap-$name/$n" ] || continue
		why=$(bootable "$T/snap-$name/$n") || snaps+=("after call $n ($(sed -n "${n}p" "$T/ops-$name" | cut -c 1-80)): $why")
	done
	if [ ${#snaps[@]} = 0 ]; then ok "$name-power-cut ($total states)"
	else bad "$name-power-cut" "${snaps[0]} (and $((${#snaps[@]} - 1)) more)"; fi
	# the flushes: a sync between the last write of a newly pinned file and
	# the loader's rename, and between that rename and the first removal of
	# a file only the old loader pinned
	ops=$T/ops-$name
	lr=$(awk -v l="$ESPDIR/$IP" '$2 == "mv" && $NF == l {print $1; exit}' "$ops")
	if [ -z "$lr" ]; then bad "$name-flush" "no mv onto $IP in the record"
	else
		why=''
		for p in "$(basename "$k")" "$(basename "$i")"; do
			l=$(awk -v lr="$lr" -v p="/$p" '$1 < lr && ($2 == "mv" || $2 == "cp") && index($NF, p) {n = $1} END {print n + 0}' "$ops")
			[ "$l" = 0 ] && continue # nothing written for it (its bytes were there)
			j=$(awk -v a="$l" -v b="$lr" '$2 == "sync" && $1 > a && $1 < b {print $1; exit}' "$ops")
			[ -n "$j" ] || why="no sync between call $l (a write of $p) and the loader's rename (call $lr)"
		done
		l=$(awk -v lr="$lr" -v d="$ESPDIR/EFI/kaslr/" '$1 > lr && $2 == "rm" && index($NF, d) && $NF !~ /kaslr-new$/ {print $1; exit}' "$ops")
		if [ -n "$l" ]; then
			j=$(awk -v a="$lr" -v b="$l" '$2 == "sync" && $1 > a && $1 < b {print $1; exit}' "$ops")
			[ -n "$j" ] || why="no sync between the loader's rename (call $lr) and the removal at call $l"
		fi
		if [ -z "$why" ]; then ok "$name-flush"; else bad "$name-flush" "$why"; fi
	fi
	# a failure at each call
	for ((n = 1; n <= total; n++)); do
		rm -rf "$ESPDIR"; cp -a "$BASE" "$ESPDIR"
		FAIL_AT=$n wrapped install "$ESPDIR" "$k" "$i"
		rc=$?
		why=$(bootable "$ESPDIR") || { fails+=("call $n failed: $why"); continue; }
		if [ -n "$(find "$ESPDIR" -name '*.kaslr-new')" ]; then fails+=("call $n failed: a .kaslr-new left"); continue; fi
		# one line from the install (the wrapper's own aside)
		if [ "$rc" != 0 ] && { [ "$(grep -vc 'injected failure$' "$T/err")" != 1 ] || [ "$(grep -c '^kaslr-install: ' "$T/err")" != 1 ]; }; then
			fails+=("call $n failed: not one line: $(tr '\n' '|' <"$T/err")"); continue
		fi
		# the ESP as before: the clean run above covers the install again
		diff -r "$BASE" "$ESPDIR" >/dev/null 2>&1 && continue
		if ! install "$ESPDIR" "$k" "$i" >"$T/again.log" 2>&1; then fails+=("call $n failed, then the install again: $(tail -n 1 "$T/again.log")"); continue; fi
		why=$(pins_new "$ESPDIR" "$k" "$i" && bootable "$ESPDIR" && listed "$ESPDIR") ||
			{ fails+=("call $n failed, then the install again: $why"); continue; }
	done
	if [ ${#fails[@]} = 0 ]; then ok "$name-failures ($total failure points)"
	else bad "$name-failures" "${fails[0]} (and $((${#fails[@]} - 1)) more)"; fi
}
scenario refresh "$S/vmlinuz-1" "$S/rebuilt/initrd.img-1"
scenario upgrade "$S/vmlinuz-2" "$S/initrd.img-2"

# the review's case: mv fails only for the loader's temporary name, after
# the initrd was rebuilt under the same name; the old pin still holds
rm -rf "$ESPDIR"; cp -a "$BASE" "$ESPDIR"
FAIL_CMD=mv FAIL_MATCH=kaslr-loader.efi.kaslr-new wrapped install "$ESPDIR" "$S/vmlinuz-1" "$S/rebuilt/initrd.img-1"
rc=$?
if [ "$rc" = 0 ]; then bad review-mv "the install succeeded with the loader's rename failing"
elif why=$(bootable "$ESPDIR"); then
	if cmp -s "$ESPDIR/EFI/kaslr/initrd.img-1" "$S/initrd.img-1" && cmp -s "$ESPDIR/$IP" "$BASE/$IP"; then ok review-mv
	else bad review-mv "the old loader or the initrd it pins changed"; fi
else bad review-mv "$why"; fi

tally_end commit
