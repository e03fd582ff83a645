/*
 * bench_fgkaslr.c - function-granular KASLR timed on the host, against the
 * plain relocation of the same image measured in the same run.
 *
 *   usage: bench_fgkaslr [-n SAMPLES] [-m MIN_MS]
 *
 * Two synthetic kernels built in memory by test/unit/fgk_build.h (one
 * section and one .rela section per function, as GNU ld emits them; the
 * large one needs ELF extended section numbering, as a real kernel of that
 * size does):
 *
 *   1000 functions     ~12,000 text relocations + tables and pointers
 *   40000 functions    >= 500,000 relocations (12 per function: 8 calls,
 *                      2 PC-relative data references, one 32S, one jump
 *                      into another function; a pointer per function in
 *                      .rodata, one per two in .data; two sorted tables of
 *                      40,000 entries each, one with two PC-relative words)
 *
 * Timed (thread CPU time, median of SAMPLES, each sample repeated to last
 * MIN_MS; buffers and the allocator's arena touched beforehand, as firmware
 * memory never faults):
 *
 *   load          elf_load() alone
 *   load+reloc    elf_load() + reloc_apply() to a new base: the reference,
 *                 what the loader does for this kernel without the shuffle
 *   load+fgk      elf_load() + fgk_apply() with drbg_below() draws: check,
 *                 shuffle, copy, every relocation, both tables re-sorted
 *   draws         the shuffle's drbg_below() calls alone (the ranges the
 *                 last load+fgk run asked for; several positions share a
 *                 draw, see fgkaslr.c)
 *
 * Reported: those in ms, fgk = load+fgk - load (what function-granular
 * KASLR costs at boot), the ratio load+fgk / load+reloc, the relocations
 * applied, functions moved, and the permutation's entropy: log2(n!) and
 * what the 256-bit seed caps it to.  Output: CSV rows (bench.h), section
 * "fgkaslr".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "elf_load.h"
#include "elfnote.h"
#include "entropy.h"
#include "fgkaslr.h"
#include "ldr.h"
#include "reloc.h"
#include "fgk_build.h"

#define FGK_GOAL_MS  50.0
#define FGK_NEW_BASE (FB_V + 74 * MIB)

/* drbg_below(), the ranges fgk_apply() asked for logged (for OP_DRAWS) */
struct draws {
	struct drbg d;
	uint64_t *range;
	uint32_t n, cap;
};

static enum ldr_err draw_drbg(void *ctx, uint64_t n, uint64_t *ret)
{
	struct draws *w = ctx;

	if (w->n < w->cap)
		w->range[w->n++] = n;
	return drbg_below(&w->d, n, ret);
}

static uint64_t xs = 0x2545f4914f6cdd1dULL;

static uint64_t rnd_below(uint64_t n)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs % n;
}

