# linux-rdtsc - the stock Debian kernel on -cpu qemu64 (no RDRAND, no
# EFI_RNG_PROTOCOL, no \loader\random-seed): RDTSC is the only source, the
# loader warns, the kernel still boots where the loader put it, and it is
# given no seed it would credit: its own log does not show the RNG ready
# at 0.000000 (before it had a clock), as it would with a seed handed over
# in setup_data or the LINUX_EFI_RANDOM_SEED table
# placement: random - linux-rootfs boots this kernel at the edges; the CPU model does not change where it lands
. test/linux/lib.sh
# linux_esp's arguments are optional kaslr.conf lines; this case adds none
place
linux_esp "${PLACE[@]}"
linux_boot --cpu qemu64 --mem 1G
read -r -a sources <<<"$LX_RNG"
[ "${sources[*]}" = rdtsc ] || fail "entropy sources '$LX_RNG', want rdtsc only"
grep -q 'warning: only RDTSC' "$WORK/$NAME.1.clean" || fail "no weak-entropy warning"
crng=$(sed -n 's/^\[ *\([0-9.]*\)\] random: crng init done.*/\1/p' "$WORK/$NAME.1.clean" | head -n 1)
[ "$crng" != 0.000000 ] ||
	fail "the kernel's RNG was ready at 0.000000: it credited a seed made from RDTSC alone"
ok "phys=$LX_PHYS offset=$LX_VOFF; sources:$LX_RNG; crng ready at ${crng:-none before the root-mount panic}"
