/*
 * test_slot.c - host tests for src/slot.c: slot counts and slot_at() checked
 * against a brute-force enumerator (every aligned base tried), the window
 * and avoid rules, regions at the top of the address space, invalid input,
 * slot_pick() through injected draw callbacks, slot_theoretical(), and the
 * captured maps under test/fixtures/ (with a summary line per map).
 */
#include <stdlib.h>
#include <string.h>

#include "e820.h"
#include "mmap_fixture.h"
#include "slot.h"
#include "test.h"

#define R(a, s) { (a), (s), E820_RAM, 0 }
#define RT(a, s, t) { (a), (s), (t), 0 }
#define TOP (0ULL - 1) /* 2^64 - 1 */

/* ------------------------------------------------------------ brute force */

static int brute_last(const struct mem_region *r, uint64_t *last)
{
	if (r->size == 0 || r->size - 1 > UINT64_MAX - r->addr)
		return 0;
	*last = r->addr + (r->size - 1);
	return 1;
}

static int brute_clear(const struct slot_params *p, uint64_t b, uint64_t il)
{
	for (size_t j = 0; j < p->navoid; j++) {
		uint64_t alast;

		if (p->avoid[j].size == 0)
			continue;
		if (!brute_last(&p->avoid[j], &alast))
			alast = TOP;
		if (b <= alast && p->avoid[j].addr <= il)
			return 0;
	}
	return 1;
}

/*
 * Every aligned base of every RAM region, tried one by one against the
 * definition in slot.h.  Writes up to cap bases to out; returns the count.
 */
static uint64_t brute(const struct mem_region *r, size_t n, const struct slot_params *p,
		      int use_avoid, uint64_t *out, size_t cap)
{
	uint64_t count = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t last, b;

		if (r[i].type != E820_RAM || !brute_last(&r[i], &last))
			continue;
		if (r[i].addr > UINT64_MAX - (p->align - 1))
			continue;
		for (b = (r[i].addr + p->align - 1) & ~(p->align - 1); b <= last; b += p->align) {
			uint64_t il;
			int ok = b >= p->min_addr;

			if (p->image_size - 1 > UINT64_MAX - b) {
				ok = 0;
				il = TOP;
			} else {
				il = b + (p->image_size - 1);
			}
			ok = ok && il <= last;
			if (p->max_addr)
				ok = ok && il <= p->max_addr - 1;
			if (ok && use_avoid)
				ok = brute_clear(p, b, il);
			if (ok) {
				if (count < cap)
					out[count] = b;
				count++;
			}
			if (b > UINT64_MAX - p->align)
				break;
		}
	}
	return count;
}

/* Independent property checks on one slot base. */
static int slot_ok(const struct mem_region *r, size_t n, const struct slot_params *p, uint64_t b)
{
	uint64_t il, last;
	int inside = 0;

	if (b & (p->align - 1))
		return 0;
	if (b < p->min_addr || p->image_size - 1 > UINT64_MAX - b)
		return 0;
	il = b + (p->image_size - 1);
	if (p->max_addr && il > p->max_addr - 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].type == E820_RAM && brute_last(&r[i], &last) && b >= r[i].addr && il <= last)
			inside = 1;
	return inside && brute_clear(p, b, il);
}

/*
 * Compare slot_count/slot_at with brute force for one case, and check every
 * slot's properties and strict increase.  Returns 1 when all agree.
 */
static int check_case(const char *name, const struct mem_region *r, size_t n,
		      const struct slot_params *p, uint64_t want_count)
{
	static uint64_t expect[1 << 16];
	uint64_t cnt = slot_count(r, n, p), bc, prev = 0, base;
	int ok = 1;

	bc = brute(r, n, p, 1, expect, sizeof(expect) / sizeof(expect[0]));
	if (want_count != UINT64_MAX && bc != want_count) {
		printf("     %s: brute force says %llu, table says %llu (bad case)\n", name,
		       (unsigned long long)bc, (unsigned long long)want_count);
		ok = 0;
	}
	if (cnt != bc) {
		printf("     %s: slot_count %llu, brute force %llu\n", name, (unsigned long long)cnt,
		       (unsigned long long)bc);
		return 0;
	}
	for (uint64_t i = 0; i < cnt; i++) {
		if (slot_at(r, n, p, i, &base) != LDR_OK) {
			printf("     %s: slot_at(%llu) failed\n", name, (unsigned long long)i);
			return 0;
		}
		if (i < sizeof(expect) / sizeof(expect[0]) && base != expect[i]) {
			printf("     %s: slot_at(%llu) = %#llx, brute force %#llx\n", name,
			       (unsigned long long)i, (unsigned long long)base,
			       (unsigned long long)expect[i]);
			return 0;
		}
		if (!slot_ok(r, n, p, base) || (i > 0 && base <= prev)) {
			printf("     %s: slot %llu at %#llx breaks the rules\n", name,
			       (unsigned long long)i, (unsigned long long)base);
			return 0;
		}
		prev = base;
	}
	base = 0x1234;
	if (slot_at(r, n, p, cnt, &base) != LDR_E_NO_SLOT || base != 0x1234) {
		printf("     %s: slot_at(count) did not fail cleanly\n", name);
		return 0;
	}
	return ok;
}

