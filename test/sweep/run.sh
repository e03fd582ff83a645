#!/bin/bash
# run.sh - the placement-sweep tier: build/tools/kaslr-sweep run as a kernel
# CI would run it, judged on what the booted kernels say about themselves;
# SWEEP_JOBS boots at a time (default 2; make test's pool runs it with 1).
#
#   bad input        a missing kernel, a regex that does not compile, --runs 0
#                    without --edges, a bad --seed, --accel: one line each
#                    on stderr, exit 2, no boot
#   broken runner    no OVMF (KASLR_SWEEP_OVMF), no qemu on PATH, a file too
#                    big for the ESP image, a JUnit file it cannot write,
#                    --accel kvm without /dev/kvm: one line each on stderr,
#                    exit 3, no boot
#   --help           lists every option the tool takes, with its default
#   slow serial      a stand-in QEMU writes the pass line in two parts
#                    0.6 s apart: the boot passes on the whole line, which
#                    the JUnit file keeps; a prompt with no newline still
#                    matches --pass; test/qemu/boot.sh --until, likewise,
#                    stops the boot only once the line is whole
#   planted bug      kernel-high.elf with payload.bug=top16m fails only when
#                    its image reaches into the top 16 MiB of the virtual
#                    window (8 of its 1023 slots): --edges catches it at
#                    virt-highest; the row's reproduce line, run verbatim
#                    from this directory, fails again with the same symptom
#                    at the same offset
#   reproduce, PATH  the tool found on PATH (a link to it): the reproduce
#                    line names it as kaslr-sweep and runs as printed;
#                    --qemu-arg reaches QEMU (one it refuses fails the boot,
#                    QEMU's complaint in the row's why)
#   no bug           the same kernel without the switch, at 512M and 4G (two
#                    memory sizes in one sweep): every run and edge passes,
#                    exit 0, phys-above4g above 4 GiB; each row's bases are
#                    the payload's own
#   Debian kernel    the cloud bzImage with --initramfs-report (the busybox
#                    /init of the boot tests), a run and every edge at 4G:
#                    all pass, and each row's physical base and
#                    virtual offset are what the running kernel reports
#                    ("Kernel code" in /proc/iomem, _text), in the rows'
#                    kernel columns and in the JUnit file; its rows are
#                    random or edge, none fixed
#   fixed kernel     the cloud bzImage that says it is not relocatable
#                    (test/kconfig/derive.sh fixed), a run and the
#                    phys-highest edge at 512M: both boot at its
#                    pref_address, as the kernel itself reports, and the
#                    sweep marks both fixed, not random: the rows' kind, the
#                    last line ("2 at a fixed address, not random (not
#                    relocatable)"), each JUnit testcase's name and its
#                    placement property
#   JUnit            every --junit file parses (python3 xml.etree) with one
#                    testcase per row and the failures counted right
#   UKI              a unified kernel image built as the boot cases build
#                    theirs (test/linux/uki.sh), 3 boots with its .cmdline
#                    and 1 with --cmdline, one at a time: all pass, each
#                    kernel at the loader's bases and with the command line
#                    the rules give (the .cmdline, or --cmdline instead)
#
# Last line: "sweep: N passed, N failed".
# ok only echoes and counts, so "A && ok || bad" is an if-then-else here
# shellcheck disable=SC2015
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
# shellcheck source=test/tally.sh
. test/tally.sh
S=$B/tools/kaslr-sweep
P=$B/payload
K=$P/kernel-high.elf
W=$B/sweep
rm -rf "$W"
mkdir -p "$W"
[ -x "$S" ] && [ -f "$K" ] || make --no-print-directory all >"$W/make.txt" 2>&1 ||
	{ bad build "make all failed"; tally_end sweep; }
NPASS='^payload: PASS' NFAIL='^payload: FAIL'

