# sb-unsigned - under Secure Boot the firmware refuses the unsigned loader
# (the plain build at \EFI\BOOT\BOOTX64.EFI): it never runs, and OVMF's own
# UEFI shell, the next boot option, is refused too
# placement: no edge - the firmware refuses the loader: it never runs
img=$(mkesp "$NAME" "$P/kernel-pie.elf")
boot_payload "$img" --secureboot --timeout 90 --until 'No bootable option'
no_payload
clean_log "$LOG" | grep -q 'kaslr-loader' && fail "the unsigned loader ran"
clean_log "$LOG" | grep -q 'failed to load Boot.*HARDDISK.*Access Denied' ||
	fail "firmware did not say it refused the disk's loader"
ok "firmware: Access Denied"
