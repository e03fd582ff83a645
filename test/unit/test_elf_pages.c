/*
 * test_elf_pages.c - host tests for src/elf_pages.c: the page ranges of
 * hand-made segment layouts (a page shared by text and rodata, text and
 * data, gaps, BSS, many segments, Linux's W+X) and of thousands of random
 * layouts, all compared with an oracle that computes every page's
 * permissions by brute force; the refusal of W+X pages through
 * elf_parse_diag() with the two segments named.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "elf_load.h"
#include "elf_pages.h"
#include "elf_build.h"
#include "test.h"

#define R  PF_R
#define RX (PF_R | PF_X)
#define RW (PF_R | PF_W)
#define RWX (PF_R | PF_W | PF_X)

#define MAX_PAGES 4096

struct seg_spec {
	uint64_t off, memsz;
	uint32_t flags;
};

/* An image of n segments at the given load offsets (sorted, disjoint). */
static void make_img(struct elf_image *img, const struct seg_spec *s, unsigned n, int has_wx)
{
	uint64_t end = 0;

	memset(img, 0, sizeof(*img));
	img->nseg = n;
	img->has_wx = has_wx;
	for (unsigned i = 0; i < n; i++) {
		img->seg[i].load_off = s[i].off;
		img->seg[i].memsz = s[i].memsz;
		img->seg[i].filesz = s[i].memsz;
		img->seg[i].flags = s[i].flags;
		img->seg[i].phdr = i + 1;   /* as if a PT_PHDR came first */
		img->seg[i].vaddr = 0x400000 + s[i].off;
		end = s[i].off + s[i].memsz;
	}
	img->load_size = ldr_align_up(end, PAGE_SIZE);
}

/*
 * The oracle: for every page, the union of the flags of the segments whose
 * bytes touch it (-1: none); then the maximal runs.  Returns the number of
 * runs, or -1 when some page is W+X and the image does not tolerate it
 * (*wx_page: the first such page's offset).
 */
static int oracle(const struct elf_image *img, struct elf_page_range *out, uint64_t *wx_page)
{
	static int page[MAX_PAGES];
	uint64_t np = img->load_size / PAGE_SIZE;
	int n = 0;

	for (uint64_t p = 0; p < np; p++) {
		page[p] = -1;
		for (unsigned i = 0; i < img->nseg; i++) {
			const struct elf_segment *s = &img->seg[i];
			uint64_t lo = p * PAGE_SIZE, hi = lo + PAGE_SIZE;

			if (s->load_off < hi && s->load_off + s->memsz > lo)
				page[p] = (page[p] < 0 ? 0 : page[p]) |
					  ((s->flags & PF_W) ? PT_W : 0) |
					  ((s->flags & PF_X) ? PT_X : 0);
		}
		if (page[p] == (PT_W | PT_X) && !img->has_wx) {
			*wx_page = p * PAGE_SIZE;
			return -1;
		}
	}
	for (uint64_t p = 0; p < np; p++) {
		if (page[p] < 0)
			continue;
		if (n > 0 && out[n - 1].off + out[n - 1].size == p * PAGE_SIZE &&
		    out[n - 1].flags == (uint32_t)page[p]) {
			out[n - 1].size += PAGE_SIZE;
			continue;
		}
		out[n].off = p * PAGE_SIZE;
		out[n].size = PAGE_SIZE;
		out[n].flags = (uint32_t)page[p];
		n++;
	}
	return n;
}

/* Does segment i of img touch the page at off with the flag f? */
static int touches(const struct elf_image *img, unsigned phdr, uint64_t off, uint32_t f)
{
	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		if (s->phdr == phdr && (s->flags & f) && s->load_off < off + PAGE_SIZE &&
		    s->load_off + s->memsz > off)
			return 1;
	}
	return 0;
}