# ---------------------------------------------------------------- bad input
# bad_input NAME ARGS...: exit 2, one line on stderr naming the problem, no rows
bad_input() {
	local name=$1 want=$2 rc
	shift 2
	"$S" "$@" >"$W/$name.out" 2>"$W/$name.err"
	rc=$?
	if [ "$rc" != 2 ]; then bad "bad-input $name" "exit $rc, want 2"
	elif [ "$(wc -l <"$W/$name.err")" != 1 ]; then bad "bad-input $name" "$(wc -l <"$W/$name.err") lines on stderr"
	elif ! grep -q "^kaslr-sweep: .*$want" "$W/$name.err"; then bad "bad-input $name" "said: $(cat "$W/$name.err")"
	elif [ -s "$W/$name.out" ]; then bad "bad-input $name" "printed rows"
	else ok "bad-input $name: $(cat "$W/$name.err")"
	fi
}
bad_input missing-kernel 'no such readable file' --kernel "$W/none.elf" --pass x
bad_input bad-pass 'not a valid extended regular expression' --kernel "$K" --pass 'PASS('
bad_input bad-fail 'not a valid extended regular expression' --kernel "$K" --pass x --fail '[a'
bad_input runs-0 'boots nothing' --kernel "$K" --pass x --runs 0
bad_input bad-seed '64 hex digits' --kernel "$K" --pass x --seed 12
bad_input bad-mem "sizes look like" --kernel "$K" --pass x --mem 512
bad_input bad-accel "kvm or tcg" --kernel "$K" --pass x --accel xen

# ---------------------------------------------------------------- broken runner
# broken NAME WANT [VAR=VALUE...] -- ARGS...: exit 3, one line on stderr
# matching WANT, no rows
broken() {
	local name=$1 want=$2 envs=() rc
	shift 2
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$S" "$@" >"$W/$name.out" 2>"$W/$name.err"
	rc=$?
	if [ "$rc" != 3 ]; then bad "broken $name" "exit $rc, want 3: $(cat "$W/$name.err")"
	elif [ "$(wc -l <"$W/$name.err")" != 1 ]; then bad "broken $name" "$(wc -l <"$W/$name.err") lines on stderr"
	elif ! grep -q "^kaslr-sweep: .*$want" "$W/$name.err"; then bad "broken $name" "said: $(cat "$W/$name.err")"
	elif [ -s "$W/$name.out" ]; then bad "broken $name" "printed rows"
	else ok "broken $name: $(cat "$W/$name.err")"
	fi
}
broken no-ovmf 'no OVMF firmware' KASLR_SWEEP_OVMF="$W/no-ovmf" -- --kernel "$K" --pass x
# a PATH with every command of this one but QEMU's
mkdir -p "$W/noqemu"
for d in /usr/local/bin /usr/bin /bin; do cp -sn "$d"/* "$W/noqemu/" 2>/dev/null; done
rm -f "$W/noqemu/qemu-system-x86_64"
broken no-qemu 'qemu-system-x86_64 missing' PATH="$W/noqemu" -- --kernel "$K" --pass x
# and one with QEMU but no swtpm: only --tpm12 needs it
ln -sf "$(command -v qemu-system-x86_64)" "$W/noqemu/"
rm -f "$W/noqemu/swtpm"
broken no-swtpm 'swtpm missing, which --tpm12 needs' PATH="$W/noqemu" -- --kernel "$K" --pass x --tpm12
truncate -s 4G "$W/big.img"
broken too-big 'too big for the ESP image' -- --kernel "$K" --pass x --initrd "$W/big.img"
rm -f "$W/big.img"
broken junit 'cannot write the JUnit file' -- --kernel "$K" --pass x --junit "$W/no/such/dir/x.xml"
if [ ! -w /dev/kvm ]; then
	broken kvm '/dev/kvm is not usable' -- --kernel "$K" --pass x --accel kvm
fi

# ---------------------------------------------------------------- --help
# every --option the tool's argument loop takes is in --help, with its default
opts=$(sed -n 's/^\t\(-h|\)\{0,1\}\(--[a-z0-9-]*\)).*/\2/p' "$S" | sort -u)
"$S" --help >"$W/help.txt" 2>&1
missing=''
for o in $opts; do
	grep -qE "^  (-h, )?$o( |$)" "$W/help.txt" || missing="$missing $o"
done
[ -n "$opts" ] && [ -z "$missing" ] && ok "help: lists all $(echo "$opts" | wc -w) options" ||
	bad "help" "not listed:${missing:- (no options found)}"