/* ------------------------------------------------------------ table cases */

static const struct mem_region avoid_a[] = {
	R(40 * MIB, 1 * MIB),            /* inside region 2 */
	R(20 * MIB + 4096, 4096),        /* one page */
	R(38 * MIB, 4 * MIB),            /* overlaps the first, unsorted */
	R(0, 0),                         /* empty: ignored */
};
static const struct mem_region avoid_top[] = {
	R(TOP - 8 * MIB + 1, 2 * MIB),   /* near the very top */
	{ TOP - 1 * MIB + 1, 4 * MIB, E820_RAM, 0 }, /* wraps: avoid to the top */
};

static const struct {
	const char *name;
	struct mem_region r[6];
	size_t n;
	uint64_t image_size, align, min, max;
	const struct mem_region *avoid;
	size_t navoid;
	uint64_t want; /* UINT64_MAX: only compare with brute force */
} cases[] = {
	{ "one region", { R(16 * MIB, 64 * MIB) }, 1, 8 * MIB, 2 * MIB, 16 * MIB, 0, NULL, 0, 29 },
	{ "image exactly the region", { R(16 * MIB, 8 * MIB) }, 1, 8 * MIB, 2 * MIB, 0, 0, NULL, 0, 1 },
	{ "image one byte too big", { R(16 * MIB, 8 * MIB) }, 1, 8 * MIB + 1, 2 * MIB, 0, 0, NULL, 0, 0 },
	{ "unaligned region", { R(17 * MIB + 4096, 20 * MIB) }, 1, 2 * MIB, 2 * MIB, 0, 0, NULL, 0, 9 },
	{ "odd image size", { R(0, 64 * MIB) }, 1, 3 * MIB + 5, 2 * MIB, 0, 0, NULL, 0, 31 },
	{ "below min skipped", { R(0, 32 * MIB) }, 1, 2 * MIB, 2 * MIB, 16 * MIB, 0, NULL, 0, 8 },
	{ "min unaligned", { R(0, 32 * MIB) }, 1, 2 * MIB, 2 * MIB, 16 * MIB + 1, 0, NULL, 0, 7 },
	{ "max window", { R(0, 1 * GIB) }, 1, 4 * MIB, 2 * MIB, 16 * MIB, 64 * MIB, NULL, 0, 23 },
	{ "max exact, image 2 MiB + 1", { R(0, 1 * GIB) }, 1, 2 * MIB + 1, 2 * MIB, 16 * MIB, 64 * MIB,
	  NULL, 0, 23 },
	{ "max below image", { R(0, 1 * GIB) }, 1, 4 * MIB, 2 * MIB, 0, 3 * MIB, NULL, 0, 0 },
	{ "max below min", { R(0, 1 * GIB) }, 1, 2 * MIB, 2 * MIB, 64 * MIB, 32 * MIB, NULL, 0, 0 },
	{ "several regions, holes, other types",
	  { R(1 * MIB, 15 * MIB), R(16 * MIB, 16 * MIB), RT(32 * MIB, 2 * MIB, E820_RESERVED),
	    R(34 * MIB, 30 * MIB), RT(64 * MIB, 64 * MIB, E820_ACPI), R(4 * GIB, 1 * GIB) }, 6,
	  6 * MIB, 2 * MIB, 16 * MIB, 0, NULL, 0, UINT64_MAX },
	{ "avoid list unsorted and overlapping",
	  { R(16 * MIB, 16 * MIB), R(34 * MIB, 30 * MIB) }, 2,
	  4 * MIB, 2 * MIB, 16 * MIB, 0, avoid_a, 4, UINT64_MAX },
	{ "avoid swallows everything", { R(16 * MIB, 16 * MIB) }, 1, 2 * MIB, 2 * MIB, 0, 0,
	  (const struct mem_region[]){ R(0, 1 * GIB) }, 1, 0 },
	{ "avoid touching edges only",
	  { R(16 * MIB, 16 * MIB) }, 1, 2 * MIB, 2 * MIB, 0, 0,
	  (const struct mem_region[]){ R(15 * MIB, 1 * MIB), R(32 * MIB, 1 * MIB) }, 2, 8 },
	{ "avoid one byte kills the slots covering it",
	  { R(16 * MIB, 16 * MIB) }, 1, 4 * MIB, 2 * MIB, 0, 0,
	  (const struct mem_region[]){ R(23 * MIB, 1) }, 1, 5 },
	{ "region ending at 2^64-1", { R(TOP - 64 * MIB + 1, 64 * MIB) }, 1,
	  2 * MIB, 2 * MIB, 16 * MIB, 0, NULL, 0, 32 },
	{ "region ending at 2^64-1, big image", { R(TOP - 64 * MIB + 1, 64 * MIB) }, 1,
	  64 * MIB, 2 * MIB, 0, 0, NULL, 0, 1 },
	{ "region ending at 2^64-1 with avoids", { R(TOP - 64 * MIB + 1, 64 * MIB) }, 1,
	  2 * MIB, 2 * MIB, 0, 0, avoid_top, 2, UINT64_MAX },
	{ "region ending at 2^64-1, avoid ending on the last base",
	  { R(TOP - 8 * MIB + 1, 8 * MIB) }, 1, 1 * MIB, 2 * MIB, 0, 0,
	  (const struct mem_region[]){ R(0ULL - 2 * MIB, 1) }, 1, 3 },
	{ "region inside the top 2 MiB", { R(TOP - 1 * MIB + 1, 1 * MIB) }, 1,
	  4 * KIB, 2 * MIB, 0, 0, NULL, 0, 0 },
	{ "region wrapping is skipped", { R(TOP - 2 * MIB + 1, 4 * MIB) }, 1,
	  2 * MIB, 2 * MIB, 0, 0, NULL, 0, 0 },
	{ "region 1 byte short of the top", { R(TOP - 32 * MIB + 1, 32 * MIB - 1) }, 1,
	  2 * MIB, 2 * MIB, 0, 0, NULL, 0, 15 },
	{ "image larger than every region", { R(16 * MIB, 16 * MIB), R(64 * MIB, 30 * MIB) }, 2,
	  31 * MIB, 2 * MIB, 0, 0, NULL, 0, 0 },
	{ "no regions", { R(0, 0) }, 0, 2 * MIB, 2 * MIB, 0, 0, NULL, 0, 0 },
	{ "zero-size region ignored", { R(16 * MIB, 0), R(16 * MIB, 4 * MIB) }, 2,
	  2 * MIB, 2 * MIB, 0, 0, NULL, 0, 2 },
	{ "4 KiB alignment", { R(1 * MIB + 512, 1 * MIB) }, 1, 64 * KIB, 4 * KIB, 0, 0,
	  (const struct mem_region[]){ R(1 * MIB + 300 * KIB, 100) }, 1, UINT64_MAX },
	{ "1 GiB alignment", { R(0, 8 * GIB) }, 1, 100 * MIB, 1 * GIB, 16 * MIB, 0, NULL, 0, 7 },
};