/* elf_page_map() against the oracle; returns 1 when they agree. */
static int agrees(const struct elf_image *img, const char *name)
{
	struct elf_page_range got[ELF_PAGE_RANGES_MAX], want[MAX_PAGES];
	struct elf_wx_clash c;
	uint64_t wx_page = 0;
	unsigned n = 99;
	int wn = oracle(img, want, &wx_page);
	enum ldr_err err = elf_page_map(img, got, ELF_PAGE_RANGES_MAX, &n, &c);

	if (wn < 0) {
		if (err != LDR_E_WX_PAGE || c.off != wx_page ||
		    !touches(img, c.phdr_w, c.off, PF_W) || !touches(img, c.phdr_x, c.off, PF_X)) {
			printf("  %s: want LDR_E_WX_PAGE at 0x%llx, got %s (page 0x%llx, "
			       "segments %u/%u)\n", name, (unsigned long long)wx_page,
			       ldr_err_name(err), (unsigned long long)c.off, c.phdr_w, c.phdr_x);
			return 0;
		}
		return 1;
	}
	if (err != LDR_OK || n != (unsigned)wn) {
		printf("  %s: %s, %u ranges, oracle %d\n", name, ldr_err_name(err), n, wn);
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		if (got[i].off != want[i].off || got[i].size != want[i].size ||
		    got[i].flags != want[i].flags) {
			printf("  %s: range %u is [0x%llx +0x%llx) %u, oracle [0x%llx +0x%llx) %u\n",
			       name, i, (unsigned long long)got[i].off,
			       (unsigned long long)got[i].size, got[i].flags,
			       (unsigned long long)want[i].off, (unsigned long long)want[i].size,
			       want[i].flags);
			return 0;
		}
	return 1;
}

/* Map img; *ret_n ranges into r, expecting LDR_OK. */
static unsigned map_ok(const struct elf_image *img, struct elf_page_range *r, const char *name)
{
	unsigned n = 0;
	enum ldr_err err = elf_page_map(img, r, ELF_PAGE_RANGES_MAX, &n, NULL);

	CHECK(err == LDR_OK, "%s: maps (%s)", name, ldr_err_name(err));
	return err == LDR_OK ? n : 0;
}

TEST(test_shared_text_rodata)
{
	/* text ends mid-page, rodata starts right after it in the same page */
	static const struct seg_spec s[] = {
		{ 0x0000, 0x1800, RX }, { 0x1800, 0xc00, R }, { 0x3000, 0x1000, RW },
	};
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	struct elf_image img;
	unsigned n;

	make_img(&img, s, 3, 0);
	n = map_ok(&img, r, "text/rodata");
	CHECK_EQ_U64(n, 3, "text/rodata: three runs");
	CHECK(r[0].off == 0 && r[0].size == 0x2000 && r[0].flags == PT_X,
	      "the shared page is R+X, with the text page before it");
	CHECK(r[1].off == 0x2000 && r[1].size == 0x1000 && r[1].flags == 0,
	      "rodata's own page is read-only");
	CHECK(r[2].off == 0x3000 && r[2].size == 0x1000 && r[2].flags == PT_W, "data is R+W");
	CHECK(agrees(&img, "text/rodata"), "text/rodata: oracle agrees");
}

TEST(test_shared_text_data)
{
	static const struct seg_spec s[] = {
		{ 0x0000, 0x2100, RX }, { 0x2100, 0x300, R }, { 0x2400, 0x1000, RW },
	};
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	struct elf_image img;
	struct elf_wx_clash c;
	unsigned n = 7;

	make_img(&img, s, 3, 0);
	memset(&c, 0, sizeof(c));
	CHECK(elf_page_map(&img, r, ELF_PAGE_RANGES_MAX, &n, &c) == LDR_E_WX_PAGE,
	      "text and data in one page: refused");
	CHECK_EQ_U64(n, 7, "count untouched on error");
	CHECK_EQ_U64(c.off, 0x2000, "the shared page");
	CHECK_EQ_U64(c.phdr_x, 1, "the executable segment's program header");
	CHECK_EQ_U64(c.phdr_w, 3, "the writable segment's program header");
	CHECK_EQ_U64(c.vaddr_x, 0x400000, "the executable segment's vaddr");
	CHECK_EQ_U64(c.vaddr_w, 0x402400, "the writable segment's vaddr");
	CHECK(elf_page_map(&img, r, ELF_PAGE_RANGES_MAX, &n, NULL) == LDR_E_WX_PAGE,
	      "refused without a clash report too");
	CHECK(agrees(&img, "text/data"), "text/data: oracle agrees");

	/* Linux: W+X tolerated, the shared page is W+X */
	make_img(&img, s, 3, 1);
	n = map_ok(&img, r, "text/data, W+X tolerated");
	CHECK(n == 3 && r[1].off == 0x2000 && r[1].size == 0x1000 &&
	      r[1].flags == (PT_W | PT_X), "W+X tolerated: the shared page is W+X");
	CHECK(agrees(&img, "text/data, W+X tolerated"), "W+X tolerated: oracle agrees");
}

TEST(test_gaps_bss)
{
	/* text, a 2-page hole, data with a long BSS, a page-aligned RW
	 * neighbour (merged), then a lone read-only page far away */
	static const struct seg_spec s[] = {
		{ 0x0000, 0x0800, RX }, { 0x3000, 0x2001, RW }, { 0x6000, 0x1000, RW },
		{ 0x10000, 0x10, R },
	};
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	struct elf_image img;
	unsigned n;

	make_img(&img, s, 4, 0);
	img.seg[1].filesz = 0x100;   /* BSS: memsz counts, not filesz */
	n = map_ok(&img, r, "gaps");
	CHECK_EQ_U64(n, 3, "gaps: three runs");
	CHECK(r[0].off == 0 && r[0].size == 0x1000 && r[0].flags == PT_X, "text page");
	CHECK(r[1].off == 0x3000 && r[1].size == 0x4000 && r[1].flags == PT_W,
	      "data + BSS (3 pages) merged with the adjacent RW segment");
	CHECK(r[2].off == 0x10000 && r[2].size == 0x1000 && r[2].flags == 0,
	      "the lone read-only page, after a gap");
	CHECK(agrees(&img, "gaps"), "gaps: oracle agrees");

	/* BSS-only segment sharing its first page with text */
	static const struct seg_spec t[] = { { 0x0000, 0x1100, RX }, { 0x1100, 0x3000, RW } };

	make_img(&img, t, 2, 0);
	img.seg[1].filesz = 0;
	CHECK(elf_page_map(&img, r, ELF_PAGE_RANGES_MAX, &n, NULL) == LDR_E_WX_PAGE,
	      "BSS in the last text page: refused");
}

TEST(test_many_segments)
{
	/* 16 segments, each sharing a page with the next: R, RX, R, RX, ... */
	struct seg_spec s[ELF_MAX_SEGMENTS];
	struct elf_page_range r[ELF_PAGE_RANGES_MAX], small[4];
	struct elf_image img;
	unsigned n;

	for (unsigned i = 0; i < ELF_MAX_SEGMENTS; i++)
		s[i] = (struct seg_spec){ i * 0x1800, 0x1800, (i & 1) ? RX : R };
	make_img(&img, s, ELF_MAX_SEGMENTS, 0);
	n = map_ok(&img, r, "16 segments");
	CHECK(n > 0 && n <= ELF_PAGE_RANGES_MAX, "16 segments: %u runs", n);
	CHECK(agrees(&img, "16 segments"), "16 segments: oracle agrees");
	CHECK(elf_page_map(&img, small, 4, &n, NULL) == LDR_E_INVAL, "cap too small");
	CHECK(elf_page_map(NULL, r, ELF_PAGE_RANGES_MAX, &n, NULL) == LDR_E_INVAL, "NULL image");
	CHECK(elf_page_map(&img, NULL, ELF_PAGE_RANGES_MAX, &n, NULL) == LDR_E_INVAL, "NULL ranges");
	CHECK(elf_page_map(&img, r, ELF_PAGE_RANGES_MAX, NULL, NULL) == LDR_E_INVAL, "NULL count");

	/* the worst case for the count: every boundary changes the flags */
	for (unsigned i = 0; i < ELF_MAX_SEGMENTS; i++)
		s[i] = (struct seg_spec){ i * 0x3000 + 0x800, 0x1000, (i & 1) ? RW : RX };
	make_img(&img, s, ELF_MAX_SEGMENTS, 0);
	n = map_ok(&img, r, "16 segments with gaps");
	CHECK_EQ_U64(n, ELF_MAX_SEGMENTS, "one run per segment");
	CHECK(agrees(&img, "16 segments with gaps"), "16 segments with gaps: oracle agrees");
	/* pairs sharing a page, a gap page between pairs */
	for (unsigned i = 0; i < ELF_MAX_SEGMENTS; i++)
		s[i] = (struct seg_spec){ i * 0x1400, 0x1000, (i & 1) ? R : RX };
	make_img(&img, s, ELF_MAX_SEGMENTS, 0);
	n = map_ok(&img, r, "16 segments, pairs sharing pages");
	CHECK(agrees(&img, "16 segments, pairs sharing pages"),
	      "16 segments, pairs sharing pages: oracle agrees");
}


TEST(test_random_layouts)
{
	static const uint32_t fl[] = { R, RX, RW, RWX };
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned bad = 0, refused = 0, runs = 20000;

	for (unsigned k = 0; k < runs; k++) {
		struct seg_spec s[ELF_MAX_SEGMENTS];
		unsigned n = 1 + (unsigned)(test_rand(&x) % ELF_MAX_SEGMENTS);
		int has_wx = (test_rand(&x) & 7) == 0;
		uint64_t off = test_rand(&x) % 0x3000;
		struct elf_image img;
		char name[64];

		for (unsigned i = 0; i < n; i++) {
			/* gaps and sizes from 0 bytes to 3 pages, not page-rounded */
			uint64_t size = 1 + test_rand(&x) % 0x3000;

			s[i] = (struct seg_spec){ off, size, fl[test_rand(&x) % (has_wx ? 4 : 3)] };
			off += size + ((test_rand(&x) & 1) ? test_rand(&x) % 0x2000 : 0);
		}
		make_img(&img, s, n, has_wx);
		snprintf(name, sizeof(name), "random layout %u", k);
		if (!agrees(&img, name) && bad++ > 5)
			break;
		if (!has_wx) {
			struct elf_page_range tmp[ELF_PAGE_RANGES_MAX];
			unsigned m;

			refused += elf_page_map(&img, tmp, ELF_PAGE_RANGES_MAX, &m, NULL) ==
				   LDR_E_WX_PAGE;
		}
	}
	printf("test_elf_pages: %u random layouts, %u refused W+X\n", runs, refused);
	CHECK(bad == 0, "random layouts agree with the oracle");
	CHECK(refused > runs / 10 && refused < runs, "both outcomes drawn (%u refused)", refused);
}

/* Through elf_parse_diag(): the ET_EXEC of elf_build.h with its data
 * segment moved into the last page of its (shrunk) text. */
static enum ldr_err parse_shared(uint32_t second_flags, struct elf_image *img,
				 struct elf_wx_clash *c)
{
	static struct eb e;

	eb_exec(&e);
	eb_srela(&e, 0, EB_V + 0x1100, R_X86_64_64, EB_SYM_DATA, 8);
	e.ph[0].p_filesz = e.ph[0].p_memsz = 0x800;
	e.ph[1].p_vaddr = EB_V + 0x800;
	e.ph[1].p_paddr = EB_P + 0x800;
	e.ph[1].p_align = 0x800;
	e.ph[1].p_flags = second_flags;
	/* a program header before them, so indices differ from positions */
	memmove(&e.ph[1], &e.ph[0], 2 * sizeof(e.ph[0]));
	e.ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = 0x1000, .p_filesz = 4 };
	e.nph = 3;
	eb_write(&e);
	return elf_parse_diag(e.buf, e.size, NULL, img, c);
}

