# linux-spread - three boots of the stock Debian kernel (RDRAND path, 1 GiB):
# each time the kernel's own "Kernel Offset", its image reservation and its
# e820 table equal what the loader chose and handed over (test/linux/lib.sh);
# not the same virtual offset three times, nor the same physical base (of
# some 450 positions each: all three equal by chance about once in 200,000
# runs; the many boots of the other cases check every placement's checks)
# placement: no edge - its subject is the loader's own draw: three boots on its entropy, not always the same place
. test/linux/lib.sh
# linux_esp's arguments are optional kaslr.conf lines; this case adds none
# shellcheck disable=SC2119
linux_esp
virts=() physs=()
for i in 1 2 3; do
	linux_boot --cpu max --mem 1G
	case $LX_RNG in *rdrand*) ;; *) fail "boot $i: entropy sources '$LX_RNG', want rdrand" ;; esac
	case $LX_RNG in *efi-rng*) fail "boot $i: efi-rng without virtio-rng" ;; esac
	virts+=("$LX_VOFF") physs+=("$LX_PHYS")
done
nv=$(printf '%s\n' "${virts[@]}" | sort -u | wc -l)
np=$(printf '%s\n' "${physs[@]}" | sort -u | wc -l)
[ "$nv" -ge 2 ] || fail "one virtual offset in 3 boots: ${virts[*]}"
[ "$np" -ge 2 ] || fail "one physical base in 3 boots: ${physs[*]}"
ok "offsets: ${virts[*]}; bases: ${physs[*]}"
