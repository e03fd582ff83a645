/*
 * test_pagetable.c - host tests for src/pagetable.c: tables are built in a
 * host pool whose pages carry fake physical addresses (so the to_phys/to_virt
 * translation is exercised), then walked with pt_lookup() and read raw.
 * Covers the loader's real sequence (identity map, then a 4 KiB-granular
 * kernel and its higher-half alias), 1 GiB leaves, unmap, refused inputs,
 * allocator failures, and 2,000 random operations against a reference model;
 * a table nothing reaches any more is zeroed.
 */
#include <stdlib.h>
#include <string.h>

#include "pagetable.h"
#include "test.h"

#define POOL_PHYS_BASE 0x100000ULL /* fake physical address of pool page 0 */

struct pool {
	uint8_t *mem;
	size_t pages;     /* capacity */
	size_t next;      /* bump index */
	uint64_t phys_base;
	uint64_t skew;    /* added to to_phys results (misalignment test) */
	int dirty;        /* hand out pages unzeroed: pt must zero them itself */
};

static void *pool_page(void *ctx)
{
	struct pool *p = ctx;

	if (p->next >= p->pages)
		return NULL;
	/* The contract: a zeroed page (the pool starts out as garbage). */
	if (!p->dirty)
		memset(p->mem + p->next * PAGE_SIZE, 0, PAGE_SIZE);
	return p->mem + p->next++ * PAGE_SIZE;
}

static uint64_t pool_to_phys(void *ctx, void *page)
{
	struct pool *p = ctx;
	uint8_t *b = page;

	if (b < p->mem || b >= p->mem + p->pages * PAGE_SIZE) {
		printf("FAIL to_phys: pointer %p outside the pool\n", page);
		abort();
	}
	return p->phys_base + (uint64_t)(b - p->mem) + p->skew;
}

static void *pool_to_virt(void *ctx, uint64_t phys)
{
	struct pool *p = ctx;

	if (phys < p->phys_base || phys - p->phys_base >= p->pages * PAGE_SIZE) {
		printf("FAIL to_virt: phys 0x%llx outside the pool\n",
		       (unsigned long long)phys);
		abort();
	}
	return p->mem + (phys - p->phys_base);
}

static void pool_open(struct pool *p, struct pt_alloc *a, size_t bytes)
{
	p->mem = aligned_alloc(PAGE_SIZE, bytes);
	if (!p->mem) {
		printf("FAIL aligned_alloc\n");
		exit(1);
	}
	/* Garbage everywhere: pages must come out zeroed and be fully written. */
	memset(p->mem, 0xa5, bytes);
	p->pages = bytes / PAGE_SIZE;
	p->next = 0;
	p->phys_base = POOL_PHYS_BASE;
	p->skew = 0;
	p->dirty = 0;
	a->page = pool_page;
	a->to_phys = pool_to_phys;
	a->to_virt = pool_to_virt;
	a->ctx = p;
}

static void pool_close(struct pool *p)
{
	free(p->mem);
	p->mem = NULL;
}

/* Raw entry at level (3 = PML4 .. 0 = PT) for virt, or 0 if not reached. */
static uint64_t raw_entry(const struct pt *pt, uint64_t virt, int level)
{
	uint64_t table = pt->pml4_phys;

	for (int l = 3; l >= 0; l--) {
		uint64_t *t = pt->alloc.to_virt(pt->alloc.ctx, table);
		uint64_t e = t[(virt >> (12 + 9 * l)) & 511];

		if (l == level)
			return e;
		if (!(e & PT_PRESENT) || (e & PT_PS))
			return 0;
		table = e & PT_ADDR_MASK;
	}
	return 0;
}

/*
 * Check every 4 KiB page of [virt, virt + size) maps to phys.. with flags
 * and leaf size; report only the first bad page of the range.
 */
static void check_range(const struct pt *pt, const char *name, uint64_t virt,
			uint64_t phys, uint64_t size, uint32_t flags,
			uint64_t page_size)
{
	for (uint64_t off = 0; off < size; off += PAGE_SIZE) {
		uint64_t got_phys = 0, got_size = 0;
		uint32_t got_flags = 0;
		enum ldr_err err = pt_lookup(pt, virt + off, &got_phys,
					     &got_flags, &got_size);
		int ok = err == LDR_OK && got_phys == phys + off &&
			 got_flags == flags && got_size == page_size;

		if (!ok) {
			CHECK(ok, "%s: page 0x%llx: err %d phys 0x%llx flags 0x%x size 0x%llx",
			      name, (unsigned long long)(virt + off), err,
			      (unsigned long long)got_phys, got_flags,
			      (unsigned long long)got_size);
			return;
		}
	}
	CHECK(1, "%s", name);
}