nodefault=$(awk '/^  --/ { if (o != "" && !d) print o; o = $1; d = 0 } /default|required/ { d = 1 }
	END { if (o != "" && !d) print o }' "$W/help.txt")
[ -z "$nodefault" ] && ok "help: every option says its default" || bad "help" "no default for: $nodefault"

# ---------------------------------------------------------------- manual page
# docs/man/kaslr-sweep.1 renders without a warning (mandoc's lint, groff's
# warnings), and its OPTIONS are exactly the options --help lists
man=docs/man/kaslr-sweep.1
lint=$( { mandoc -T lint "$man" 2>&1 || echo "mandoc -T lint failed"; } | head -n 5)
[ -z "$lint" ] && ok "man: mandoc -T lint says nothing" || bad "man" "mandoc -T lint: $lint"
lint=$( { groff -ww -z -man "$man" 2>&1 || echo "groff failed"; } | head -n 5)
[ -z "$lint" ] && ok "man: groff -ww says nothing" || bad "man" "groff -ww: $lint"
# the tags of the OPTIONS section as rendered; the options --help lists
mandoc -T ascii "$man" | col -b | sed -n '/^OPTIONS/,/^[A-Z]/p' |
	sed -n 's/^       \(-h, \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p' | sort -u >"$W/man-opts.txt"
sed -n 's/^  \(-h, \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p' "$W/help.txt" | sort -u >"$W/help-opts.txt"
d=$(diff "$W/help-opts.txt" "$W/man-opts.txt" | sed -n 's/^< /only in --help: /p; s/^> /only in the page: /p' | tr '\n' ' ')
[ -s "$W/man-opts.txt" ] && [ -z "$d" ] && ok "man: the page's options are --help's ($(wc -l <"$W/man-opts.txt"))" ||
	bad "man" "${d:-no options in the page}"

# ---------------------------------------------------------------- helpers
# junit_check FILE ROWS FAILED: the XML parses, with ROWS testcases of which
# FAILED have a failure element, and testsuite's counts say the same
junit_check() {
	python3 - "$@" <<'EOF'
import sys, xml.etree.ElementTree as ET
f, rows, failed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = ET.parse(f).getroot()
cases = s.findall("testcase")
nf = sum(1 for c in cases if c.find("failure") is not None)
ok = (s.tag == "testsuite" and len(cases) == rows and nf == failed
      and int(s.get("tests")) == rows and int(s.get("failures")) == failed)
print(f"{len(cases)} testcases, {nf} failures (want {rows}, {failed})")
sys.exit(0 if ok else 1)
EOF
}
# rows FILE: the table's rows (run memory kind what phys voffset
# kernel-phys kernel-voffset outcome secs)
rows() { grep -E '^[0-9]+ +[0-9]+[MG] ' "$1"; }
# field FILE EDGE COLUMN: a column of the row of that edge
field() { rows "$1" | awk -v e="$2" -v c="$3" '$4 == e { print $c }'; }

# ---------------------------------------------------------------- slow serial
# A QEMU on PATH that writes its serial log as a guest on a starved host
# would: the pass line in two parts 0.6 s apart (cut), or a prompt with no
# newline (prompt); then it waits, so only the log decides.  The sweep
# judges the whole line (its row and JUnit file keep all of it) and still
# takes the prompt.
mkdir -p "$W/slowqemu"
cat >"$W/slowqemu/qemu-system-x86_64" <<'FAKE'
#!/bin/bash
log=
while [ $# -gt 0 ]; do [ "$1" = -serial ] && log=${2#file:}; shift; done
echo 'kaslr-loader: placement: phys 0x1600000 slot 0 of 9 (kaslr.phys=random), virt 0xFFFFFFFF81600000 offset 0x600000 slot 3 of 9 (kaslr.virt=random)' >>"$log"
case $SLOW_SERIAL in
cut) printf 'payload: PASS phys=0x16' >>"$log"
	read -rt "${SLOW_PAUSE:-0.6}" <>"${0%/*}/tick"
	printf '00000 voffset=0x600000 end\n' >>"$log" ;;
prompt) printf 'login: ' >>"$log" ;;
esac
exec sleep 60
FAKE
chmod +x "$W/slowqemu/qemu-system-x86_64"
mkfifo "$W/slowqemu/tick"
SLOW_SERIAL=cut PATH="$W/slowqemu:$PATH" "$S" --kernel "$K" --runs 1 --mem 512M --jobs 1 --pass "$NPASS" \
	--timeout 30 --junit "$W/cut.xml" >"$W/cut.txt" 2>&1
