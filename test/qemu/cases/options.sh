# options - load options (UCS-2, from the UEFI shell's command line) override
# kaslr.conf beside the loader, and the command line after `--` reaches the
# kernel; an unknown key is refused with a line naming it and an EFI error
# placement: random - how load options are read does not depend on where the kernel lands
img=$(shell_esp) || fail "cannot build the shell ESP"
nsh=$WORK/$NAME.nsh
mcopy -i "$img" "$P/kernel-high.elf.gz" ::/EFI/kaslr/k.gz
# the file names a kernel that does not exist and another command line
mcopy -i "$img" "$(conf '# kaslr.conf: overridden below' 'kernel \EFI\kaslr\absent.elf' 'cmdline from-the-file')" ::/EFI/kaslr/kaslr.conf
place
cat >"$nsh" <<NSH
fs0:\\EFI\\kaslr\\loader.efi kernel=\\EFI\\kaslr\\k.gz kaslr.bogus=1 -- not used
echo "unknown-key returned %lasterror%"
fs0:\\EFI\\kaslr\\loader.efi kernel=\\EFI\\kaslr\\k.gz $PLACE_OPTS -- console=ttyS0 from-options x=1 "quoted words"
echo "good run returned %lasterror%"
NSH
mcopy -i "$img" "$nsh" ::/startup.nsh
boot_payload "$img" --cpu max --timeout 90
expect_pass
st=$(clean_log "$LOG" | sed -n 's/^unknown-key returned //p')
{ [ -n "$st" ] && [ "$st" != 0x0 ]; } || fail "unknown key: status '$st', want an EFI error"
clean_log "$LOG" | grep -q "error: load options: 'kaslr.bogus'" || fail "the error line does not name kaslr.bogus"
got=$(kv "$LINE" cmdline)
[ "$got" = 'console=ttyS0 from-options x=1 "quoted words"' ] || fail "cmdline='$got'"
ok "unknown key -> $st; cmdline='$got'"
