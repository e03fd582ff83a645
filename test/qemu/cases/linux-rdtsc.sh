# linux-rdtsc - the stock Debian kernel on -cpu qemu64 (no RDRAND, no
# EFI_RNG_PROTOCOL): RDTSC is the only source, the loader warns, and the
# kernel still boots where the loader put it
. test/linux/lib.sh
linux_esp
linux_boot --cpu qemu64 --mem 1G
[ "$(echo $LX_RNG)" = rdtsc ] || fail "entropy sources '$LX_RNG', want rdtsc only"
grep -q 'warning: only RDTSC' "$WORK/$NAME.1.clean" || fail "no weak-entropy warning"
ok "phys=$LX_PHYS offset=$LX_VOFF; sources:$LX_RNG"
