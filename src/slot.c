/*
 * slot.c - counting and indexing kernel slots: aligned, kernel-sized
 * positions in RAM regions, inside a [min, max) window, clear of avoided
 * ranges.  No allocation and no randomness: the caller supplies the draw.
 *
 * Everything is done on the set of allowed bases, with inclusive bounds so
 * that a region ending at 2^64 - 1 needs no special case:
 *
 *   region      [s ............................................. l]
 *   window          [min .................................. max-1]
 *   bases b         [b_lo ................... b_hi]   b_hi + size - 1 <= min(l, max-1)
 *   avoid [a0, a1]              [a0 ... a1]
 *   forbids b in         [a0-size+1 ....... a1]      (the image would touch it)
 *   slots          ^     ^           ^     ^     ^ ...
 *                 run 1 |  forbidden        | run 2
 *
 * A region is walked from b_lo with a cursor: leave every forbidden interval
 * that contains it, then the run of slots reaches up to the nearest forbidden
 * interval above it; count the run as (last - first) / align + 1.  Avoid
 * ranges may be unsorted and may overlap, which costs O(navoid^2) per region
 * and no memory.  Counts stay below 2^52 because align >= 4 KiB and the
 * regions do not overlap.
 */
#include "slot.h"

#define SLOT_F_AVOID 1u /* honour p->avoid */
#define SLOT_WANT_NONE UINT64_MAX

static int slot_params_ok(const struct slot_params *p, unsigned flags)
{
	if (!p || p->image_size == 0)
		return 0;
	if (p->align < SLOT_MIN_ALIGN || (p->align & (p->align - 1)) != 0)
		return 0;
	if ((flags & SLOT_F_AVOID) && p->navoid && !p->avoid)
		return 0;
	return 1;
}

/* Inclusive last byte of r into *ret_last; 0 for empty or wrapping regions. */
static int slot_last(const struct mem_region *r, uint64_t *ret_last)
{
	if (r->size == 0 || r->size - 1 > UINT64_MAX - r->addr)
		return 0;
	*ret_last = r->addr + (r->size - 1);
	return 1;
}

static int slot_region_used(const struct mem_region *r, uint64_t *ret_last)
{
	return r->type == E820_RAM && slot_last(r, ret_last);
}

/* The used regions are sorted by address and share no byte. */
static int slot_regions_ok(const struct mem_region *regions, size_t n)
{
	uint64_t prev_last = 0, last;
	int have_prev = 0;

	if (n && !regions)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!slot_region_used(&regions[i], &last))
			continue;
		if (have_prev && regions[i].addr <= prev_last)
			return 0;
		prev_last = last;
		have_prev = 1;
	}
	return 1;
}

/*
 * The bases b an avoid range forbids: those with [b, b + size) touching it,
 * i.e. b in [a0 - (size - 1), a1] (saturated at 0).  0 when a is empty.  An
 * avoid range that would wrap is taken to reach 2^64 - 1 (err on the side
 * of avoiding).
 */
static int slot_forbidden(const struct mem_region *a, uint64_t image_size,
			  uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t hi;

	if (a->size == 0)
		return 0;
	if (!slot_last(a, &hi))
		hi = UINT64_MAX;
	*ret_lo = a->addr > image_size - 1 ? a->addr - (image_size - 1) : 0;
	*ret_hi = hi;
	return 1;
}

/*
 * The range of aligned bases whose image fits in [s, l] and in the window:
 * [*ret_lo, *ret_hi], both multiples of align.  0 when there is none.
 */
static int slot_base_range(uint64_t s, uint64_t l, const struct slot_params *p,
			   uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t lo = s > p->min_addr ? s : p->min_addr;
	uint64_t hi = l, b_lo, b_hi;

	if (p->max_addr != 0 && p->max_addr - 1 < hi)
		hi = p->max_addr - 1;
	if (lo > hi || p->image_size - 1 > hi - lo)
		return 0;
	if (lo > UINT64_MAX - (p->align - 1))
		return 0;
	b_lo = ldr_align_up(lo, p->align);
	b_hi = ldr_align_down(hi - (p->image_size - 1), p->align);
	if (b_lo > b_hi)
		return 0;
	*ret_lo = b_lo;
	*ret_hi = b_hi;
	return 1;
}

/*
 * Walk the runs of slots of one region's base range [b_lo, b_hi] (see the
 * file comment).  Adds the slots to *total; if the want-th slot overall is
 * among them, writes it to *ret_base and returns 1.
 */