TEST(test_cases)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct slot_params p = {
			.image_size = cases[c].image_size, .align = cases[c].align,
			.min_addr = cases[c].min, .max_addr = cases[c].max,
			.avoid = cases[c].avoid, .navoid = cases[c].navoid,
		};

		CHECK(check_case(cases[c].name, cases[c].r, cases[c].n, &p, cases[c].want),
		      "case: %s", cases[c].name);
		if (cases[c].want != UINT64_MAX)
			CHECK_EQ_U64(slot_count(cases[c].r, cases[c].n, &p), cases[c].want,
				     "count: %s", cases[c].name);
	}
}

/* A region far too big for brute force: hand-computed. */
TEST(test_huge)
{
	struct mem_region r[] = { R(0, TOP) }; /* [0, 2^64 - 2] */
	struct slot_params p = { .image_size = 2 * MIB, .align = 2 * MIB, .min_addr = 16 * MIB };
	uint64_t want = (1ULL << 43) - 9, base = 0;

	CHECK_EQ_U64(slot_count(r, 1, &p), want, "whole address space");
	CHECK(slot_at(r, 1, &p, 0, &base) == LDR_OK && base == 16 * MIB, "first of all");
	CHECK(slot_at(r, 1, &p, want - 1, &base) == LDR_OK && base == 0ULL - 4 * MIB, "last of all");
	CHECK(slot_at(r, 1, &p, want, &base) == LDR_E_NO_SLOT, "one past the last");
	CHECK(slot_at(r, 1, &p, UINT64_MAX, &base) == LDR_E_NO_SLOT, "index 2^64-1");
	CHECK_EQ_U64(slot_theoretical(r, 1, &p), want, "theoretical whole space");
	p.max_addr = 4 * GIB;
	CHECK_EQ_U64(slot_count(r, 1, &p), 2048 - 8, "whole space, max 4 GiB");
	/* an avoid range at the very top costs exactly the slots touching it */
	p.max_addr = 0;
	p.avoid = (const struct mem_region[]){ R(TOP - 3 * MIB, 1), R(0ULL - 8 * MIB - 1, 2) };
	p.navoid = 1;
	CHECK_EQ_U64(slot_count(r, 1, &p), want - 1, "top avoid, one byte inside one slot");
	p.navoid = 2;
	CHECK_EQ_U64(slot_count(r, 1, &p), want - 3, "top avoid, two bytes across a boundary");
}

/* ------------------------------------------------------------ random cases */

