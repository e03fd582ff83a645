# shellcheck shell=bash
# evlog.sh - for the boot cases that predict PCRs with kaslr-pcr
# (test/qemu/cases/linux-pcr-*.sh; sourced after test/qemu/lib.sh and
# test/linux/user.sh).  The initramfs's /init, given kl.evlog=1, prints
# every active bank's PCRs 0-23 and the event log the kernel offers
# (test/linux/init.sh); these read them back from the serial log.
#
# evlog_boot DIR [boot.sh option...]: a FAT image of the ESP tree DIR,
#   booted once with a fresh TPM (user_boot_again: U_* as user.sh sets
#   them), then EVLOG (the log's file, $WORK/$NAME.N.evlog) and
#   EV_BANKS (the banks the kernel showed, e.g. "sha1 sha256")
# evlog_pcr BANK N: PCR N of that bank as the running kernel read it
# evlog_read BANK LIST: "N:BANK=HEX" lines for the PCRs of LIST (e.g.
#   "0 1 4"), as kaslr-pcr prints them, from the last boot
PCR_TOOL=${PCR_TOOL:-$B/tools/kaslr-pcr}

evlog_boot() {
	local dir=$1 img
	shift
	img=$(dir_img "$dir") || fail "cannot make the ESP image of $dir"
	# shellcheck disable=SC2034 # user_boot_again boots U_ESP
	U_ESP=$img
	rm -rf "$WORK/$NAME.tpm.$((${USER_BOOTS:-0} + 1))"
	user_boot_again --tpm "$WORK/$NAME.tpm.$((${USER_BOOTS:-0} + 1))" --cpu max "$@"
	user_check_common
	EVLOG=$WORK/$NAME.$USER_BOOTS.evlog
	clean_log "$LOG" | sed -n '/^linux-init: EVLOG BEGIN$/,/^linux-init: EVLOG END$/p' |
		grep -E '^[A-Za-z0-9+/=]+$' | base64 -d >"$EVLOG" 2>/dev/null
	[ -s "$EVLOG" ] || fail "boot $USER_BOOTS: no event log from the kernel (kl.evlog=1 on its command line?)"
	EV_BANKS=$(clean_log "$LOG" | sed -n 's/^linux-init: BANK \([a-z0-9]*\) .*/\1/p' | tr '\n' ' ')
	EV_BANKS=${EV_BANKS% }
	[ -n "$EV_BANKS" ] || fail "boot $USER_BOOTS: the kernel showed no PCR bank"
}

evlog_pcr() {
	clean_log "$LOG" | sed -n "s/^linux-init: BANK $1 //p" | tail -n 1 | tr ' ' '\n' |
		sed -n "s/^$2=//p" | tr 'A-F' 'a-f'
}

evlog_read() {
	local n
	for n in $2; do echo "$n:$1=$(evlog_pcr "$1" "$n")"; done
}