rc=$?
out=$(python3 -c 'import sys, xml.etree.ElementTree as ET
print(ET.parse(sys.argv[1]).getroot().find("testcase/system-out").text.splitlines()[-1])' "$W/cut.xml" 2>&1)
[ "$rc" = 0 ] && [ "$out" = "payload: PASS phys=0x1600000 voffset=0x600000 end" ] &&
	ok "slow serial: a pass line written in two parts is judged whole" ||
	bad "slow serial" "exit $rc, the JUnit file kept '$out'"
SLOW_SERIAL=prompt PATH="$W/slowqemu:$PATH" "$S" --kernel "$K" --runs 1 --mem 512M --jobs 1 --pass 'login: $' \
	--timeout 30 >"$W/prompt.txt" 2>&1
rc=$?
[ "$rc" = 0 ] && [ "$(rows "$W/prompt.txt" | awk '{ print $9 }')" = pass ] &&
	ok "slow serial: a prompt with no newline matches --pass" ||
	bad "slow serial" "prompt: exit $rc, $(rows "$W/prompt.txt")"
# the boot tests' runner, stopped by --until, under the same rule (it
# waits half a second after a match: the pause here is longer)
SLOW_SERIAL=cut SLOW_PAUSE=0.8 BOOT_NO_TPM=1 PATH="$W/slowqemu:$PATH" test/qemu/boot.sh --log "$W/boot-cut.log" \
	--timeout 30 --until "$NPASS" "$K" 2>"$W/boot-cut.err"
rc=$?
[ "$rc" = 0 ] && [ "$(tail -n 1 "$W/boot-cut.log")" = "payload: PASS phys=0x1600000 voffset=0x600000 end" ] &&
	ok "slow serial: boot.sh --until waits for the whole line" ||
	bad "slow serial" "boot.sh: exit $rc, the log ends '$(tail -n 1 "$W/boot-cut.log")'"

# ---------------------------------------------------------------- planted bug
"$S" --kernel "$K" --cmdline 'payload.bug=top16m' --runs 2 --edges --mem 512M --tpm12 --jobs "${SWEEP_JOBS:-2}" \
	--pass "$NPASS" --fail "$NFAIL" --timeout 120 --junit "$W/bug.xml" >"$W/bug.txt" 2>&1
rc=$?
cat "$W/bug.txt"
nrows=$(rows "$W/bug.txt" | wc -l)
nfail=$(rows "$W/bug.txt" | awk '$9 != "pass"' | wc -l)
rfail=$(rows "$W/bug.txt" | awk '$3 == "random" && $9 != "pass"' | wc -l)
[ "$rc" = 1 ] && ok "planted bug: the sweep exits 1" || bad "planted bug: exit $rc, want 1"
[ "$nrows" = 6 ] && ok "planted bug: 6 rows (2 runs, 4 edges at 512M)" || bad "planted bug: $nrows rows, want 6"
if [ "$(field "$W/bug.txt" virt-highest 9)" = fail ]; then
	ok "planted bug: caught at virt-highest (voffset $(field "$W/bug.txt" virt-highest 6))"
else
	bad "planted bug: virt-highest did not fail"
fi
# the bug is a threshold in the virtual offset: every failing row lies above
# every passing one, whichever rows drew what (phys-lowest draws its
# virtual offset at random, and may land in the top 16 MiB too)
[ "$(field "$W/bug.txt" virt-lowest 9)" = pass ] &&
	ok "planted bug: virt-lowest passes" || bad "planted bug: virt-lowest failed"
# (an offset below the link address, as virt-lowest's may be, is negative)
split=$(rows "$W/bug.txt" | gawk '{ v = strtonum($6); if (v >= 2^63) v -= 2^64
		if ($9 == "pass") { if (!np++ || v > hp) hp = v } else if (!nf++ || v < lf) lf = v }
	END { print (!np || !nf || hp < lf) ? "ok" : sprintf("a pass at %d MiB, a failure at %d MiB", hp / 2^20, lf / 2^20) }')
[ "$split" = ok ] && ok "planted bug: every failure above every pass in virtual offset" ||
	bad "planted bug: not a threshold: $split"
# random runs: each lands in the 8 bad slots of 1023 with probability 0.8%
echo "planted bug: random runs alone caught it $rfail times in 2 (expected: 2 x 8/1023 = 0.016)"
junit_check "$W/bug.xml" "$nrows" "$nfail" && ok "planted bug: JUnit" || bad "planted bug: JUnit counts"
python3 - "$W/bug.xml" <<'EOF' && ok "planted bug: JUnit failure holds the symptom" || bad "planted bug: JUnit failure without the planted_bug line"
import sys, xml.etree.ElementTree as ET
for c in ET.parse(sys.argv[1]).getroot().findall("testcase"):
    if "virt-highest" in c.get("name"):
        f = c.find("failure")
        sys.exit(0 if f is not None and "payload: FAIL planted_bug" in f.text else 1)
sys.exit(1)
EOF

# its reproduce line, run verbatim from this directory (where the sweep
# ran): fails again, the same way, same place
repro=$(grep -A2 -E '^[0-9]+ +512M +edge +virt-highest ' "$W/bug.txt" | sed -n 's/^  reproduce: //p')
if [ -z "$repro" ]; then
	bad "reproduce: no reproduce line for virt-highest"
else
	echo "reproduce: $repro"
	case $repro in "$S "*) ok "reproduce: names the tool as it was run ($S)" ;;
	*) bad "reproduce" "does not start with $S" ;; esac
	case $repro in *" --tpm12 "*) ok "reproduce: keeps --tpm12" ;; *) bad "reproduce" "lost --tpm12" ;; esac
	eval "$repro" >"$W/repro.txt" 2>&1
	rc=$?
	cat "$W/repro.txt"
	[ "$rc" = 1 ] && ok "reproduce: exits 1 again" || bad "reproduce: exit $rc, want 1"
	[ "$(rows "$W/repro.txt" | wc -l)" = 1 ] && ok "reproduce: one boot" || bad "reproduce: not one boot"
	[ "$(field "$W/repro.txt" virt-highest 6)" = "$(field "$W/bug.txt" virt-highest 6)" ] &&
		[ "$(field "$W/repro.txt" virt-highest 5)" = "$(field "$W/bug.txt" virt-highest 5)" ] &&
		ok "reproduce: the same bases" || bad "reproduce: other bases"
	[ "$(sed -n 's/^  why: //p' "$W/repro.txt")" = "$(grep -A1 -E '^[0-9]+ +512M +edge +virt-highest ' "$W/bug.txt" | sed -n 's/^  why: //p')" ] &&
		ok "reproduce: the same symptom" || bad "reproduce: another symptom"
