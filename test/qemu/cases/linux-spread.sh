# linux-spread - five boots of the stock Debian kernel (RDRAND path, 1 GiB):
# each time the kernel's own "Kernel Offset", its image reservation and its
# e820 table equal what the loader chose and handed over (test/linux/lib.sh);
# at least four distinct virtual offsets and four distinct physical bases
# placement: no edge - its subject is the loader's own draw: five boots on its entropy, at least four places
. test/linux/lib.sh
# linux_esp's arguments are optional kaslr.conf lines; this case adds none
# shellcheck disable=SC2119
linux_esp
virts=() physs=()
for i in 1 2 3 4 5; do
	linux_boot --cpu max --mem 1G
	case $LX_RNG in *rdrand*) ;; *) fail "boot $i: entropy sources '$LX_RNG', want rdrand" ;; esac
	case $LX_RNG in *efi-rng*) fail "boot $i: efi-rng without virtio-rng" ;; esac
	virts+=("$LX_VOFF") physs+=("$LX_PHYS")
done
nv=$(printf '%s\n' "${virts[@]}" | sort -u | wc -l)
np=$(printf '%s\n' "${physs[@]}" | sort -u | wc -l)
[ "$nv" -ge 4 ] || fail "only $nv distinct virtual offsets in 5 boots: ${virts[*]}"
[ "$np" -ge 4 ] || fail "only $np distinct physical bases in 5 boots: ${physs[*]}"
ok "offsets: ${virts[*]}; bases: ${physs[*]}"
