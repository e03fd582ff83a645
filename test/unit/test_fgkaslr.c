/*
 * test_fgkaslr.c - host tests for src/fgkaslr.c and reloc_apply_map():
 * kernels built by fgk_build.h (one section per function, --emit-relocs)
 * are shuffled with many seeds and bases, and an oracle recomputes from
 * the builder's own record of every relocation, and from the draws, what
 * every function byte, relocated field and table entry must be; the order
 * is checked for uniformity (chi-square); refusals give their exact code.
 * When build/payload/kernel-fgk.elf exists (make payloads), the real
 * ld-made test kernel is shuffled and checked the same way, relocation by
 * relocation from its own RELA sections.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_load.h"
#include "elfnote.h"
#include "entropy.h"
#include "fgkaslr.h"
#include "reloc.h"
#include "elf_build.h"
#include "fgk_build.h"
#include "test.h"

/* ------------------------------------------------------------ harness */

/* malloc/free, counted: every test ends with nothing outstanding, and
 * every block comes back wiped (the order, the displacements, the symbol
 * cache say where each function went) */
struct tally {
	long blocks, fail_at, calls, dirty;
};

static void *t_alloc(void *ctx, uint64_t size)
{
	struct tally *t = ctx;

	if (t->fail_at && ++t->calls >= t->fail_at)
		return NULL;
	t->blocks++;
	return malloc(size);
}

static void t_free(void *ctx, void *p, uint64_t size)
{
	struct tally *t = ctx;

	for (uint64_t i = 0; i < size; i++)
		if (((const uint8_t *)p)[i]) {
			t->dirty++;
			break;
		}
	t->blocks--;
	free(p);
}

/* drbg_below(), with every range asked and index returned logged */
struct drawlog {
	struct drbg d;
	uint64_t *range, *j;
	uint32_t n, cap;
	int lie;            /* 1: return n itself once (out of range) */
	int fail;           /* 1: fail the first draw */
};

static enum ldr_err t_draw(void *ctx, uint64_t n, uint64_t *ret)
{
	struct drawlog *l = ctx;
	enum ldr_err err;

	if (l->fail)
		return LDR_E_NO_ENTROPY;
	if (l->lie) {
		l->lie = 0;
		*ret = n;
		return LDR_OK;
	}
	err = drbg_below(&l->d, n, ret);
	if (err == LDR_OK && l->n < l->cap) {
		l->range[l->n] = n;
		l->j[l->n++] = *ret;
	}
	return err;
}

static void drawlog_init(struct drawlog *l, uint64_t seed, uint32_t cap)
{
	uint8_t s[ENTROPY_SEED_SIZE] = { 0 };

	memset(l, 0, sizeof(*l));
	memcpy(s, &seed, sizeof(seed));
	drbg_init(&l->d, s);
	l->j = calloc(cap ? cap : 1, sizeof(*l->j));
	l->range = calloc(cap ? cap : 1, sizeof(*l->range));
	l->cap = cap;
}

/* One shuffle of b: parse, load, fgk_apply to new_vbase. */
struct run {
	struct elf_image img;
	struct kaslr_fgk_request req;
	struct fgk_report rep;
	struct drawlog log;
	struct tally tally;
	uint8_t *dest;
};

static enum ldr_err run_fgk(const uint8_t *file, uint64_t size, uint64_t new_vbase,
			    uint64_t seed, struct run *r)
{
	struct fgk_alloc a = { t_alloc, t_free, &r->tally };
	enum ldr_err err;

	err = elf_parse(file, size, NULL, &r->img);
	if (err != LDR_OK)
		return err;
	err = elf_note_fgkaslr(&r->img, &r->req);
	if (err != LDR_OK)
		return err;
	free(r->dest);
	r->dest = malloc(r->img.load_size);
	if (!r->dest || elf_load(&r->img, r->dest, r->img.load_size) != LDR_OK)
		return LDR_E_NOMEM;
	drawlog_init(&r->log, seed, r->img.shnum);
	err = fgk_apply(&r->img, &r->req, r->dest, r->img.load_size, new_vbase, t_draw,
			&r->log, &a, &r->rep);
	return err;
}

