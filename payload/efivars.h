/*
 * payload/efivars.h - reading systemd Boot Loader Interface variables after
 * ExitBootServices through the firmware's runtime services.
 */
#ifndef PAYLOAD_EFIVARS_H
#define PAYLOAD_EFIVARS_H

#include "kaslr_boot.h"

/*
 * Look up every Boot Loader Interface variable the loader may set
 * (LoaderInfo, LoaderTimeInitUSec, LoaderTimeExecUSec,
 * LoaderImageIdentifier, LoaderDevicePartUUID, LoaderFirmwareInfo,
 * LoaderFirmwareType) with RT->GetVariable in physical mode, print one
 * `payload-bli: NAME=VALUE` line for each found, and return how many were
 * found.  Makes the EfiRuntimeServicesCode ranges of info->efi_mmap
 * executable in the live page tables first (the loader maps RAM NX).
 * Returns 0 when the handoff has no usable system table.
 */
int efivars_bli_count(const struct kaslr_boot_info *info);

#endif