static void check_unmapped(const struct pt *pt, const char *name, uint64_t virt)
{
	uint64_t phys = 0xdead;

	CHECK_EQ_U64(pt_lookup(pt, virt, &phys, NULL, NULL), LDR_E_PT_UNMAPPED,
		     "%s: lookup 0x%llx", name, (unsigned long long)virt);
	CHECK_EQ_U64(phys, 0xdead, "%s: ret_phys untouched on error", name);
}

/*
 * The loader's sequence.  Physical layout of the "kernel" (4 KiB granular,
 * straddling the 2 MiB boundary at 32 MiB):
 *
 *   30 MiB    0x1f0c000      0x1f26000   32 MiB  0x2006000  0x2025000  34 MiB
 *   |  ident  | text R+X     | rodata R     |    | data RW  |  ident   |
 *   +---------+--------------+--------------+----+----------+----------+
 *             <--- two 2 MiB leaves are split into 4 KiB PTs --->
 */
#define K_TEXT   0x1f0c000ULL
#define K_RODATA 0x1f26000ULL
#define K_DATA   0x2006000ULL
#define K_END    0x2025000ULL
#define K_VIRT   0xffffffff80200000ULL

TEST(test_loader_sequence)
{
	struct pool pool;
	struct pt_alloc a;
	struct pt pt;
	const uint32_t rw = PT_W;
	static const struct {
		uint64_t phys, end;
		uint32_t flags;
		const char *name;
	} seg[] = {
		{ K_TEXT, K_RODATA, PT_X, "text" },
		{ K_RODATA, K_DATA, 0, "rodata" },
		{ K_DATA, K_END, PT_W, "data" },
	};
	uint64_t e;

	pool_open(&pool, &a, 4 * MIB);
	pool.dirty = 1; /* pt_new_table() zeroes defensively */
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "pt_init");
	CHECK_EQ_U64(pt.pml4_phys, POOL_PHYS_BASE, "PML4 at the pool's fake phys");
	CHECK_EQ_U64(pt.pages_used, 1, "pt_init uses one page");

	/* 1. identity map of all "RAM", RW + NX, 2 MiB leaves */
	CHECK_EQ_U64(pt_map_range(&pt, 0, 0, 8 * GIB, rw), LDR_OK, "identity 8 GiB");
	CHECK_EQ_U64(pt.pages_used, 1 + 1 + 8, "PML4 + PDPT + 8 PDs");
	for (uint64_t v = 0; v < 8 * GIB; v += 2 * MIB) {
		uint64_t phys, size;
		uint32_t flags;

		if (pt_lookup(&pt, v + 0x1234 * 4, &phys, &flags, &size) != LDR_OK ||
		    phys != v + 0x1234 * 4 || flags != PT_W || size != 2 * MIB) {
			CHECK(0, "identity 2 MiB leaf at 0x%llx", (unsigned long long)v);
			break;
		}
	}
	check_unmapped(&pt, "above RAM", 8 * GIB);
	/* raw encoding: intermediate P|RW only, leaf P|RW|PS|NX, fake phys */
	e = raw_entry(&pt, 0x40000000, 3);
	CHECK_EQ_U64(e & ~PT_ADDR_MASK, PT_PRESENT | PT_RW, "PML4E is P|RW only");
	CHECK((e & PT_ADDR_MASK) >= POOL_PHYS_BASE &&
	      (e & PT_ADDR_MASK) < POOL_PHYS_BASE + 4 * MIB, "PML4E holds a pool phys");
	e = raw_entry(&pt, 0x40000000, 2);
	CHECK_EQ_U64(e & ~PT_ADDR_MASK, PT_PRESENT | PT_RW, "PDPTE is P|RW only");
	e = raw_entry(&pt, 0x40200000, 1);
	CHECK_EQ_U64(e, 0x40200000 | PT_PRESENT | PT_RW | PT_PS | PT_NX,
		     "2 MiB leaf encoding");

	/* 2. kernel, identity, per-segment permissions */
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ_U64(pt_map_range(&pt, seg[i].phys, seg[i].phys,
					  seg[i].end - seg[i].phys, seg[i].flags),
			     LDR_OK, "map %s", seg[i].name);
	CHECK_EQ_U64(pt.pages_used, 10 + 2, "two 2 MiB leaves split");
	e = raw_entry(&pt, K_TEXT, 0);
	CHECK_EQ_U64(e, K_TEXT | PT_PRESENT, "R+X 4 KiB leaf encoding (no NX, no RW)");
	e = raw_entry(&pt, K_DATA, 0);
	CHECK_EQ_U64(e, K_DATA | PT_PRESENT | PT_RW | PT_NX, "RW leaf encoding");
	e = raw_entry(&pt, 30 * MIB, 0);
	CHECK_EQ_U64(e, 30 * MIB | PT_PRESENT | PT_RW | PT_NX,
		     "split keeps identity flags, no PS in a PTE");

	/* 3. higher-half alias: virt 2 MiB aligned, phys not -> 4 KiB leaves */
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ_U64(pt_map_range(&pt, K_VIRT + (seg[i].phys - K_TEXT),
					  seg[i].phys, seg[i].end - seg[i].phys,
					  seg[i].flags | PT_GLOBAL),
			     LDR_OK, "alias %s", seg[i].name);
	CHECK_EQ_U64(pt.pages_used, 12 + 3, "alias: PDPT + PD + one PT");
	e = raw_entry(&pt, K_VIRT, 0);
	CHECK_EQ_U64(e, K_TEXT | PT_PRESENT | PT_GLOBAL_BIT, "global R+X leaf");

	for (size_t i = 0; i < 3; i++) {
		check_range(&pt, seg[i].name, seg[i].phys, seg[i].phys,
			    seg[i].end - seg[i].phys, seg[i].flags, 4 * KIB);
		check_range(&pt, seg[i].name, K_VIRT + (seg[i].phys - K_TEXT),
			    seg[i].phys, seg[i].end - seg[i].phys,
			    seg[i].flags | PT_GLOBAL, 4 * KIB);
	}
	/* around the split: identity kept, now in 4 KiB pieces */
	check_range(&pt, "below kernel", 30 * MIB, 30 * MIB, K_TEXT - 30 * MIB,
		    PT_W, 4 * KIB);
	check_range(&pt, "above kernel", K_END, K_END, 34 * MIB - K_END, PT_W, 4 * KIB);
	check_range(&pt, "2 MiB before", 28 * MIB, 28 * MIB, 2 * MIB, PT_W, 2 * MIB);
	check_range(&pt, "2 MiB after", 34 * MIB, 34 * MIB, 2 * MIB, PT_W, 2 * MIB);
	check_unmapped(&pt, "alias end", K_VIRT + (K_END - K_TEXT));
	check_unmapped(&pt, "alias below", K_VIRT - PAGE_SIZE);

	/* 4. an aligned higher-half range takes 2 MiB leaves + a 4 KiB tail */
	CHECK_EQ_U64(pt_map_range(&pt, 0xffffffff80600000ULL, 64 * MIB,
				  4 * MIB + 8 * KIB, PT_W), LDR_OK, "aligned alias");
	CHECK_EQ_U64(pt.pages_used, 15 + 1, "one PT for the tail");
	check_range(&pt, "aligned alias big", 0xffffffff80600000ULL, 64 * MIB,
		    4 * MIB, PT_W, 2 * MIB);
	check_range(&pt, "aligned alias tail", 0xffffffff80a00000ULL, 68 * MIB,
		    8 * KIB, PT_W, 4 * KIB);

	/* 5. stack guard: unmap one page inside a 2 MiB leaf */
	CHECK_EQ_U64(pt_unmap_range(&pt, 80 * MIB + 12 * KIB, PAGE_SIZE), LDR_OK,
		     "unmap guard");
	CHECK_EQ_U64(pt.pages_used, 16 + 1, "guard split one leaf");
	check_unmapped(&pt, "guard", 80 * MIB + 12 * KIB);
	check_range(&pt, "guard below", 80 * MIB, 80 * MIB, 12 * KIB, PT_W, 4 * KIB);
	check_range(&pt, "guard above", 80 * MIB + 16 * KIB, 80 * MIB + 16 * KIB,
		    2 * MIB - 16 * KIB, PT_W, 4 * KIB);
	/* unmap inside the 4 KiB alias: no new table */
	CHECK_EQ_U64(pt_unmap_range(&pt, K_VIRT + PAGE_SIZE, PAGE_SIZE), LDR_OK,
		     "unmap alias page");
	CHECK_EQ_U64(pt.pages_used, 17, "no table for a 4 KiB unmap");
	check_unmapped(&pt, "alias hole", K_VIRT + PAGE_SIZE);
	check_range(&pt, "alias hole -1", K_VIRT, K_TEXT, PAGE_SIZE,
		    PT_X | PT_GLOBAL, 4 * KIB);
	check_range(&pt, "alias hole +1", K_VIRT + 2 * PAGE_SIZE,
		    K_TEXT + 2 * PAGE_SIZE, PAGE_SIZE, PT_X | PT_GLOBAL, 4 * KIB);
	/* unmapping what is not mapped is fine and allocates nothing */
	CHECK_EQ_U64(pt_unmap_range(&pt, 0x7f0000000000ULL, 4 * MIB), LDR_OK,
		     "unmap nothing");
	CHECK_EQ_U64(pt.pages_used, 17, "unmap nothing allocates nothing");
	/* a whole 2 MiB unmap clears the leaf without a split */
	CHECK_EQ_U64(pt_unmap_range(&pt, 100 * MIB, 2 * MIB), LDR_OK, "unmap 2 MiB");
	CHECK_EQ_U64(pt.pages_used, 17, "whole-leaf unmap allocates nothing");
	check_unmapped(&pt, "2 MiB hole", 101 * MIB);
	check_range(&pt, "2 MiB hole after", 102 * MIB, 102 * MIB, 2 * MIB, PT_W, 2 * MIB);

	/* 6. a later map of a split range with a big leaf replaces the PT */
	CHECK_EQ_U64(pt_map_range(&pt, 80 * MIB, 80 * MIB, 2 * MIB, PT_W), LDR_OK,
		     "remap 2 MiB");
	check_range(&pt, "remapped whole", 80 * MIB, 80 * MIB, 2 * MIB, PT_W, 2 * MIB);

	pool_close(&pool);
}

