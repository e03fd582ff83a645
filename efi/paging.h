/*
 * paging.h - the page tables the kernel starts with (built before
 * ExitBootServices, in pages of the loader's reclaimable type).
 */
#ifndef EFI_PAGING_H
#define EFI_PAGING_H

#include "loader.h"
#include "memmap.h"
#include "pagetable.h"

/* page-table pages come from chunks of this many pages */
#define PAGING_CHUNK 32

/*
 * Chunks kept so that a failed boot gives them back.  256 chunks of 32
 * pages are 8192 table pages: with 2 MiB leaves each page directory maps
 * 1 GiB, so 8 TiB of identity map (with 1 GiB leaves, far more).
 */
#define PAGING_CHUNKS_MAX 256

struct paging_pool {
	uint64_t next, end; /* physical */
	unsigned nchunks;
	uint64_t chunk[PAGING_CHUNKS_MAX];
};

/* What the tables must hold besides RAM and the kernel. */
struct paging_req {
	uint64_t idt_page;   /* mapped once more, read-only, at LDR_IDT_ALIAS */
	uint64_t guards[8];  /* pages left unmapped (stack guards) */
	unsigned nguards;
	uint64_t fb_base, fb_size; /* a framebuffer outside RAM, or 0 */
	int no_nx;           /* the CPU has no NX: nothing can be no-execute */
	int use_1g;          /* the CPU has 1 GiB pages */
	uint64_t phys_limit; /* 2^MAXPHYADDR: memory-map ranges past it are not
				mapped (a firmware map can list them) */
};

/*
 * Build the tables into pt from pool:
 *   - identity map of [0, 4 GiB) and of every memory-map range above it,
 *     read-write, no-execute (1 GiB leaves where the CPU has them);
 *   - firmware runtime memory as include/rtmap.h says (so runtime services
 *     run through the identity map), refined by the Memory Attributes
 *     Table when firmware publishes one;
 *   - the kernel at its run-time virtual base, each page with the union of
 *     the permissions of the segments on it; when that is not its physical
 *     address, the physical alias is never executable (unless the layout
 *     says the kernel starts there) and never writable over code;
 *   - the loader's own code read-only and executable at its identity
 *     address (the jump and the exception stubs run from it), the rest of
 *     the loader image stays no-execute;
 *   - the IDT page read-only at LDR_IDT_ALIAS, the guard pages unmapped.
 * Logs its own failure.  *ret_fb_mapped says whether req->fb_base could be
 * mapped (else the kernel must not be told about it).
 */
EFI_STATUS paging_build(const struct loader *L, const struct paging_req *req,
			struct paging_pool *pool, struct pt *pt, int *ret_fb_mapped);

/* Give every chunk of pool back to firmware. */
void paging_release(struct paging_pool *pool);

#endif
