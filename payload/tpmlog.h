/*
 * payload/tpmlog.h - the TPM event log the loader hands over (the
 * configuration table LINUX_EFI_TPM_EVENT_LOG_GUID), read back so a boot
 * test can compare the loader's measurements with what it computes.
 */
#ifndef PAYLOAD_TPMLOG_H
#define PAYLOAD_TPMLOG_H

#include "kaslr_boot.h"

/*
 * Find the table through info->efi_system_table, walk the log, and print
 * one `payload-tpm: pcr=N type=0x.. sha256=HEX desc=TEXT` line for every
 * record in PCR 5, 9 or 12 of type EV_EVENT_TAG or EV_IPL, then
 * `payload-tpm: records=N`.  Returns the number of records in the log, 0
 * without a table, -1 for a malformed one (after a line saying so).
 */
int tpmlog_report(const struct kaslr_boot_info *info);

#endif
