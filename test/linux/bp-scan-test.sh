#!/bin/bash
# bp-scan-test.sh - host checks of test/linux/init.sh's boot_params scan
# (bp_scan: does a field an unprivileged user can read hold the physical
# base or the virtual offset?) on made-up boot_params: each check one
# "ok NAME" or "FAIL NAME: ...", then "RESULT bp-scan N M" for
# test/run-unit.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
INIT_FUNCTIONS_ONLY=1
# shellcheck source=test/linux/init.sh
. test/linux/init.sh
p=0 f=0

# bp [OFFSET=HEXBYTES ...]: 4096 bytes of boot_params, zero but for the
# little-endian bytes given at each offset, as one line of hex bytes
bp() {
	local -a b
	local kv o h k
	for ((k = 0; k < 4096; k++)); do b[k]=00; done
	for kv in "$@"; do
		o=$((${kv%%=*})) h=${kv#*=}
		for ((k = 0; k < ${#h}; k += 2)); do b[o + k / 2]=${h:k:2}; done
	done
	echo "${b[*]}"
}
# check NAME WANT PHYS VOFF LINES: bp_scan's hits must be WANT
check() {
	local got
	got=$(printf '%s\n' "$5" | bp_scan "$3" "$4")
	got=${got% *}
	if [ "$got" = "$2" ]; then echo "ok $1"; p=$((p + 1))
	else echo "FAIL $1: hits $got, want $2"; f=$((f + 1)); fi
}
P=0000000005000000 V=000000001ba00000 Z=0000000000000000
# a 1280-pixel-wide frame buffer (lfb_width 0x500 at 0x12, orig_video_points
# 0 at 0x10): the window at 0x10 reads 0x05000000, two fields, no leak
check lfb-width-not-a-base none $P $V "$(bp 0x12=0005 0x14=2003 0x16=2000)"
check lfb-width-not-an-offset none $Z 0000000005000000 "$(bp 0x12=0005)"
# the real 4-byte fields of screen_info are compared
check lfb-base-compared 0x18:phys $P $V "$(bp 0x18=00000005)"
check lfb-size-compared 0x1c:voff $P $V "$(bp 0x1c=0000a01b)"
# elsewhere: a 4-byte field (cmd_line_ptr, 0x228) and an 8-byte one
# (setup_data, 0x250)
check cmd-line-ptr 0x228:phys $P $V "$(bp 0x228=00000005)"
check setup-data-ptr 0x250:voff $P $V "$(bp 0x250=0000a01b00000000)"
# the kernel's own constants are not compared with the offset
check pref-address-not-compared none $P 0000000001000000 "$(bp 0x258=0000000100000000)"
# the e820 table (0x2d0, e820_entries at 0x1e8): an entry that starts or
# ends at the base gives it away, one that merely holds its value as a
# size does not
check e820-start 0x2d0:phys-e820 $P $V "$(bp 0x1e8=01 0x2d0=0000000500000000 0x2d8=0000100000000000 0x2e0=01000000)"
check e820-end 0x2e4:phys-e820 $P $V "$(bp 0x1e8=02 0x2d0=0000000000000000 0x2d8=0000000100000000 \
	0x2e4=0000000400000000 0x2ec=0000000100000000)"
check e820-size-alone none $P $V "$(bp 0x1e8=01 0x2d0=0000100000000000 0x2d8=0000000500000000)"
# a setup_data node is compared from its first byte
check setup-node setup1+0x0:phys $P $V "$(bp)
00 00 00 05 00 00 00 00"
echo "RESULT bp-scan $p $f"
[ "$f" = 0 ]
