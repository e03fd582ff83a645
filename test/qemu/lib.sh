# lib.sh - helpers for boot-test cases (sourced by test/qemu/case.sh).
# Every case prints "ok NAME" or "FAIL NAME: reason" as its last line.
# shellcheck shell=bash

B=${BUILD:-build}
LOADER=$B/BOOTX64.EFI
P=$B/payload
# a run at an edge has a directory of its own: make test boots a case at
# random and at an edge side by side
WORK=$B/qemu
case ${TEST_PLACEMENT:-random} in random) ;; *) WORK=$B/qemu/${TEST_PLACEMENT} ;; esac
mkdir -p "$WORK"

# the payload's report line from a serial log, CRs and ANSI escapes dropped
payload_line() {
	tr -d '\r' <"$1" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g' | grep -a '^payload: \(PASS\|FAIL\)' | tail -n 1
}

# key=value from a report line (cmdline= is the rest of the line)
kv() {
	if [ "$2" = cmdline ]; then
		case $1 in *" cmdline="*) printf '%s\n' "${1##* cmdline=}" ;; esac
	else
		kv_word "$1" "$2"
	fi
}

# kv_word TEXT KEY: VALUE of the first space-separated word KEY=VALUE in
# TEXT (nothing when there is none).  In the shell: the boot cases and the
# fault tier read thousands of fields, and a tr, sed and head per field
# took twice the CPU (9 ms a field against 4.7, the command substitution's
# fork included)
kv_word() {
	local l w ws
	while IFS= read -r l; do
		IFS=' ' read -ra ws <<<"$l"
		for w in "${ws[@]}"; do
			case $w in "$2"=*) printf '%s\n' "${w#"$2"=}"; return 0 ;; esac
		done
	done <<<"$1"
	return 0
}

# clean serial text (no CR, no ANSI escapes)
clean_log() {
	tr -d '\r' <"$1" | sed 's/\x1b\[[0-9;?=]*[A-Za-z]//g'
}

# first_attempt LOG: the clean serial text up to the firmware's word on the
# loader's return ("BdsDxe: failed to start"): on a busy host QEMU may live
# long enough for the firmware to try its other boot options and start the
# loader again, and a second attempt's lines are not this boot's
first_attempt() {
	clean_log "$1" | sed -n '1,/BdsDxe: failed to start/p'
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

# ---- placement: where the kernel lands (docs/contributing.md, Running tests)
# TEST_PLACEMENT=random (default), lowest or highest.  Every boot a case
# makes through place (below) gets kaslr.seed=SHA-256("TEST_SEED NAME N")
# for its Nth place, so that its whole draw (placement, modules, initrds,
# function order) is recorded; lowest and highest add the forced edges
# kaslr.phys= and kaslr.virt= (for a kernel without a virtual window the
# one position there is).  TEST_SEED=HEX: the seed the case's seeds derive
# from; without it the case draws one, and prints it.  Each case file says
# in one line "# placement: edges|random - WHY|no edge - WHY"
# (test/qemu/lint-placement.sh checks it): a case that cannot take an
# edge is not booted at one.
TEST_PLACEMENT=${TEST_PLACEMENT:-random}
case $TEST_PLACEMENT in
random) LABEL=$NAME ;;
lowest | highest) LABEL=$NAME@$TEST_PLACEMENT ;;
*) echo "FAIL $NAME: TEST_PLACEMENT=$TEST_PLACEMENT: random, lowest or highest"; exit 2 ;;
esac
if [ -n "${TEST_SEED:-}" ]; then
	[[ $TEST_SEED =~ ^[0-9a-fA-F]+$ ]] || { echo "FAIL $NAME: TEST_SEED=$TEST_SEED: hex digits"; exit 2; }
	CASE_SEED=$(printf '%s' "$TEST_SEED" | tr A-F a-f)
else
	CASE_SEED=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
