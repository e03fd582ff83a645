/*
 * elf_pages.c - the page-granular mapping of a loaded image: runs of 4 KiB
 * pages whose permissions are the union of every segment (and, in a Linux
 * W+X segment, every kept section) touching them, and the W+X check on
 * that union (see include/elf_pages.h).
 */
#include <elf.h>

#include "elf_pages.h"

/* What adds to the union: a segment, or a section of a Linux W+X segment;
 * [lo, hi) page-rounded. */
struct ep_piece {
	uint64_t lo, hi;
	uint32_t flags;    /* PT_W | PT_X */
	int seg;           /* a segment (1) or a section (0) */
};

#define EP_PIECES_MAX (ELF_MAX_SEGMENTS + ELF_WX_SECTIONS_MAX)

static uint32_t ep_flags(uint32_t pf)
{
	return ((pf & PF_W) ? PT_W : 0) | ((pf & PF_X) ? PT_X : 0);
}

/* A W+X segment whose pages its sections decide (elf_pages.h). */
static int ep_by_section(const struct elf_image *img, const struct elf_segment *s)
{
	return img->wx_by_section && (s->flags & (PF_W | PF_X)) == (PF_W | PF_X);
}

/*
 * The pieces of img; elf_parse() keeps every extent below 2^64 - 4 KiB
 * (its wrap check), so the rounding up cannot wrap.
 */
static unsigned ep_pieces(const struct elf_image *img, struct ep_piece *p)
{
	unsigned n = 0;

	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		p[n++] = (struct ep_piece){
			.lo = ldr_align_down(s->load_off, PAGE_SIZE),
			.hi = ldr_align_up(s->load_off + s->memsz, PAGE_SIZE),
			.flags = ep_by_section(img, s) ? 0 : ep_flags(s->flags),
			.seg = 1,
		};
	}
	for (unsigned i = 0; img->wx_by_section && i < img->nwx_sec; i++) {
		const struct elf_wx_section *w = &img->wx_sec[i];

		p[n++] = (struct ep_piece){
			.lo = ldr_align_down(w->load_off, PAGE_SIZE),
			.hi = ldr_align_up(w->load_off + w->size, PAGE_SIZE),
			.flags = ep_flags(w->flags),
			.seg = 0,
		};
	}
	return n;
}

/* Sorted, unique page boundaries of every piece; returns how many. */
static unsigned ep_bounds(const struct ep_piece *p, unsigned np, uint64_t *b)
{
	unsigned n = 0;

	for (unsigned i = 0; i < np; i++) {
		uint64_t v[2] = { p[i].lo, p[i].hi };

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

		if (ldr_align_down(s->load_off, PAGE_SIZE) >= hi ||
		    ldr_align_up(s->load_off + s->memsz, PAGE_SIZE) <= lo)
			continue;
		if (w < 0 && (s->flags & PF_W))
			w = (int)i;
		if (x < 0 && (s->flags & PF_X))
			x = (int)i;
	}
	c->off = lo;
	/* both exist: without wx_linux no section pieces are kept, so the
	 * union of [lo, hi) has PT_W and PT_X from segments */
	c->phdr_w = img->seg[w].phdr;
	c->vaddr_w = img->seg[w].vaddr;
	c->phdr_x = img->seg[x].phdr;
	c->vaddr_x = img->seg[x].vaddr;
}

/*
 * Between two consecutive boundaries the set of pieces touching a page
 * does not change, so each interval is one run (or a gap); runs are then
 * merged with an adjacent predecessor of equal flags.
 */
enum ldr_err elf_page_map(const struct elf_image *img, struct elf_page_range *ranges,
			  unsigned cap, unsigned *ret_n, struct elf_wx_clash *clash)
{
	struct ep_piece p[EP_PIECES_MAX];
	uint64_t b[2 * EP_PIECES_MAX];
	unsigned np, nb, n = 0;

	if (!img || !ranges || !ret_n || img->nseg > ELF_MAX_SEGMENTS ||
	    img->nwx_sec > ELF_WX_SECTIONS_MAX)
		return LDR_E_INVAL;
	np = ep_pieces(img, p);
	nb = ep_bounds(p, np, b);
	for (unsigned k = 0; k + 1 < nb; k++) {
		uint64_t lo = b[k], hi = b[k + 1];
		uint32_t flags = 0;
		int touched = 0;

		/* a section lies inside its segment: it never touches alone */
		for (unsigned i = 0; i < np; i++)
			if (p[i].lo < hi && p[i].hi > lo) {
				touched |= p[i].seg;
				flags |= p[i].flags;
			}
		if (!touched)
			continue;
		if ((flags & (PT_W | PT_X)) == (PT_W | PT_X) && !img->wx_linux) {
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
