# lib.sh - helpers for boot-test cases (sourced by test/qemu/case.sh).
# Every case prints "ok NAME" or "FAIL NAME: reason" as its last line.
# shellcheck shell=bash

B=${BUILD:-build}
LOADER=$B/BOOTX64.EFI
P=$B/payload
WORK=$B/qemu
mkdir -p "$WORK"

# the payload's report line from a serial log, CRs and ANSI escapes dropped
payload_line() {
	tr -d '\r' <"$1" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g' | grep -a '^payload: \(PASS\|FAIL\)' | tail -n 1
}

# key=value from a report line (cmdline= is the rest of the line)
kv() {
	if [ "$2" = cmdline ]; then
		printf '%s\n' "$1" | sed -n 's/.* cmdline=//p'
	else
		printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
	fi
}

# clean serial text (no CR, no ANSI escapes)
clean_log() {
	tr -d '\r' <"$1" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g'
}

# run_output I NAME: for the cases that run the loader several times from
# a startup.nsh which echoes "run I: NAME" before run I and "run I returned
# %lasterror%" after it: out= the lines between the two, after checking
# that run I returned an EFI error and printed exactly one error line;
# summary= gets " NAME=STATUS" appended
run_output() {
	local st errs
	out=$(clean_log "$LOG" | sed -n "/^run $1: /,/^run $1 returned/p")
	st=$(printf '%s\n' "$out" | sed -n "s/^run $1 returned //p")
	[ -n "$st" ] || fail "run $1 ($2): no status"
	[ "$st" != 0x0 ] || fail "run $1 ($2): the loader returned success"
	errs=$(printf '%s\n' "$out" | grep -c 'kaslr-loader: error: ')
	[ "$errs" = 1 ] || fail "run $1 ($2): $errs error lines, want one"
	summary="$summary $2=$st"
}

ok() { echo "ok $NAME${1:+ ($1)}"; exit 0; }
fail() {
	echo "FAIL $NAME: $*"
	if [ -n "${LOG:-}" ] && [ -f "$LOG" ]; then
		echo "---- serial log of $NAME (last 25 lines) ----"
		clean_log "$LOG" | tail -n 25
		echo "----"
	fi
	exit 1
}

# boot_payload ESP [boot.sh options] -> sets LINE, RC; LOG is the serial log
boot_payload() {
	local esp=$1
	shift
	LOG=$WORK/$NAME.log
	test/qemu/boot.sh --log "$LOG" "$@" "$esp"
	RC=$?
	LINE=$(payload_line "$LOG")
}

# expect_pass: the payload reported PASS and exited through isa-debug-exit
expect_pass() {
	[ -n "$LINE" ] || fail "no payload line (qemu rc=$RC)"
	case $LINE in "payload: PASS "*) ;; *) fail "payload says: $LINE" ;; esac
	[ "$RC" = 33 ] || fail "qemu exit status $RC, want 33 (payload PASS)"
}

# mkesp NAME KERNEL [extras...] -> prints the image path
mkesp() {
	local img=$WORK/$1.img
	shift
	test/qemu/mkesp.sh "$img" "$LOADER" "$@" || fail "mkesp failed"
	echo "$img"
}

# write a kaslr.conf with the given lines, print its path
conf() {
	local f=$WORK/$NAME.conf
	printf '%s\n' "$@" >"$f"
	echo "$f"
}

# boot_format VARIANT [EXT]: boot kernel-VARIANT.elf[.EXT] and expect PASS
boot_format() {
	local v=$1 ext=${2:-}
	boot_payload "$(mkesp "$NAME" "$P/kernel-$v.elf${ext:+.$ext}")" --cpu max
	expect_pass
	[ "$(kv "$LINE" variant)" = "$v" ] || fail "variant=$(kv "$LINE" variant), want $v"
	ok "phys=$(kv "$LINE" phys) virt=$(kv "$LINE" virt)"
}

# shell_esp: an ESP for OVMF's UEFI shell - no \EFI\BOOT\BOOTX64.EFI (so the
# firmware falls back to the shell, which runs \startup.nsh), the loader at
# \EFI\kaslr\loader.efi.  Prints the image path ($WORK/$NAME.img).  MIB:
# its size (default 64).
shell_esp() {
	local img=$WORK/$NAME.img
	rm -f "$img"
	mformat -i "$img" -C -T $((${1:-64} * 2048)) -h 64 -s 32 :: >/dev/null || fail mformat
	mmd -i "$img" ::/EFI ::/EFI/kaslr || fail mmd
	mcopy -i "$img" "$LOADER" ::/EFI/kaslr/loader.efi || fail mcopy
	echo "$img"
}

