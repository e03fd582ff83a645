# linux-memmap - mem= and memmap= on the kernel's command line keep the
# kernel and its initrd out, as Linux's own KASLR does: with 1 GiB of RAM,
# mem=768M and memmap=512M$256M leave only [1 MiB, 256 MiB) to place them
# in; the running kernel says where its code and its RAMDISK are, and the
# kernel occupies from there what its program headers span (its vmlinux,
# test/linux/fetch.sh's repack of the same bzImage).  At the highest edge
# the kernel ends within one slot (2 MiB) of 256 MiB, so that the check
# would fail there with a footprint 2 MiB larger than the file's; the case
# checks that too.
# placement: edges
. test/linux/user.sh
place
# shellcheck disable=SC2016 # the $ is memmap='s own
user_boot generic 'console=ttyS0 panic=-1 quiet no_timer_check mem=768M memmap=512M$0x10000000' "${PLACE[@]}" -- --cpu max
user_check_common
span=$(user_span generic) || fail "no program headers for the generic kernel's vmlinux"
limit=$((0x10000000))
# below SPAN: the kernel, SPAN bytes from its code's start, ends at or below 256 MiB
below() { [ $((U_CODE + $1)) -le "$limit" ]; }
below "$span" || fail "Kernel code at $U_CODE + $span bytes (its program headers): the kernel reaches past 256 MiB"
if [ "$TEST_PLACEMENT" = highest ]; then
	below $((span + (2 << 20))) &&
		fail "Kernel code at $U_CODE at the highest edge: a footprint 2 MiB larger than $span would still fit below 256 MiB"
fi
rd_end=$((${U_RAMDISK#*-}))
[ "$rd_end" -lt "$limit" ] || fail "RAMDISK $U_RAMDISK reaches into the memmap= range"
ok "code=$U_CODE span=$span end=$(printf 0x%x $((U_CODE + span))) ramdisk=$U_RAMDISK"