TEST(test_parse_refuses)
{
	struct elf_image img;
	struct elf_wx_clash c;
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	unsigned n;

	memset(&c, 0, sizeof(c));
	CHECK(parse_shared(RW, &img, &c) == LDR_E_WX_PAGE, "text + data page refused");
	CHECK_EQ_U64(c.phdr_x, 1, "names the text segment (program header 1)");
	CHECK_EQ_U64(c.vaddr_x, EB_V, "text vaddr");
	CHECK_EQ_U64(c.phdr_w, 2, "names the data segment (program header 2)");
	CHECK_EQ_U64(c.vaddr_w, EB_V + 0x800, "data vaddr");
	CHECK_EQ_U64(c.off, 0, "the page at load offset 0");
	CHECK(parse_shared(RW, &img, NULL) == LDR_E_WX_PAGE, "refused without a report");

	CHECK(parse_shared(R, &img, &c) == LDR_OK, "text + rodata page accepted");
	CHECK(!img.has_wx, "no W+X");
	CHECK(elf_page_map(&img, r, ELF_PAGE_RANGES_MAX, &n, NULL) == LDR_OK && n == 2 &&
	      r[0].off == 0 && r[0].size == 0x1000 && r[0].flags == PT_X &&
	      r[1].off == 0x1000 && r[1].flags == 0,
	      "parsed text + rodata: the shared page R+X, the rest of rodata R");
	CHECK(agrees(&img, "parsed text/rodata"), "parsed text/rodata: oracle agrees");
}

/* The Linux-like image: its RWX init segment is tolerated and mapped W+X. */
TEST(test_linux_wx)
{
	static const uint32_t r64[] = { (uint32_t)(EB_V + 0x1100) };
	static struct eb e;
	struct elf_image img;
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	unsigned n;

	eb_linux(&e);
	eb_linux_table(&e, r64, 1, NULL, 0, NULL, 0);
	eb_write(&e);
	CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_OK && img.has_wx, "Linux parses, W+X");
	n = map_ok(&img, r, "Linux");
	CHECK(n == 3 && r[0].flags == PT_X && r[1].flags == PT_W && r[1].size == 0x2000 &&
	      r[2].flags == (PT_W | PT_X) && r[2].off == 0x3000 && r[2].size == 0x2000,
	      "Linux: text, data + per-cpu, RWX init (by physical address)");
	CHECK(agrees(&img, "Linux"), "Linux: oracle agrees");
}
