# lib.sh - helpers for the Linux boot cases (test/qemu/cases/linux-*.sh),
# sourced after test/qemu/lib.sh.  One boot of the stock Debian kernel
# through the loader, checked against what the kernel itself reports:
#
#   loader (verbose)                         kernel
#   linux: physical base P, virtual   <->    Kernel Offset: V from L
#     offset V from L                        memblock_reserve: [P+brk-text ...] setup_arch
#                                            reserved[..] [P - ...] (MEMBLOCK dump)
#   linux e820: [mem A-B] type N      <->    BIOS-e820: [mem A-B] usable|reserved|...
#
# The kernel has no root device: it ends in its root-mount panic, which
# prints "Kernel Offset" (panic=-1 then reboots; -no-reboot ends QEMU).
# shellcheck shell=bash

# no_timer_check: under TCG on a busy host Linux's IO-APIC timer probe can
# miss its ticks and panic ("IO-APIC + timer doesn't work!")
LINUX_CMDLINE='console=ttyS0 panic=-1 memblock=debug no_timer_check'
LINUX_UNTIL='Kernel Offset|end Kernel panic'
LINUX_TIMEOUT=${LINUX_TIMEOUT:-300}

# linux_esp [CONF-LINE...]: fetch the kernel (cached) and build this case's
# ESP with a kaslr.conf beside the loader (plus the given lines).
# Sets LINUX_ESP, TEXT_LINK, BRK_LINK.
linux_esp() {
	local gz cf
	gz=$(test/linux/fetch.sh) || fail "no Debian kernel: test/linux/fetch.sh failed (message above)"
	# the facts file holds lines "text_link=0x..." and "brk_link=0x..."
	TEXT_LINK=$(sed -n 's/^text_link=//p' "$gz.facts") BRK_LINK=$(sed -n 's/^brk_link=//p' "$gz.facts")
	{ [ -n "$TEXT_LINK" ] && [ -n "$BRK_LINK" ]; } || fail "no text_link/brk_link in $gz.facts"
	cf=$(conf 'kernel vmlinux.gz' verbose "$@" "cmdline $LINUX_CMDLINE")
	LINUX_ESP=$(mkesp "$NAME" - EFI/BOOT/vmlinux.gz="$gz" EFI/BOOT/kaslr.conf="$cf")
}

# e820 type names as Linux prints them -> numbers
linux_e820_norm() {
	sed -n 's/.*BIOS-e820: \(\[mem [^]]*\]\) \(.*\)$/\1 \2/p' |
		sed -e 's/ usable$/ 1/' -e 's/ reserved$/ 2/' -e 's/ ACPI data$/ 3/' \
		    -e 's/ ACPI NVS$/ 4/' -e 's/ unusable$/ 5/' -e 's/ persistent (type \([0-9]*\))$/ \1/' \
		    -e 's/ soft reserved$/ 4026531839/' -e 's/ type \([0-9]*\)$/ \1/'
}