static int slot_walk_region(uint64_t b_lo, uint64_t b_hi, const struct slot_params *p,
			    unsigned flags, uint64_t want, uint64_t *total, uint64_t *ret_base)
{
	size_t navoid = (flags & SLOT_F_AVOID) ? p->navoid : 0;
	uint64_t c = b_lo, f_lo, f_hi;

	for (;;) {
		uint64_t run_end = b_hi, run_last, cnt;
		int moved = 1;

		/* leave every forbidden interval that holds c */
		while (moved) {
			moved = 0;
			for (size_t j = 0; j < navoid; j++) {
				if (!slot_forbidden(&p->avoid[j], p->image_size, &f_lo, &f_hi))
					continue;
				if (f_lo > c || f_hi < c)
					continue;
				if (f_hi >= b_hi)
					return 0;
				/* f_hi + 1 <= b_hi, which is aligned: no overflow */
				c = ldr_align_up(f_hi + 1, p->align);
				if (c > b_hi)
					return 0;
				moved = 1;
			}
		}
		/* c is a slot; the run stops below the next forbidden interval */
		for (size_t j = 0; j < navoid; j++) {
			if (!slot_forbidden(&p->avoid[j], p->image_size, &f_lo, &f_hi))
				continue;
			if (f_lo > c && f_lo - 1 < run_end)
				run_end = f_lo - 1;
		}
		run_last = ldr_align_down(run_end, p->align);
		cnt = (run_last - c) / p->align + 1;
		if (want != SLOT_WANT_NONE && want - *total < cnt) {
			*ret_base = c + (want - *total) * p->align;
			return 1;
		}
		*total += cnt;
		if (run_last >= b_hi)
			return 0;
		c = run_last + p->align;
	}
}

/*
 * The one routine behind every public function: count the slots of the
 * used regions (honouring avoid when flags has SLOT_F_AVOID) and, when want
 * is an index below the count, name that slot.
 * Outputs: *ret_total = slots counted (all of them unless the wanted one
 * was found first); *ret_base written only when it returns 1.
 * Errors: LDR_E_INVAL for invalid p or regions.
 */
static enum ldr_err slot_scan(const struct mem_region *regions, size_t n,
			      const struct slot_params *p, unsigned flags, uint64_t want,
			      uint64_t *ret_total, uint64_t *ret_base, int *ret_found)
{
	uint64_t total = 0, last, b_lo, b_hi, base = 0;
	int found = 0;

	if (!slot_params_ok(p, flags) || !slot_regions_ok(regions, n))
		return LDR_E_INVAL;
	for (size_t i = 0; i < n && !found; i++) {
		if (!slot_region_used(&regions[i], &last))
			continue;
		if (!slot_base_range(regions[i].addr, last, p, &b_lo, &b_hi))
			continue;
		found = slot_walk_region(b_lo, b_hi, p, flags, want, &total, &base);
	}
	*ret_total = total;
	*ret_found = found;
	if (found)
		*ret_base = base;
	return LDR_OK;
}

/* Number of slots honouring p->avoid; 0 also for invalid input (slot.h). */
uint64_t slot_count(const struct mem_region *regions, size_t n, const struct slot_params *p)
{
	uint64_t total, base;
	int found;

	if (slot_scan(regions, n, p, SLOT_F_AVOID, SLOT_WANT_NONE, &total, &base, &found) != LDR_OK)
		return 0;
	return total;
}

/* Slots of every E820_RAM region of e820 in p's window, ignoring p->avoid; 0 on invalid input. */
uint64_t slot_theoretical(const struct mem_region *e820, size_t n, const struct slot_params *p)
{
	uint64_t total, base;
	int found;

	if (slot_scan(e820, n, p, 0, SLOT_WANT_NONE, &total, &base, &found) != LDR_OK)
		return 0;
	return total;
}

/*
 * The idx-th slot in address order into *ret_base.
 * Errors: LDR_E_INVAL (bad p or regions), LDR_E_NO_SLOT (idx >= count).
 */
enum ldr_err slot_at(const struct mem_region *regions, size_t n, const struct slot_params *p,
		     uint64_t idx, uint64_t *ret_base)
{
	uint64_t total, base;
	enum ldr_err err;
	int found;

	if (idx == SLOT_WANT_NONE)
		return LDR_E_NO_SLOT; /* counts never get near 2^64 */
	err = slot_scan(regions, n, p, SLOT_F_AVOID, idx, &total, &base, &found);
	if (err != LDR_OK)
		return err;
	if (!found)
		return LDR_E_NO_SLOT;
	*ret_base = base;
	return LDR_OK;
}

/*
 * Count, draw one index through draw(ctx, count), name that slot.
 * Outputs *ret_base and *ret_count, only on success.
 * Errors: LDR_E_INVAL (bad input, draw NULL or out of range), LDR_E_NO_SLOT,
 * or the draw's own error.
 */
enum ldr_err slot_pick(const struct mem_region *regions, size_t n, const struct slot_params *p,
		       slot_draw_fn draw, void *ctx, uint64_t *ret_base, uint64_t *ret_count)
{
	uint64_t total, base, idx;
	enum ldr_err err;
	int found;

	if (!draw)
		return LDR_E_INVAL;
	err = slot_scan(regions, n, p, SLOT_F_AVOID, SLOT_WANT_NONE, &total, &base, &found);
	if (err != LDR_OK)
		return err;
	if (total == 0)
		return LDR_E_NO_SLOT;
	err = draw(ctx, total, &idx);
	if (err != LDR_OK)
		return err;
	if (idx >= total)
		return LDR_E_INVAL;
	err = slot_at(regions, n, p, idx, &base);
	if (err != LDR_OK)
		return err;
	*ret_base = base;
	*ret_count = total;
	return LDR_OK;
}

