# linux-memmap - mem= and memmap= on the kernel's command line keep the
# kernel and its initrd out, as Linux's own KASLR does: with 1 GiB of RAM,
# mem=768M and memmap=512M$256M leave only [1 MiB, 256 MiB) to place them
# in; the running kernel says where its code and its RAMDISK are.
. test/linux/user.sh
# shellcheck disable=SC2016 # the $ is memmap='s own
user_boot generic 'console=ttyS0 panic=-1 quiet mem=768M memmap=512M$0x10000000' -- --cpu max
user_check_common
end=$((U_CODE + (60 << 20)))
[ "$end" -le $((0x10000000)) ] || fail "Kernel code at $U_CODE: the kernel reaches past 256 MiB"
rd_end=$((${U_RAMDISK#*-}))
[ "$rd_end" -lt $((0x10000000)) ] || fail "RAMDISK $U_RAMDISK reaches into the memmap= range"
ok "code=$U_CODE ramdisk=$U_RAMDISK"
