# bli - Boot Loader Interface, loader started by the firmware from a GPT ESP:
# after ExitBootServices the payload reads the variables back through the
# runtime services (RT->GetVariable) and must find all seven, volatile, with
# the loader's values: its name and version, its own path, the partition
# GUID, firmware strings, and init < exec times.
# placement: random - the variables it reads back do not depend on where the kernel lands
uuid=0fc63daf-8483-4772-8e79-3d69d8477de4
fat=$WORK/$NAME.fat
place
test/qemu/mkesp.sh "$fat" "$LOADER" "$P/kernel-high.elf" EFI/BOOT/kaslr.conf="$(conf "${PLACE[@]}")" ||
	fail "mkesp failed"
test/qemu/mkgpt.sh "$WORK/$NAME.img" "$fat" "$uuid" || fail "mkgpt failed"
rm -f "$fat"
boot_payload "$WORK/$NAME.img" --cpu max
expect_pass
bli() { clean_log "$LOG" | sed -n "s/^payload-bli: $1=\(.*\) nv=0\$/\1/p" | tail -n 1; }
case $(bli LoaderInfo) in "kaslr-loader "?*) ;; *) fail "LoaderInfo='$(bli LoaderInfo)'" ;; esac
[ "$(bli LoaderImageIdentifier)" = '\EFI\BOOT\BOOTX64.EFI' ] ||
	fail "LoaderImageIdentifier='$(bli LoaderImageIdentifier)'"
[ "$(bli LoaderDevicePartUUID)" = "$(echo "$uuid" | tr a-f A-F)" ] ||
	fail "LoaderDevicePartUUID='$(bli LoaderDevicePartUUID)', want $uuid in upper case"
case $(bli LoaderFirmwareType) in "UEFI "[0-9]*.[0-9][0-9]) ;; *) fail "LoaderFirmwareType='$(bli LoaderFirmwareType)'" ;; esac
case $(bli LoaderFirmwareInfo) in "EDK II "[0-9]*.[0-9][0-9]) ;; *) fail "LoaderFirmwareInfo='$(bli LoaderFirmwareInfo)'" ;; esac
ti=$(bli LoaderTimeInitUSec) te=$(bli LoaderTimeExecUSec)
case "$ti$te" in *[!0-9]* | "") fail "times not decimal: init='$ti' exec='$te'" ;; esac
{ [ "$ti" -gt 0 ] && [ "$te" -gt "$ti" ]; } || fail "times: init=$ti exec=$te"
[ "$(kv "$LINE" bli)" = 7 ] || fail "bli=$(kv "$LINE" bli), want 7"
# quiet by default: the loader said nothing about the interface
clean_log "$LOG" | grep -q 'boot loader interface' && fail "quiet boot printed the BLI line"
ok "init=${ti}us exec=${te}us $(bli LoaderInfo)"
