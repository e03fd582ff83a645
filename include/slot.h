/*
 * slot.h - candidate kernel positions ("slots"): counting every aligned,
 * kernel-sized position in free memory inside a window and clear of avoided
 * ranges, naming the idx-th one, and picking one through a caller's draw.
 */
#ifndef SLOT_H
#define SLOT_H

#include <stddef.h>
#include <stdint.h>

#include "e820.h"
#include "ldr.h"

#define SLOT_ALIGN       (2 * MIB)  /* x86-64 kernels need 2 MiB-aligned bases */
#define SLOT_DEFAULT_MIN (16 * MIB) /* Linux's CONFIG_PHYSICAL_START */
#define SLOT_MIN_ALIGN   PAGE_SIZE  /* keeps every count far below 2^64 */

/*
 * What a slot must satisfy.  A base b is a slot when b is a multiple of
 * align, [b, b + image_size) lies inside one E820_RAM region, b >= min_addr,
 * b + image_size <= max_addr (0 = no limit), and [b, b + image_size) shares
 * no byte with any avoid range.  avoid may be unsorted and overlapping;
 * zero-sized avoid ranges are ignored.
 */
struct slot_params {
	uint64_t image_size;              /* > 0 */
	uint64_t align;                   /* power of two >= SLOT_MIN_ALIGN */
	uint64_t min_addr;                /* usually SLOT_DEFAULT_MIN */
	uint64_t max_addr;                /* exclusive top; 0 = no limit */
	const struct mem_region *avoid;   /* may be NULL when navoid == 0 */
	size_t navoid;
};

/*
 * One uniform index in [0, n) (n >= 1) into *ret_idx, or an error that
 * slot_pick() passes on.  e.g. a wrapper around drbg_below().
 */
typedef enum ldr_err (*slot_draw_fn)(void *ctx, uint64_t n, uint64_t *ret_idx);

/*
 * Inputs common to the functions below: regions[0..n) sorted by address and
 * non-overlapping (as e820_free_from_efi() and e820_from_efi() produce);
 * regions of any type but E820_RAM are skipped; a region whose end would
 * pass 2^64 is skipped; one that ends exactly at 2^64 - 1 is fine.
 */

/*
 * Number of slots.  Returns 0 when there are none, and also when p is
 * invalid (image_size 0, align not a power of two >= SLOT_MIN_ALIGN, avoid
 * NULL with navoid > 0) or regions are unsorted or overlap - slot_at()
 * names the cause.
 */
uint64_t slot_count(const struct mem_region *regions, size_t n, const struct slot_params *p);

/*
 * The idx-th slot in increasing address order into *ret_base.
 * Errors: LDR_E_INVAL (p invalid, regions unsorted/overlapping);
 *         LDR_E_NO_SLOT (idx >= slot_count()).
 */
enum ldr_err slot_at(const struct mem_region *regions, size_t n, const struct slot_params *p,
		     uint64_t idx, uint64_t *ret_base);

/*
 * One slot chosen uniformly: count the slots, ask draw(ctx, count) for an
 * index, return that slot in *ret_base and the count in *ret_count.  Draws
 * no randomness itself; every slot is one index, so the choice is as
 * uniform as draw is.
 * Errors: LDR_E_INVAL (as slot_at(), draw NULL, or draw returned an index
 *         >= count); LDR_E_NO_SLOT (no slot at all); whatever draw returned.
 */
enum ldr_err slot_pick(const struct mem_region *regions, size_t n, const struct slot_params *p,
		       slot_draw_fn draw, void *ctx, uint64_t *ret_base, uint64_t *ret_count);

/* Try to reserve [base, base + size); 1 when it is now the caller's. */
typedef int (*slot_reserve_fn)(void *ctx, uint64_t base, uint64_t size);

/*
 * Draw a slot with slot_pick() and ask reserve() for it; when refused (the
 * firmware knows better than the map it gave), exclude that slot by adding
 * its base to avoid[] and draw again, at most max_tries times in all.
 * avoid[0..*navoid) are the caller's avoid ranges; avoid has room for cap
 * entries, and p->avoid/p->navoid are set from it here.
 * Out: *ret_base (reserved), *ret_count (slots at the first draw),
 *      *navoid (grown by the refusals).
 * Errors: as slot_pick(); LDR_E_SLOT_REFUSED when max_tries draws were all
 *         refused (or avoid[] is full); the never-random fall-back to a
 *         fixed address does not exist.
 */
enum ldr_err slot_place(const struct mem_region *regions, size_t n, struct slot_params *p,
			struct mem_region *avoid, size_t *navoid, size_t cap,
			slot_draw_fn draw, void *dctx, slot_reserve_fn reserve, void *rctx,
			unsigned max_tries, uint64_t *ret_base, uint64_t *ret_count);

/*
 * The yardstick for the entropy report: the same count over the full e820
 * table (every E820_RAM region, including memory firmware is using now)
 * with the same image size, alignment and window, but ignoring p->avoid.
 * Returns 0 on invalid input, as slot_count().
 */
uint64_t slot_theoretical(const struct mem_region *e820, size_t n, const struct slot_params *p);

/*
 * Forced placements (kaslr.phys=, kaslr.virt=): slots by address instead
 * of by draw.  Same inputs as slot_at().
 *
 * slot_first_from: the index of the lowest slot whose base is >= addr.
 * slot_index_of:   the index of the slot whose base is exactly base.
 * Errors: LDR_E_INVAL (as slot_at()); LDR_E_NO_SLOT (no such slot).
 */
enum ldr_err slot_first_from(const struct mem_region *regions, size_t n,
			     const struct slot_params *p, uint64_t addr, uint64_t *ret_idx);
enum ldr_err slot_index_of(const struct mem_region *regions, size_t n,
			   const struct slot_params *p, uint64_t base, uint64_t *ret_idx);

/* Why an address is not a slot, first cause first (slot_explain()). */
enum slot_why {
	SLOT_WHY_OK = 0,      /* it is a slot */
	SLOT_WHY_MISALIGNED,  /* base not a multiple of p->align */
	SLOT_WHY_WINDOW,      /* below p->min_addr, or the image ends past p->max_addr */
	SLOT_WHY_NOT_RAM,     /* some byte of the image is not RAM in the full map */
	SLOT_WHY_NOT_FREE,    /* RAM, but some of it is in use (firmware, the loader) */
	SLOT_WHY_AVOIDED,     /* free, but it touches one of p->avoid */
};

/*
 * Why [base, base + p->image_size) is no slot: free[0..nfree) the memory
 * free now (slot_count()'s regions), e820[0..ne) the full map (every RAM
 * region, in use or not), both sorted.  SLOT_WHY_OK when it is a slot.
 * Invalid input counts as SLOT_WHY_WINDOW.
 */
enum slot_why slot_explain(const struct mem_region *free_r, size_t nfree,
			   const struct mem_region *e820, size_t ne,
			   const struct slot_params *p, uint64_t base);

#endif
