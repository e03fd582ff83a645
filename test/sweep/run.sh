#!/bin/bash
# run.sh - the placement-sweep tier: build/tools/kaslr-sweep run as a kernel
# CI would run it, judged on what the booted kernels say about themselves.
#
#   bad input        a missing kernel, a regex that does not compile, --runs 0
#                    without --edges, a bad --seed: one line each on stderr,
#                    exit 2, no boot
#   planted bug      kernel-high.elf with payload.bug=top16m fails only when
#                    its image reaches into the top 16 MiB of the virtual
#                    window (8 of its 1023 slots): --edges catches it at
#                    virt-highest; the row's reproduce line, run as printed,
#                    fails again with the same symptom at the same offset
#   no bug           the same kernel without the switch: every run and edge
#                    passes, exit 0; each row's bases are the payload's own
#   Debian kernel    the cloud bzImage with the busybox initramfs, a run and
#                    every edge at 512M and 4G: all pass, and each row's
#                    physical base and virtual offset are what the running
#                    kernel reports ("Kernel code" in /proc/iomem, _text)
#   JUnit            every --junit file parses (python3 xml.etree) with one
#                    testcase per row and the failures counted right
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
# rows FILE: the table's rows (run memory kind what phys voffset outcome secs)
rows() { grep -E '^[0-9]+ +[0-9]+[MG] ' "$1"; }
# field FILE EDGE COLUMN: a column of the row of that edge
field() { rows "$1" | awk -v e="$2" -v c="$3" '$4 == e { print $c }'; }

# ---------------------------------------------------------------- planted bug
"$S" --kernel "$K" --cmdline 'payload.bug=top16m' --runs 2 --edges --mem 512M --jobs 2 \
	--pass "$NPASS" --fail "$NFAIL" --timeout 120 --junit "$W/bug.xml" >"$W/bug.txt" 2>&1
rc=$?
cat "$W/bug.txt"
nrows=$(rows "$W/bug.txt" | wc -l)
nfail=$(rows "$W/bug.txt" | awk '$7 != "pass"' | wc -l)
rfail=$(rows "$W/bug.txt" | awk '$3 == "random" && $7 != "pass"' | wc -l)
[ "$rc" = 1 ] && ok "planted bug: the sweep exits 1" || bad "planted bug: exit $rc, want 1"
[ "$nrows" = 6 ] && ok "planted bug: 6 rows (2 runs, 4 edges at 512M)" || bad "planted bug: $nrows rows, want 6"
if [ "$(field "$W/bug.txt" virt-highest 7)" = fail ]; then
	ok "planted bug: caught at virt-highest (voffset $(field "$W/bug.txt" virt-highest 6))"
else
	bad "planted bug: virt-highest did not fail"
fi
[ "$(field "$W/bug.txt" virt-lowest 7)" = pass ] && [ "$(field "$W/bug.txt" phys-lowest 7)" = pass ] &&
	ok "planted bug: the lowest edges pass" || bad "planted bug: a lowest edge failed"
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

# its reproduce line, run as printed: fails again, the same way, same place
repro=$(grep -A2 -E '^[0-9]+ +512M +edge +virt-highest ' "$W/bug.txt" | sed -n 's/^  reproduce: //p')
if [ -z "$repro" ]; then
	bad "reproduce: no reproduce line for virt-highest"
else
	echo "reproduce: $repro"
	# the printed command names the installed tool; run this tree's
	cmd=("$S")
	eval "cmd+=(${repro#kaslr-sweep })"
	"${cmd[@]}" --junit "$W/repro.xml" >"$W/repro.txt" 2>&1
	rc=$?
	cat "$W/repro.txt"
	[ "$rc" = 1 ] && ok "reproduce: exits 1 again" || bad "reproduce: exit $rc, want 1"
	[ "$(rows "$W/repro.txt" | wc -l)" = 1 ] && ok "reproduce: one boot" || bad "reproduce: not one boot"
	[ "$(field "$W/repro.txt" virt-highest 6)" = "$(field "$W/bug.txt" virt-highest 6)" ] &&
		[ "$(field "$W/repro.txt" virt-highest 5)" = "$(field "$W/bug.txt" virt-highest 5)" ] &&
		ok "reproduce: the same bases" || bad "reproduce: other bases"
	grep -q 'payload: FAIL planted_bug' "$W/repro.xml" && ok "reproduce: the same symptom" ||
		bad "reproduce: not the planted bug"
