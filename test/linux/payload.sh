# shellcheck shell=bash
# payload.sh - for boot cases that load a Debian kernel's own compressed
# payload as the loader's kernel file (sourced after test/qemu/lib.sh and
# test/linux/lib.sh).
#
# linux_payload_esp KIND TOOL [CONF-LINE...]: fetch the KIND kernel
# (fetch.sh: generic or cloud), cut its payload's stream out of the bzImage
# (the payload less the size word the kernel build appends), decompress it
# once with TOOL (xz or lz4) to learn the link addresses of .text and .brk,
# and build this case's ESP with the stream as vmlinux.EXT and a kaslr.conf.
# Sets LINUX_ESP, TEXT_LINK, BRK_LINK, LINUX_STREAM, LINUX_BIN (the
# decompressed vmlinux.bin, kept in this case's work directory), LINUX_CONF
# (the kaslr.conf lines given).
linux_payload_esp() {
	local kind=$1 tool=$2 bz sects start plen bin cf text brk
	shift 2
	test/linux/fetch.sh "$kind" >/dev/null || fail "no Debian $kind kernel: test/linux/fetch.sh $kind failed"
	case $kind in generic) bz=$B/linux/vmlinuz ;; *) bz=$B/linux/$kind/vmlinuz ;; esac
	u() { od -An -t u"$2" -j "$1" -N "$2" "$bz" | tr -d ' \n'; }
	sects=$(u $((0x1f1)) 1)
	[ "$sects" -eq 0 ] && sects=4
	start=$(((sects + 1) * 512 + $(u $((0x248)) 4))) plen=$(u $((0x24c)) 4)
	LINUX_STREAM=$WORK/$NAME.$tool
	tail -c +$((start + 1)) "$bz" | head -c $((plen - 4)) >"$LINUX_STREAM" ||
		fail "cannot cut the payload out of $bz"
	bin=$WORK/$NAME.vmlinux.bin
	"$tool" -dc "$LINUX_STREAM" >"$bin" || fail "$tool cannot decompress the cut payload"
	LINUX_BIN=$bin
	sec() { readelf -SW "$bin" | sed -n "s/^ *\[ *[0-9]*\] \\$1  *[A-Z]*  *\([0-9a-f]*\) .*/\1/p"; }
	text=$(sec .text) brk=$(sec .brk)
	if [ -z "$text" ] || [ -z "$brk" ]; then
		fail "no .text/.brk in the $kind kernel's vmlinux.bin"
	fi
	# read by linux_boot (test/linux/lib.sh), in the case that sources both
	# shellcheck disable=SC2034
	TEXT_LINK=0x$text BRK_LINK=0x$brk
	LINUX_CONF=("$@")
	cf=$(conf "kernel vmlinux.$tool" verbose "$@" "cmdline $LINUX_CMDLINE")
	LINUX_ESP=$(mkesp "$NAME" - EFI/BOOT/vmlinux."$tool"="$LINUX_STREAM" EFI/BOOT/kaslr.conf="$cf")
}

# linux_recompressed_esp EXT COMMAND...: after linux_payload_esp, compress
# LINUX_BIN with COMMAND LINUX_BIN (writing stdout) into vmlinux.EXT and
# build the ESP around that instead (with the same kaslr.conf lines).
linux_recompressed_esp() {
	local ext=$1 f cf
	shift
	f=$WORK/$NAME.recompressed.$ext
	"$@" "$LINUX_BIN" >"$f" || fail "recompressing vmlinux.bin with '$*' failed"
	cf=$(conf "kernel vmlinux.$ext" verbose "${LINUX_CONF[@]}" "cmdline $LINUX_CMDLINE")
	# shellcheck disable=SC2034 # read by linux_boot (test/linux/lib.sh)
	LINUX_ESP=$(mkesp "$NAME" - EFI/BOOT/vmlinux."$ext"="$f" EFI/BOOT/kaslr.conf="$cf")
}