TEST(test_1g_pages)
{
	struct pool pool;
	struct pt_alloc a;
	struct pt pt;
	uint64_t e;

	pool_open(&pool, &a, 1 * MIB);
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "1G: init");
	CHECK_EQ_U64(pt_map_range(&pt, 0, 0, 8 * GIB,
				  PT_W | PT_GLOBAL | PT_ALLOW_1G), LDR_OK,
		     "1G: identity");
	CHECK_EQ_U64(pt.pages_used, 2, "1G: PML4 + PDPT only");
	check_range(&pt, "1G: leaves", 0, 0, 8 * GIB, PT_W | PT_GLOBAL, 1 * GIB);
	e = raw_entry(&pt, 3 * GIB, 2);
	CHECK_EQ_U64(e, 3 * GIB | PT_PRESENT | PT_RW | PT_PS | PT_NX | PT_GLOBAL_BIT,
		     "1G: leaf encoding");

	/* 2 MiB R+X inside the second GiB: 1 GiB -> 512 x 2 MiB */
	CHECK_EQ_U64(pt_map_range(&pt, GIB + 2 * MIB, GIB + 2 * MIB, 2 * MIB,
				  PT_X | PT_ALLOW_1G), LDR_OK, "1G: split to 2M");
	CHECK_EQ_U64(pt.pages_used, 3, "1G: one PD");
	check_range(&pt, "1G: split below", GIB, GIB, 2 * MIB, PT_W | PT_GLOBAL, 2 * MIB);
	check_range(&pt, "1G: split hit", GIB + 2 * MIB, GIB + 2 * MIB, 2 * MIB,
		    PT_X, 2 * MIB);
	check_range(&pt, "1G: split above", GIB + 4 * MIB, GIB + 4 * MIB,
		    GIB - 4 * MIB, PT_W | PT_GLOBAL, 2 * MIB);
	check_range(&pt, "1G: next GiB intact", 2 * GIB, 2 * GIB, GIB,
		    PT_W | PT_GLOBAL, 1 * GIB);

	/* a 4 KiB page inside a 1 GiB leaf: 1G -> 2M -> 4K */
	CHECK_EQ_U64(pt_map_range(&pt, 5 * GIB + 6 * MIB + 4 * KIB, 0x1000, 4 * KIB,
				  0), LDR_OK, "1G: 4K inside");
	CHECK_EQ_U64(pt.pages_used, 5, "1G: PD + PT");
	check_range(&pt, "1G: 4K hit", 5 * GIB + 6 * MIB + 4 * KIB, 0x1000, 4 * KIB,
		    0, 4 * KIB);
	check_range(&pt, "1G: 4K before", 5 * GIB + 6 * MIB, 5 * GIB + 6 * MIB, 4 * KIB,
		    PT_W | PT_GLOBAL, 4 * KIB);
	check_range(&pt, "1G: 4K after", 5 * GIB + 6 * MIB + 8 * KIB,
		    5 * GIB + 6 * MIB + 8 * KIB, 2 * MIB - 8 * KIB,
		    PT_W | PT_GLOBAL, 4 * KIB);
	check_range(&pt, "1G: 2M before", 5 * GIB, 5 * GIB, 6 * MIB,
		    PT_W | PT_GLOBAL, 2 * MIB);

	/* 1 GiB-aligned virt but phys only 2 MiB aligned -> 2 MiB leaves */
	CHECK_EQ_U64(pt_map_range(&pt, 16 * GIB, GIB + 2 * MIB, GIB, PT_ALLOW_1G),
		     LDR_OK, "1G: phys unaligned");
	check_range(&pt, "1G: phys unaligned", 16 * GIB, GIB + 2 * MIB, GIB, 0, 2 * MIB);
	/* without PT_ALLOW_1G, never a 1 GiB leaf */
	CHECK_EQ_U64(pt_map_range(&pt, 32 * GIB, 0, GIB, 0), LDR_OK, "1G: not allowed");
	check_range(&pt, "1G: not allowed", 32 * GIB, 0, GIB, 0, 2 * MIB);
	/* a 1 GiB leaf replaces the split GiB wholesale */
	CHECK_EQ_U64(pt_map_range(&pt, 5 * GIB, 5 * GIB, GIB, PT_W | PT_ALLOW_1G),
		     LDR_OK, "1G: replace split");
	check_range(&pt, "1G: replace split", 5 * GIB, 5 * GIB, GIB, PT_W, 1 * GIB);
	/* unmapping a whole GiB with PT_ALLOW_1G-less unmap clears the leaf */
	CHECK_EQ_U64(pt_unmap_range(&pt, 6 * GIB, GIB), LDR_OK, "1G: unmap whole");
	check_unmapped(&pt, "1G: unmapped GiB", 6 * GIB + 123 * MIB);
	check_range(&pt, "1G: after unmapped GiB", 7 * GIB, 7 * GIB, GIB,
		    PT_W | PT_GLOBAL, 1 * GIB);
	pool_close(&pool);
}