static void run_done(struct run *r)
{
	CHECK(r->tally.blocks == 0, "fgk_apply gave back all %ld blocks", r->tally.blocks);
	CHECK(r->tally.dirty == 0, "fgk_apply wiped every block it gave back (%ld were not)",
	      r->tally.dirty);
	free(r->dest);
	free(r->log.j);
	free(r->log.range);
	memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------- oracle */

/* fb_oracle() on a run; returns the mismatches (a failed CHECK if any). */
static unsigned oracle_check(const struct fb *b, const struct run *r, uint64_t new_vbase,
			     const char *what)
{
	char msg[256];
	unsigned bad;

	bad = fb_oracle(b, r->dest, r->log.range, r->log.j, r->log.n, new_vbase, r->rep.entry_off,
			msg, sizeof(msg));
	CHECK(bad == 0, "%s: %u wrong; first: %s", what, bad, msg);
	return bad;
}

/* ---------------------------------------------------- image generator */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

/* A field of width w at a free offset of area a, or UINT64_MAX. */
static uint64_t free_spot(struct fb *b, uint8_t **used, uint32_t a, unsigned w)
{
	uint64_t size = b->area[a].size;

	if (size < w)
		return UINT64_MAX;
	for (int tries = 0; tries < 8; tries++) {
		uint64_t o = rnd_below(size - w + 1);
		unsigned j;

		for (j = 0; j < w && !used[a][o + j]; j++)
			;
		if (j == w) {
			memset(used[a] + o, 1, w);
			return o;
		}
	}
	return UINT64_MAX;
}

/* A random relocation from area a: type and symbol chosen so the linked
 * value fits its field at any kernel-space base. */
static void random_rel(struct fb *b, uint8_t **used, uint32_t a)
{
	uint32_t f = (uint32_t)rnd_below(b->nfunc), sym;
	int64_t add = 0;
	uint32_t type;

	switch (rnd_below(11)) {
	case 0: type = R_X86_64_PLT32; sym = FB_SYM_FUNC(b, f); add = -4; break;
	case 1: type = R_X86_64_PC32; sym = FB_SYM_SECT(FB_A_FUNC0 + f);
		add = (int64_t)rnd_below(b->area[FB_A_FUNC0 + f].size + 1) - 4; break;
	case 2: type = R_X86_64_32S; sym = FB_SYM_SECT(FB_A_RODATA);
		add = (int64_t)rnd_below(0x100); break;
	case 3: type = R_X86_64_64; sym = FB_SYM_FUNC(b, f); break;
	case 4: type = R_X86_64_64; sym = FB_SYM_SECT(FB_A_FUNC0 + f);
		add = (int64_t)rnd_below(b->area[FB_A_FUNC0 + f].size + 1); break;
	case 5: type = R_X86_64_PC64; sym = FB_SYM_FUNC(b, f); add = 3; break;
	case 6: type = R_X86_64_PC32; sym = FB_SYM_ABS(b); add = -4; break;
	case 7: type = R_X86_64_64; sym = FB_SYM_ABS(b); add = 8; break;
	case 8: type = R_X86_64_PC32; sym = FB_SYM_SECT(FB_A_DATA); add = 0x10; break;
	case 9: type = R_X86_64_64; sym = 0; add = 0x1234; break;
	default: type = R_X86_64_32S; sym = FB_SYM_FUNC(b, f); break;
	}
	uint64_t o = free_spot(b, used, a, fb_width(type));

	if (o != UINT64_MAX)
		fb_rel(b, a, o, type, sym, add);
}

/*
 * A random kernel: n functions of random sizes and alignments, random
 * relocations from every area, both tables listing every function in
 * link order (sorted) or shuffled (sort_tables 0), the reserve exactly
 * the bound the loader checks.
 */
static void random_kernel(struct fb *b, uint32_t n, int sorted_tables)
{
	static const uint64_t aligns[] = { 1, 1, 2, 4, 8, 16, 16, 16, 16, 64 };
	uint8_t **used;
	uint32_t *ids = malloc(n * sizeof(*ids));
	uint64_t b1 = 0, b2 = 0, big = 1;

	fb_init(b, n);
	for (uint32_t k = 0; k < n; k++) {
		struct fb_area *f = &b->area[FB_A_FUNC0 + k];

		f->size = 1 + rnd_below(rnd_below(4) ? 120 : 600);
		f->align = rnd_below(50) ? aligns[rnd_below(10)] : 4096;
	}
	fb_tables_size(b, n, n);
	fb_layout_text(b);
	for (uint32_t k = 0; k < n; k++) {
		const struct fb_area *f = &b->area[FB_A_FUNC0 + k];

		b1 += f->size + f->align - 1;
		if (f->align > big)
			big = f->align;
	}
	for (uint32_t k = 0; k < n; k++)
		b2 += (b->area[FB_A_FUNC0 + k].size + big - 1) & ~(big - 1);
	b2 += ((b->area[FB_A_FUNC0].addr + big - 1) & ~(big - 1)) - b->area[FB_A_FUNC0].addr;
	b->reserve = (b1 < b2 ? b1 : b2) - (b->text_end - b->area[FB_A_FUNC0].addr);
	fb_place(b);
	used = calloc(b->narea, sizeof(*used));
	for (uint32_t a = 0; a < b->narea; a++)
		used[a] = calloc(1, b->area[a].size + 1);
	for (uint32_t i = 0; i < n; i++)
		ids[i] = i;
	if (!sorted_tables)
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)rnd_below(i + 1), t = ids[i];

			ids[i] = ids[j];
			ids[j] = t;
		}
	fb_tables_fill(b, ids, n, ids, n);
	for (uint32_t k = 0; k < n; k++)
		for (uint64_t m = rnd_below(7); m > 0; m--)
			random_rel(b, used, FB_A_FUNC0 + k);
	for (int m = 0; m < 40; m++) {
		random_rel(b, used, FB_A_RODATA);
		random_rel(b, used, FB_A_DATA);
	}
	for (int m = 0; m < 3; m++)
		random_rel(b, used, FB_A_TEXT);
	b->entry_func = rnd_below(2) ? 1 + (uint32_t)rnd_below(n) : 0;
	for (uint32_t a = 0; a < b->narea; a++)
		free(used[a]);
	free(used);
	free(ids);
	fb_finish(b);
}

/* Section header i of b's serialised file. */
static Elf64_Shdr *shdr(struct fb *b, uint32_t i)
{
	Elf64_Ehdr eh;

	memcpy(&eh, b->buf, sizeof(eh));
	return (Elf64_Shdr *)(b->buf + eh.e_shoff + (uint64_t)i * sizeof(Elf64_Shdr));
}

/* -------------------------------------------------------------- tests */

static const uint64_t bases[] = {
	FB_V, FB_V + 2 * MIB, FB_V + 0x3e000000ULL, FB_V - 16 * MIB, 0xffffffffc0000000ULL,
};

