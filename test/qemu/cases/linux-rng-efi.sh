# linux-rng-efi - the stock Debian kernel with EFI_RNG_PROTOCOL (virtio-rng)
# and 2 GiB: placement, offset and e820 match the kernel's own report
. test/linux/lib.sh
linux_esp
linux_boot --cpu max --mem 2G --rng
case $LX_RNG in *efi-rng*) ;; *) fail "entropy sources '$LX_RNG', want efi-rng" ;; esac
ok "phys=$LX_PHYS offset=$LX_VOFF e820=$LX_E820 entries; sources:$LX_RNG"
