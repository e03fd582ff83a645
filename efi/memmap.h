/*
 * memmap.h - the UEFI memory map as the firmware returns it: raw bytes, the
 * key, and the firmware's own descriptor size (never sizeof).
 */
#ifndef EFI_MEMMAP_H
#define EFI_MEMMAP_H

#include <efi.h>
#include <efilib.h>

#include "e820.h"

struct efi_mmap {
	void *buf;
	UINTN cap;  /* bytes allocated at buf */
	UINTN size; /* bytes the firmware wrote */
	UINTN key;
	UINTN desc_size;
	UINT32 desc_version;
};

/*
 * The map's size and descriptor size now, from GetMemoryMap with no buffer
 * (the probe mmap_get makes before each try).  EFI_UNSUPPORTED: descriptors
 * smaller than EFI_MEMORY_DESCRIPTOR (*ret_desc_size says how small); any
 * other error is the firmware's (EFI_DEVICE_ERROR if it said success).
 */
EFI_STATUS mmap_probe(UINTN *ret_size, UINTN *ret_desc_size);

/* Allocate a buffer with room to spare and fetch the current map into it. */
EFI_STATUS mmap_get(struct efi_mmap *m);

/*
 * Fetch the map again into the existing buffer without allocating (as must
 * be done between ExitBootServices attempts).  EFI_BUFFER_TOO_SMALL if the
 * map outgrew it.
 */
EFI_STATUS mmap_refresh(struct efi_mmap *m);

void mmap_free(struct efi_mmap *m);

/* e820_from_efi, e820_protocol_from_efi or e820_free_from_efi */
typedef enum ldr_err (*mmap_convert_fn)(const void *map, uint64_t map_size,
					uint64_t desc_size, struct mem_region *out,
					size_t out_cap, size_t *ret_count);

/*
 * Give back a region list mmap_convert() made from m (still the same map),
 * wiped: after placement its gaps say where the kernel is.
 */
void mmap_regions_free(const struct efi_mmap *m, struct mem_region *r);

/*
 * Convert m with conv into a pool-allocated array (*ret_regions, FreePool
 * it) of *ret_count entries.  Logs its own errors; mmap_convert_quiet
 * does not (for what only verbose output needs).
 */
EFI_STATUS mmap_convert(const struct efi_mmap *m, mmap_convert_fn conv,
			struct mem_region **ret_regions, size_t *ret_count);
EFI_STATUS mmap_convert_quiet(const struct efi_mmap *m, mmap_convert_fn conv,
			      struct mem_region **ret_regions, size_t *ret_count);

#endif
