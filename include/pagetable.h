/*
 * pagetable.h - x86-64 4-level page tables (PML4 -> PDPT -> PD -> PT) built
 * in pages handed out by a caller-supplied allocator: map, unmap and look up
 * ranges with 4 KiB, 2 MiB and 1 GiB leaves.  Never touches CR3.
 *
 * How a canonical virtual address is walked (4-level paging, 48 bits):
 *
 *   63      48 47     39 38     30 29     21 20     12 11          0
 *  +----------+---------+---------+---------+---------+-------------+
 *  | sign ext.|  PML4   |  PDPT   |   PD    |   PT    |   offset    |
 *  | = bit 47 |  index  |  index  |  index  |  index  |  in page    |
 *  +----------+---------+---------+---------+---------+-------------+
 *                  |         |         |         |
 *   CR3 -> PML4[i] +         |         |         |
 *          -> PDPT[j] -------+  PS=1: 1 GiB page, offset = bits 29..0
 *             -> PD[k] ----------------+  PS=1: 2 MiB page, offset = bits 20..0
 *                -> PT[l] ---------------------------+  4 KiB page
 *
 * Each table is one 4 KiB page of 512 little-endian 64-bit entries.
 * Entries that point to a table are PT_PRESENT | PT_RW (no NX, never user):
 * permissions are decided at the leaf only.
 */
#ifndef PAGETABLE_H
#define PAGETABLE_H

#include <stdint.h>

#include "ldr.h"

/* Bits of a hardware page-table entry. */
#define PT_PRESENT    (1ULL << 0)
#define PT_RW         (1ULL << 1)
#define PT_USER       (1ULL << 2)  /* defined for decoding; never set */
#define PT_PWT        (1ULL << 3)
#define PT_PCD        (1ULL << 4)
#define PT_ACCESSED   (1ULL << 5)
#define PT_DIRTY      (1ULL << 6)
#define PT_PS         (1ULL << 7)  /* in a PDPT/PD entry: 1 GiB/2 MiB leaf */
#define PT_PAT_4K     (1ULL << 7)  /* in a PT entry, the same bit is PAT */
#define PT_GLOBAL_BIT (1ULL << 8)
#define PT_PAT_LARGE  (1ULL << 12) /* PAT bit of a 2 MiB / 1 GiB leaf */
#define PT_NX         (1ULL << 63)

/* Physical-address fields (MAXPHYADDR is at most 52 bits). */
#define PT_ADDR_MASK     0x000ffffffffff000ULL
#define PT_ADDR_MASK_2M  0x000fffffffe00000ULL
#define PT_ADDR_MASK_1G  0x000fffffc0000000ULL
#define PT_PHYS_LIMIT    (1ULL << 52)

#define PT_ENTRIES   512
#define PT_PAGE_4K   (4 * KIB)
#define PT_PAGE_2M   (2 * MIB)
#define PT_PAGE_1G   (1 * GIB)

/*
 * Mapping flags for pt_map_range() (not hardware bits).  Without PT_W the
 * mapping is read-only; without PT_X it is no-execute (NX, bit 63).
 * PT_ALLOW_1G is a request, not a permission: the CPU supports 1 GiB pages
 * (CPUID 0x80000001 EDX bit 26), so use them where alignment allows.
 * pt_lookup() reports PT_W, PT_X and PT_GLOBAL only.
 */
#define PT_W        (1u << 0)
#define PT_X        (1u << 1)
#define PT_GLOBAL   (1u << 2)
#define PT_ALLOW_1G (1u << 8)

/*
 * Where table pages come from.  page() returns a zeroed, 4 KiB-aligned page
 * or NULL.  to_phys()/to_virt() translate between the pointer the builder
 * writes through and the physical address stored in entries: identity in the
 * loader (pt_identity_to_phys/_virt), a pool offset in host tests.
 */
struct pt_alloc {
	void *(*page)(void *ctx);
	uint64_t (*to_phys)(void *ctx, void *page);
	void *(*to_virt)(void *ctx, uint64_t phys);
	void *ctx;
};

struct pt {
	uint64_t pml4_phys;     /* the value for CR3 */
	struct pt_alloc alloc;
	unsigned pages_used;    /* table pages taken from alloc, PML4 included */
	int no_nx;              /* the CPU has no NX (execute-disable): never set
				   bit 63, every mapping is executable; 0 after
				   pt_init(), set by the caller before mapping */
};

/* Identity translations for the loader, where pointer == physical address. */
uint64_t pt_identity_to_phys(void *ctx, void *page);
void *pt_identity_to_virt(void *ctx, uint64_t phys);

/*
 * Start empty tables in pt: one zeroed PML4 from a.
 * Errors: LDR_E_INVAL (a callback missing), LDR_E_NOMEM (no page),
 * LDR_E_PT_ALIGN (the page's physical address not 4 KiB-aligned or not
 * below 2^52).
 */
enum ldr_err pt_init(struct pt *pt, const struct pt_alloc *a);

/*
 * Map [virt, virt + size) to [phys, phys + size) with flags (PT_W, PT_X,
 * PT_GLOBAL, PT_ALLOW_1G).  Uses the largest leaf that virt, phys and the
 * remaining size allow (2 MiB always, 1 GiB with PT_ALLOW_1G).  Replaces any
 * existing mapping of the range: a larger leaf that is only partly covered is
 * split into smaller ones that keep its mapping and flags.  A table left
 * unreachable by a large leaf replacing it stays counted in pages_used and
 * is zeroed, with every table below it (so is one pt_unmap_range() drops).
 * Errors, checked in this order before anything is changed:
 *   LDR_E_INVAL     unknown flag bits, or size 0
 *   LDR_E_PT_ALIGN  virt, phys or size not a multiple of 4 KiB
 *   LDR_E_OVERFLOW  virt + size wraps past 2^64
 *   LDR_E_INVAL     virt range not canonical (or crossing the hole)
 *   LDR_E_OVERFLOW  phys + size wraps past 2^64
 *   LDR_E_INVAL     phys range not below 2^52
 * and while mapping: LDR_E_NOMEM / LDR_E_PT_ALIGN from the allocator, in
 * which case the range may be partly mapped.
 */
enum ldr_err pt_map_range(struct pt *pt, uint64_t virt, uint64_t phys,
			  uint64_t size, uint32_t flags);

/*
 * Remove any mapping of [virt, virt + size) (e.g. a stack guard page),
 * splitting larger leaves that are only partly covered.  Unmapped parts are
 * fine.  Errors as for pt_map_range() (without the phys checks).
 */
enum ldr_err pt_unmap_range(struct pt *pt, uint64_t virt, uint64_t size);

/*
 * Walk the tables for virt.  On success writes the physical address virt
 * translates to, the effective flags (PT_W only if every level is writable,
 * PT_X only if no level has NX, PT_GLOBAL from the leaf) and the leaf size
 * (4 KiB, 2 MiB or 1 GiB).  Any ret_* may be NULL.
 * Errors: LDR_E_INVAL (virt not canonical), LDR_E_PT_UNMAPPED (no present
 * leaf for virt).
 */
enum ldr_err pt_lookup(const struct pt *pt, uint64_t virt, uint64_t *ret_phys,
		       uint32_t *ret_flags, uint64_t *ret_page_size);

#endif
