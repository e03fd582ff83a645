/*
 * tpm.h - measured boot: what the loader extends into the TPM's PCRs
 * before ExitBootServices (through EFI_TCG2_PROTOCOL), and the event log
 * handed to Linux.  Without a TPM nothing is measured and nothing fails;
 * a TPM error is one warning and the boot goes on (docs/measured-boot.md).
 */
#ifndef EFI_TPM_H
#define EFI_TPM_H

#include <efi.h>
#include "ldr.h"

#include "tcglog.h" /* the PCRs and tags of the loader's records */

/*
 * EV_EVENT_TAG record into pcr: hash of data[0..len), the tagged event's
 * data the ASCII text desc.  Returns 1 when measured, 0 when there is no
 * TPM, -1 on a TPM error (warned once).
 */
int tpm_measure_tagged(UINT32 pcr, UINT32 tag, const char *desc, const void *data, UINT64 len);

/*
 * The effective settings (options_settings_text) into PCR 5: EV_EVENT_TAG
 * with tag TPM_TAG_SETTINGS, hash over the text, the tagged event's data
 * the same text in ASCII, so that a verifier reads what was measured.
 * text[len] is a NUL.
 */
int tpm_measure_settings(const char *text, UINTN len);

/*
 * tpm_measure_tagged, and when ret_sha256 is not NULL the SHA-256 digest
 * the firmware computed for that measurement, read back from the record it
 * appended to the event log (checked to be this measurement: a record
 * after the one that was last before the call, the last one now, its PCR,
 * type and event data).  Returns 1 when ret_sha256 holds the digest (the
 * data need not be hashed again), 0 otherwise (no TPM, a TPM error, no
 * SHA-256 bank, a log that did not take the record - even when the record
 * before, another initrd's say, carries the same event data).
 */
int tpm_measure_tagged_digest(UINT32 pcr, UINT32 tag, const char *desc, const void *data,
			      UINT64 len, UINT8 ret_sha256[32]);

/*
 * The kernel command line into PCR 12, as systemd-boot and systemd-stub
 * record it: EV_IPL, hash and description both over the line in UTF-16
 * without a NUL.
 */
int tpm_measure_cmdline(const char *cmdline, UINT32 len);

/*
 * One EV_IPL record as systemd-stub makes them (a unified kernel image's
 * sections into PCR 11, a command line passed to it into PCR 12): the
 * hash over data[0..len), the event data desc[0..desc_len) (ASCII) in
 * UTF-16 with its NUL.  Returns as tpm_measure_tagged.
 */
int tpm_measure_ipl(UINT32 pcr, const char *desc, UINTN desc_len, const void *data, UINT64 len);

/*
 * Install the configuration table LINUX_EFI_TPM_EVENT_LOG_GUID (a copy of
 * the firmware's log, as Linux's EFI stub makes it), so that the kernel
 * offers the log in /sys/kernel/security/tpm0/binary_bios_measurements.
 * Call after the last measurement.  No TPM: nothing; an error: a warning.
 */
void tpm_install_linux_event_log(void);

/* A boot that failed after the install: the table removed, its pool freed. */
void tpm_remove_linux_event_log(void);

#endif