/* random kernels, many seeds and bases: the oracle agrees on every byte */
TEST(test_oracle_random)
{
	unsigned bad = 0, runs = 0;

	rng_state = 0x1234567;
	for (int img = 0; img < 40; img++) {
		struct fb b;
		uint32_t n = 2 + (uint32_t)rnd_below(img < 30 ? 12 : 150);

		random_kernel(&b, n, img % 2);
		for (int s = 0; s < 12; s++) {
			struct run r = { 0 };
			char what[64];
			uint64_t base = bases[(img + s) % 5];
			enum ldr_err err = run_fgk(b.buf, b.size, base, (uint64_t)img * 100 + s, &r);

			snprintf(what, sizeof(what), "image %d (n=%u) seed %d", img, n, s);
			CHECK(err == LDR_OK, "%s: fgk_apply: %s", what, ldr_strerror(err));
			if (err == LDR_OK) {
				bad += oracle_check(&b, &r, base, what);
				CHECK(r.rep.functions == n, "%s: functions", what);
				CHECK(r.rep.tables == 2 && r.rep.table_entries == 2ULL * n,
				      "%s: tables", what);
				runs++;
			}
			run_done(&r);
		}
		fb_free(&b);
	}
	printf("  %u shuffles checked byte by byte, %u mismatches\n", runs, bad);
	CHECK(runs == 480, "every shuffle ran");
}

/* What moved and what the report says; the same seed, the same layout. */
TEST(test_report)
{
	struct fb b;
	struct run r1 = { 0 }, r2 = { 0 };

	rng_state = 99;
	random_kernel(&b, 200, 1);
	CHECK(run_fgk(b.buf, b.size, FB_V, 5, &r1) == LDR_OK, "first run");
	CHECK(run_fgk(b.buf, b.size, FB_V, 5, &r2) == LDR_OK, "same seed");
	CHECK(memcmp(r1.dest, r2.dest, r1.img.load_size) == 0, "same seed, same image");
	CHECK(r1.rep.moved > 150 && r1.rep.moved <= 200, "most functions moved: %u", r1.rep.moved);
	CHECK(r1.rep.entropy_millibits == 256000, "200! is capped at the seed's 256 bits");
	CHECK(r1.rep.perm_millibits == fgk_log2_factorial_milli(200), "log2(200!)");
	CHECK(r1.rep.region_start == b.area[FB_A_FUNC0].addr, "region start");
	CHECK(r1.rep.region_size == b.text_end - b.area[FB_A_FUNC0].addr, "region size");
	CHECK(r1.rep.room_have == (((b.text_end + b.reserve + 4095) & ~4095ULL) -
				   b.area[FB_A_FUNC0].addr), "room: to the end of the text page");
	CHECK(r1.rep.reloc.count > 0, "relocations counted");
	run_done(&r2);
	CHECK(run_fgk(b.buf, b.size, FB_V, 6, &r2) == LDR_OK, "another seed");
	CHECK(memcmp(r1.dest, r2.dest, r1.img.load_size) != 0, "another seed, another layout");
	run_done(&r1);
	run_done(&r2);
	fb_free(&b);
}

/* log2(n!) in millibits against the C library, and the cap */
TEST(test_entropy_bits)
{
	static const uint64_t ns[] = { 0, 1, 2, 3, 4, 10, 20, 57, 58, 100, 1000, 40000, 1000000 };

	for (unsigned i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		double want = lgamma((double)ns[i] + 1) / log(2) * 1000;
		uint64_t got = fgk_log2_factorial_milli(ns[i]);

		CHECK(fabs((double)got - floor(want)) <= 1.0, "log2(%llu!) = %llu millibits, want %.1f",
		      (unsigned long long)ns[i], (unsigned long long)got, want);
	}
	CHECK(fgk_log2_factorial_milli(2) == 1000, "log2(2!) is one bit");
	CHECK(fgk_log2_factorial_milli(57) < 256000 && fgk_log2_factorial_milli(58) > 256000,
	      "58 functions pass the 256-bit seed");
}

/*
 * Uniformity: n = 3 and 4 functions of one size and alignment, so slot k
 * holds the k-th function of the order; 1000 draws per permutation
 * expected, chi-square against uniform over n! cells.
 */
static void uniform_case(uint32_t n, double critical)
{
	struct fb b;
	uint32_t cells = n == 3 ? 6 : 24, per = 1000;
	uint32_t *count = calloc(cells, sizeof(*count));
	double chi = 0;
	unsigned lost = 0;

	fb_init(&b, n);
	b.reserve = 0;
	fb_tables_size(&b, 0, 0);
	fb_place(&b);
	fb_rel(&b, FB_A_TEXT, 4, R_X86_64_PLT32, FB_SYM_FUNC(&b, 0), -4);
	fb_finish(&b);
	for (uint32_t s = 0; s < cells * per; s++) {
		struct run r = { 0 };
		uint32_t perm[4], code = 0, seen = 0;

		if (run_fgk(b.buf, b.size, FB_V, 1000000 + s, &r) != LDR_OK) {
			lost++;
			run_done(&r);
			continue;
		}
		/* which function is in slot k: its first bytes */
		for (uint32_t k = 0; k < n; k++) {
			const uint8_t *slot = r.dest + (b.area[FB_A_FUNC0].addr - FB_V) + 16 * k;

			perm[k] = n;
			for (uint32_t f = 0; f < n; f++)
				if (slot[0] == fb_pattern(FB_A_FUNC0 + f, 0) &&
				    slot[15] == fb_pattern(FB_A_FUNC0 + f, 15))
					perm[k] = f;
			seen |= 1u << perm[k];
		}
		if (seen != (1u << n) - 1) {
			lost++;
			run_done(&r);
			continue;
		}
		/* Lehmer code of the permutation: a cell number in [0, n!) */
		for (uint32_t k = 0; k < n; k++) {
			uint32_t smaller = 0;

			for (uint32_t m = k + 1; m < n; m++)
				smaller += perm[m] < perm[k];
			code = code * (n - k) + smaller;
		}
		count[code]++;
		run_done(&r);
	}
	for (uint32_t c = 0; c < cells; c++)
		chi += ((double)count[c] - per) * ((double)count[c] - per) / per;
	printf("  n=%u: chi-square %.2f over %u permutations (critical %.2f at p=0.001)\n", n, chi,
	       cells, critical);
	CHECK(lost == 0, "n=%u: %u runs were not a permutation", n, lost);
	CHECK(chi < critical, "n=%u: chi-square %.2f >= %.2f", n, chi, critical);
	free(count);
	fb_free(&b);
}