# ---- Secure Boot (Debian's OVMF with its snakeoil keys; boot.sh --secureboot)
SB_KEY_ENC=/usr/share/ovmf/PkKek-1-snakeoil.key
SB_CERT=/usr/share/ovmf/PkKek-1-snakeoil.pem
SB_KEY=$WORK/snakeoil.key

# sb_key: the snakeoil key decrypted for sbsign (password "snakeoil")
sb_key() {
	{ [ -f "$SB_KEY_ENC" ] && [ -f "$SB_CERT" ]; } || fail "no $SB_KEY_ENC (make deps installs ovmf)"
	[ -s "$SB_KEY" ] ||
		openssl rsa -passin pass:snakeoil -in "$SB_KEY_ENC" -out "$SB_KEY" >/dev/null 2>&1 ||
		fail "cannot decrypt $SB_KEY_ENC"
}

# sb_install DIR [make install args...]: a snakeoil-signed make install into
# the directory DIR (created empty)
sb_install() {
	local d=$1
	shift
	sb_key
	rm -rf "$d"; mkdir -p "$d"
	make --no-print-directory install ESP="$d" SIGN_KEY="$SB_KEY" SIGN_CERT="$SB_CERT" "$@" \
		>"$WORK/$NAME.install.log" 2>&1 || fail "make install: $(tail -n 2 "$WORK/$NAME.install.log")"
}

# dir_img DIR [NAME=SRC...]: a FAT image of the directory tree DIR plus
# extra files (mkesp.sh's NAME=SRC); prints the image path
dir_img() {
	local d=$1 img=$WORK/$NAME.img
	shift
	rm -f "$img"
	mformat -i "$img" -C -T 131072 -h 64 -s 32 -v ESP :: >/dev/null || fail mformat
	if [ -n "$(ls -A "$d")" ]; then mcopy -s -i "$img" "$d"/* ::/ || fail "mcopy $d"; fi
	for pair in "$@"; do
		local to=${pair%%=*} src=${pair#*=} p='' part
		for part in $(dirname "$to" | tr '/' ' '); do
			p="$p/$part"; mmd -i "$img" "::$p" 2>/dev/null
		done
		mcopy -o -i "$img" "$src" "::/$to" || fail "mcopy $to"
	done
	echo "$img"
}

# no_payload: the loader refused (no payload line at all)
no_payload() {
	[ -z "$LINE" ] || fail "the payload ran: $LINE"
}

# loader_said REGEX: the serial log has a loader line matching REGEX
loader_said() {
	clean_log "$LOG" | grep -Eq "^kaslr-loader: $1" || fail "no loader line matching '$1'"
}

# ---- shim (Debian's shim-unsigned, signed with the snakeoil key: it stands
# in for the Microsoft-signed shim; its vendor certificate is Debian's CA)
SHIM_SRC=/usr/lib/shim
# shellcheck disable=SC2034 # the cases use it
SHIM_EFI=$WORK/shim/shimx64.efi

# sb_shim: $SHIM_EFI (and mmx64.efi beside it), snakeoil-signed
sb_shim() {
	local f
	sb_key
	[ -f "$SHIM_SRC/shimx64.efi" ] || fail "no $SHIM_SRC/shimx64.efi (make deps installs shim-unsigned)"
	mkdir -p "$WORK/shim"
	for f in shimx64.efi mmx64.efi; do
		[ "$WORK/shim/$f" -nt "$SHIM_SRC/$f" ] && continue
		sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$WORK/shim/$f" "$SHIM_SRC/$f" \
			>/dev/null 2>&1 || fail "sbsign $SHIM_SRC/$f"
	done
}

# sb_resign IN OUT [objcopy args...]: IN's signature removed, objcopy's
# change made, signed again with the snakeoil key
sb_resign() {
	local in=$1 out=$2
	shift 2
	sb_key
	cp "$in" "$out.unsigned" || fail "cp $in"
	sbattach --remove "$out.unsigned" >/dev/null 2>&1 || fail "sbattach --remove $in"
	if [ $# -gt 0 ]; then objcopy "$@" "$out.unsigned" || fail "objcopy $*"; fi
	sbsign --key "$SB_KEY" --cert "$SB_CERT" --output "$out" "$out.unsigned" >/dev/null 2>&1 ||
		fail "sbsign $out"
	rm -f "$out.unsigned"
}
