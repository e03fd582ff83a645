/*
 * rtmap.h - how the firmware's runtime memory is mapped in the kernel's
 * starting page tables, so that a kernel can call EFI runtime services
 * through the identity map without building tables of its own:
 *
 *   EfiRuntimeServicesCode               read-write-execute (a runtime
 *                                        driver's image holds its code and
 *                                        its data in one such range)
 *   EfiRuntimeServicesData,              read-write, no-execute
 *   EfiMemoryMappedIO with EFI_MEMORY_RUNTIME
 *
 * and, when the firmware publishes an EFI Memory Attributes Table (MAT),
 * its entries refine those ranges: EFI_MEMORY_RO takes write away,
 * EFI_MEMORY_XP takes execute away, so runtime code becomes read-execute
 * and its data no-execute.  The MAT's layout (UEFI 2.10, 4.6.4):
 *
 *   u32 Version | u32 NumberOfEntries | u32 DescriptorSize | u32 Flags
 *   NumberOfEntries x EFI_MEMORY_DESCRIPTOR (DescriptorSize bytes apart)
 */
#ifndef RTMAP_H
#define RTMAP_H

#include <stddef.h>
#include <stdint.h>

#include "ldr.h"

#define RTMAP_W (1u << 0) /* = PT_W */
#define RTMAP_X (1u << 1) /* = PT_X */

#define EFI_MA_RUNTIME 0x8000000000000000ULL /* EFI_MEMORY_RUNTIME */
#define EFI_MA_XP      0x0000000000004000ULL /* EFI_MEMORY_XP */
#define EFI_MA_RO      0x0000000000020000ULL /* EFI_MEMORY_RO */

#define RTMAP_MAT_HEADER 16

struct rtmap_range {
	uint64_t addr, size; /* page-aligned, addr + size does not wrap */
	uint32_t flags;      /* RTMAP_W | RTMAP_X */
};

/*
 * The ranges to map, in order: later entries override earlier ones (map
 * them one after the other).  First every runtime range of the memory map
 * (map, map_size bytes, desc_size apart), then the MAT's entries when mat
 * is not NULL.  A malformed MAT (short, bad descriptor size or version,
 * entries outside its bytes, unaligned or wrapping entries) is ignored as
 * a whole: *ret_mat_used says whether it was applied.
 * Out: out[0..*ret_n).  Errors: LDR_E_INVAL (NULL with a size),
 * LDR_E_MMAP_DESC_SIZE (desc_size < 40), LDR_E_MMAP_TOO_BIG (more than
 * cap ranges).  Entries of zero pages, or that wrap, are skipped.
 */
enum ldr_err rtmap_ranges(const void *map, uint64_t map_size, uint64_t desc_size,
			  const void *mat, uint64_t mat_size, struct rtmap_range *out,
			  size_t cap, size_t *ret_n, int *ret_mat_used);

#endif