/* A 2 MiB leaf with PAT (bit 12) splits into PTEs with PAT in bit 7. */
TEST(test_split_pat)
{
	struct pool pool;
	struct pt_alloc a;
	struct pt pt;
	uint64_t *pd;

	pool_open(&pool, &a, 64 * KIB);
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "pat: init");
	CHECK_EQ_U64(pt_map_range(&pt, 0, 0, 4 * MIB, PT_W), LDR_OK, "pat: map");
	pd = a.to_virt(a.ctx, raw_entry(&pt, 0, 2) & PT_ADDR_MASK);
	pd[1] |= PT_PAT_LARGE | PT_PCD;
	CHECK_EQ_U64(pt_map_range(&pt, 2 * MIB, 2 * MIB, PAGE_SIZE, 0), LDR_OK,
		     "pat: split");
	CHECK_EQ_U64(raw_entry(&pt, 2 * MIB + PAGE_SIZE, 0),
		     (2 * MIB + PAGE_SIZE) | PT_PRESENT | PT_RW | PT_NX | PT_PCD | PT_PAT_4K,
		     "pat: PTE carries PAT in bit 7 and keeps PCD");
	pool_close(&pool);
}

TEST(test_refused)
{
	static const struct {
		const char *name;
		uint64_t virt, phys, size;
		uint32_t flags;
		enum ldr_err want;
	} cases[] = {
		{ "ok low", 0x1000, 0x1000, 0x1000, PT_W, LDR_OK },
		{ "ok top of lower half", 0x00007ffffffff000ULL, 0, 0x1000, 0, LDR_OK },
		{ "ok last page", 0xfffffffffffff000ULL, 0, 0x1000, 0, LDR_OK },
		{ "ok bottom of upper half", 0xffff800000000000ULL, 0, 0x1000, 0, LDR_OK },
		{ "ok phys top", 0x2000, PT_PHYS_LIMIT - 0x1000, 0x1000, 0, LDR_OK },
		{ "size 0", 0x1000, 0x1000, 0, 0, LDR_E_INVAL },
		{ "unknown flag", 0x1000, 0x1000, 0x1000, 1u << 5, LDR_E_INVAL },
		{ "user-ish flag", 0x1000, 0x1000, 0x1000, 1u << 3, LDR_E_INVAL },
		{ "virt misaligned", 0x1800, 0x1000, 0x1000, 0, LDR_E_PT_ALIGN },
		{ "phys misaligned", 0x1000, 0x1008, 0x1000, 0, LDR_E_PT_ALIGN },
		{ "size misaligned", 0x1000, 0x1000, 0x1001, 0, LDR_E_PT_ALIGN },
		{ "non-canonical low", 0x0000800000000000ULL, 0, 0x1000, 0, LDR_E_INVAL },
		{ "non-canonical high", 0xffff7ffffffff000ULL, 0, 0x1000, 0, LDR_E_INVAL },
		{ "non-canonical mid", 0x1234000000000000ULL, 0, 0x1000, 0, LDR_E_INVAL },
		{ "crosses the hole", 0x00007ffffffff000ULL, 0, 0x2000, 0, LDR_E_INVAL },
		{ "virt wraps", 0xfffffffffffff000ULL, 0, 0x2000, 0, LDR_E_OVERFLOW },
		{ "virt wraps huge", 0x2000, 0, 0xfffffffffffff000ULL, 0, LDR_E_OVERFLOW },
		{ "up to 2^64 crosses hole", 0x1000, 0, 0xfffffffffffff000ULL, 0, LDR_E_INVAL },
		{ "phys wraps", 0x1000, 0xfffffffffffff000ULL, 0x2000, 0, LDR_E_OVERFLOW },
		{ "phys >= 2^52", 0x1000, PT_PHYS_LIMIT, 0x1000, 0, LDR_E_INVAL },
		{ "phys ends past 2^52", 0x1000, PT_PHYS_LIMIT - 0x1000, 0x2000, 0,
		  LDR_E_INVAL },
	};
	struct pool pool;
	struct pt_alloc a;
	struct pt pt;

	pool_open(&pool, &a, 256 * KIB);
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "refused: init");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned before = pt.pages_used;
		enum ldr_err err = pt_map_range(&pt, cases[i].virt, cases[i].phys,
						cases[i].size, cases[i].flags);

		CHECK_EQ_U64(err, cases[i].want, "map %s", cases[i].name);
		if (cases[i].want != LDR_OK)
			CHECK_EQ_U64(pt.pages_used, before, "%s: nothing allocated",
				     cases[i].name);
		else
			check_range(&pt, cases[i].name, cases[i].virt, cases[i].phys,
				    cases[i].size, cases[i].flags, 4 * KIB);
		/* unmap shares the virtual checks (phys-only cases succeed) */
		if (cases[i].want != LDR_OK && cases[i].phys == 0 &&
		    cases[i].flags == 0) {
			CHECK_EQ_U64(pt_unmap_range(&pt, cases[i].virt, cases[i].size),
				     cases[i].want, "unmap %s", cases[i].name);
		}
	}
	CHECK_EQ_U64(pt_unmap_range(&pt, 0x1000, 0), LDR_E_INVAL, "unmap size 0");
	CHECK_EQ_U64(pt_unmap_range(&pt, 0x1000, 0x10), LDR_E_PT_ALIGN, "unmap size misaligned");
	CHECK_EQ_U64(pt_lookup(&pt, 0x0000800000000000ULL, NULL, NULL, NULL),
		     LDR_E_INVAL, "lookup non-canonical");
	CHECK_EQ_U64(pt_lookup(&pt, 0xfffffffffffff123ULL, NULL, NULL, NULL),
		     LDR_OK, "lookup with NULL outs");
	check_unmapped(&pt, "never mapped", 0x40000000);
	pool_close(&pool);
}

