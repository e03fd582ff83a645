/*
 * e820.h - turning the raw UEFI memory map (untrusted bytes, firmware's own
 * descriptor size) into a deterministic e820-style table, and into the list
 * of memory that is free right now for placing the kernel.
 */
#ifndef E820_H
#define E820_H

#include <stddef.h>
#include <stdint.h>

#include "ldr.h"

/* EFI_MEMORY_TYPE values (UEFI 2.10, section 7.2, EFI_BOOT_SERVICES.AllocatePages). */
#define EFI_MT_RESERVED             0u  /* EfiReservedMemoryType */
#define EFI_MT_LOADER_CODE          1u  /* EfiLoaderCode */
#define EFI_MT_LOADER_DATA          2u  /* EfiLoaderData */
#define EFI_MT_BOOT_SERVICES_CODE   3u  /* EfiBootServicesCode */
#define EFI_MT_BOOT_SERVICES_DATA   4u  /* EfiBootServicesData */
#define EFI_MT_RUNTIME_CODE         5u  /* EfiRuntimeServicesCode */
#define EFI_MT_RUNTIME_DATA         6u  /* EfiRuntimeServicesData */
#define EFI_MT_CONVENTIONAL         7u  /* EfiConventionalMemory */
#define EFI_MT_UNUSABLE             8u  /* EfiUnusableMemory */
#define EFI_MT_ACPI_RECLAIM         9u  /* EfiACPIReclaimMemory */
#define EFI_MT_ACPI_NVS             10u /* EfiACPIMemoryNVS */
#define EFI_MT_MMIO                 11u /* EfiMemoryMappedIO */
#define EFI_MT_MMIO_PORT            12u /* EfiMemoryMappedIOPortSpace */
#define EFI_MT_PAL_CODE             13u /* EfiPalCode */
#define EFI_MT_PERSISTENT           14u /* EfiPersistentMemory */
#define EFI_MT_UNACCEPTED           15u /* EfiUnacceptedMemoryType */
#define EFI_MT_COUNT                16u

/* EFI_MEMORY_DESCRIPTOR.Attribute bits this module looks at. */
#define EFI_MA_MORE_RELIABLE 0x0000000000010000ULL /* EFI_MEMORY_MORE_RELIABLE: mirrored */
#define EFI_MA_SP            0x0000000000040000ULL /* EFI_MEMORY_SP: specific-purpose */

/*
 * EFI_MEMORY_DESCRIPTOR version 1 as laid out in memory.  Descriptors are
 * desc_size bytes apart (firmware may append fields); never step by sizeof.
 */
#define EFI_MD_OFF_TYPE   0  /* u32 Type, then u32 padding */
#define EFI_MD_OFF_PHYS   8  /* u64 PhysicalStart */
#define EFI_MD_OFF_VIRT   16 /* u64 VirtualStart */
#define EFI_MD_OFF_PAGES  24 /* u64 NumberOfPages (4 KiB pages, always) */
#define EFI_MD_OFF_ATTR   32 /* u64 Attribute */
#define EFI_MD_MIN_SIZE   40
#define EFI_MD_PAGE_SIZE     (4 * KIB)

/* e820 types, as in the Linux/x86 boot protocol (kaslr_boot.h uses the same numbers). */
#define E820_RAM           1u
#define E820_RESERVED      2u
#define E820_ACPI          3u
#define E820_NVS           4u
#define E820_UNUSABLE      5u
#define E820_PMEM          7u
#define E820_SOFT_RESERVED 0xefffffffu
/* the loader's own leftovers, only in e820_protocol_from_efi() output;
 * equal to KB_MEM_LOADER_RECLAIMABLE, KB_MEM_KERNEL and KB_MEM_MODULE in
 * kaslr_boot.h */
#define E820_LOADER_RECLAIMABLE 0x10000001u
#define E820_KERNEL             0x10000002u
#define E820_MODULE             0x10000003u

/*
 * EFI memory types from the OS-loader range (UEFI: 0x80000000 and up belong
 * to the OS loader) that this loader allocates with, so that the final map
 * says which pages are the kernel's and which are reclaimable leftovers.
 */
#define EFI_MT_OSLOADER_KERNEL  0x80000001u
#define EFI_MT_OSLOADER_RECLAIM 0x80000002u
#define EFI_MT_OSLOADER_MODULE  0x80000003u