TEST(test_random)
{
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	int bad = 0;

	for (int iter = 0; iter < 3000; iter++) {
		struct mem_region r[8], av[6];
		struct slot_params p;
		size_t n = 0, na = mmap_rand(&seed) % 6;
		uint64_t at = (mmap_rand(&seed) % 8) * MIB, span = 512 * MIB;
		int mode = (int)(mmap_rand(&seed) % 10);
		char name[64];

		p.align = mode == 0 ? 4 * KIB : mode == 1 ? 64 * MIB : 2 * MIB;
		if (mode == 0)
			span = 16 * MIB;
		if (mode == 2)
			at = TOP - span + 1; /* the same near the top of the space */
		for (int i = 0; i < 8; i++) {
			uint64_t gap = (mmap_rand(&seed) % (span / 16)) & ~(4096ULL - 1);
			uint64_t size = 1 + mmap_rand(&seed) % (span / 6);

			if (at - (mode == 2 ? TOP - span + 1 : 0) + gap + size > span)
				break;
			at += gap;
			r[n].addr = at;
			r[n].size = size;
			r[n].type = (mmap_rand(&seed) % 5) ? E820_RAM : E820_RESERVED;
			r[n].flags = 0;
			at += size;
			n++;
		}
		for (size_t j = 0; j < na; j++) {
			av[j].addr = (mode == 2 ? TOP - span + 1 : 0) + mmap_rand(&seed) % span;
			av[j].size = mmap_rand(&seed) % (span / 8);
			av[j].type = 0;
			av[j].flags = 0;
		}
		p.image_size = 1 + mmap_rand(&seed) % (span / 8);
		if (mmap_rand(&seed) & 1) /* whole MiB, or one byte more or less */
			p.image_size = (1 + p.image_size / MIB) * MIB - 1 + mmap_rand(&seed) % 3;
		p.min_addr = (mmap_rand(&seed) & 1) ? mmap_rand(&seed) % (span / 4) : 0;
		p.max_addr = (mmap_rand(&seed) % 3 == 0) ? p.min_addr + mmap_rand(&seed) % span : 0;
		if (mmap_rand(&seed) & 1) { /* edges on MiB boundaries, as real ones are */
			p.min_addr &= ~(MIB - 1);
			p.max_addr &= ~(MIB - 1);
		}
		if (mode == 2) {
			p.min_addr += TOP - span + 1;
			if (p.max_addr)
				p.max_addr += TOP - span + 1;
		}
		p.avoid = av;
		p.navoid = na;
		snprintf(name, sizeof(name), "random #%d", iter);
		if (!check_case(name, r, n, &p, UINT64_MAX))
			bad++;
		/* theoretical: brute force without avoid */
		{
			uint64_t dummy;

			if (slot_theoretical(r, n, &p) != brute(r, n, &p, 0, &dummy, 0))
				bad++;
			if (slot_count(r, n, &p) > slot_theoretical(r, n, &p))
				bad++;
		}
	}
	CHECK(bad == 0, "random cases agree with brute force (%d bad)", bad);
}

/* ------------------------------------------------------------ bad input */

TEST(test_invalid)
{
	struct mem_region r[] = { R(16 * MIB, 64 * MIB), R(128 * MIB, 64 * MIB) };
	struct mem_region unsorted[] = { R(128 * MIB, 64 * MIB), R(16 * MIB, 64 * MIB) };
	struct mem_region overlap[] = { R(16 * MIB, 64 * MIB), R(64 * MIB, 64 * MIB) };
	struct mem_region overlap_other[] = { R(16 * MIB, 64 * MIB),
					      RT(32 * MIB, 4 * MIB, E820_RESERVED) };
	struct slot_params good = { .image_size = 2 * MIB, .align = 2 * MIB, .min_addr = 16 * MIB };
	struct slot_params p;
	uint64_t base = 7, cnt = 7;

	CHECK_EQ_U64(slot_count(r, 2, &good), 64, "good params");
	p = good; p.image_size = 0;
	CHECK(slot_count(r, 2, &p) == 0 && slot_at(r, 2, &p, 0, &base) == LDR_E_INVAL, "image 0");
	p = good; p.align = 0;
	CHECK(slot_count(r, 2, &p) == 0 && slot_at(r, 2, &p, 0, &base) == LDR_E_INVAL, "align 0");
	p = good; p.align = 3 * MIB;
	CHECK(slot_count(r, 2, &p) == 0 && slot_at(r, 2, &p, 0, &base) == LDR_E_INVAL, "align 3M");
	p = good; p.align = 2048;
	CHECK(slot_count(r, 2, &p) == 0 && slot_at(r, 2, &p, 0, &base) == LDR_E_INVAL, "align 2K");
	p = good; p.navoid = 1;
	CHECK(slot_count(r, 2, &p) == 0 && slot_at(r, 2, &p, 0, &base) == LDR_E_INVAL, "avoid NULL");
	CHECK(slot_theoretical(r, 2, &p) == 64, "theoretical ignores avoid, NULL or not");
	CHECK(slot_count(r, 2, NULL) == 0 && slot_at(r, 2, NULL, 0, &base) == LDR_E_INVAL, "NULL p");
	CHECK(slot_count(NULL, 2, &good) == 0 && slot_at(NULL, 2, &good, 0, &base) == LDR_E_INVAL,
	      "NULL regions");
	CHECK(slot_count(NULL, 0, &good) == 0 && slot_at(NULL, 0, &good, 0, &base) == LDR_E_NO_SLOT,
	      "no regions");
	CHECK(slot_count(unsorted, 2, &good) == 0 &&
	      slot_at(unsorted, 2, &good, 0, &base) == LDR_E_INVAL, "unsorted regions");
	CHECK(slot_count(overlap, 2, &good) == 0 &&
	      slot_at(overlap, 2, &good, 0, &base) == LDR_E_INVAL, "overlapping regions");
	CHECK(slot_count(overlap_other, 2, &good) == 32, "non-RAM regions are not looked at");
	CHECK(slot_pick(unsorted, 2, &good, NULL, NULL, &base, &cnt) == LDR_E_INVAL, "pick: no draw");
	CHECK(base == 7 && cnt == 7, "outputs untouched on errors");
}