TEST(test_uniform)
{
	uniform_case(3, 20.52);   /* 5 degrees of freedom */
	uniform_case(4, 49.73);   /* 23 degrees of freedom */
}

/* Tables given out of order are sorted; tables already sorted stay complete. */
TEST(test_tables_unsorted)
{
	struct fb b;
	struct run r = { 0 };

	rng_state = 7;
	random_kernel(&b, 60, 0);
	CHECK(run_fgk(b.buf, b.size, FB_V + 4 * MIB, 1, &r) == LDR_OK, "shuffled tables");
	CHECK(oracle_check(&b, &r, FB_V + 4 * MIB, "unsorted tables") == 0, "oracle");
	run_done(&r);
	fb_free(&b);
}

/* ld's numbering past 0xff00 sections: SHN_XINDEX symbols, e_shnum 0 */
TEST(test_extended_numbering)
{
	struct fb b;
	struct run r = { 0 };
	uint32_t n = 33000;

	rng_state = 3;
	fb_init(&b, n);
	for (uint32_t k = 0; k < n; k++)
		b.area[FB_A_FUNC0 + k].size = 12;
	fb_tables_size(&b, 64, 64);
	fb_layout_text(&b);
	b.reserve = 16;
	fb_place(&b);
	{
		uint32_t ids[64];

		for (uint32_t i = 0; i < 64; i++)
			ids[i] = n - 1 - 500 * i;
		fb_tables_fill(&b, ids, 64, ids, 64);
	}
	for (uint32_t k = 0; k < n; k++) {
		fb_rel(&b, FB_A_FUNC0 + k, 1, R_X86_64_PLT32, FB_SYM_FUNC(&b, (k * 7919) % n), -4);
		fb_rel(&b, FB_A_FUNC0 + k, 6, R_X86_64_PC32, FB_SYM_SECT(FB_A_FUNC0 + (k + 1) % n),
		       2);
	}
	fb_finish(&b);
	{
		Elf64_Ehdr eh;

		memcpy(&eh, b.buf, sizeof(eh));
		CHECK(eh.e_shnum == 0 && eh.e_shstrndx == SHN_XINDEX, "built with extended numbering");
	}
	CHECK(run_fgk(b.buf, b.size, FB_V + 2 * MIB, 11, &r) == LDR_OK, "66k sections");
	CHECK(r.img.shnum == b.shnum, "elf_parse reads the count from section 0: %u", r.img.shnum);
	CHECK(r.rep.functions == n, "every function found");
	CHECK(oracle_check(&b, &r, FB_V + 2 * MIB, "extended numbering") == 0, "oracle");
	run_done(&r);
	/* without its .symtab_shndx, a symbol of a section past 0xff00 is
	 * unresolvable: refused when a relocation uses it */
	for (uint32_t i = 1; i < b.shnum; i++)
		if (shdr(&b, i)->sh_type == SHT_SYMTAB_SHNDX)
			shdr(&b, i)->sh_type = SHT_PROGBITS;
	CHECK(run_fgk(b.buf, b.size, FB_V, 11, &r) == LDR_E_RELOC_SYMBOL, "no .symtab_shndx");
	run_done(&r);
	fb_free(&b);
}

/* ------------------------------------------------------------ refusals */

/* A small well-formed kernel to break one thing in. */
static void base_kernel(struct fb *b)
{
	uint32_t ids[4] = { 0, 1, 2, 3 };

	fb_init(b, 4);
	fb_tables_size(b, 4, 4);
	fb_layout_text(b);
	b->reserve = 64;
	fb_place(b);
	fb_tables_fill(b, ids, 4, ids, 4);
	fb_rel(b, FB_A_FUNC0 + 0, 4, R_X86_64_PLT32, FB_SYM_FUNC(b, 2), -4);
	fb_rel(b, FB_A_FUNC0 + 1, 0, R_X86_64_32S, FB_SYM_SECT(FB_A_RODATA), 8);
	fb_rel(b, FB_A_RODATA, 0, R_X86_64_64, FB_SYM_SECT(FB_A_FUNC0 + 3), 5);
}