/*
 * Nothing produced here reaches into the top 4 KiB page of the 64-bit space:
 * every region satisfies addr + size <= E820_ADDR_END, so addr + size never
 * wraps.  See the rules at the top of src/e820.c.
 */
#define E820_ADDR_END (0ULL - EFI_MD_PAGE_SIZE)

/* out_cap that e820_from_efi()/e820_free_from_efi() never exceed for ndesc descriptors. */
#define E820_CAP_FOR(ndesc) (3 * (size_t)(ndesc))

/* One address range; same layout as struct kb_mem_entry. */
struct mem_region {
	uint64_t addr;
	uint64_t size;
	uint32_t type;  /* E820_* */
	uint32_t flags; /* 0 from e820_*; free for other producers (avoid lists) */
};

/*
 * The e820 type Linux's x86 EFI stub gives an EFI descriptor of efi_type
 * with attribute attr, or 0 when the descriptor is left out of the e820
 * table (unknown types, EfiUnacceptedMemory).
 */
uint32_t e820_type_from_efi(uint32_t efi_type, uint64_t attr);

/* Short constant name of an e820 type for log lines ("RAM", "ACPI", ...). */
const char *e820_type_name(uint32_t type);

/*
 * Does any descriptor of the map carry EFI_MEMORY_MORE_RELIABLE?  (Then
 * e820_free_from_efi() keeps only mirrored memory.)  Inputs as below;
 * returns 0 for a malformed map.
 */
int e820_efi_has_mirror(const void *map, uint64_t map_size, uint64_t desc_size);

/*
 * The e820 table for a raw UEFI memory map.
 * Inputs: map/map_size as GetMemoryMap wrote them, desc_size as it reported;
 *         out[0..out_cap) is both the result and the only workspace.
 * Output: out[0..*ret_count): sorted by address, non-overlapping, adjacent
 *         entries of one type merged, no zero sizes, flags 0; the same bytes
 *         for any order of the input descriptors.
 * Capacity: a map without overlaps needs one entry per descriptor;
 *         overlaps split entries, and out_cap = 3 * (map_size / desc_size)
 *         always suffices (E820_CAP_FOR()).
 * Errors: LDR_E_MMAP_DESC_SIZE (desc_size < 40 or not a multiple of 8, or
 *         map_size not a multiple of desc_size); LDR_E_MMAP_TOO_BIG (out_cap
 *         too small); LDR_E_INVAL (map or out NULL with work to do).
 *         out[] contents are unspecified after an error.
 */
enum ldr_err e820_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
			   struct mem_region *out, size_t out_cap, size_t *ret_count);

/*
 * The memory that is free now for the kernel: EfiConventionalMemory without
 * EFI_MEMORY_SP, and only mirrored (EFI_MEMORY_MORE_RELIABLE) ranges when any
 * descriptor is mirrored; minus every byte that any other descriptor claims.
 * Same inputs, output form (all entries type E820_RAM), capacity and errors
 * as e820_from_efi().
 */
/*
 * As e820_from_efi(), but for this loader's boot protocol: descriptors of
 * EFI_MT_OSLOADER_KERNEL become E820_KERNEL, EFI_MT_OSLOADER_MODULE
 * E820_MODULE and EFI_MT_OSLOADER_RECLAIM E820_LOADER_RECLAIMABLE
 * (e820_from_efi() calls them RAM, which is what they are to a kernel that
 * knows nothing of them, e.g. Linux).  And every entry is whole 4 KiB
 * pages: a descriptor whose PhysicalStart is not page-aligned (UEFI says
 * it must be) loses its partial pages when it would be RAM and is widened
 * to whole pages otherwise, so no byte is more usable than firmware said.
 */
enum ldr_err e820_protocol_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
				    struct mem_region *out, size_t out_cap, size_t *ret_count);

enum ldr_err e820_free_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
				struct mem_region *out, size_t out_cap, size_t *ret_count);

/*
 * As e820_free_from_efi(), but the memory that will be free once boot
 * services have exited: EfiBootServicesCode and EfiBootServicesData count
 * as free too (firmware's, given back at ExitBootServices).  For a kernel
 * that must run at one address: what the loader may move it into after
 * ExitBootServices.
 */
enum ldr_err e820_exit_free_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
				     struct mem_region *out, size_t out_cap, size_t *ret_count);

#endif
