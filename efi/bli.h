/*
 * bli.h - systemd's Boot Loader Interface: the volatile EFI variables a boot
 * loader leaves for the OS (who booted, from where, and how long it took).
 */
#ifndef EFI_BLI_H
#define EFI_BLI_H

#include <efi.h>
#include <efilib.h>

/* The loader's version as LoaderInfo reports it; the build may override. */
#ifndef LDR_VERSION
#define LDR_VERSION "0.1"
#endif
#define BLI_WIDEN_(s) L##s
#define BLI_WIDEN(s) BLI_WIDEN_(s)

/* Vendor GUID of every Boot Loader Interface variable. */
#define BLI_VENDOR_GUID \
	{ 0x4a67b082, 0x0a4c, 0x41cf, { 0xb6, 0xc7, 0x44, 0x0b, 0x29, 0xbb, 0x8c, 0x4f } }

/* LoaderFeatures bits, as systemd numbers them; this loader sets only
 * the ones that are true of it. */
#define BLI_FEATURE_RANDOM_SEED (1ULL << 6) /* \loader\random-seed, a seed for the OS */

/*
 * Record the TSC at the loader's start, for LoaderTimeInitUSec.  Call it
 * first in efi_main; it touches no firmware service and cannot fail.
 */
void bli_init_time(void);

/*
 * Set the Boot Loader Interface variables (see bli.c for which and when an
 * earlier stage's value is kept).  image/li: the running image and its
 * EFI_LOADED_IMAGE.  Call it just before ExitBootServices, while boot
 * services still run.  Never fails: a variable that cannot be written is a
 * warning; in verbose mode one line says what was set and what was kept.
 */
void bli_set_variables(EFI_HANDLE image, EFI_LOADED_IMAGE *li);

#endif