fi

# ---------------------------------------------------------------- reproduce, PATH
# the tool as a CI job with the package installed runs it: by name, from
# PATH (here a link to this tree's); a QEMU argument it refuses fails the
# boot, and the reproduce line, which names kaslr-sweep, runs as printed
mkdir -p "$W/bin"
ln -sf "$(pwd)/$S" "$W/bin/kaslr-sweep"
PATH="$W/bin:$PATH" kaslr-sweep --kernel "$K" --runs 1 --mem 512M --qemu-arg -no-such-option \
	--pass "$NPASS" --timeout 60 >"$W/path.txt" 2>&1
rc=$?
cat "$W/path.txt"
repro=$(sed -n 's/^  reproduce: //p' "$W/path.txt")
why=$(sed -n 's/^  why: //p' "$W/path.txt")
[ "$rc" = 1 ] && ok "path: a QEMU argument it refuses fails the sweep" || bad "path: exit $rc, want 1"
case $why in *"-no-such-option"*) ok "path: the row says what QEMU said: $why" ;;
*) bad "path" "why: '$why' does not name the option" ;; esac
case $repro in "kaslr-sweep --kernel "*"--qemu-arg -no-such-option "*) ok "path: the reproduce line names kaslr-sweep and the QEMU argument" ;;
*) bad "path" "reproduce: '$repro'" ;; esac
PATH="$W/bin:$PATH" eval "$repro" >"$W/path-repro.txt" 2>&1
rc=$?
[ "$rc" = 1 ] && [ "$(sed -n 's/^  why: //p' "$W/path-repro.txt")" = "$why" ] &&
	ok "path: the reproduce line, as printed, fails the same way" || bad "path" "reproduce: exit $rc, $(sed -n 's/^  why: //p' "$W/path-repro.txt")"