/* ------------------------------------------------------------ slot_pick */

struct fixed_draw {
	uint64_t idx;     /* index to return */
	uint64_t seen_n;  /* n the callback was asked for */
	int calls;
	enum ldr_err err; /* returned instead, when not LDR_OK */
};

static enum ldr_err draw_fixed(void *ctx, uint64_t n, uint64_t *ret_idx)
{
	struct fixed_draw *d = ctx;

	d->calls++;
	d->seen_n = n;
	if (d->err != LDR_OK)
		return d->err;
	*ret_idx = d->idx;
	return LDR_OK;
}

/* Exactly uniform rejection sampling over a test-local xorshift stream. */
static enum ldr_err draw_xorshift(void *ctx, uint64_t n, uint64_t *ret_idx)
{
	uint64_t mask = n - 1;

	mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4;
	mask |= mask >> 8; mask |= mask >> 16; mask |= mask >> 32;
	for (int i = 0; i < 256; i++) {
		uint64_t r = mmap_rand(ctx) & mask;

		if (r < n) {
			*ret_idx = r;
			return LDR_OK;
		}
	}
	return LDR_E_NO_ENTROPY;
}

TEST(test_pick)
{
	static const struct mem_region r[] = { R(1 * MIB, 40 * MIB), RT(41 * MIB, 1 * MIB, E820_ACPI),
					       R(42 * MIB, 22 * MIB), R(4 * GIB, 10 * MIB) };
	static const struct mem_region av[] = { R(30 * MIB, 3 * MIB) };
	struct slot_params p = { .image_size = 4 * MIB, .align = 2 * MIB, .min_addr = 16 * MIB,
				 .avoid = av, .navoid = 1 };
	uint64_t count = slot_count(r, 4, &p), base, cnt, seen[64], seed = 99;
	struct fixed_draw d;
	int hits[64], bad = 0;

	CHECK(count > 10 && count < 64, "pick table has %llu slots", (unsigned long long)count);
	/* every index reachable, distinct, equal to slot_at */
	for (uint64_t i = 0; i < count; i++) {
		uint64_t want;

		memset(&d, 0, sizeof(d));
		d.idx = i;
		CHECK(slot_pick(r, 4, &p, draw_fixed, &d, &base, &cnt) == LDR_OK, "pick %llu",
		      (unsigned long long)i);
		CHECK(d.calls == 1 && d.seen_n == count && cnt == count, "draw asked for n = count");
		CHECK(slot_at(r, 4, &p, i, &want) == LDR_OK && want == base, "pick %llu = slot_at",
		      (unsigned long long)i);
		CHECK(slot_ok(r, 4, &p, base), "pick %llu obeys the rules", (unsigned long long)i);
		seen[i] = base;
		for (uint64_t j = 0; j < i; j++)
			CHECK(seen[j] != base, "picks %llu and %llu differ", (unsigned long long)j,
			      (unsigned long long)i);
	}
	/* the draw's errors and bad indices */
	memset(&d, 0, sizeof(d));
	d.err = LDR_E_NO_ENTROPY;
	base = cnt = 5;
	CHECK(slot_pick(r, 4, &p, draw_fixed, &d, &base, &cnt) == LDR_E_NO_ENTROPY, "draw error");
	CHECK(base == 5 && cnt == 5, "untouched after draw error");
	memset(&d, 0, sizeof(d));
	d.idx = count;
	CHECK(slot_pick(r, 4, &p, draw_fixed, &d, &base, &cnt) == LDR_E_INVAL, "draw out of range");
	d.idx = UINT64_MAX;
	CHECK(slot_pick(r, 4, &p, draw_fixed, &d, &base, &cnt) == LDR_E_INVAL, "draw 2^64-1");
	/* no slot: the draw is never consulted */
	p.image_size = 64 * MIB;
	memset(&d, 0, sizeof(d));
	CHECK(slot_pick(r, 4, &p, draw_fixed, &d, &base, &cnt) == LDR_E_NO_SLOT && d.calls == 0,
	      "image larger than every region: LDR_E_NO_SLOT");
	CHECK(slot_at(r, 4, &p, 0, &base) == LDR_E_NO_SLOT, "slot_at with no slot");
	p.image_size = 4 * MIB;

	/* many random picks: all valid, all slots hit */
	memset(hits, 0, sizeof(hits));
	for (int k = 0; k < 20000; k++) {
		if (slot_pick(r, 4, &p, draw_xorshift, &seed, &base, &cnt) != LDR_OK ||
		    !slot_ok(r, 4, &p, base))
			bad++;
		for (uint64_t i = 0; i < count; i++)
			if (seen[i] == base)
				hits[i]++;
	}
	CHECK(bad == 0, "20000 random picks valid (%d bad)", bad);
	for (uint64_t i = 0; i < count; i++)
		CHECK(hits[i] > 0, "slot %llu reached by random picks", (unsigned long long)i);
}