TEST(test_alloc_failures)
{
	struct pool pool;
	struct pt_alloc a, bad;
	struct pt pt, untouched;

	memset(&untouched, 0x5a, sizeof(untouched));
	pool_open(&pool, &a, 3 * PAGE_SIZE);

	bad = a;
	bad.to_virt = NULL;
	pt = untouched;
	CHECK_EQ_U64(pt_init(&pt, &bad), LDR_E_INVAL, "init: missing to_virt");
	CHECK(memcmp(&pt, &untouched, sizeof(pt)) == 0, "init: pt untouched on error");
	CHECK_EQ_U64(pt_init(&pt, NULL), LDR_E_INVAL, "init: NULL alloc");

	pool.skew = 0x800;
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_E_PT_ALIGN, "init: misaligned phys");
	pool.skew = 0;
	pool.next = 0;
	pool.phys_base = PT_PHYS_LIMIT;
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_E_PT_ALIGN, "init: phys beyond 2^52");
	pool.phys_base = POOL_PHYS_BASE;
	pool.next = 0;

	/* three pages: PML4, PDPT, PD; the PT for a 4 KiB map does not fit */
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "small pool: init");
	CHECK_EQ_U64(pt_map_range(&pt, 0, 0, 2 * MIB, PT_W), LDR_OK, "small pool: 2M");
	CHECK_EQ_U64(pt_map_range(&pt, 0x1000, 0x5000, 0x1000, 0), LDR_E_NOMEM,
		     "small pool: split needs a page");
	check_range(&pt, "small pool: leaf kept", 0, 0, 2 * MIB, PT_W, 2 * MIB);
	CHECK_EQ_U64(pt_map_range(&pt, 4 * GIB, 0, 0x1000, 0), LDR_E_NOMEM,
		     "small pool: new PD needs a page");
	pool.next = 0;
	pool.pages = 0;
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_E_NOMEM, "empty pool");
	pool.pages = 3;
	pool_close(&pool);
}