# ---------------------------------------------------------------- no bug
"$S" --kernel "$K" --runs 1 --edges --mem 512M,4G --tpm12 --jobs "${SWEEP_JOBS:-2}" --pass "$NPASS" --fail "$NFAIL" \
	--timeout 120 --junit "$W/nobug.xml" >"$W/nobug.txt" 2>&1
rc=$?
cat "$W/nobug.txt"
nrows=$(rows "$W/nobug.txt" | wc -l)
[ "$rc" = 0 ] && ok "no bug: the sweep exits 0" || bad "no bug: exit $rc, want 0"
# 512M: a run and 4 edges; 4G: a run and 5 (RAM above 4 GiB)
[ "$nrows" = 11 ] && [ "$(rows "$W/nobug.txt" | awk '$9 != "pass"' | wc -l)" = 0 ] &&
	ok "no bug: 11 boots, all passed" || bad "no bug: $nrows rows, not all passed"
a4=$(field "$W/nobug.txt" phys-above4g 5)
[[ $a4 =~ ^0x[0-9a-f]+$ ]] && [ $((a4)) -ge $((1 << 32)) ] &&
	ok "no bug: phys-above4g at $a4" || bad "no bug: phys-above4g at '$a4', not above 4 GiB"
junit_check "$W/nobug.xml" "$nrows" 0 && ok "no bug: JUnit" || bad "no bug: JUnit counts"
# the rows against what the payload itself measured (its PASS line)
python3 - "$W/nobug.xml" <<'EOF' && ok "no bug: each row's bases are the payload's" || bad "no bug: a row's bases are not the payload's"
import re, sys, xml.etree.ElementTree as ET
n = 0
for c in ET.parse(sys.argv[1]).getroot().findall("testcase"):
    m = re.search(r"phys=(\S+) voffset=(\S+)", c.get("name"))
    p = re.search(r"payload: PASS .* phys=(0x[0-9a-f]+) .* voffset=(0x[0-9a-f]+)", c.find("system-out").text or "")
    if not m or not p or int(m[1], 16) != int(p[1], 16) or int(m[2], 16) != int(p[2], 16):
        print("mismatch:", c.get("name"), p and p.groups())
        sys.exit(1)
    n += 1
sys.exit(0 if n == 11 else 1)
EOF

# ---------------------------------------------------------------- Debian kernel
# the recipe for a Linux kernel: --initramfs-report, nothing else to write
if ! bz=$(test/linux/fetch.sh cloud 2>"$W/fetch.err"); then
	bad "debian: no Debian cloud kernel" "$(tail -n 1 "$W/fetch.err")"