fi
PLACE_N=0 PLACE=() PLACE_OPTS=''
# the policy's ALLOW words that let a Secure Boot case take place's options
# shellcheck disable=SC2034 # the cases use it
PLACE_ALLOW='kaslr.seed kaslr.phys kaslr.virt'

# place: the options for the case's next boot, printed on a line of their
# own: PLACE (kaslr.conf lines) and PLACE_OPTS (load options: key=value
# words).  Call it where the case runs, not in $(...): it counts the boots.
place() {
	local s
	PLACE_N=$((PLACE_N + 1))
	s=$(printf '%s %s %d' "$CASE_SEED" "$NAME" "$PLACE_N" | sha256sum | cut -c1-64)
	PLACE=("kaslr.seed $s") PLACE_OPTS="kaslr.seed=$s"
	if [ "$TEST_PLACEMENT" != random ]; then
		PLACE+=("kaslr.phys $TEST_PLACEMENT" "kaslr.virt $TEST_PLACEMENT")
		PLACE_OPTS="$PLACE_OPTS kaslr.phys=$TEST_PLACEMENT kaslr.virt=$TEST_PLACEMENT"
	fi
	echo "place $PLACE_N: $PLACE_OPTS"
}

# edge: true when this run is at a forced edge (a case may then leave out
# repeated boots whose only point is another random draw)
edge() { [ "$TEST_PLACEMENT" != random ]; }

# place_warnings: the loader's warnings about place's options (kaslr.seed=
# given; kaslr.phys=/kaslr.virt= given at an edge) are there, once each;
# sets OTHER_WARNINGS to the log's other warning lines
place_warnings() {
	local w n
	w=$(clean_log "$LOG" | grep '^kaslr-loader: warning: ')
	n=$(printf '%s\n' "$w" | grep -c '^kaslr-loader: warning: kaslr.seed= given')
	[ "$n" = 1 ] || fail "$n warnings about kaslr.seed=, want one"
	n=$(printf '%s\n' "$w" | grep -c '^kaslr-loader: warning: kaslr.phys=/kaslr.virt= given')
	if edge; then [ "$n" = 1 ] || fail "$n warnings about kaslr.phys=/kaslr.virt=, want one"
	else [ "$n" = 0 ] || fail "a warning about kaslr.phys=/kaslr.virt= at a random placement"; fi
	# shellcheck disable=SC2034 # for the case
	OTHER_WARNINGS=$(printf '%s\n' "$w" | grep -v -e '^kaslr-loader: warning: kaslr.seed= given' \
		-e '^kaslr-loader: warning: kaslr.phys=/kaslr.virt= given' | grep .)
}

# the command that runs this case again with the same seeds and placement
# (and the same firmware: make test's plain boots run the 2 MiB build)
reproduce() {
	local fw=''
	[ -f "${BOOT_PLAIN_VARS:-}" ] && fw="BOOT_PLAIN_VARS=$(realpath --relative-to=. "$BOOT_PLAIN_VARS") "
	if [ "$PLACE_N" -gt 0 ]; then
		echo "reproduce: ${fw}TEST_SEED=$CASE_SEED TEST_PLACEMENT=$TEST_PLACEMENT test/qemu/case.sh $NAME"
	else
		echo "reproduce: ${fw}test/qemu/case.sh $NAME (not the same draw: this case boots on the loader's own entropy)"
	fi
}

