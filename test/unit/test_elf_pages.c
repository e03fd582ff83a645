/*
 * test_elf_pages.c - host tests for src/elf_pages.c: the page ranges of
 * hand-made segment layouts (a page shared by text and rodata, text and
 * data, gaps, BSS, many segments, Linux's W+X) and of thousands of random
 * layouts, all compared with an oracle that computes every page's
 * permissions by brute force; the refusal of W+X pages through
 * elf_parse_diag() with the two segments named.  A Linux kernel's RWX init
 * segment: its pages take their sections' permissions, so exactly the
 * pages an executable and a writable section share are W+X - by hand, at
 * random against the oracle, and through elf_parse() of hand-built files
 * (with and without Linux's table, without section headers, with too many
 * sections, with hostile section headers); a kernel of the loader's own
 * protocol with the same RWX segment is still refused.
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

/* An image of n segments at the given load offsets (sorted, disjoint);
 * wx_linux: W+X pages tolerated, as for a Linux image. */
static void make_img(struct elf_image *img, const struct seg_spec *s, unsigned n, int wx_linux)
{
	uint64_t end = 0;

	memset(img, 0, sizeof(*img));
	img->nseg = n;
	img->is_linux = wx_linux;
	img->wx_linux = wx_linux;
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

/* PF_W / PF_X as the page tables say them */
static int pt_of(uint32_t pf)
{
	return ((pf & PF_W) ? PT_W : 0) | ((pf & PF_X) ? PT_X : 0);
}

/*
 * The oracle: for every page, the union of the flags of the segments whose
 * bytes touch it (-1: none) - a W+X segment of an image mapped by section
 * adding none itself, the kept sections whose bytes touch the page adding
 * theirs; then the maximal runs.  Returns the number of runs, or -1 when
 * some page is W+X and the image does not tolerate it (*wx_page: the first
 * such page's offset).
 */
static int oracle(const struct elf_image *img, struct elf_page_range *out, uint64_t *wx_page)
{
	static int page[MAX_PAGES];
	uint64_t np = img->load_size / PAGE_SIZE;
	int n = 0;

	for (uint64_t p = 0; p < np; p++) {
		uint64_t lo = p * PAGE_SIZE, hi = lo + PAGE_SIZE;

		page[p] = -1;
		for (unsigned i = 0; i < img->nseg; i++) {
			const struct elf_segment *s = &img->seg[i];
			int by_sec = img->wx_by_section && (s->flags & (PF_W | PF_X)) == (PF_W | PF_X);

			if (s->load_off < hi && s->load_off + s->memsz > lo)
				page[p] = (page[p] < 0 ? 0 : page[p]) | (by_sec ? 0 : pt_of(s->flags));
		}
		for (unsigned i = 0; img->wx_by_section && i < img->nwx_sec; i++) {
			const struct elf_wx_section *w = &img->wx_sec[i];

			if (w->load_off < hi && w->load_off + w->size > lo)
				page[p] |= pt_of(w->flags);
		}
		if (page[p] == (PT_W | PT_X) && !img->wx_linux) {
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
	unsigned bad = 0, refused = 0, runs = 20000, by_section = 0;

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
		/* Linux, mapped by section: each RWX segment gets up to 6
		 * sections of random flags, in order, some sharing pages */
		if (has_wx && (test_rand(&x) & 1)) {
			img.wx_by_section = 1;
			for (unsigned i = 0; i < n; i++) {
				const struct elf_segment *g = &img.seg[i];
				uint64_t at = g->load_off;

				if ((g->flags & (PF_W | PF_X)) != (PF_W | PF_X))
					continue;
				for (unsigned m = test_rand(&x) % 7; m > 0; m--) {
					uint64_t gap = test_rand(&x) % 0x900, sz = 1 + test_rand(&x) % 0x1800;

					if (img.nwx_sec == ELF_WX_SECTIONS_MAX ||
					    at + gap >= g->load_off + g->memsz)
						break;
					at += gap;
					if (sz > g->load_off + g->memsz - at)
						sz = g->load_off + g->memsz - at;
					img.wx_sec[img.nwx_sec++] = (struct elf_wx_section){
						at, sz, (uint32_t)(fl[test_rand(&x) % 4] & (PF_W | PF_X)),
						img.nwx_sec + 1 };
					at += sz;
				}
			}
			by_section++;
		}
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
	printf("test_elf_pages: %u random layouts, %u refused W+X, %u Linux ones mapped by section\n",
	       runs, refused, by_section);
	CHECK(bad == 0, "random layouts agree with the oracle");
	CHECK(by_section > runs / 50, "Linux layouts mapped by section drawn (%u)", by_section);
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
	CHECK(img.is_linux && img.wx_linux && !img.wx_by_section,
	      "Linux without section headers: its RWX segment stays RWX");
	n = map_ok(&img, r, "Linux");
	CHECK(n == 3 && r[0].flags == PT_X && r[1].flags == PT_W && r[1].size == 0x2000 &&
	      r[2].flags == (PT_W | PT_X) && r[2].off == 0x3000 && r[2].size == 0x2000,
	      "Linux: text, data + per-cpu, RWX init (by physical address)");
	CHECK(agrees(&img, "Linux"), "Linux: oracle agrees");
}

/* ------------------------------------------- Linux's init segment by section */

/* A section of the init segment at load offset off (the segment starts at
 * 0x3000), as the tests below lay them out. */
struct sec_spec {
	const char *name;
	uint64_t off, size;
	uint64_t shf;          /* SHF_ALLOC | SHF_WRITE | SHF_EXECINSTR */
};

#define AX (SHF_ALLOC | SHF_EXECINSTR)
#define WA (SHF_ALLOC | SHF_WRITE)
#define A  SHF_ALLOC

/*
 * What a tinyconfig 6.1 vmlinux's init segment holds (its sections'
 * order and flags, smaller): .altinstr_replacement (code), .apicdrivers
 * (data) and .exit.text (code) end up in one page, 0x5000; the page
 * 0x7000 holds no section (padding before .brk).
 */
static const struct sec_spec tiny_init[] = {
	{ ".init.text", 0x3000, 0x800, AX },
	{ ".init.data", 0x4000, 0x700, WA },
	{ ".altinstructions", 0x4700, 0xa00, A },
	{ ".altinstr_replacement", 0x5100, 0x635, AX },
	{ ".apicdrivers", 0x5738, 0x10, WA },
	{ ".exit.text", 0x5748, 0x297, AX },
	{ ".bss", 0x6000, 0x1000, WA },
	{ ".brk", 0x8000, 0x100, WA },
};
#define TINY_INIT_END 0x8100

/* The pages of that layout: text, data, per-cpu, then the init segment's */
static const struct { uint64_t off; uint32_t flags; } tiny_pages[] = {
	{ 0x0000, PT_X }, { 0x1000, PT_W }, { 0x2000, PT_W },
	{ 0x3000, PT_X }, { 0x4000, PT_W }, { 0x5000, PT_W | PT_X },
	{ 0x6000, PT_W }, { 0x7000, 0 }, { 0x8000, PT_W },
};

/* flags of the page at off in the ranges (-1: unmapped) */
static int page_flags(const struct elf_page_range *r, unsigned n, uint64_t off)
{
	for (unsigned i = 0; i < n; i++)
		if (off >= r[i].off && off - r[i].off < r[i].size)
			return (int)r[i].flags;
	return -1;
}

/* every page of tiny_pages as listed, and nothing else mapped */
static int tiny_map_ok(const struct elf_image *img, const char *name)
{
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	unsigned n = 0, bad = 0;
	uint64_t mapped = 0;

	if (elf_page_map(img, r, ELF_PAGE_RANGES_MAX, &n, NULL) != LDR_OK) {
		printf("  %s: not mapped\n", name);
		return 0;
	}
	for (unsigned i = 0; i < sizeof(tiny_pages) / sizeof(tiny_pages[0]); i++) {
		int f = page_flags(r, n, tiny_pages[i].off);

		if (f != (int)tiny_pages[i].flags) {
			printf("  %s: page 0x%llx has flags %d, want %u\n", name,
			       (unsigned long long)tiny_pages[i].off, f, tiny_pages[i].flags);
			bad++;
		}
	}
	for (unsigned i = 0; i < n; i++)
		mapped += r[i].size;
	return bad == 0 && mapped == sizeof(tiny_pages) / sizeof(tiny_pages[0]) * PAGE_SIZE;
}

/* W+X pages in the map of img */
static uint64_t wx_pages(const struct elf_image *img)
{
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	unsigned n = 0;
	uint64_t p = 0;

	if (elf_page_map(img, r, ELF_PAGE_RANGES_MAX, &n, NULL) != LDR_OK)
		return ~0ULL;
	for (unsigned i = 0; i < n; i++)
		if ((r[i].flags & (PT_W | PT_X)) == (PT_W | PT_X))
			p += r[i].size / PAGE_SIZE;
	return p;
}

/* By hand, no file: exactly the shared page is W+X. */
TEST(test_linux_init_by_section)
{
	static const struct seg_spec s[] = {
		{ 0x0000, 0x1000, RX }, { 0x1000, 0x1000, RW }, { 0x2000, 0x1000, RW },
		{ 0x3000, TINY_INIT_END - 0x3000, RWX },
	};
	struct elf_image img;

	make_img(&img, s, 4, 1);
	img.wx_by_section = 1;
	for (unsigned i = 0; i < sizeof(tiny_init) / sizeof(tiny_init[0]); i++)
		if (tiny_init[i].shf & (SHF_WRITE | SHF_EXECINSTR))
			img.wx_sec[img.nwx_sec++] = (struct elf_wx_section){
				tiny_init[i].off, tiny_init[i].size,
				((tiny_init[i].shf & SHF_WRITE) ? PF_W : 0) |
				((tiny_init[i].shf & SHF_EXECINSTR) ? PF_X : 0), i + 1 };
	CHECK(tiny_map_ok(&img, "by hand"),
	      "by hand: code pages X, data pages W, the page code and data share W+X, padding R");
	CHECK_EQ_U64(wx_pages(&img), 1, "by hand: one W+X page");
	CHECK(agrees(&img, "by hand"), "by hand: oracle agrees");

	/* .apicdrivers moved out of the shared page: no W+X page at all */
	img.wx_sec[3].load_off = 0x6800;
	CHECK_EQ_U64(wx_pages(&img), 0, "no page shared: no W+X page");
	CHECK(agrees(&img, "apicdrivers moved"), "apicdrivers moved: oracle agrees");

	/* not mapped by section: the whole segment is RWX, as before */
	img.wx_by_section = 0;
	CHECK_EQ_U64(wx_pages(&img), (TINY_INIT_END - 0x3000 + PAGE_SIZE - 1) / PAGE_SIZE,
		     "without sections the RWX segment is W+X throughout");

	/* the same layout without wx_linux (a kernel of the loader's own
	 * protocol): any W+X page is refused */
	img.wx_by_section = 1;
	img.wx_sec[3].load_off = 0x5738;
	img.wx_linux = 0;
	CHECK(elf_page_map(&img, (struct elf_page_range[ELF_PAGE_RANGES_MAX]){ 0 },
			   ELF_PAGE_RANGES_MAX, &(unsigned){ 0 }, NULL) == LDR_E_WX_PAGE,
	      "W+X not tolerated: the shared page refused");
	img.nwx_sec = ELF_WX_SECTIONS_MAX + 1;
	CHECK(elf_page_map(&img, (struct elf_page_range[ELF_PAGE_RANGES_MAX]){ 0 },
			   ELF_PAGE_RANGES_MAX, &(unsigned){ 0 }, NULL) == LDR_E_INVAL,
	      "more sections than kept: invalid");
}

/*
 * Through elf_parse(): eb_linux()'s image with its init segment grown to
 * TINY_INIT_END, section headers for tiny_init plus the extra ones given
 * (after the image, at 0x5000), and, when table is set, Linux's table.
 */
static void linux_file(struct eb *e, const Elf64_Shdr *extra, unsigned nextra, int table,
		       int shdrs)
{
	static const uint32_t r64[] = { (uint32_t)(EB_V + 0x1100) };
	Elf64_Shdr sh[ELF_WX_SECTIONS_MAX + 16];
	unsigned n = 0;

	eb_linux(e);
	e->ph[3].p_memsz = TINY_INIT_END - 0x3000;
	sh[n++] = (Elf64_Shdr){ 0 };
	sh[n++] = (Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = AX, .sh_addr = EB_V,
				.sh_offset = 0x1000, .sh_size = 0x1000 };
	sh[n++] = (Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = WA,
				.sh_addr = EB_V + 0x1000, .sh_offset = 0x2000, .sh_size = 0x1000 };
	for (unsigned i = 0; i < sizeof(tiny_init) / sizeof(tiny_init[0]); i++)
		sh[n++] = (Elf64_Shdr){
			.sh_type = tiny_init[i].name[1] == 'b' ? SHT_NOBITS : SHT_PROGBITS,
			.sh_flags = tiny_init[i].shf, .sh_addr = EB_V + tiny_init[i].off,
			.sh_offset = 0x4000, .sh_size = tiny_init[i].size,
		};
	for (unsigned i = 0; i < nextra; i++)
		sh[n++] = extra[i];
	if (shdrs) {
		e->eh.e_shoff = 0x5000;
		e->eh.e_shnum = (uint16_t)n;
		e->eh.e_shentsize = sizeof(Elf64_Shdr);
		eb_put(e, 0x5000, sh, n * sizeof(Elf64_Shdr));
		e->size = 0x5000 + n * sizeof(Elf64_Shdr);
	}
	if (table)
		eb_linux_table(e, r64, 1, NULL, 0, NULL, 0);
	eb_write(e);
}

static enum ldr_err parse_linux(const struct eb *e, int payload, struct elf_image *img)
{
	struct elf_limits lim = elf_default_limits();

	lim.linux_payload = payload;
	return elf_parse(e->buf, e->size, &lim, img);
}

TEST(test_parse_linux_by_section)
{
	static struct eb e;
	static struct elf_image img;
	struct elf_wx_clash c;

	/* with Linux's table: W+X exactly on the shared page */
	linux_file(&e, NULL, 0, 1, 1);
	CHECK_EQ_U64(parse_linux(&e, 0, &img), LDR_OK, "Linux with section headers parses");
	CHECK(img.is_linux && img.wx_linux && img.wx_by_section && img.reloc_kind == ELF_RELOC_LINUX,
	      "Linux, mapped by section");
	CHECK_EQ_U64(img.nwx_sec, 7, "its 7 writable or executable init sections kept, "
		     "not .altinstructions nor text or data outside the segment");
	CHECK(tiny_map_ok(&img, "parsed"), "parsed: exactly the shared page W+X");
	CHECK(img.has_wx, "parsed: has_wx says a page is W+X");
	CHECK(agrees(&img, "parsed"), "parsed: oracle agrees");

	/* a bzImage's payload without a table (RANDOMIZE_BASE off) */
	linux_file(&e, NULL, 0, 0, 1);
	CHECK_EQ_U64(parse_linux(&e, 1, &img), LDR_OK, "the payload without a table parses");
	CHECK(img.is_linux && img.reloc_kind == ELF_RELOC_NONE && img.layout == ELF_LAYOUT_PADDR,
	      "without a table: Linux, by physical address, no relocations");
	CHECK(tiny_map_ok(&img, "no table"), "no table: exactly the shared page W+X");
	/* ... while the same file as a kernel of the loader's own protocol
	 * keeps today's refusal: its segment is RWX */
	memset(&c, 0, sizeof(c));
	CHECK_EQ_U64(elf_parse_diag(e.buf, e.size, NULL, &img, &c), LDR_E_WX_SEGMENT,
		     "not a bzImage's payload: the RWX segment refused");
	CHECK_EQ_U64(c.phdr_w, 3, "the refusal names program header 3");

	/* no section headers: the segment's RWX, every init page */
	linux_file(&e, NULL, 0, 1, 0);
	CHECK(parse_linux(&e, 0, &img) == LDR_OK && !img.wx_by_section &&
	      wx_pages(&img) == (TINY_INIT_END - 0x3000 + PAGE_SIZE - 1) / PAGE_SIZE,
	      "no section headers: the init segment W+X throughout");

	/* 65 writable or executable sections in the segment: refused */
	{
		Elf64_Shdr many[ELF_WX_SECTIONS_MAX];

		for (unsigned i = 0; i < ELF_WX_SECTIONS_MAX; i++)
			many[i] = (Elf64_Shdr){ .sh_type = SHT_PROGBITS, .sh_flags = WA,
						.sh_addr = EB_V + 0x7000 + 16 * i,
						.sh_offset = 0x4000, .sh_size = 16 };
		linux_file(&e, many, ELF_WX_SECTIONS_MAX - 7, 1, 1);
		CHECK_EQ_U64(parse_linux(&e, 0, &img), LDR_OK, "64 kept sections: parses");
		CHECK_EQ_U64(img.nwx_sec, ELF_WX_SECTIONS_MAX, "64 kept sections");
		linux_file(&e, many, ELF_WX_SECTIONS_MAX - 6, 1, 1);
		CHECK_EQ_U64(parse_linux(&e, 0, &img), LDR_E_WX_SECTIONS, "65: refused");
	}
}

/* Hostile section headers: nothing wraps, nothing outside the segment. */
TEST(test_parse_linux_hostile_sections)
{
	static struct eb e;
	static struct elf_image img;
	const Elf64_Shdr hostile[] = {
		/* ends past 2^64: saturates, touches nothing of the image */
		{ .sh_type = SHT_NOBITS, .sh_flags = WA | SHF_EXECINSTR,
		  .sh_addr = UINT64_MAX - 0x10, .sh_size = 0x100 },
		/* size 2^64 - 1 from 0: covers the init segment, clipped to it */
		{ .sh_type = SHT_NOBITS, .sh_flags = A, .sh_addr = 0, .sh_size = UINT64_MAX },
		/* code straddling the data segment's end into the init segment:
		 * the data page stays W only */
		{ .sh_type = SHT_NOBITS, .sh_flags = AX, .sh_addr = EB_V + 0x1800,
		  .sh_size = 0x2000 },
		/* not allocated, empty, null: ignored */
		{ .sh_type = SHT_PROGBITS, .sh_flags = SHF_WRITE | SHF_EXECINSTR,
		  .sh_addr = EB_V + 0x7000, .sh_offset = 0x4000, .sh_size = 0x100 },
		{ .sh_type = SHT_PROGBITS, .sh_flags = WA | SHF_EXECINSTR,
		  .sh_addr = EB_V + 0x7000, .sh_offset = 0x4000, .sh_size = 0 },
		{ .sh_type = SHT_NULL, .sh_flags = WA | SHF_EXECINSTR,
		  .sh_addr = EB_V + 0x7000, .sh_size = 0x100 },
	};
	const Elf64_Shdr all_wx = { .sh_type = SHT_NOBITS, .sh_flags = WA | SHF_EXECINSTR,
				    .sh_addr = 0, .sh_size = UINT64_MAX };

	linux_file(&e, hostile, sizeof(hostile) / sizeof(hostile[0]), 1, 1);
	CHECK_EQ_U64(parse_linux(&e, 0, &img), LDR_OK, "hostile sections: parses");
	CHECK(tiny_map_ok(&img, "hostile"), "hostile sections change no page's permissions");
	CHECK(agrees(&img, "hostile"), "hostile: oracle agrees");

	/* a section claiming W+X over all memory: every init page W+X, but
	 * text, data and per-cpu keep theirs */
	linux_file(&e, &all_wx, 1, 1, 1);
	CHECK_EQ_U64(parse_linux(&e, 0, &img), LDR_OK, "a section over all memory: parses");
	CHECK_EQ_U64(wx_pages(&img), (TINY_INIT_END - 0x3000 + PAGE_SIZE - 1) / PAGE_SIZE,
		     "clipped to the init segment: its pages W+X, no other");
	CHECK(agrees(&img, "all W+X"), "all W+X: oracle agrees");
}