/* ------------------------------------------------------------ theoretical */

TEST(test_theoretical)
{
	/* e820 table: RAM includes memory firmware is still using; free list is less */
	static const struct mem_region e820[] = {
		R(0, 640 * KIB), RT(640 * KIB, 384 * KIB, E820_RESERVED), R(1 * MIB, 255 * MIB),
		RT(256 * MIB, 1 * MIB, E820_ACPI), R(257 * MIB, 767 * MIB), RT(3 * GIB, 1 * GIB, E820_RESERVED),
		R(4 * GIB, 2 * GIB),
	};
	static const struct mem_region freel[] = {
		R(1 * MIB, 100 * MIB), R(120 * MIB, 136 * MIB), R(257 * MIB, 700 * MIB), R(4 * GIB, 2 * GIB),
	};
	static const struct mem_region av[] = { R(200 * MIB, 1 * MIB) };
	struct slot_params p = { .image_size = 10 * MIB, .align = 2 * MIB, .min_addr = 16 * MIB,
				 .avoid = av, .navoid = 1 };
	uint64_t dummy, th = slot_theoretical(e820, 7, &p), c = slot_count(freel, 4, &p);

	CHECK_EQ_U64(th, brute(e820, 7, &p, 0, &dummy, 0), "theoretical = brute force, no avoid");
	CHECK(c < th, "physical slots below theoretical");
	CHECK_EQ_U64(c, brute(freel, 4, &p, 1, &dummy, 0), "physical = brute force");
	/* min_addr and max_addr are honoured by the yardstick too */
	p.min_addr = 4 * GIB;
	CHECK_EQ_U64(slot_theoretical(e820, 7, &p), 1024 - 4, "theoretical above 4 GiB");
	p.max_addr = 5 * GIB;
	CHECK_EQ_U64(slot_theoretical(e820, 7, &p), 512 - 4, "theoretical in [4G, 5G)");
}

/* ------------------------------------------------------------ fixtures */

/* log2(x) in hundredths, rounded down, without libm. */
static unsigned log2_centi(uint64_t x)
{
	unsigned whole = 0;
	uint32_t frac = 0;
	double v;

	if (x == 0)
		return 0;
	while (x >> (whole + 1))
		whole++;
	v = (double)x / (double)(1ULL << whole); /* [1, 2) */
	for (int bit = 15; bit >= 0; bit--) { /* 16 fraction bits by squaring */
		v *= v;
		if (v >= 2.0) {
			v /= 2.0;
			frac |= 1u << bit;
		}
	}
	return whole * 100 + (unsigned)(((uint64_t)frac * 100) >> 16);
}

TEST(test_fixtures)
{
	static const uint64_t sizes[] = { 16 * MIB, 64 * MIB };
	char *names[MMAP_FIXTURE_MAX_FILES];
	int nfix = mmap_list_fixtures(names);

	if (nfix == 0)
		printf("note: no %s/*%s fixtures; fixture checks skipped\n",
		       MMAP_FIXTURE_DEFAULT_DIR, MMAP_FIXTURE_EXT);
	for (int f = 0; f < nfix; f++) {
		char err[300];
		struct mmap_buf m;
		long nd;

		mmap_init(&m, 48);
		nd = mmap_load_fixture(names[f], &m, err, sizeof(err));
		CHECK(nd > 0, "fixture %s loads (%s)", names[f], nd < 0 ? err : "empty");
		if (nd > 0) {
			size_t cap = E820_CAP_FOR(nd), ne = 0, nfree = 0;
			struct mem_region *e820 = calloc(cap, sizeof(*e820));
			struct mem_region *fr = calloc(cap, sizeof(*fr));

			CHECK(e820_from_efi(m.buf, m.size, m.desc_size, e820, cap, &ne) == LDR_OK &&
			      e820_free_from_efi(m.buf, m.size, m.desc_size, fr, cap, &nfree) == LDR_OK,
			      "fixture %s converts", names[f]);
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				struct slot_params p = { .image_size = sizes[s], .align = SLOT_ALIGN,
							 .min_addr = SLOT_DEFAULT_MIN };
				uint64_t c = slot_count(fr, nfree, &p), t = slot_theoretical(e820, ne, &p);
				char label[400];

				snprintf(label, sizeof(label), "%s image %llu MiB", names[f],
					 (unsigned long long)(sizes[s] / MIB));
				CHECK(check_case(label, fr, nfree, &p, UINT64_MAX), "fixture %s", label);
				CHECK(c <= t, "fixture %s: slots <= theoretical", label);
				printf("fixture %s: slots=%llu theoretical=%llu ratio=%llu.%02llu%% "
				       "bits=%u.%02u\n", label, (unsigned long long)c, (unsigned long long)t,
				       (unsigned long long)(t ? c * 100 / t : 0),
				       (unsigned long long)(t ? c * 10000 / t % 100 : 0),
				       log2_centi(c) / 100, log2_centi(c) % 100);
			}
			free(e820);
			free(fr);
		}
		mmap_free_buf(&m);
		free(names[f]);
	}
}