/* Two functions ending at a page end: f0 one byte, f1 64-aligned. */
static void tight_kernel(struct fb *b, uint64_t reserve)
{
	fb_init(b, 2);
	b->area[FB_A_FUNC0 + 0].size = 1;
	b->area[FB_A_FUNC0 + 0].align = 1;
	b->area[FB_A_FUNC0 + 1].size = 4096 - 64;
	b->area[FB_A_FUNC0 + 1].align = 64;
	b->reserve = reserve;
	fb_place(b);
	fb_rel(b, FB_A_TEXT, 4, R_X86_64_PLT32, FB_SYM_FUNC(b, 1), -4);
	fb_rel(b, FB_A_FUNC0 + 1, 8, R_X86_64_PC32, FB_SYM_FUNC(b, 0), -4);
	fb_finish(b);
}


static enum ldr_err try(struct fb *b, uint64_t base, struct run *r)
{
	enum ldr_err err = run_fgk(b->buf, b->size, base, 1, r);

	return err;
}

TEST(test_refusals)
{
	struct fb b;
	struct run r = { 0 };
	uint8_t desc[256];
	uint32_t v;

	base_kernel(&b);
	fb_finish(&b);
	CHECK(try(&b, FB_V, &r) == LDR_OK, "the base kernel is fine");
	CHECK(oracle_check(&b, &r, FB_V, "base kernel") == 0, "base kernel oracle");
	run_done(&r);

	/* no note: not asked for */
	b.note = 0;
	fb_finish(&b);
	CHECK(try(&b, FB_V, &r) == LDR_E_INVAL, "no note: not asked");
	run_done(&r);
	b.note = 1;

	/* malformed notes */
	{
		uint32_t n = fb_default_note(&b, desc);

		b.note_desc = desc;
		b.note_descsz = n - 1;
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "note size");
		run_done(&r);
		b.note_descsz = n;
		v = 2;
		memcpy(desc, &v, 4);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "note version");
		run_done(&r);
		v = 1;
		memcpy(desc, &v, 4);
		v = 7;   /* key_kind */
		memcpy(desc + KASLR_FGK_HEADER + KASLR_FGK_NAME_MAX + 8, &v, 4);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "unknown key kind");
		run_done(&r);
		fb_default_note(&b, desc);
		v = 12;  /* key_off: an 8-byte key past a 16-byte entry */
		memcpy(desc + KASLR_FGK_HEADER + KASLR_FGK_NAME_MAX + 4, &v, 4);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "key outside its entry");
		run_done(&r);
		fb_default_note(&b, desc);
		v = 1u << 4;  /* rel_mask: word 4 of a 16-byte entry */
		memcpy(desc + KASLR_FGK_HEADER + KASLR_FGK_RECORD + KASLR_FGK_NAME_MAX + 12, &v, 4);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "relative word outside its entry");
		run_done(&r);
		fb_default_note(&b, desc);
		v = 2;   /* REL32 key whose word is not marked relative */
		memcpy(desc + KASLR_FGK_HEADER + KASLR_FGK_RECORD + KASLR_FGK_NAME_MAX + 12, &v, 4);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "REL32 key not marked");
		run_done(&r);
		fb_default_note(&b, desc);
		memset(desc + KASLR_FGK_HEADER, 'x', KASLR_FGK_NAME_MAX);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "name without NUL");
		run_done(&r);
		fb_default_note(&b, desc);
		v = 9;
		memcpy(desc + 4, &v, 4);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOTE, "too many tables");
		run_done(&r);
		/* a table the kernel does not have */
		fb_default_note(&b, desc);
		strcpy((char *)desc + KASLR_FGK_HEADER, ".ex_table");
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_TABLE, "absent table");
		CHECK(r.rep.bad_table == 0, "the failing table is named");
		run_done(&r);
		/* a table whose size is not a whole number of entries */
		fb_default_note(&b, desc);
		v = 24;
		memcpy(desc + KASLR_FGK_HEADER + KASLR_FGK_NAME_MAX, &v, 4);
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_TABLE, "table size not entries");
		run_done(&r);
		/* a "table" that is a function section */
		fb_default_note(&b, desc);
		strcpy((char *)desc + KASLR_FGK_HEADER + KASLR_FGK_RECORD, ".text.f1");
		fb_finish(&b);
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_TABLE, "table inside the function room");
		CHECK(r.rep.bad_table == 1, "second table named");
		run_done(&r);
		b.note_desc = NULL;
	}

	/* one function section is not a shuffle */
	fb_free(&b);
	fb_init(&b, 1);
	fb_place(&b);
	fb_rel(&b, FB_A_TEXT, 4, R_X86_64_PLT32, FB_SYM_FUNC(&b, 0), -4);
	fb_finish(&b);
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NO_FUNCTIONS, "one function");
	run_done(&r);
	fb_free(&b);

	base_kernel(&b);
	fb_finish(&b);
	/* merged .text.*: the functions renamed into .text-like names */
	for (uint32_t k = 0; k < 4; k++) {
		uint32_t i = b.area[FB_A_FUNC0 + k].shidx;

		shdr(&b, i)->sh_name = shdr(&b, b.area[FB_A_TEXT].shidx)->sh_name;
	}
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NO_FUNCTIONS, "no .text.* sections");
	run_done(&r);
	fb_finish(&b);

	/* no relocation sections: not an --emit-relocs link */
	for (uint32_t i = 1; i < b.shnum; i++)
		if (shdr(&b, i)->sh_type == SHT_RELA)
			shdr(&b, i)->sh_type = SHT_PROGBITS;
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NOT_SECTIONS, "no --emit-relocs");
	run_done(&r);
	fb_finish(&b);

	/* a function section in the writable segment */
	shdr(&b, b.area[FB_A_FUNC0 + 2].shidx)->sh_addr = b.area[FB_A_DATA].addr;
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_LAYOUT, "function in the data segment");
	run_done(&r);
	fb_finish(&b);

	/* two function sections overlap */
	shdr(&b, b.area[FB_A_FUNC0 + 2].shidx)->sh_addr = b.area[FB_A_FUNC0 + 1].addr;
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_LAYOUT, "overlapping functions");
	run_done(&r);
	fb_finish(&b);

	/* alignment not a power of two, or not met, or huge */
	shdr(&b, b.area[FB_A_FUNC0 + 1].shidx)->sh_addralign = 24;
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_LAYOUT, "alignment 24");
	run_done(&r);
	shdr(&b, b.area[FB_A_FUNC0 + 1].shidx)->sh_addralign = 1ULL << 62;
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_LAYOUT, "alignment 2^62");
	run_done(&r);
	fb_finish(&b);
	shdr(&b, b.area[FB_A_FUNC0 + 0].shidx)->sh_addralign = 32;   /* at FB_V + 16 */
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_LAYOUT, "address not aligned");
	run_done(&r);
	fb_finish(&b);

	/* something else allocated between the functions */
	shdr(&b, b.area[FB_A_TABABS].shidx)->sh_addr = b.area[FB_A_FUNC0 + 1].addr + 2;
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_LAYOUT, "data section inside the run");
	run_done(&r);
	fb_finish(&b);

	/* a function section past the file's bytes */
	shdr(&b, b.area[FB_A_FUNC0 + 3].shidx)->sh_size = 1ULL << 40;
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_LAYOUT, "function past its segment");
	run_done(&r);
	fb_finish(&b);

	/* the section names table unusable */
	{
		Elf64_Ehdr eh;

		memcpy(&eh, b.buf, sizeof(eh));
		shdr(&b, eh.e_shstrndx)->sh_type = SHT_PROGBITS;
		CHECK(try(&b, FB_V, &r) == LDR_E_FGK_NO_FUNCTIONS, "no section names");
		run_done(&r);
		fb_finish(&b);
	}

	/* relocation place outside its (movable) target section: refused even
	 * when the draw would leave that section where it is */
	{
		Elf64_Shdr *rs = shdr(&b, b.area[FB_A_FUNC0 + 0].relidx);
		Elf64_Rela x;

		memcpy(&x, b.buf + rs->sh_offset, sizeof(x));
		x.r_offset = b.area[FB_A_FUNC0 + 1].addr + 2;
		memcpy(b.buf + rs->sh_offset, &x, sizeof(x));
		CHECK(try(&b, FB_V, &r) == LDR_E_RELOC_TARGET, "place outside its section");
		run_done(&r);
		fb_finish(&b);
	}
	/* a symbol of a function section outside it */
	{
		Elf64_Shdr *st = NULL;
		Elf64_Sym s;

		for (uint32_t i = 1; i < b.shnum; i++)
			if (shdr(&b, i)->sh_type == SHT_SYMTAB)
				st = shdr(&b, i);
		memcpy(&s, b.buf + st->sh_offset + FB_SYM_FUNC(&b, 2) * sizeof(s), sizeof(s));
		s.st_value = b.area[FB_A_FUNC0 + 3].addr + 1;
		memcpy(b.buf + st->sh_offset + FB_SYM_FUNC(&b, 2) * sizeof(s), &s, sizeof(s));
		CHECK(try(&b, FB_V, &r) == LDR_E_RELOC_SYMBOL, "symbol outside its section");
		run_done(&r);
		fb_finish(&b);
	}
	/* a 32-bit field that cannot follow the kernel below 4 GiB */
	CHECK(try(&b, 0x100000000ULL, &r) == LDR_E_RELOC_RANGE, "32S out of range: refused");
	run_done(&r);

	/* draws: an index out of range, a failing source */
	{
		struct fgk_alloc a = { t_alloc, t_free, &r.tally };

		CHECK(elf_parse(b.buf, b.size, NULL, &r.img) == LDR_OK, "parse");
		CHECK(elf_note_fgkaslr(&r.img, &r.req) == LDR_OK, "note");
		r.dest = malloc(r.img.load_size);
		elf_load(&r.img, r.dest, r.img.load_size);
		drawlog_init(&r.log, 1, 8);
		r.log.lie = 1;
		CHECK(fgk_apply(&r.img, &r.req, r.dest, r.img.load_size, FB_V, t_draw, &r.log, &a,
				&r.rep) == LDR_E_INVAL, "draw out of range");
		r.log.fail = 1;
		CHECK(fgk_apply(&r.img, &r.req, r.dest, r.img.load_size, FB_V, t_draw, &r.log, &a,
				&r.rep) == LDR_E_NO_ENTROPY, "draw failure passed on");
		r.log.fail = 0;
		CHECK(fgk_apply(&r.img, &r.req, r.dest, r.img.load_size - 1, FB_V, t_draw, &r.log,
				&a, &r.rep) == LDR_E_INVAL, "dest too small");
		CHECK(fgk_apply(&r.img, &r.req, r.dest, r.img.load_size, FB_V, NULL, &r.log, &a,
				&r.rep) == LDR_E_INVAL, "no draw");
		/* memory runs out at every allocation in turn */
		for (long k = 1; k < 12; k++) {
			enum ldr_err err;

			r.tally.fail_at = k;
			r.tally.calls = 0;
			elf_load(&r.img, r.dest, r.img.load_size);
			err = fgk_apply(&r.img, &r.req, r.dest, r.img.load_size, FB_V, t_draw, &r.log,
					&a, &r.rep);
			CHECK(err == LDR_E_NOMEM || (err == LDR_OK && r.tally.calls < k),
			      "allocation %ld failing: %s", k, ldr_strerror(err));
			CHECK(r.tally.blocks == 0, "allocation %ld failing: nothing leaked", k);
		}
		r.tally.fail_at = 0;
		run_done(&r);
	}
	fb_free(&b);

	/* no room: the functions end at a page end, and the order f1, f0 needs
	 * one byte more (f1's alignment padding moves in front of f0) */
	tight_kernel(&b, 0);
	CHECK(b.text_end == FB_V + 4096, "functions end at the page end");
	CHECK(try(&b, FB_V, &r) == LDR_E_FGK_ROOM, "no room for padding");
	CHECK(r.rep.room_need == 4096 && r.rep.room_have == 4080, "room reported: need %llu have %llu",
	      (unsigned long long)r.rep.room_need, (unsigned long long)r.rep.room_have);
	run_done(&r);
	fb_free(&b);
	/* one reserved byte: the text segment's last page is the room */
	tight_kernel(&b, 1);
	for (uint64_t seed = 0; seed < 8; seed++) {
		CHECK(run_fgk(b.buf, b.size, FB_V, seed, &r) == LDR_OK, "a reserve reaching into the next page");
		CHECK(oracle_check(&b, &r, FB_V, "tight room") == 0, "tight room oracle");
		run_done(&r);
	}
	fb_free(&b);

	/* ET_DYN asking for it */
	{
		static struct eb pie;
		struct elf_image img;
		struct fgk_report rep;
		struct kaslr_fgk_request req = { 0 };
		struct tally t = { 0 };
		struct fgk_alloc a = { t_alloc, t_free, &t };

		eb_pie(&pie);
		eb_write(&pie);
		CHECK(elf_parse(pie.buf, pie.size, NULL, &img) == LDR_OK, "the PIE parses");
		CHECK(fgk_check(&img, &req, &a, &rep) == LDR_E_FGK_NOT_SECTIONS, "PIE refused");
		CHECK(t.blocks == 0, "nothing leaked");
	}
}