/* ---------------------------------------------------------------- random */

#define RND_WINDOW_BASE (3 * GIB)  /* 1 GiB aligned */
#define RND_WINDOW      (2 * GIB)
#define RND_PAGES       (RND_WINDOW / PAGE_SIZE)
#define RND_OPS         2000

struct model_page {
	uint64_t phys;   /* valid when mapped */
	uint8_t mapped;
	uint8_t flags;
};

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

/* Leaf sizes seen by model_check_page(): [0] 4 KiB, [1] 2 MiB, [2] 1 GiB. */
static unsigned long rnd_seen[3];

static int model_check_page(const struct pt *pt, const struct model_page *m,
			    size_t i, int op)
{
	uint64_t virt = RND_WINDOW_BASE + i * PAGE_SIZE;
	uint64_t phys = 0, size = 0;
	uint32_t flags = 0;
	enum ldr_err err = pt_lookup(pt, virt, &phys, &flags, &size);

	if (!m[i].mapped) {
		if (err == LDR_E_PT_UNMAPPED)
			return 1;
		CHECK(0, "random op %d: page 0x%llx should be unmapped (err %d)",
		      op, (unsigned long long)virt, err);
		return 0;
	}
	if (err == LDR_OK && phys == m[i].phys && flags == m[i].flags &&
	    (size == 4 * KIB || size == 2 * MIB || size == 1 * GIB) &&
	    (phys & (size - 1)) == (virt & (size - 1))) {
		rnd_seen[size == 4 * KIB ? 0 : size == 2 * MIB ? 1 : 2]++;
		return 1;
	}
	CHECK(0, "random op %d: page 0x%llx err %d phys 0x%llx/0x%llx flags %x/%x size 0x%llx",
	      op, (unsigned long long)virt, err, (unsigned long long)phys,
	      (unsigned long long)m[i].phys, flags, m[i].flags,
	      (unsigned long long)size);
	return 0;
}