# linux_boot [boot.sh options]: one boot and every check; sets LX_PHYS,
# LX_VOFF (numbers, printed as 0x…), LX_RNG (the loader's entropy line).
linux_boot() {
	local log_c line p v l kv kl brk want_brk res rs ours theirs
	LINUX_BOOTS=$((${LINUX_BOOTS:-0} + 1))
	LOG=$WORK/$NAME.$LINUX_BOOTS.log
	test/qemu/boot.sh --log "$LOG" --timeout "$LINUX_TIMEOUT" --until "$LINUX_UNTIL" \
		"$@" "$LINUX_ESP" 2>/dev/null
	RC=$?
	log_c=$WORK/$NAME.$LINUX_BOOTS.clean
	clean_log "$LOG" >"$log_c"
	[ "$RC" = 0 ] || fail "boot $LINUX_BOOTS: no Kernel Offset line (boot.sh status $RC; 124 = timeout after ${LINUX_TIMEOUT}s)"
	grep -q 'Linux version 6\.' "$log_c" || fail "boot $LINUX_BOOTS: kernel never printed its banner"
	grep -q 'Kernel panic - not syncing: VFS: Unable to mount root' "$log_c" ||
		fail "boot $LINUX_BOOTS: the kernel did not reach its root-mount panic"

	# the loader's choice (UEFI Print writes hex in upper case)
	line=$(grep -a 'kaslr-loader: linux: physical base' "$log_c" | tail -n 1)
	[ -n "$line" ] || fail "boot $LINUX_BOOTS: no 'linux: physical base' line from the loader"
	p=$(printf '%s\n' "$line" | sed -n 's/.*physical base \(0x[0-9A-Fa-f]*\),.*/\1/p')
	v=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset \(0x[0-9A-Fa-f]*\) from.*/\1/p')
	l=$(printf '%s\n' "$line" | sed -n 's/.*virtual offset 0x[0-9A-Fa-f]* from \(0x[0-9A-Fa-f]*\),.*/\1/p')
	{ [ -n "$p" ] && [ -n "$v" ] && [ -n "$l" ]; } || fail "boot $LINUX_BOOTS: cannot read: $line"
	# kaslr.seed= taken and, at an edge, the edge's slots (test/qemu/lib.sh)
	placed

	# virtual: the kernel's own "Kernel Offset"
	line=$(grep -a 'Kernel Offset: 0x' "$log_c" | tail -n 1)
	kv=$(printf '%s\n' "$line" | sed -n 's/.*Kernel Offset: \(0x[0-9a-f]*\) from \(0x[0-9a-f]*\).*/\1/p')
	kl=$(printf '%s\n' "$line" | sed -n 's/.*Kernel Offset: 0x[0-9a-f]* from \(0x[0-9a-f]*\).*/\1/p')
	[ -n "$kv" ] || fail "boot $LINUX_BOOTS: no 'Kernel Offset: 0x…' (KASLR flag not seen?): $line"
	[ $((kv)) -eq $((v)) ] || fail "boot $LINUX_BOOTS: kernel says offset $kv, loader chose $v"
	{ [ $((kl)) -eq $((l)) ] && [ $((kl)) -eq $((TEXT_LINK)) ]; } ||
		fail "boot $LINUX_BOOTS: link base: kernel $kl, loader $l, ELF $TEXT_LINK"

	# physical: setup_arch reserves .brk by itself at its physical address
	brk=$(sed -n 's/.*memblock_reserve: \[\(0x[0-9a-f]*\)-0x[0-9a-f]*\] setup_arch+.*/\1/p' "$log_c" | head -n 1)
	[ -n "$brk" ] || fail "boot $LINUX_BOOTS: no setup_arch memblock_reserve line (memblock=debug)"
	want_brk=$((p + BRK_LINK - TEXT_LINK))
	[ $((brk)) -eq $want_brk ] ||
		fail "boot $LINUX_BOOTS: kernel's .brk at $brk, want $(printf '0x%x' $want_brk) for base $p"
	# and the reserved block holding it (_text.._end) starts at the base
	res=$(sed -n 's/^.* reserved\[0x[0-9a-f]*\]\t*\s*\[\(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)\].*/\1 \2/p' "$log_c")
	rs=
	while read -r a b; do
		if [ $((a)) -le $((brk)) ] && [ $((brk)) -le $((b)) ]; then rs=$a; fi
	done <<<"$res"
	[ -n "$rs" ] || fail "boot $LINUX_BOOTS: no MEMBLOCK reserved[] entry holds $brk"
	[ $((rs)) -eq $((p)) ] || fail "boot $LINUX_BOOTS: kernel's image reserved from $rs, loader placed it at $p"

	# e820: what the loader handed over == what the kernel printed
	ours=$(sed -n 's/.*kaslr-loader: linux e820: \(\[mem [^]]*\]\) type \([0-9]*\)$/\1 \2/p' "$log_c")
	theirs=$(linux_e820_norm <"$log_c")
	[ -n "$ours" ] || fail "boot $LINUX_BOOTS: the loader printed no e820 table (verbose)"
	[ "$ours" = "$theirs" ] || {
		diff <(echo "$ours") <(echo "$theirs") | head -n 20
		fail "boot $LINUX_BOOTS: kernel's BIOS-e820 table differs from the loader's (diff above: < loader, > kernel)"
	}
	# the results, read by the case that sourced this file (SC2034: the
	# linter checks this file on its own, without the case)
	# shellcheck disable=SC2034
	{
		LX_PHYS=$p LX_VOFF=$v
		LX_RNG=$(grep -a 'kaslr-loader: entropy sources:' "$log_c" | tail -n 1 | sed 's/.*sources://')
		LX_E820=$(echo "$ours" | wc -l)
	}
}