/* fgk_check() sees what fgk_apply() would refuse, and frees its memory. */
TEST(test_check)
{
	struct fb b;
	struct elf_image img;
	struct kaslr_fgk_request req;
	struct fgk_report rep;
	struct tally t = { 0 };
	struct fgk_alloc a = { t_alloc, t_free, &t };

	base_kernel(&b);
	fb_finish(&b);
	CHECK(elf_parse(b.buf, b.size, NULL, &img) == LDR_OK, "parse");
	CHECK(elf_note_fgkaslr(&img, &req) == LDR_OK, "note");
	CHECK(fgk_check(&img, &req, &a, &rep) == LDR_OK, "check");
	CHECK(rep.functions == 4 && rep.table_entries == 8, "what it found");
	CHECK(rep.entropy_millibits == fgk_log2_factorial_milli(4), "log2(4!) below the cap");
	CHECK(t.blocks == 0, "nothing leaked");
	CHECK(t.dirty == 0, "every block given back wiped (%ld were not)", t.dirty);
	CHECK(fgk_check(&img, NULL, &a, &rep) == LDR_E_INVAL, "no request");
	req.table[0].entsize = 0;
	CHECK(fgk_check(&img, &req, &a, &rep) == LDR_E_INVAL, "unchecked request refused");
	fb_free(&b);
}