/* slot_place: a reserve callback that refuses chosen bases, as firmware may */
struct refuser {
	unsigned refuse_first; /* refuse this many calls */
	unsigned calls;
	uint64_t seen[32];
};

static int refuser_reserve(void *ctx, uint64_t base, uint64_t size)
{
	struct refuser *r = ctx;

	(void)size;
	if (r->calls < 32)
		r->seen[r->calls] = base;
	return r->calls++ >= r->refuse_first;
}

static enum ldr_err lowest_draw(void *ctx, uint64_t n, uint64_t *ret_idx)
{
	(void)ctx;
	(void)n;
	*ret_idx = 0;
	return LDR_OK;
}

TEST(test_place)
{
	/* 16 MiB .. 48 MiB free: 15 slots for a 4 MiB image at 2 MiB steps */
	const struct mem_region ram[] = { { 16 * MIB, 32 * MIB, E820_RAM, 0 } };
	struct mem_region avoid[8];
	struct slot_params p;
	uint64_t base = 0, count = 0;
	size_t navoid;
	struct refuser r;
	enum ldr_err err;

	memset(&p, 0, sizeof(p));
	p.image_size = 4 * MIB;
	p.align = 2 * MIB;
	p.min_addr = 16 * MIB;

	/* lowest-slot draws: refusals walk upwards, one slot at a time */
	memset(&r, 0, sizeof(r));
	r.refuse_first = 3;
	navoid = 0;
	err = slot_place(ram, 1, &p, avoid, &navoid, 8, lowest_draw, NULL, refuser_reserve, &r,
			 16, &base, &count);
	CHECK(err == LDR_OK, "place after 3 refusals: %d", err);
	CHECK_EQ_U64(count, 15, "count is the first draw's");
	CHECK_EQ_U64(r.calls, 4, "three refused, the fourth reserved");
	CHECK_EQ_U64(r.seen[0], 16 * MIB, "first try: the lowest slot");
	for (unsigned i = 1; i < 4; i++)
		CHECK(r.seen[i] > r.seen[i - 1], "a refused slot is never drawn again (try %u)", i);
	CHECK_EQ_U64(base, r.seen[3], "the reserved base is returned");
	CHECK_EQ_U64(navoid, 3, "each refusal is remembered in avoid[]");

	/* everything refused: bounded, then an error, never a fixed address */
	memset(&r, 0, sizeof(r));
	r.refuse_first = 1000;
	navoid = 0;
	base = 0x1234;
	err = slot_place(ram, 1, &p, avoid, &navoid, 8, lowest_draw, NULL, refuser_reserve, &r,
			 5, &base, &count);
	CHECK(err == LDR_E_SLOT_REFUSED, "all refused: %d", err);
	CHECK_EQ_U64(r.calls, 5, "at most max_tries reservations");
	CHECK_EQ_U64(base, 0x1234, "no base written on failure");

	/* avoid[] full stops early with the same error */
	memset(&r, 0, sizeof(r));
	r.refuse_first = 1000;
	navoid = 6;
	for (unsigned i = 0; i < 6; i++)
		avoid[i] = (struct mem_region){ 100 * MIB + i * MIB, MIB, E820_RESERVED, 0 };
	err = slot_place(ram, 1, &p, avoid, &navoid, 8, lowest_draw, NULL, refuser_reserve, &r,
			 16, &base, &count);
	CHECK(err == LDR_E_SLOT_REFUSED && r.calls == 3, "avoid[] full: %d after %u", err, r.calls);

	/* slots run out before the tries do: NO_SLOT */
	{
		const struct mem_region small[] = { { 16 * MIB, 6 * MIB, E820_RAM, 0 } };

		memset(&r, 0, sizeof(r));
		r.refuse_first = 1000;
		navoid = 0;
		err = slot_place(small, 1, &p, avoid, &navoid, 8, lowest_draw, NULL,
				 refuser_reserve, &r, 16, &base, &count);
		CHECK(err == LDR_E_NO_SLOT && r.calls == 2, "2 slots refused -> NO_SLOT: %d after %u",
		      err, r.calls);
	}
}

/* ------------------------------------------------- forced placements */