enum ldr_err slot_place(const struct mem_region *regions, size_t n, struct slot_params *p,
			struct mem_region *avoid, size_t *navoid, size_t cap,
			slot_draw_fn draw, void *dctx, slot_reserve_fn reserve, void *rctx,
			unsigned max_tries, uint64_t *ret_base, uint64_t *ret_count)
{
	uint64_t first = 0, base, count;
	enum ldr_err err;

	if (!reserve || !navoid || *navoid > cap)
		return LDR_E_INVAL;
	for (unsigned t = 0; t < max_tries; t++) {
		p->avoid = avoid;
		p->navoid = *navoid;
		err = slot_pick(regions, n, p, draw, dctx, &base, &count);
		if (err != LDR_OK)
			return err;
		if (t == 0)
			first = count;
		if (reserve(rctx, base, p->image_size)) {
			*ret_base = base;
			*ret_count = first;
			return LDR_OK;
		}
		/* one byte at the base rules out exactly the slots that
		 * would cover it, the refused one among them */
		if (*navoid == cap)
			break;
		avoid[*navoid].addr = base;
		avoid[*navoid].size = 1;
		avoid[*navoid].type = E820_RESERVED;
		avoid[*navoid].flags = 0;
		(*navoid)++;
	}
	return LDR_E_SLOT_REFUSED;
}

enum ldr_err slot_first_from(const struct mem_region *regions, size_t n,
			     const struct slot_params *p, uint64_t addr, uint64_t *ret_idx)
{
	uint64_t lo = 0, hi, base;
	enum ldr_err err;

	if (!slot_params_ok(p, SLOT_F_AVOID) || !slot_regions_ok(regions, n))
		return LDR_E_INVAL;
	hi = slot_count(regions, n, p);
	/* slots ascend with their index: the first one at or above addr */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		err = slot_at(regions, n, p, mid, &base);
		if (err != LDR_OK)
			return err;
		if (base >= addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == slot_count(regions, n, p))
		return LDR_E_NO_SLOT;
	*ret_idx = lo;
	return LDR_OK;
}

enum ldr_err slot_index_of(const struct mem_region *regions, size_t n,
			   const struct slot_params *p, uint64_t base, uint64_t *ret_idx)
{
	uint64_t idx, got;
	enum ldr_err err;

	err = slot_first_from(regions, n, p, base, &idx);
	if (err != LDR_OK)
		return err;
	err = slot_at(regions, n, p, idx, &got);
	if (err != LDR_OK)
		return err;
	if (got != base)
		return LDR_E_NO_SLOT;
	*ret_idx = idx;
	return LDR_OK;
}

/* Do the E820_RAM regions of r[0..n) (sorted) cover every byte of [lo, last]? */
static int slot_covered(const struct mem_region *r, size_t n, uint64_t lo, uint64_t last)
{
	uint64_t cur = lo, l;

	for (size_t i = 0; i < n; i++) {
		if (!slot_region_used(&r[i], &l) || r[i].addr > cur || l < cur)
			continue;
		if (l >= last)
			return 1;
		cur = l + 1;
	}
	return 0;
}

enum slot_why slot_explain(const struct mem_region *free_r, size_t nfree,
			   const struct mem_region *e820, size_t ne,
			   const struct slot_params *p, uint64_t base)
{
	uint64_t last, idx;

	if (!slot_params_ok(p, SLOT_F_AVOID) || (nfree && !free_r) || (ne && !e820))
		return SLOT_WHY_WINDOW;
	if (base & (p->align - 1))
		return SLOT_WHY_MISALIGNED;
	if (base < p->min_addr || p->image_size - 1 > UINT64_MAX - base)
		return SLOT_WHY_WINDOW;
	last = base + (p->image_size - 1);
	if (p->max_addr != 0 && last > p->max_addr - 1)
		return SLOT_WHY_WINDOW;
	if (slot_index_of(free_r, nfree, p, base, &idx) == LDR_OK)
		return SLOT_WHY_OK;
	if (!slot_covered(e820, ne, base, last))
		return SLOT_WHY_NOT_RAM;
	if (!slot_covered(free_r, nfree, base, last))
		return SLOT_WHY_NOT_FREE;
	for (size_t j = 0; j < p->navoid; j++) {
		uint64_t f_lo, f_hi;

		if (slot_forbidden(&p->avoid[j], p->image_size, &f_lo, &f_hi) &&
		    base >= f_lo && base <= f_hi)
			return SLOT_WHY_AVOIDED;
	}
	/* free, but across two free regions the map keeps apart */
	return SLOT_WHY_NOT_FREE;
}