/* reloc_apply_map() with a map that moves nothing is reloc_apply() */
TEST(test_map_zero)
{
	struct fb b;
	struct elf_image img;
	uint8_t *d1, *d2;
	struct reloc_sec *sec;
	struct reloc_report r1, r2;
	struct reloc_map m = { 0 };

	rng_state = 42;
	random_kernel(&b, 30, 1);
	CHECK(elf_parse(b.buf, b.size, NULL, &img) == LDR_OK, "parse");
	d1 = malloc(img.load_size);
	d2 = malloc(img.load_size);
	sec = calloc(img.shnum, sizeof(*sec));
	for (uint32_t i = 1; i < img.shnum; i++)
		if (shdr(&b, i)->sh_flags & SHF_ALLOC)
			sec[i].flags = RELOC_SEC_ALLOC;
	m.sec = sec;
	m.nsec = img.shnum;
	elf_load(&img, d1, img.load_size);
	elf_load(&img, d2, img.load_size);
	CHECK(reloc_apply(&img, d1, img.load_size, FB_V + 6 * MIB, &r1) == LDR_OK, "plain");
	CHECK(reloc_apply_map(&img, d2, img.load_size, FB_V + 6 * MIB, &m, &r2) == LDR_OK, "map");
	CHECK(memcmp(d1, d2, img.load_size) == 0, "same bytes");
	CHECK(r1.count == r2.count, "same count %llu %llu", (unsigned long long)r1.count,
	      (unsigned long long)r2.count);
	/* a map shorter than the section table: the rest read from headers */
	m.nsec = 3;
	elf_load(&img, d2, img.load_size);
	CHECK(reloc_apply_map(&img, d2, img.load_size, FB_V + 6 * MIB, &m, &r2) == LDR_OK, "short");
	CHECK(memcmp(d1, d2, img.load_size) == 0, "short map, same bytes");
	m.sec = NULL;
	CHECK(reloc_apply_map(&img, d2, img.load_size, FB_V, &m, &r2) == LDR_E_INVAL,
	      "map without its entries");
	free(d1);
	free(d2);
	free(sec);
	fb_free(&b);
}

/* ---------------------------------------------- the real ld-made kernel */