/* slot_index_of() and slot_first_from() against slot_at() on every table case */
TEST(test_index_of)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct slot_params p = {
			.image_size = cases[c].image_size, .align = cases[c].align,
			.min_addr = cases[c].min, .max_addr = cases[c].max,
			.avoid = cases[c].avoid, .navoid = cases[c].navoid,
		};
		uint64_t cnt = slot_count(cases[c].r, cases[c].n, &p), base, idx, prev = 0;
		int ok = 1;

		for (uint64_t i = 0; i < cnt && i < 4096 && ok; i++) {
			if (slot_at(cases[c].r, cases[c].n, &p, i, &base) != LDR_OK)
				ok = 0;
			/* the slot itself, and from just above the previous one */
			else if (slot_index_of(cases[c].r, cases[c].n, &p, base, &idx) != LDR_OK ||
				 idx != i)
				ok = 0;
			else if (slot_first_from(cases[c].r, cases[c].n, &p,
						 i ? prev + 1 : 0, &idx) != LDR_OK || idx != i)
				ok = 0;
			/* a base one byte off is never a slot (align >= 4 KiB) */
			else if (base + 1 > base &&
				 slot_index_of(cases[c].r, cases[c].n, &p, base + 1, &idx) !=
					 LDR_E_NO_SLOT)
				ok = 0;
			prev = base;
		}
		CHECK(ok, "index_of: %s", cases[c].name);
		if (cnt && cnt < UINT64_MAX)
			CHECK(slot_first_from(cases[c].r, cases[c].n, &p, prev + 1, &idx) ==
				      LDR_E_NO_SLOT || cnt > 4096,
			      "nothing above the last slot: %s", cases[c].name);
	}
}

/*
 * Why an address is not a slot: a map with RAM at [1 MiB, 2 GiB) and
 * [4 GiB, 6 GiB), firmware using [1 GiB, 1 GiB + 64 MiB) (RAM in the full
 * map, absent from the free one), a keep-out range at 512 MiB.
 */
TEST(test_explain)
{
	static const struct mem_region e820[] = {
		R(1 * MIB, 2 * GIB - 1 * MIB), RT(2 * GIB, 1 * GIB, E820_RESERVED),
		R(4 * GIB, 2 * GIB),
	};
	static const struct mem_region free_r[] = {
		R(1 * MIB, 1 * GIB - 1 * MIB), R(1 * GIB + 64 * MIB, 1 * GIB - 64 * MIB),
		R(4 * GIB, 2 * GIB),
	};
	static const struct mem_region avoid[] = { R(512 * MIB, 4096) };
	struct slot_params p = {
		.image_size = 16 * MIB, .align = 2 * MIB, .min_addr = 16 * MIB, .max_addr = 0,
		.avoid = avoid, .navoid = 1,
	};
	static const struct {
		uint64_t base;
		enum slot_why want;
	} c[] = {
		{ 16 * MIB, SLOT_WHY_OK },
		{ 16 * MIB + 4096, SLOT_WHY_MISALIGNED },
		{ 2 * MIB, SLOT_WHY_WINDOW },
		{ 2 * GIB - 16 * MIB, SLOT_WHY_OK },
		{ 2 * GIB - 14 * MIB, SLOT_WHY_NOT_RAM },  /* runs into the hole */
		{ 3 * GIB, SLOT_WHY_NOT_RAM },             /* reserved */
		{ 8 * GIB, SLOT_WHY_NOT_RAM },             /* past the end of RAM */
		{ 1 * GIB, SLOT_WHY_NOT_FREE },            /* firmware's */
		{ 1 * GIB + 50 * MIB, SLOT_WHY_NOT_FREE }, /* its last 14 MiB */
		{ 1 * GIB + 64 * MIB, SLOT_WHY_OK },
		{ 500 * MIB, SLOT_WHY_AVOIDED },
		{ 4 * GIB, SLOT_WHY_OK },
		{ 6 * GIB - 16 * MIB, SLOT_WHY_OK },
		{ 0ULL - 2 * MIB, SLOT_WHY_WINDOW },       /* the image would wrap */
	};
	uint64_t idx, got = 0;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK(slot_explain(free_r, 3, e820, 3, &p, c[i].base) == c[i].want,
		      "explain 0x%llx: got %d, want %d", (unsigned long long)c[i].base,
		      (int)slot_explain(free_r, 3, e820, 3, &p, c[i].base), (int)c[i].want);
	p.max_addr = 4 * GIB;
	CHECK(slot_explain(free_r, 3, e820, 3, &p, 4 * GIB) == SLOT_WHY_WINDOW, "kaslr.max");
	CHECK(slot_first_from(free_r, 3, &p, 4 * GIB, &idx) == LDR_E_NO_SLOT,
	      "no slot above 4 GiB under kaslr.max=4G");
	p.max_addr = 0;
	CHECK(slot_first_from(free_r, 3, &p, 4 * GIB, &idx) == LDR_OK, "above 4 GiB");
	CHECK(slot_index_of(free_r, 3, &p, 4 * GIB, &got) == LDR_OK &&
	      got == idx, "the first slot above 4 GiB is at 4 GiB");
	p.align = 3 * MIB;
	CHECK(slot_explain(free_r, 3, e820, 3, &p, 16 * MIB) == SLOT_WHY_WINDOW, "bad params");
	CHECK(slot_first_from(free_r, 3, &p, 0, &idx) == LDR_E_INVAL, "bad params: first_from");
}
