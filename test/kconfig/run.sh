#!/bin/bash
# run.sh [--quick] [CELL...] - the kernel-configuration matrix: Linux
# kernels a developer builds, each booted through the loader to the test
# initramfs (test/linux/initramfs.sh cloud) with build/tools/kaslr-sweep at
# random placements and at every edge, each row judged on what the running
# kernel says about itself ("Kernel code" in /proc/iomem, _text in
# /proc/kallsyms: test/linux/init.sh's report) against the loader's choice;
# KCONFIG_JOBS boots at a time (default 2; make test's pool runs it with 1),
# and make's -j for a build (test/kconfig/build.sh).
#
#   run.sh [CELL...]  make test-kconfig: every cell of test/kconfig/cells
#                     (or those named), built from Debian's linux-source-6.1
#                     by test/kconfig/build.sh (cached), swept at 512 MiB
#                     and 4 GiB: a random run and every edge at each (11
#                     boots); then the table: cell, compression, relocation,
#                     boots, passed, build cost.
#   run.sh --quick    make test: no build.  The two kinds of kernel the
#                     loader refused before, made from Debian's cloud kernel
#                     (test/kconfig/derive.sh): one without its relocation
#                     table (as RANDOMIZE_BASE off leaves it), swept at 4 GiB
#                     (6 boots), and one whose header says it is not
#                     relocatable, at 512 MiB: a random boot and
#                     virt-highest (every row lands at its pref_address
#                     whatever is asked; the sweep tier boots it at
#                     phys-highest).
#
# What each row must show, by the kernel's relocation:
#   table     (RELOCATABLE + RANDOMIZE_BASE) the bases the loader chose;
#             virt-highest moves the kernel virtually
#   phys      (no table) _text at the link address, offset 0 in every row;
#             the physical base moves (phys-lowest below phys-highest)
#   none      (not RELOCATABLE) every row at its pref_address and offset 0,
#             the placement line saying "(fixed: not relocatable)"; at 4 GiB
#             kaslr.phys=above4g is refused (one row, expected to fail);
#             kaslr-sweep marks the others fixed (JUnit property placement
#             "fixed: not relocatable"), and no row of the other kinds
# and at 4 GiB phys-above4g (when it is a row) above 4 GiB.
# Last line: "kconfig: N passed, N failed".  Logs: build/kconfig/results/.
# shellcheck disable=SC2015 # ok only echoes and counts: "A && ok || bad"
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
# shellcheck source=test/tally.sh
. test/tally.sh
S=$B/tools/kaslr-sweep
W=$B/kconfig/results
mkdir -p "$W"
LINK=0xffffffff81000000
quick=0
[ "${1:-}" = --quick ] && { quick=1; shift; }
[ -x "$S" ] && [ -f "$B/BOOTX64.EFI" ] || make --no-print-directory all >"$W/make.txt" 2>&1 ||
	{ bad build "make all failed"; tally_end kconfig; }
if ! U=$(test/linux/initramfs.sh cloud 2>"$W/initramfs.err"); then
	bad initramfs "$(tail -n 1 "$W/initramfs.err")"
	tally_end kconfig
fi

# u FILE OFFSET SIZE: unsigned little-endian integer
u() { od -An -t u"$3" -j "$2" -N "$3" "$1" | tr -d ' \n'; }
rows() { grep -E '^[0-9]+ +[0-9]+[MG] ' "$1"; }