fi

# ---------------------------------------------------------------- no bug
"$S" --kernel "$K" --runs 1 --edges --mem 512M --jobs 2 --pass "$NPASS" --fail "$NFAIL" \
	--timeout 120 --junit "$W/nobug.xml" >"$W/nobug.txt" 2>&1
rc=$?
cat "$W/nobug.txt"
nrows=$(rows "$W/nobug.txt" | wc -l)
[ "$rc" = 0 ] && ok "no bug: the sweep exits 0" || bad "no bug: exit $rc, want 0"
[ "$nrows" = 5 ] && [ "$(rows "$W/nobug.txt" | awk '$7 != "pass"' | wc -l)" = 0 ] &&
	ok "no bug: 5 boots, all passed" || bad "no bug: $nrows rows, not all passed"
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
sys.exit(0 if n == 5 else 1)
EOF

# ---------------------------------------------------------------- Debian kernel
bz=$B/linux/cloud/vmlinuz
if ! U=$(test/linux/initramfs.sh cloud 2>"$W/initramfs.err"); then
	bad "debian: no initramfs" "$(tail -n 1 "$W/initramfs.err")"
else
	"$S" --kernel "$bz" --initrd "$U/initrd.img" --cmdline 'console=ttyS0 panic=-1 quiet' \
		--runs 1 --edges --mem 512M,4G --jobs 2 --pass '^linux-init: REPORT ' \
		--fail 'Kernel panic|^linux-init: FAIL' --timeout 180 --junit "$W/debian.xml" \
		>"$W/debian.txt" 2>&1
	rc=$?
	cat "$W/debian.txt"
	nrows=$(rows "$W/debian.txt" | wc -l)
	[ "$rc" = 0 ] && ok "debian: the sweep exits 0" || bad "debian: exit $rc, want 0"
	# 512M: a run and 4 edges; 4G: a run and 5 (RAM above 4 GiB)
	[ "$nrows" = 11 ] && ok "debian: 11 boots" || bad "debian: $nrows rows, want 11"
	a4=$(field "$W/debian.txt" phys-above4g 5)
	[[ $a4 =~ ^0x[0-9a-f]+$ ]] && [ $((a4)) -ge $((1 << 32)) ] &&
		ok "debian: phys-above4g at $a4" || bad "debian: phys-above4g at '$a4', not above 4 GiB"
	junit_check "$W/debian.xml" "$nrows" 0 && ok "debian: JUnit" || bad "debian: JUnit counts"
	# the rows against the running kernel's own report: "Kernel code" starts
	# at the physical base, _text is the link address plus the offset
	python3 - "$W/debian.xml" <<'EOF' && ok "debian: each row's bases are what Linux reports" || bad "debian: a row's bases are not what Linux reports"
import re, sys, xml.etree.ElementTree as ET
LINK = 0xffffffff81000000
n = 0
for c in ET.parse(sys.argv[1]).getroot().findall("testcase"):
    m = re.search(r"phys=(\S+) voffset=(\S+)", c.get("name"))
    r = re.search(r"linux-init: REPORT text=(0x[0-9a-f]+) code=(0x[0-9a-f]+)", c.find("system-out").text or "")
    if not m or not r or int(r[2], 16) != int(m[1], 16) or int(r[1], 16) - LINK != int(m[2], 16):
        print("mismatch:", c.get("name"), r and r.groups())
        sys.exit(1)
    n += 1
print(f"{n} rows match the kernel's /proc/iomem and /proc/kallsyms")
sys.exit(0 if n == 11 else 1)
EOF
fi
tally_end sweep