ok() {
	# a boot case whose line says it honours TEST_PLACEMENT booted through place
	case ${PLACE_KIND:-} in edges | random)
		[ "$PLACE_N" -gt 0 ] ||
			fail "its '# placement: $PLACE_KIND' line says it honours TEST_PLACEMENT, but no boot went through place" ;;
	esac
	echo "ok $LABEL${1:+ ($1)}"
	exit 0
}
fail() {
	echo "FAIL $LABEL: $*"
	if [ -n "${LOG:-}" ] && [ -f "$LOG" ]; then
		echo "---- serial log of $NAME (last 25 lines) ----"
		clean_log "$LOG" | tail -n 25
		echo "----"
	fi
	# a boot case (test/qemu/case.sh) says how to run it again
	[ -z "${PLACE_KIND+set}" ] || reproduce
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

# expect_pass: the payload reported PASS and exited through isa-debug-exit;
# in a case that boots through place, with kaslr.seed= taken (FIXED_SEED)
# and at an edge in the edge's slots (the hand-off's indices, which the
# payload checked against its own page walk)
expect_pass() {
	[ -n "$LINE" ] || fail "no payload line (qemu rc=$RC)"
	case $LINE in "payload: PASS "*) ;; *) fail "payload says: $LINE" ;; esac
	[ "$RC" = 33 ] || fail "qemu exit status $RC, want 33 (payload PASS)"
	[ "$PLACE_N" -gt 0 ] || return 0
	[ $(($(kv "$LINE" flags) & 2)) = 2 ] || fail "kaslr.seed= was not taken: flags=$(kv "$LINE" flags)"
	at_edge "$(kv "$LINE" pslot)" "$(kv "$LINE" slots)" "$(kv "$LINE" vslot)" "$(kv "$LINE" vslots)"
}

# at_edge PSLOT PSLOTS VSLOT VSLOTS: at an edge, the slots are the edge's
# (the first, or the last of the count); nothing at a random placement
at_edge() {
	case $TEST_PLACEMENT in
	lowest) [ "$1/$3" = 0/0 ] || fail "at the lowest edge in slots $1 of $2 (physical), $3 of $4 (virtual)" ;;
	highest) [ "$1/$3" = "$(($2 - 1))/$(($4 - 1))" ] ||
		fail "at the highest edge in slots $1 of $2 (physical), $3 of $4 (virtual)" ;;
	esac
}

# placed: in a case that boots through place, the loader took kaslr.seed=
# (its warning) and, at an edge, placed the kernel in the edge's slots (its
# verbose placement: line, which a boot at an edge must have); for the
# kernels that print no payload line
placed() {
	[ "$PLACE_N" -gt 0 ] || return 0
	clean_log "$LOG" | grep -q '^kaslr-loader: warning: kaslr.seed= given' ||
		fail "kaslr.seed= was not taken (no warning saying so)"
	if edge || clean_log "$LOG" | grep -q 'kaslr-loader: placement: '; then placement_line; fi
}

# placement_line: the loader's verbose "placement:" line of LOG, checked
# against the edge; sets PL_PHYS and PL_VOFF (as printed, hex)
placement_line() {
	local l
	l=$(clean_log "$LOG" | grep -a 'kaslr-loader: placement: ' | tail -n 1)
	[ -n "$l" ] || fail "no 'placement:' line from the loader (verbose)"
	# shellcheck disable=SC2034 # for the case
	PL_PHYS=$(printf '%s\n' "$l" | sed -n 's/.*placement: phys \(0x[0-9A-Fa-f]*\) .*/\1/p')
	# shellcheck disable=SC2034 # for the case
	PL_VOFF=$(printf '%s\n' "$l" | sed -n 's/.* offset \(0x[0-9A-Fa-f]*\) .*/\1/p')
	# shellcheck disable=SC2046 # four numbers
	at_edge $(printf '%s\n' "$l" | sed -n 's/.* slot \([0-9]*\) of \([0-9]*\) (kaslr.phys=.* slot \([0-9]*\) of \([0-9]*\) (kaslr.virt=.*/\1 \2 \3 \4/p')
}

# mkesp NAME KERNEL [extras...] -> prints the image path
mkesp() {
	local img=$WORK/$1.img
	shift
	test/qemu/mkesp.sh "$img" "$LOADER" "$@" || fail "mkesp failed"
	echo "$img"
}

# elf_span ELF: the bytes a kernel occupies from its load address, as
# its program headers say: the lowest physical address of a PT_LOAD
# segment to the end (address + memory size) of the highest
elf_span() {
	readelf -lW "$1" | gawk '$1 == "LOAD" {
		a = strtonum($4); e = a + strtonum($6)
		if (lo == "" || a < lo) lo = a
		if (e > hi) hi = e
	} END { if (lo == "") exit 1; printf "%d\n", hi - lo }'
}