else
	"$S" --kernel "$bz" --initramfs-report --runs 1 --edges --mem 4G --tpm12 --jobs "${SWEEP_JOBS:-2}" --timeout 180 \
		--junit "$W/debian.xml" >"$W/debian.txt" 2>&1
	rc=$?
	cat "$W/debian.txt"
	nrows=$(rows "$W/debian.txt" | wc -l)
	[ "$rc" = 0 ] && ok "debian: the sweep exits 0" || bad "debian: exit $rc, want 0"
	# a run and 5 edges (RAM above 4 GiB)
	[ "$nrows" = 6 ] && ok "debian: 6 boots" || bad "debian: $nrows rows, want 6"
	a4=$(field "$W/debian.txt" phys-above4g 5)
	[[ $a4 =~ ^0x[0-9a-f]+$ ]] && [ $((a4)) -ge $((1 << 32)) ] &&
		ok "debian: phys-above4g at $a4" || bad "debian: phys-above4g at '$a4', not above 4 GiB"
	# the kernel's columns: what it reported, equal to the loader's choice
	[ "$(rows "$W/debian.txt" | awk '$7 == "-" || $8 == "-" || $5 != $7 || $6 != $8' | wc -l)" = 0 ] &&
		ok "debian: each row's kernel columns are the loader's bases" ||
		bad "debian: a row's kernel columns differ from the loader's bases or are empty"
	junit_check "$W/debian.xml" "$nrows" 0 && ok "debian: JUnit" || bad "debian: JUnit counts"
	# a relocatable kernel: nothing marked fixed
	[ "$(rows "$W/debian.txt" | awk '$3 != "random" && $3 != "edge"' | wc -l)" = 0 ] &&
		! grep -q 'fixed' <(tail -n 1 "$W/debian.txt") && ! grep -q 'placement" value="fixed' "$W/debian.xml" &&
		ok "debian: every row random or edge, none fixed" || bad "debian: a row of a relocatable kernel marked fixed"
	# the rows against the running kernel's own report, read here from the
	# JUnit file: "Kernel code" starts at the physical base, _text is the
	# link address (the vmlinux's, from the loader's placement line) plus
	# the offset
	python3 - "$W/debian.xml" <<'EOF' && ok "debian: each row's bases are what Linux reports" || bad "debian: a row's bases are not what Linux reports"
import re, sys, xml.etree.ElementTree as ET
n = 0
for c in ET.parse(sys.argv[1]).getroot().findall("testcase"):
    m = re.search(r"phys=(\S+) voffset=(\S+)", c.get("name"))
    out = c.find("system-out").text or ""
    r = re.search(r"linux-init: REPORT text=(0x[0-9a-f]+) code=(0x[0-9a-f]+)", out)
    p = re.search(r"placement: phys \S+ .* virt (0x[0-9A-Fa-f]+) offset (0x[0-9A-Fa-f]+)", out)
    if not m or not r or not p:
        print("no report or placement line:", c.get("name"))
        sys.exit(1)
    link = (int(p[1], 16) - int(p[2], 16)) % 2**64
    if int(r[2], 16) != int(m[1], 16) or (int(r[1], 16) - link) % 2**64 != int(m[2], 16):
        print("mismatch:", c.get("name"), r.groups())
        sys.exit(1)
    n += 1
print(f"{n} rows match the kernel's /proc/iomem and /proc/kallsyms")
sys.exit(0 if n == 6 else 1)
EOF
fi

# ---------------------------------------------------------------- fixed kernel
# a bzImage that is not relocatable: the loader puts it at its
# pref_address (with its warning); the sweep must not call that random
if ! D=$(test/kconfig/derive.sh 2>"$W/derive.err"); then
	bad "fixed: no derived kernel" "$(tail -n 1 "$W/derive.err")"
else
	fz=$D/fixed.bzImage
	pref=$(printf '0x%x' "$(od -An -t u8 -j $((0x258)) -N 8 "$fz" | tr -d ' ')")
	"$S" --kernel "$fz" --initramfs-report --runs 1 --edges --only phys-highest --mem 512M --jobs "${SWEEP_JOBS:-2}" \
		--timeout 180 --junit "$W/fixed.xml" >"$W/fixed.txt" 2>&1
	rc=$?
	cat "$W/fixed.txt"
	[ "$rc" = 0 ] && ok "fixed: the sweep exits 0" || bad "fixed: exit $rc, want 0"
	# both rows: kind fixed, at the pref_address, where Linux says its code is
	[ "$(rows "$W/fixed.txt" | awk -v p="$pref" '$3 == "fixed" && $5 == p && $7 == p && $9 == "pass"' | wc -l)" = 2 ] &&
		ok "fixed: 2 rows of kind fixed at pref_address $pref (the kernel's Kernel code too)" ||
		bad "fixed: not 2 rows of kind fixed at $pref" "$(rows "$W/fixed.txt" | awk '{ print $3, $5, $7, $9 }' | tr '\n' ';')"
	case $(tail -n 1 "$W/fixed.txt") in
	*"; 2 at a fixed address, not random (not relocatable)") ok "fixed: the last line says 2 at a fixed address, not random" ;;
	*) bad "fixed: last line" "$(tail -n 1 "$W/fixed.txt")" ;;
	esac
	junit_check "$W/fixed.xml" 2 0 && ok "fixed: JUnit" || bad "fixed: JUnit counts"
	python3 - "$W/fixed.xml" <<'EOF' && ok "fixed: each JUnit testcase named fixed, placement 'fixed: not relocatable'" || bad "fixed: JUnit testcases not marked fixed"
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().findall("testcase")
for c in cases:
    place = [p.get("value") for p in c.iter("property") if p.get("name") == "placement"]
    print(c.get("name"), place)
    if " fixed phys=" not in c.get("name") or place != ["fixed: not relocatable"]:
        sys.exit(1)
