/*
 * ukiboot.h - a unified kernel image named as the kernel (efi/uki.c): its
 * trust, measurements and sections, taken once the file is read; what the
 * rest of the loader asks of it afterwards.
 */
#ifndef EFI_UKIBOOT_H
#define EFI_UKIBOOT_H

#include "loader.h"

/*
 * The kernel file L->file (read from path) is a unified kernel image
 * (uki_detect): decide whether it may boot (the policy's pin, or under
 * Secure Boot its own signature: shim's Verify under TRUST=shim, else the
 * firmware's LoadImage), measure it into PCR 9 as any kernel file, check
 * its sections and stub version, measure into PCR 11 (and a command line
 * passed in into PCR 12) exactly as that systemd-stub version does and set
 * its StubPcr* variables, then take its .cmdline (or the loader's command
 * line where the stub would take one) into L->opt, a copy of .linux as the
 * image to boot (L->image_buf) and .initrd with the stub's cpio archives
 * as the first initrd.  Logs its one failure line.  next and ret_next:
 * policy_check_kernel's (efi/secureboot.h), for a kernel list under
 * TRUST=shim.
 */
EFI_STATUS uki_open(struct loader *L, const CHAR16 *path, const CHAR16 *next, int *ret_next);

/* 1 when uki_open took the kernel file as a unified kernel image */
int uki_booting(void);

/* The initrd the image brings (uki_initrd_build), to go before any
 * initrd= file; *ret_len 0 when there is none. */
void uki_initrd(const void **ret_buf, uint64_t *ret_len);

/* The name its .osrel gives (PRETTY_NAME), or NULL. */
const char *uki_os_name_of(void);

/* A boot that failed, or a UKI of a kernel list shim refused: what
 * uki_open allocated besides the image buffer; uki_booting() is 0 again. */
void uki_release(void);

#endif