/* mark the table at phys (of level) and every table below it as reachable */
static void mark_tables(struct pool *p, uint8_t *seen, uint64_t phys, int level)
{
	const uint64_t *t = pool_to_virt(p, phys);

	seen[(phys - p->phys_base) / PAGE_SIZE] = 1;
	if (level == 0)
		return;
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		if ((t[i] & PT_PRESENT) && !(level < 3 && (t[i] & PT_PS)))
			mark_tables(p, seen, t[i] & PT_ADDR_MASK, level - 1);
}

/*
 * Pages the pool handed out that no walk from the PML4 reaches any more
 * (a table replaced by a leaf or unmapped whole) and that still hold
 * entries: they would tell whoever gets the memory what was mapped where.
 */
static size_t dirty_orphans(struct pool *p, const struct pt *pt)
{
	uint8_t *seen = calloc(p->pages, 1);
	size_t n = 0;

	if (!seen)
		return (size_t)-1;
	mark_tables(p, seen, pt->pml4_phys, 3);
	for (size_t i = 0; i < p->next; i++) {
		const uint8_t *pg = p->mem + i * PAGE_SIZE;

		if (seen[i])
			continue;
		for (size_t b = 0; b < PAGE_SIZE; b++)
			if (pg[b]) {
				n++;
				break;
			}
	}
	free(seen);
	return n;
}

/* a table that a larger leaf or an unmap replaces is wiped */
TEST(test_orphans_wiped)
{
	struct pool pool;
	struct pt_alloc a;
	struct pt pt;
	const uint64_t v = 0xffffffff80000000ULL, ph = 0x40000000ULL;

	pool_open(&pool, &a, 1 * MIB);
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "init");
	/* 4 KiB pages: a PD and a page table under the PDPT */
	CHECK_EQ_U64(pt_map_range(&pt, v, ph, 16 * PAGE_SIZE, PT_W), LDR_OK, "4K map");
	CHECK_EQ_U64(pt_map_range(&pt, v + 2 * MIB, ph + 2 * MIB, 8 * PAGE_SIZE, 0), LDR_OK,
		     "4K map, next 2 MiB");
	CHECK_EQ_U64(dirty_orphans(&pool, &pt), 0, "nothing replaced yet");
	/* a 2 MiB leaf over the first page table */
	CHECK_EQ_U64(pt_map_range(&pt, v, ph, 2 * MIB, PT_X), LDR_OK, "2M leaf over a table");
	CHECK_EQ_U64(dirty_orphans(&pool, &pt), 0, "the replaced page table is wiped");
	/* the second page table unmapped whole */
	CHECK_EQ_U64(pt_unmap_range(&pt, v + 2 * MIB, 2 * MIB), LDR_OK, "unmap a whole 2M");
	CHECK_EQ_U64(dirty_orphans(&pool, &pt), 0, "the unmapped page table is wiped");
	/* a 1 GiB leaf over the PD (and the tables under it) */
	CHECK_EQ_U64(pt_map_range(&pt, v, ph, 1 * GIB, PT_W | PT_ALLOW_1G), LDR_OK,
		     "1G leaf over a PD");
	CHECK_EQ_U64(dirty_orphans(&pool, &pt), 0, "the replaced PD is wiped");
	check_range(&pt, "1G leaf", v, ph, 2 * PAGE_SIZE, PT_W, GIB);
	pool_close(&pool);
}