/*
 * kernel-fgk.elf from make payloads, when it exists: shuffled, then every
 * relocation of its allocated sections checked against S' + A (- P'),
 * where each section's new place is read back from where fgk_apply put
 * each function's symbol.  Reported as skipped without it.
 */
TEST(test_payload)
{
	const char *path = getenv("FGK_PAYLOAD") ? getenv("FGK_PAYLOAD")
						 : "build/payload/kernel-fgk.elf";
	FILE *fp = fopen(path, "rb");
	uint8_t *file;
	long size;
	struct run r = { 0 };
	uint64_t base = 0xffffffff9a000000ULL, delta;
	Elf64_Ehdr eh;
	const Elf64_Shdr *sh;
	unsigned checked = 0, wrong = 0;
	int64_t *disp;

	if (!fp) {
		printf("  skipped: %s not built (make payloads)\n", path);
		return;
	}
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	file = malloc((size_t)size);
	CHECK(fread(file, 1, (size_t)size, fp) == (size_t)size, "read %s", path);
	fclose(fp);
	CHECK(run_fgk(file, (uint64_t)size, base, 77, &r) == LDR_OK, "payload shuffled");
	printf("  %s: %u functions, %u moved, %llu relocations, %llu table entries\n", path,
	       r.rep.functions, r.rep.moved, (unsigned long long)r.rep.reloc.count,
	       (unsigned long long)r.rep.table_entries);
	CHECK(r.rep.functions >= 1000 && r.rep.moved > r.rep.functions / 2, "most functions moved");
	delta = base - r.img.link_vbase;
	memcpy(&eh, file, sizeof(eh));
	sh = (const Elf64_Shdr *)(file + eh.e_shoff);
	/* each section's displacement, from the oracle's replay of the draws */
	disp = calloc(r.img.shnum, sizeof(*disp));
	{
		const char *names = (const char *)file + sh[eh.e_shstrndx].sh_offset;
		uint32_t n = 0, *which = malloc(r.img.shnum * sizeof(*which)), *order;
		uint64_t cur = UINT64_MAX;

		for (uint32_t i = 1; i < r.img.shnum; i++)
			if (sh[i].sh_type == SHT_PROGBITS && sh[i].sh_size &&
			    (sh[i].sh_flags & (SHF_ALLOC | SHF_EXECINSTR | SHF_WRITE)) ==
				    (SHF_ALLOC | SHF_EXECINSTR) &&
			    strncmp(names + sh[i].sh_name, ".text.", 6) == 0) {
				which[n++] = i;
				if (sh[i].sh_addr < cur)
					cur = sh[i].sh_addr;
			}
		/* ld's order is address order: checked, not assumed */
		for (uint32_t k = 1; k < n; k++)
			CHECK(sh[which[k]].sh_addr > sh[which[k - 1]].sh_addr, "sections by address");
		order = malloc(n * sizeof(*order));
		CHECK(fb_replay(n, r.log.range, r.log.j, r.log.n, order), "the draws decode");
		for (uint32_t k = 0; k < n; k++) {
			const Elf64_Shdr *s = &sh[which[order[k]]];
			uint64_t al = s->sh_addralign ? s->sh_addralign : 1;

			cur = (cur + al - 1) & ~(al - 1);
			disp[which[order[k]]] = (int64_t)(cur - s->sh_addr);
			cur += s->sh_size;
		}
		free(order);
		free(which);
	}
	for (uint32_t i = 1; i < r.img.shnum; i++) {
		const Elf64_Shdr *rs = &sh[i], *tgt, *st;

		if (rs->sh_type != SHT_RELA || !(sh[rs->sh_info].sh_flags & SHF_ALLOC))
			continue;
		tgt = &sh[rs->sh_info];
		st = &sh[rs->sh_link];
		for (uint64_t o = 0; o < rs->sh_size; o += sizeof(Elf64_Rela)) {
			Elf64_Rela x;
			Elf64_Sym s;
			uint32_t type;
			uint64_t S, P, want, got;
			unsigned w;

			memcpy(&x, file + rs->sh_offset + o, sizeof(x));
			memcpy(&s, file + st->sh_offset + ELF64_R_SYM(x.r_info) * sizeof(s), sizeof(s));
			type = (uint32_t)ELF64_R_TYPE(x.r_info);
			/* the sorted tables are checked by the payload itself */
			if (tgt->sh_type != SHT_PROGBITS)
				continue;
			S = s.st_value;
			if (ELF64_R_SYM(x.r_info) && s.st_shndx != SHN_ABS && s.st_shndx != SHN_UNDEF)
				S += (uint64_t)disp[s.st_shndx] + delta;
			P = x.r_offset + (uint64_t)disp[rs->sh_info] + delta;
			want = S + (uint64_t)x.r_addend - (fb_is_pc(type) ? P : 0);
			w = fb_width(type);
			got = fb_rd(r.dest + (P - delta - r.img.link_vbase), w);
			if (w == 4)
				want = (uint32_t)want;
			if (strstr((const char *)file + sh[eh.e_shstrndx].sh_offset + tgt->sh_name,
				   "fgk_rel") || strstr((const char *)file +
				   sh[eh.e_shstrndx].sh_offset + tgt->sh_name, "fgk_abs"))
				continue;
			checked++;
			wrong += got != want;
		}
	}
	printf("  %u relocated fields checked, %u wrong\n", checked, wrong);
	CHECK(checked > 5000 && wrong == 0, "payload relocations: %u of %u wrong", wrong, checked);
	free(disp);
	free(file);
	run_done(&r);
}
