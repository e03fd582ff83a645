# linux-nokaslr - "nokaslr" on the kernel's command line governs the loader
# as it governs Linux's own decompressor: the lowest valid physical slot,
# the link-time virtual address, and KASLR_FLAG clear, so that the kernel
# itself reports its offset disabled (on the panic the initramfs asks for).
# placement: no edge - nokaslr on the kernel command line is its subject: the lowest slot, the link-time address
. test/linux/user.sh
user_boot generic 'console=ttyS0 panic=-1 quiet no_timer_check nokaslr kl.panic=1' -- --cpu max
user_check_common
[ $((U_TEXT)) -eq $((LINUX_LINK)) ] || fail "_text at $U_TEXT, want the link address $LINUX_LINK"
clean_log "$LOG" | grep -q 'Kernel Offset: disabled' || fail "the kernel does not report its offset disabled"
# the lowest slot: the first free region (the loader's verbose list of
# memory free when it chose) with room, 2 MiB-aligned, at or above 16 MiB
lowest=$(lowest_slot "$LOG")
[ -n "$lowest" ] || fail "no free-memory list from the loader (verbose)"
[ $((U_CODE)) -eq "$lowest" ] || fail "Kernel code at $U_CODE, the lowest slot is $(printf 0x%x "$lowest")"
ok "code=$U_CODE text=$U_TEXT, Kernel Offset: disabled"