# virt_slots ELF: the virtual positions a higher-half kernel has in the
# protocol's window (include/kaslr_boot.h, KB_VIRT_WINDOW_START/END): one
# per 2 MiB step of its span, rounded up to 2 MiB, inside the window
virt_slots() {
	local lo hi span
	lo=$(sed -n 's/^#define KB_VIRT_WINDOW_START *\(0x[0-9a-fA-F]*\)ULL.*/\1/p' include/kaslr_boot.h)
	hi=$(sed -n 's/^#define KB_VIRT_WINDOW_END *\(0x[0-9a-fA-F]*\)ULL.*/\1/p' include/kaslr_boot.h)
	span=$(elf_span "$1") || return 1
	{ [ -n "$lo" ] && [ -n "$hi" ]; } || return 1
	echo $(((hi - lo - ((span + 0x1fffff) & ~0x1fffff)) / 0x200000 + 1))
}

# fgk_facts ELF: "FUNCTIONS GENERATED ENTRIES" of a function-granular
# KASLR kernel, from its section headers and its functions note: its
# function sections (.text.*), the generated ones among them
# (.text.fgk_fn_*), and the entries of the tables the note names (each
# table section's size over the note's entry size)
fgk_facts() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
sh = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
def name(h):
    o = sh[shstrndx][4] + h[0]
    return d[o:d.index(b"\0", o)].decode()
sec = {name(h): h for h in sh}
fn = [n for n, h in sec.items() if n.startswith(".text.") and h[1] == 1]
gen = [n for n in fn if n.startswith(".text.fgk_fn_")]
note = sec[".note.kaslr"]
o, end, entries = note[4], note[4] + note[5], 0
while o + 12 <= end:
    namesz, descsz, typ = struct.unpack_from("<III", d, o)
    desc = o + 12 + (namesz + 3) // 4 * 4
    if d[o + 12:o + 12 + namesz].rstrip(b"\0") == b"KASLR" and typ == 2:
        ntab, = struct.unpack_from("<I", d, desc + 4)
        for t in range(ntab):
            r = desc + 8 + 48 * t
            tname = d[r:r + 32].split(b"\0")[0].decode()
            entsize, = struct.unpack_from("<I", d, r + 32)
            entries += sec[tname][5] // entsize
    o = desc + (descsz + 3) // 4 * 4
print(len(fn), len(gen), entries)
PY
}

# free_slots LOG: the loader's verbose list of free memory when it chose
# the kernel's place, one "START END SLOTS" line (numbers) per region
free_slots() {
	clean_log "$1" | sed -n 's/.*  free \[\([0-9A-Fa-f]*\)-\([0-9A-Fa-f]*\)) RAM slots=\([0-9]*\)$/0x\1 0x\2 \3/p' |
		while read -r a b n; do echo "$((a)) $((b)) $n"; done
}

# lowest_slot LOG: the lowest slot in that list: the first region with
# room, its start 2 MiB-aligned, at or above kaslr.min (16 MiB)
lowest_slot() {
	local a b n s
	while read -r a b n; do
		[ "$n" -gt 0 ] || continue
		s=$(((a + 0x1fffff) & ~0x1fffff))
		[ "$s" -lt $((16 << 20)) ] && s=$((16 << 20))
		echo "$s"
		return 0
	done < <(free_slots "$1")
	return 1
}

# write a kaslr.conf with the given lines, print its path
conf() {
	local f=$WORK/$NAME.conf
	printf '%s\n' "$@" >"$f"
	echo "$f"
}

# boot_format VARIANT [EXT]: boot kernel-VARIANT.elf[.EXT] at place's
# placement (call place first) and expect PASS
boot_format() {
	local v=$1 ext=${2:-}
	boot_payload "$(mkesp "$NAME" "$P/kernel-$v.elf${ext:+.$ext}" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")")" --cpu max
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
