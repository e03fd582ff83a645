/*
 * elf_pages.c - the page-granular mapping of a loaded image: runs of 4 KiB
 * pages whose permissions are the union of every segment touching them,
 * and the W+X check on that union (see include/elf_pages.h).
 */
#include <elf.h>

#include "elf_pages.h"

/* the PT_W / PT_X a segment asks for */
static uint32_t ep_flags(const struct elf_segment *s)
{
	return ((s->flags & PF_W) ? PT_W : 0) | ((s->flags & PF_X) ? PT_X : 0);
}

/* first and one-past-last page offset a segment touches */
static uint64_t ep_lo(const struct elf_segment *s)
{
	return ldr_align_down(s->load_off, PAGE_SIZE);
}

static uint64_t ep_hi(const struct elf_segment *s)
{
	return ldr_align_up(s->load_off + s->memsz, PAGE_SIZE);
}

/* Sorted, unique page boundaries of every segment; returns how many. */
static unsigned ep_bounds(const struct elf_image *img, uint64_t *b)
{
	unsigned n = 0;

	for (unsigned i = 0; i < img->nseg; i++) {
		uint64_t v[2] = { ep_lo(&img->seg[i]), ep_hi(&img->seg[i]) };

		for (unsigned k = 0; k < 2; k++) {
			unsigned j = n;

			/* insertion, dropping duplicates */
			while (j > 0 && b[j - 1] > v[k])
				j--;
			if (j > 0 && b[j - 1] == v[k])
				continue;
			for (unsigned m = n; m > j; m--)
				b[m] = b[m - 1];
			b[j] = v[k];
			n++;
		}
	}
	return n;
}

/* The first writable and the first executable segment touching [lo, hi). */
static void ep_clash(const struct elf_image *img, uint64_t lo, uint64_t hi,
		     struct elf_wx_clash *c)
{
	int w = -1, x = -1;

	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		if (ep_lo(s) >= hi || ep_hi(s) <= lo)
			continue;
		if (w < 0 && (s->flags & PF_W))
			w = (int)i;
		if (x < 0 && (s->flags & PF_X))
			x = (int)i;
	}
	c->off = lo;
	/* both exist: the union of [lo, hi) has PT_W and PT_X */
	c->phdr_w = img->seg[w].phdr;
	c->vaddr_w = img->seg[w].vaddr;
	c->phdr_x = img->seg[x].phdr;
	c->vaddr_x = img->seg[x].vaddr;
}

/*
 * Between two consecutive boundaries the set of segments touching a page
 * does not change, so each interval is one run (or a gap); runs are then
 * merged with an adjacent predecessor of equal flags.
 */
enum ldr_err elf_page_map(const struct elf_image *img, struct elf_page_range *ranges,
			  unsigned cap, unsigned *ret_n, struct elf_wx_clash *clash)
{
	uint64_t b[2 * ELF_MAX_SEGMENTS];
	unsigned nb, n = 0;

	if (!img || !ranges || !ret_n || img->nseg > ELF_MAX_SEGMENTS)
		return LDR_E_INVAL;
	nb = ep_bounds(img, b);
	for (unsigned k = 0; k + 1 < nb; k++) {
		uint64_t lo = b[k], hi = b[k + 1];
		uint32_t flags = 0;
		int touched = 0;

		for (unsigned i = 0; i < img->nseg; i++) {
			const struct elf_segment *s = &img->seg[i];

			if (ep_lo(s) < hi && ep_hi(s) > lo) {
				touched = 1;
				flags |= ep_flags(s);
			}
		}
		if (!touched)
			continue;
		if ((flags & (PT_W | PT_X)) == (PT_W | PT_X) && !img->has_wx) {
			if (clash)
				ep_clash(img, lo, hi, clash);
			return LDR_E_WX_PAGE;
		}
		if (n > 0 && ranges[n - 1].off + ranges[n - 1].size == lo &&
		    ranges[n - 1].flags == flags) {
			ranges[n - 1].size += hi - lo;
			continue;
		}
		if (n == cap)
			return LDR_E_INVAL;
		ranges[n].off = lo;
		ranges[n].size = hi - lo;
		ranges[n].flags = flags;
		n++;
	}
	*ret_n = n;
	return LDR_OK;
}
