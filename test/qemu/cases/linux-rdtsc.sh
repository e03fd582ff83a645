# linux-rdtsc - the stock Debian kernel on -cpu qemu64 (no RDRAND, no
# EFI_RNG_PROTOCOL): RDTSC is the only source, the loader warns, and the
# kernel still boots where the loader put it
. test/linux/lib.sh
# linux_esp's arguments are optional kaslr.conf lines; this case adds none
# shellcheck disable=SC2119
linux_esp
linux_boot --cpu qemu64 --mem 1G
read -r -a sources <<<"$LX_RNG"
[ "${sources[*]}" = rdtsc ] || fail "entropy sources '$LX_RNG', want rdtsc only"
grep -q 'warning: only RDTSC' "$WORK/$NAME.1.clean" || fail "no weak-entropy warning"
ok "phys=$LX_PHYS offset=$LX_VOFF; sources:$LX_RNG"
