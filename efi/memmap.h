/*
 * memmap.h - the UEFI memory map as the firmware returns it: raw bytes, the
 * key, and the firmware's own descriptor size (never sizeof).
 */
#ifndef EFI_MEMMAP_H
#define EFI_MEMMAP_H

#include <efi.h>
#include <efilib.h>

struct efi_mmap {
	void *buf;
	UINTN cap;  /* bytes allocated at buf */
	UINTN size; /* bytes the firmware wrote */
	UINTN key;
	UINTN desc_size;
	UINT32 desc_version;
};

/* Allocate a buffer with room to spare and fetch the current map into it. */
EFI_STATUS mmap_get(struct efi_mmap *m);

/*
 * Fetch the map again into the existing buffer without allocating (as must
 * be done between ExitBootServices attempts).  EFI_BUFFER_TOO_SMALL if the
 * map outgrew it.
 */
EFI_STATUS mmap_refresh(struct efi_mmap *m);

/* Use caller-provided storage (e.g. inside the handoff block). */
void mmap_init_static(struct efi_mmap *m, void *buf, UINTN cap);

void mmap_free(struct efi_mmap *m);

#endif