sys.exit(0 if len(cases) == 2 else 1)
EOF
fi

# ---------------------------------------------------------------- unified kernel image
# a UKI built as the boot cases build theirs (test/linux/uki.sh: Debian's
# cloud kernel, the busybox initramfs as .initrd, a .cmdline of its own),
# swept with --initramfs-report, one boot at a time: two runs and
# virt-highest with the image's .cmdline, then a run with --cmdline
# replacing it; every boot passes, its kernel at the loader's bases, and
# the command line each kernel reports (/proc/cmdline, read here from the
# JUnit file) is the one the rules give
uki_cmdline_check() { # uki_cmdline_check XML LINE ROWS
	python3 - "$@" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
f, want, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
n = 0
for c in ET.parse(f).getroot().findall("testcase"):
    r = re.search(r"linux-init: REPORT .* cmdline=(.*)", c.find("system-out").text or "")
    if not r or r[1].strip() != want:
        print("row", c.get("name"), "ran with", repr(r[1] if r else None), "want", repr(want))
        sys.exit(1)
    n += 1
sys.exit(0 if n == rows else 1)
EOF
}
if ! U=$(
	WORK=$W NAME=uki UKI_CMDLINE='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=uki-sweep'
	fail() { echo "$*" >&2; exit 1; }
	# shellcheck source=test/linux/uki.sh
	. test/linux/uki.sh
	uki_build >&2
	echo "$UKI"
) 2>"$W/uki-build.err"; then
	bad "uki: no unified kernel image" "$(tail -n 1 "$W/uki-build.err")"
else
	"$S" --kernel "$U" --initramfs-report --runs 2 --edges --only virt-highest --mem 512M --tpm12 --jobs 1 \
		--timeout 240 --junit "$W/uki.xml" >"$W/uki.txt" 2>&1
	rc=$?
	cat "$W/uki.txt"
	nrows=$(rows "$W/uki.txt" | wc -l)
	[ "$rc" = 0 ] && [ "$nrows" = 3 ] && ok "uki: the sweep exits 0 after 3 boots" || bad "uki: exit $rc after $nrows boots, want 0 after 3"
	[ "$(rows "$W/uki.txt" | awk '$7 == "-" || $8 == "-" || $5 != $7 || $6 != $8' | wc -l)" = 0 ] &&
		ok "uki: each row's kernel columns are the loader's bases" ||
		bad "uki: a row's kernel columns differ from the loader's bases or are empty"
	uki_cmdline_check "$W/uki.xml" 'console=ttyS0 panic=-1 quiet no_timer_check kl.marker=uki-sweep' 3 &&
		ok "uki: each kernel ran with the image's .cmdline" || bad "uki: a kernel did not run with the image's .cmdline"
	line='console=ttyS0 panic=-1 quiet no_timer_check kl.marker=override'
	"$S" --kernel "$U" --initramfs-report --cmdline "$line" --runs 1 --mem 512M --jobs 1 --timeout 240 \
		--junit "$W/uki-override.xml" >"$W/uki-override.txt" 2>&1
	rc=$?
	cat "$W/uki-override.txt"
	[ "$rc" = 0 ] && uki_cmdline_check "$W/uki-override.xml" "$line" 1 &&
		ok "uki: --cmdline replaces the .cmdline" || bad "uki: --cmdline: exit $rc, or the kernel ran with another line"
fi
tally_end sweep