TEST(test_random)
{
	struct pool pool;
	struct pt_alloc a;
	struct pt pt;
	struct model_page *m = calloc(RND_PAGES, sizeof(*m));
	int bad = 0;
	size_t i;

	if (!m) {
		CHECK(0, "calloc model");
		return;
	}
	pool_open(&pool, &a, 64 * MIB);
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "random: init");

	for (int op = 0; op < RND_OPS && !bad; op++) {
		uint64_t kind = rnd_below(100), start, npages, phys;
		uint32_t flags = (uint32_t)rnd_below(4) & (PT_W | PT_X);
		enum ldr_err err;

		/* size classes: small 4 KiB runs, 2 MiB-ish runs, whole GiBs */
		if (kind < 60) {
			start = rnd_below(RND_PAGES);
			npages = 1 + rnd_below(64);
		} else if (kind < 90) {
			start = rnd_below(RND_PAGES / 512) * 512;
			if (rnd() & 1)
				start += rnd_below(512);
			npages = 512 * (1 + rnd_below(6)) + (rnd() & 1 ? rnd_below(512) : 0);
		} else {
			start = rnd_below(RND_WINDOW / GIB) * (GIB / PAGE_SIZE);
			npages = GIB / PAGE_SIZE;
			flags |= PT_ALLOW_1G;
		}
		if (npages > RND_PAGES - start)
			npages = RND_PAGES - start;
		/*
		 * phys: same alignment as virt (large leaves possible) or random.
		 * Whole GiBs always keep the alignment: at random phys each would
		 * take 512 page tables and exhaust the pool.
		 */
		if (kind >= 90 || (rnd() & 1))
			phys = (rnd_below(64) * GIB) + start * PAGE_SIZE;
		else
			phys = rnd_below(1ULL << 28) * PAGE_SIZE;

		if (rnd_below(100) < 20) {
			err = pt_unmap_range(&pt, RND_WINDOW_BASE + start * PAGE_SIZE,
					     npages * PAGE_SIZE);
			for (i = start; i < start + npages; i++)
				m[i].mapped = 0;
		} else {
			err = pt_map_range(&pt, RND_WINDOW_BASE + start * PAGE_SIZE,
					   phys, npages * PAGE_SIZE, flags);
			for (i = start; i < start + npages; i++) {
				m[i].mapped = 1;
				m[i].phys = phys + (i - start) * PAGE_SIZE;
				m[i].flags = (uint8_t)(flags & (PT_W | PT_X));
			}
		}
		if (err != LDR_OK) {
			CHECK(0, "random op %d: err %d", op, err);
			bad = 1;
			break;
		}
		/* spot checks: the edges of this op and some random pages */
		if (start > 0)
			bad |= !model_check_page(&pt, m, start - 1, op);
		bad |= !model_check_page(&pt, m, start, op);
		bad |= !model_check_page(&pt, m, start + npages - 1, op);
		if (start + npages < RND_PAGES)
			bad |= !model_check_page(&pt, m, start + npages, op);
		for (int k = 0; k < 32 && !bad; k++)
			bad |= !model_check_page(&pt, m, rnd_below(RND_PAGES), op);
		/* every page of the window, now and then */
		if ((op + 1) % 250 == 0)
			for (i = 0; i < RND_PAGES && !bad; i++)
				bad |= !model_check_page(&pt, m, i, op);
	}
	CHECK(!bad, "random: %d ops agree with the model (%u table pages)",
	      RND_OPS, pt.pages_used);
	CHECK(rnd_seen[0] && rnd_seen[1] && rnd_seen[2],
	      "random: all leaf sizes exercised (4K %lu, 2M %lu, 1G %lu)",
	      rnd_seen[0], rnd_seen[1], rnd_seen[2]);
	/* nothing outside the window was touched */
	check_unmapped(&pt, "random: below window", RND_WINDOW_BASE - PAGE_SIZE);
	check_unmapped(&pt, "random: above window", RND_WINDOW_BASE + RND_WINDOW);
	CHECK_EQ_U64(dirty_orphans(&pool, &pt), 0, "random: every table no walk reaches is wiped");
	pool_close(&pool);
	free(m);
}

/* a CPU without NX: no entry may carry bit 63, which is reserved there */
TEST(test_no_nx)
{
	struct pool pool;
	struct pt_alloc a;
	struct pt pt;
	uint64_t phys = 0, psize = 0;
	uint32_t flags = 0;

	pool_open(&pool, &a, 1 * MIB);
	CHECK_EQ_U64(pt_init(&pt, &a), LDR_OK, "no-NX: init");
	CHECK(pt.no_nx == 0, "NX used unless the caller says otherwise");
	pt.no_nx = 1;
	CHECK_EQ_U64(pt_map_range(&pt, 0, 0, 64 * MIB, PT_W), LDR_OK, "no-NX: RW data");
	CHECK_EQ_U64(pt_map_range(&pt, 0xffffffff81000000ULL, 16 * MIB, 8 * KIB, 0), LDR_OK,
		     "no-NX: read-only");
	CHECK_EQ_U64(pt_lookup(&pt, 0xffffffff81001000ULL, &phys, &flags, &psize), LDR_OK,
		     "no-NX: lookup");
	CHECK(flags == PT_X && phys == 16 * MIB + 4 * KIB, "read-only, executable for want of NX: %x",
	      flags);
	CHECK_EQ_U64(pt_lookup(&pt, 5 * MIB, &phys, &flags, &psize), LDR_OK, "no-NX: identity");
	CHECK(flags == (PT_W | PT_X), "RW, executable for want of NX: %x", flags);
	pool_close(&pool);
}