# sweep NAME BZIMAGE RELOC MEMS [EDGE]: kaslr-sweep (every edge, or EDGE
# alone), then every row checked against the kernel's report and RELOC's
# rules; sets NB (rows), NP (rows that passed, the expected refusal
# counted as passed)
sweep() {
	local name=$1 bz=$2 reloc=$3 mems=$4 only=() pref
	[ -n "${5:-}" ] && only=(--only "$5")
	pref=$(printf '0x%x' "$(u "$bz" $((0x258)) 8)")
	# no_timer_check: Linux's IO-APIC timer check counts ticks over a
	# delay loop, which a guest starved by a busy host fails ("IO-APIC +
	# timer doesn't work!", a panic); nothing here depends on it
	"$S" --kernel "$bz" --initrd "$U/initrd.img" --cmdline 'console=ttyS0 panic=-1 quiet no_timer_check' \
		--runs 1 --edges "${only[@]}" --mem "$mems" --tpm12 --jobs "${KCONFIG_JOBS:-2}" --pass '^linux-init: REPORT ' \
		--fail 'Kernel panic|^linux-init: FAIL' --timeout 300 --junit "$W/$name.xml" \
		>"$W/$name.txt" 2>&1
	cat "$W/$name.txt"
	NB=$(rows "$W/$name.txt" | wc -l)
	# one line per row: edge or "random", outcome, the check's verdict
	python3 - "$W/$name.xml" "$reloc" "$LINK" "$pref" >"$W/$name.check" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
f, reloc, link, pref = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
seen = {}
for c in ET.parse(f).getroot().findall("testcase"):
    mem = c.get("classname").split(".")[-1]
    name = c.get("name")
    edge = name.split()[1] if not re.match(r"\d+ [0-9a-f]{64} ", name) else "random"
    out = c.find("system-out").text or ""
    fail = c.find("failure")
    place = re.search(r"placement: phys (0x[0-9A-Fa-f]+) .*\((kaslr\.phys=[^)]*|fixed: [^)]*)\), virt \S+ offset (0x[0-9A-Fa-f]+) .*\((kaslr\.virt=[^)]*|fixed: [^)]*)\)", out)
    rep = re.search(r"linux-init: REPORT text=(0x[0-9a-f]+) code=(0x[0-9a-f]+)", out)
    row = f"{mem} {edge}"
    if reloc == "none" and edge == "phys-above4g":
        why = fail is not None and fail.get("message") == "the loader refused"
        print(row, "ok" if why else "bad", "kaslr.phys=above4g refused" if why else "not refused")
        continue
    if fail is not None or not place or not rep:
        print(row, "bad", fail.get("message") if fail is not None else "no placement or report line")
        continue
    phys, voff, text, code = int(place[1], 16), int(place[3], 16), int(rep[1], 16), int(rep[2], 16)
    errs = []
    if code != phys: errs.append(f"Kernel code at {code:#x}, loader {phys:#x}")
    if text - link != voff: errs.append(f"_text {text:#x}, loader's offset {voff:#x}")
    if reloc in ("phys", "none") and voff != 0: errs.append(f"offset {voff:#x}, want 0")
    if reloc in ("phys", "none") and "fixed" not in place[4]: errs.append("virt not said fixed")
    if reloc == "none" and (phys != pref or "fixed: not relocatable" not in place[2]):
        errs.append(f"phys {phys:#x}, want pref_address {pref:#x}, fixed")
    if edge == "phys-above4g" and phys < 1 << 32: errs.append(f"phys-above4g at {phys:#x}")
    # kaslr-sweep's own word for the placement: fixed exactly when the
    # kernel is not relocatable
    said = {p.get("name"): p.get("value") for p in c.iter("property")}.get("placement", "")
    if reloc == "none" and said != "fixed: not relocatable": errs.append(f"kaslr-sweep says '{said}', not fixed")
    if reloc != "none" and said.startswith("fixed"): errs.append(f"kaslr-sweep says '{said}'")
    seen[(mem, edge)] = (phys, voff)
    print(row, "bad" if errs else "ok", "; ".join(errs) or f"phys={phys:#x} voffset={voff:#x}")
# across rows: what moves must move
for mem in sorted({m for m, _ in seen}):
    lo, hi, vh = seen.get((mem, "phys-lowest")), seen.get((mem, "phys-highest")), seen.get((mem, "virt-highest"))
    if reloc in ("table", "phys") and lo and hi:
        print(mem, "phys-range", "ok" if lo[0] < hi[0] else "bad", f"lowest {lo[0]:#x} highest {hi[0]:#x}")
    if reloc == "table" and vh:
        print(mem, "virt-range", "ok" if vh[1] > 0 else "bad", f"virt-highest offset {vh[1]:#x}")
EOF
	NP=0
	while read -r mem edge verdict why; do
		if [ "$verdict" = ok ]; then
			ok "$name $mem $edge: $why"
			[ "$edge" = phys-range ] || [ "$edge" = virt-range ] || NP=$((NP + 1))
		else
			bad "$name $mem $edge" "$why"
		fi
	done <"$W/$name.check"
	[ -s "$W/$name.check" ] || bad "$name" "no rows checked (kaslr-sweep: $(tail -n 1 "$W/$name.txt"))"
	[ "$NB" -gt 0 ] || bad "$name" "no rows"
}

# reloc_of BZIMAGE CONFIG: table, phys or none
reloc_of() {
	if [ "$(u "$1" $((0x234)) 1)" = 0 ]; then echo none
	elif grep -q '^CONFIG_RANDOMIZE_BASE=y' "$2"; then echo table
	else echo phys
	fi
}

if [ "$quick" = 1 ]; then
	if ! D=$(test/kconfig/derive.sh 2>"$W/derive.err"); then
		bad derive "$(tail -n 1 "$W/derive.err")"
		tally_end kconfig
	fi
	sweep debian-notable "$D/notable.bzImage" phys 4G
	sweep debian-fixed "$D/fixed.bzImage" none 512M virt-highest
	tally_end kconfig
fi

# every cell, in the order the file names sort (x86_64-defconfig, the
# costly one, last)
cells=("$@")
if [ ${#cells[@]} -eq 0 ]; then
	for f in test/kconfig/cells/*.config; do cells+=("$(basename "$f" .config)"); done
fi
table=()
for c in "${cells[@]}"; do
	echo "== $c"
	if ! C=$(test/kconfig/build.sh "$c" 2>"$W/$c.build.err"); then
		bad "$c build" "$(tail -n 1 "$W/$c.build.err")"
		table+=("| $c | - | - | 0 | 0 | build failed |")
		continue
	fi
	ok "$c build ($(cat "$C/cost"))"
	z=$(sed -n 's/^CONFIG_KERNEL_\(GZIP\|XZ\|LZ4\|ZSTD\|BZIP2\|LZMA\|LZO\)=y$/\1/p' "$C/config" | tr '[:upper:]' '[:lower:]')
	r=$(reloc_of "$C/bzImage" "$C/config")
	sweep "$c" "$C/bzImage" "$r" 512M,4G
	cost=$(sed -n 's/^wall=\([0-9]*\) cpu=\([0-9]*\) tree=\(.*\)$/\2 s CPU, \1 s wall, in \3/p' "$C/cost")
	[ -n "$cost" ] || bad "$c build" "its cost line '$(cat "$C/cost")' does not read as wall= cpu= tree="
	table+=("| $c | ${z:-?} | $r | $NB | $NP | $cost |")
done
echo
echo "| cell | compression | relocation | boots | passed | build here (user + system CPU, wall, the tree and what it held before) |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${table[@]}"
tally_end kconfig
