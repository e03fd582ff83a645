# linux-rng-efi - the stock Debian kernel with EFI_RNG_PROTOCOL (virtio-rng),
# 6 GiB and kaslr.min 4G: placed above 4 GiB, and placement, offset and e820
# still match the kernel's own report
# placement: edges
. test/linux/lib.sh
place
linux_esp 'kaslr.min 4G' "${PLACE[@]}"
linux_boot --cpu max --mem 6G --rng
case $LX_RNG in *efi-rng*) ;; *) fail "entropy sources '$LX_RNG', want efi-rng" ;; esac
[ $((LX_PHYS)) -ge $((4 << 30)) ] || fail "phys=$LX_PHYS below kaslr.min=4G"
ok "phys=$LX_PHYS offset=$LX_VOFF e820=$LX_E820 entries; sources:$LX_RNG"