/* The synthetic kernel of n functions (see the header). */
static void synth(struct fb *b, uint32_t n)
{
	uint32_t *ids = malloc(n * sizeof(*ids));

	if (!ids)
		abort();
	fb_init(b, n);
	for (uint32_t k = 0; k < n; k++)
		b->area[FB_A_FUNC0 + k].size = 64 + rnd_below(448);
	fb_tables_size(b, n, n);
	b->area[FB_A_DATA].size = 8ULL * (n / 2);
	b->reserve = 4096;
	fb_place(b);
	for (uint32_t i = 0; i < n; i++)
		ids[i] = i;
	fb_tables_fill(b, ids, n, ids, n);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t a = FB_A_FUNC0 + k, o = 1;

		for (int j = 0; j < 8; j++, o += 5)
			fb_rel(b, a, o, R_X86_64_PLT32, FB_SYM_FUNC(b, rnd_below(n)), -4);
		fb_rel(b, a, o, R_X86_64_PC32, FB_SYM_SECT(FB_A_RODATA),
		       (int64_t)rnd_below(8ULL * n) - 4);
		o += 5;
		fb_rel(b, a, o, R_X86_64_PC32, FB_SYM_SECT(FB_A_DATA), (int64_t)rnd_below(8) - 4);
		o += 5;
		fb_rel(b, a, o, R_X86_64_32S, FB_SYM_SECT(FB_A_RODATA), (int64_t)rnd_below(8ULL * n));
		o += 5;
		{
			uint32_t f = (uint32_t)rnd_below(n);

			fb_rel(b, a, o, R_X86_64_PC32, FB_SYM_SECT(FB_A_FUNC0 + f),
			       (int64_t)rnd_below(b->area[FB_A_FUNC0 + f].size) - 4);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		fb_rel(b, FB_A_RODATA, 8ULL * i, R_X86_64_64, FB_SYM_FUNC(b, i), 0);
	for (uint32_t i = 0; i < n / 2; i++)
		fb_rel(b, FB_A_DATA, 8ULL * i, R_X86_64_64, FB_SYM_FUNC(b, rnd_below(n)), 0);
	fb_finish(b);
	free(ids);
}

enum op { OP_LOAD, OP_RELOC, OP_FGK, OP_DRAWS, OP_COUNT };

struct ctx {
	struct elf_image img;
	struct kaslr_fgk_request req;
	uint8_t *dest;
	struct arena arena;
	struct fgk_report rep;
	struct reloc_report rrep;
	uint32_t n;
	enum ldr_err err;
	uint64_t *range;         /* the ranges of fgk_apply()'s draws */
	uint32_t nrange;
};

static void run_op(struct ctx *c, enum op op, unsigned seed)
{
	struct fgk_alloc a = { arena_alloc, arena_free, &c->arena };
	uint8_t s[ENTROPY_SEED_SIZE] = { (uint8_t)seed, (uint8_t)(seed >> 8) };
	struct draws w = { .range = c->range, .cap = c->n };

	drbg_init(&w.d, s);
	c->arena.used = 0;
	switch (op) {
	case OP_LOAD:
		c->err = elf_load(&c->img, c->dest, c->img.load_size);
		break;
	case OP_RELOC:
		c->err = elf_load(&c->img, c->dest, c->img.load_size);
		if (c->err == LDR_OK)
			c->err = reloc_apply(&c->img, c->dest, c->img.load_size, FGK_NEW_BASE,
					     &c->rrep);
		break;
	case OP_FGK:
		c->err = elf_load(&c->img, c->dest, c->img.load_size);
		if (c->err == LDR_OK)
			c->err = fgk_apply(&c->img, &c->req, c->dest, c->img.load_size, FGK_NEW_BASE,
					   draw_drbg, &w, &a, &c->rep);
		c->nrange = w.n;
		break;
	default:
		/* the same draws again (ranges of the last OP_FGK), nothing else */
		c->err = LDR_OK;
		for (uint32_t i = 0; i < c->nrange && c->err == LDR_OK; i++) {
			uint64_t j;

			c->err = drbg_below(&w.d, c->range[i], &j);
		}
		break;
	}
}

static void bench_one(const char *item, uint32_t n, int samples, double min_s)
{
	static const char *const names[OP_COUNT] = {
		"load ms", "load+reloc ms", "load+fgk ms", "draws ms",
	};
	double t[OP_COUNT][BENCH_MAX_SAMPLES], med[OP_COUNT], fgk_ms;
	int k[OP_COUNT];
	struct ctx c;
	struct fb b;

	memset(&c, 0, sizeof(c));
	synth(&b, n);
	c.n = n;
	c.err = elf_parse(b.buf, b.size, NULL, &c.img);
	if (c.err == LDR_OK)
		c.err = elf_note_fgkaslr(&c.img, &c.req);
	if (c.err != LDR_OK) {
		bench_row("fgkaslr", item, "load+fgk ms", "error: %s", ldr_strerror(c.err));
		fb_free(&b);
		return;
	}
	c.dest = malloc(c.img.load_size);
	c.arena.size = 256 * MIB;
	c.arena.base = malloc(c.arena.size);
	c.range = calloc(n, sizeof(*c.range));
	if (!c.dest || !c.arena.base || !c.range)
		abort();
	memset(c.dest, 0x5a, c.img.load_size);
	memset(c.arena.base, 0x5a, c.arena.size);
	for (int op = 0; op < OP_COUNT; op++) {
		double t0 = bench_cpu_now(), dt;

		run_op(&c, (enum op)op, 1);
		dt = bench_cpu_now() - t0;
		if (c.err != LDR_OK) {
			bench_row("fgkaslr", item, names[op], "error: %s", ldr_strerror(c.err));
			goto out;
		}
		k[op] = dt > 0 && dt < min_s ? (int)(min_s / dt) + 1 : 1;
	}
	/* operations interleaved within a sample: load on the machine hits all */
	for (int s = 0; s < samples; s++)
		for (int op = 0; op < OP_COUNT; op++) {
			double t0 = bench_cpu_now();

			for (int r = 0; r < k[op]; r++)
				run_op(&c, (enum op)op, (unsigned)(s * 1000 + r));
			t[op][s] = (bench_cpu_now() - t0) / k[op];
		}
	for (int op = 0; op < OP_COUNT; op++)
		med[op] = bench_median(t[op], samples);
	run_op(&c, OP_FGK, 7);
	fgk_ms = (med[OP_FGK] - med[OP_LOAD]) * 1e3;
	bench_row("fgkaslr", item, "functions", "%u", c.rep.functions);
	bench_row("fgkaslr", item, "moved", "%u", c.rep.moved);
	bench_row("fgkaslr", item, "sections", "%u", c.img.shnum);
	bench_row("fgkaslr", item, "relocations", "%llu", (unsigned long long)c.rep.reloc.count);
	bench_row("fgkaslr", item, "draws", "%u", c.nrange);
	bench_row("fgkaslr", item, "table entries", "%llu",
		  (unsigned long long)c.rep.table_entries);
	bench_row("fgkaslr", item, "log2(n!) bits", "%.1f", c.rep.perm_millibits / 1000.0);
	bench_row("fgkaslr", item, "entropy bits", "%.1f", c.rep.entropy_millibits / 1000.0);
	for (int op = 0; op < OP_COUNT; op++)
		bench_row("fgkaslr", item, names[op], "%.3f", med[op] * 1e3);
	bench_row("fgkaslr", item, "fgk ms", "%.3f", fgk_ms);
	bench_row("fgkaslr", item, "load+fgk / load+reloc", "%.2f", med[OP_FGK] / med[OP_RELOC]);
	bench_row("fgkaslr", item, "goal fgk <= 50 ms", "%s", fgk_ms <= FGK_GOAL_MS ? "met" : "missed");
out:
	free(c.dest);
	free(c.arena.base);
	free(c.range);
	fb_free(&b);
}

int main(int argc, char **argv)
{
	int samples = 11;
	double min_ms = 50;

	if (bench_options(argc, argv, &samples, &min_ms) != argc) {
		fprintf(stderr, "usage: bench_fgkaslr [-n SAMPLES(1..%d)] [-m MIN_MS]\n",
			BENCH_MAX_SAMPLES);
		return 2;
	}
	bench_one("1000 functions", 1000, samples, min_ms / 1e3);
	bench_one("40000 functions", 40000, samples, min_ms / 1e3);
	return 0;
}
