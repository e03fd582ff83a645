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
 * found.  Uses the loader's page tables as they are: GetVariable's code
 * must be executable there and runtime data not.  Returns 0 when the
 * handoff has no usable system table or the mapping breaks that promise.
 */
int efivars_bli_count(const struct kaslr_boot_info *info);

#endif
