/*
 * test_e820.c - host tests for src/e820.c: EFI type mapping, descriptor
 * size handling, the drop/clip rules at the top of the address space,
 * overlap resolution and merging (against a page-by-page reference model),
 * byte-identical output for any input order, the free list (EFI_MEMORY_SP,
 * mirror rule), capacity errors, and captured maps under test/fixtures/.
 */
#include <stdlib.h>
#include <string.h>

#include "e820.h"
#include "mmap_fixture.h"
#include "test.h"

#define R(a, s, t) { (a), (s), (t), 0 }

/* The mapping the tests expect, written out independently of src/e820.c. */
static const uint32_t want_type[EFI_MT_COUNT] = {
	[EFI_MT_RESERVED] = E820_RESERVED,
	[EFI_MT_LOADER_CODE] = E820_RAM,
	[EFI_MT_LOADER_DATA] = E820_RAM,
	[EFI_MT_BOOT_SERVICES_CODE] = E820_RAM,
	[EFI_MT_BOOT_SERVICES_DATA] = E820_RAM,
	[EFI_MT_RUNTIME_CODE] = E820_RESERVED,
	[EFI_MT_RUNTIME_DATA] = E820_RESERVED,
	[EFI_MT_CONVENTIONAL] = E820_RAM,
	[EFI_MT_UNUSABLE] = E820_UNUSABLE,
	[EFI_MT_ACPI_RECLAIM] = E820_ACPI,
	[EFI_MT_ACPI_NVS] = E820_NVS,
	[EFI_MT_MMIO] = E820_RESERVED,
	[EFI_MT_MMIO_PORT] = E820_RESERVED,
	[EFI_MT_PAL_CODE] = E820_RESERVED,
	[EFI_MT_PERSISTENT] = E820_PMEM,
	[EFI_MT_UNACCEPTED] = 0,
};

static int is_ram_like(uint32_t efi_type)
{
	return efi_type == EFI_MT_LOADER_CODE || efi_type == EFI_MT_LOADER_DATA ||
	       efi_type == EFI_MT_BOOT_SERVICES_CODE || efi_type == EFI_MT_BOOT_SERVICES_DATA ||
	       efi_type == EFI_MT_CONVENTIONAL;
}

/* The documented overlap order, restated for the reference model. */
static int ref_rank(uint32_t t)
{
	static const uint32_t order[] = { E820_RAM, E820_SOFT_RESERVED, E820_ACPI, E820_NVS,
					  E820_PMEM, E820_RESERVED, E820_UNUSABLE };

	for (int i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
		if (order[i] == t)
			return i;
	return -1;
}

static uint32_t ref_type(uint32_t efi_type, uint64_t attr)
{
	if (efi_type >= EFI_MT_COUNT)
		return 0;
	if (is_ram_like(efi_type) && (attr & EFI_MA_SP))
		return E820_SOFT_RESERVED;
	return want_type[efi_type];
}

static enum ldr_err conv(const struct mmap_buf *m, int free_list, struct mem_region *out,
			 size_t cap, size_t *n)
{
	if (free_list)
		return e820_free_from_efi(m->buf, m->size, m->desc_size, out, cap, n);
	return e820_from_efi(m->buf, m->size, m->desc_size, out, cap, n);
}

static int regions_equal(const struct mem_region *a, size_t na, const struct mem_region *b, size_t nb)
{
	return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}

static void dump(const char *what, const struct mem_region *r, size_t n)
{
	printf("     %s (%zu):\n", what, n);
	for (size_t i = 0; i < n; i++)
		printf("       %#llx +%#llx type %#x\n", (unsigned long long)r[i].addr,
		       (unsigned long long)r[i].size, r[i].type);
}

/* Sorted, disjoint, merged, non-empty, below E820_ADDR_END, flags 0. */
static int well_formed(const struct mem_region *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].size == 0 || r[i].flags != 0)
			return 0;
		if (r[i].addr > E820_ADDR_END || E820_ADDR_END - r[i].addr < r[i].size)
			return 0;
		if (i > 0) {
			uint64_t pend = r[i - 1].addr + r[i - 1].size;

			if (r[i].addr < pend)
				return 0;
			if (r[i].addr == pend && r[i].type == r[i - 1].type)
				return 0;
		}
	}
	return 1;
}

/* ---------------------------------------------------------------- mapping */

TEST(test_type_mapping)
{
	static const uint32_t unknown[] = { 16, 17, 0x6fffffff, 0x70000000, 0x7fffffff,
					    0x80000000, 0xffffffff };
	struct mem_region out[4];
	size_t n;

	for (uint32_t t = 0; t < EFI_MT_COUNT; t++) {
		for (int sp = 0; sp < 2; sp++) {
			uint64_t attr = 0xf | (sp ? EFI_MA_SP : 0);
			uint32_t want = ref_type(t, attr);
			struct mmap_buf m;

			CHECK_EQ_U64(e820_type_from_efi(t, attr), want, "efi type %u sp %d", t, sp);
			mmap_init(&m, 48);
			mmap_add(&m, t, attr, 1 * MIB, 16);
			CHECK(conv(&m, 0, out, 4, &n) == LDR_OK, "convert type %u", t);
			CHECK_EQ_U64(n, want ? 1 : 0, "entries for efi type %u sp %d", t, sp);
			if (want && n == 1) {
				CHECK_EQ_U64(out[0].type, want, "e820 type for efi %u sp %d", t, sp);
				CHECK_EQ_U64(out[0].addr, 1 * MIB, "addr for efi %u", t);
				CHECK_EQ_U64(out[0].size, 16 * EFI_MD_PAGE_SIZE, "size for efi %u", t);
			}
			/* free list: conventional without SP only */
			CHECK(conv(&m, 1, out, 4, &n) == LDR_OK, "free type %u", t);
			CHECK_EQ_U64(n, (t == EFI_MT_CONVENTIONAL && !sp) ? 1 : 0,
				     "free entries for efi %u sp %d", t, sp);
			mmap_free_buf(&m);
		}
	}
	/* spot checks against the Linux table, not derived from want_type */
	CHECK_EQ_U64(e820_type_from_efi(EFI_MT_RUNTIME_DATA, 0), E820_RESERVED, "runtime data");
	CHECK_EQ_U64(e820_type_from_efi(EFI_MT_BOOT_SERVICES_DATA, 0), E820_RAM, "bs data");
	CHECK_EQ_U64(e820_type_from_efi(EFI_MT_ACPI_NVS, 0), E820_NVS, "nvs");
	CHECK_EQ_U64(e820_type_from_efi(EFI_MT_PERSISTENT, EFI_MA_SP), E820_PMEM, "pmem ignores SP");
	CHECK_EQ_U64(e820_type_from_efi(EFI_MT_MMIO, EFI_MA_SP), E820_RESERVED, "mmio ignores SP");
	CHECK_EQ_U64(e820_type_from_efi(EFI_MT_CONVENTIONAL, EFI_MA_SP), E820_SOFT_RESERVED, "sp");
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		struct mmap_buf m;

		CHECK_EQ_U64(e820_type_from_efi(unknown[i], 0), 0, "unknown type %#x skipped", unknown[i]);
		mmap_init(&m, 40);
		mmap_add(&m, unknown[i], 0, 0, 1);
		CHECK(conv(&m, 0, out, 4, &n) == LDR_OK && n == 0, "unknown %#x not in table", unknown[i]);
		mmap_free_buf(&m);
	}
	CHECK(strcmp(e820_type_name(E820_RAM), "RAM") == 0, "name RAM");
	CHECK(strcmp(e820_type_name(E820_SOFT_RESERVED), "soft-reserved") == 0, "name SR");
	CHECK(e820_type_name(12345) != NULL, "name unknown");
}

/* ------------------------------------------------------- descriptor sizes */

TEST(test_desc_size)
{
	static const struct {
		uint64_t desc_size;
		int ok;
	} cases[] = {
		{ 0, 0 }, { 8, 0 }, { 32, 0 }, { 39, 0 }, { 40, 1 }, { 41, 0 }, { 44, 0 },
		{ 47, 0 }, { 48, 1 }, { 56, 1 }, { 80, 1 }, { 4096, 1 },
	};
	struct mem_region out[8], ref[8];
	size_t n, nref = 0;
	uint8_t raw[4096 * 3];
	struct mmap_buf m;

	/* reference result with the v1 size */
	mmap_init(&m, 40);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 16 * MIB, 256);
	mmap_add(&m, EFI_MT_ACPI_NVS, 0, 0, 1);
	mmap_add(&m, EFI_MT_LOADER_DATA, 0, 17 * MIB, 256);
	CHECK(conv(&m, 0, ref, 8, &nref) == LDR_OK && nref == 2, "reference map");
	mmap_free_buf(&m);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ds = cases[i].desc_size;
		enum ldr_err err, ferr;

		memset(raw, 0, sizeof(raw));
		if (ds >= 40 && ds * 3 <= sizeof(raw)) {
			m.buf = raw;
			m.size = 0;
			m.cap = sizeof(raw);
			m.desc_size = ds;
			mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 16 * MIB, 256);
			mmap_add(&m, EFI_MT_ACPI_NVS, 0, 0, 1);
			mmap_add(&m, EFI_MT_LOADER_DATA, 0, 17 * MIB, 256);
		}
		n = 77;
		err = e820_from_efi(raw, ds * 3, ds, out, 8, &n);
		ferr = e820_free_from_efi(raw, ds * 3, ds, out, 8, &n);
		if (cases[i].ok) {
			CHECK(err == LDR_OK && ferr == LDR_OK, "desc_size %llu accepted",
			      (unsigned long long)ds);
			err = e820_from_efi(raw, ds * 3, ds, out, 8, &n);
			CHECK(err == LDR_OK && regions_equal(out, n, ref, nref),
			      "desc_size %llu gives the same table", (unsigned long long)ds);
		} else {
			CHECK(err == LDR_E_MMAP_DESC_SIZE && ferr == LDR_E_MMAP_DESC_SIZE,
			      "desc_size %llu rejected (got %d/%d)", (unsigned long long)ds, err, ferr);
			CHECK_EQ_U64(n, 77, "ret_count untouched for desc_size %llu",
				     (unsigned long long)ds);
			CHECK(!e820_efi_has_mirror(raw, ds * 3, ds), "has_mirror on bad map");
		}
	}

	/* map_size that is not a whole number of descriptors */
	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 16 * MIB, 256);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 32 * MIB, 256);
	CHECK(e820_from_efi(m.buf, m.size - 8, 48, out, 8, &n) == LDR_E_MMAP_DESC_SIZE,
	      "map_size - 8");
	CHECK(e820_from_efi(m.buf, m.size + 1, 48, out, 8, &n) == LDR_E_MMAP_DESC_SIZE,
	      "map_size + 1");
	CHECK(e820_from_efi(m.buf, 47, 48, out, 8, &n) == LDR_E_MMAP_DESC_SIZE, "map_size 47");
	CHECK(e820_free_from_efi(m.buf, m.size - 40, 48, out, 8, &n) == LDR_E_MMAP_DESC_SIZE,
	      "free: map_size - 40");
	/* empty map, NULL pointers */
	n = 5;
	CHECK(e820_from_efi(m.buf, 0, 48, out, 8, &n) == LDR_OK && n == 0, "empty map");
	n = 5;
	CHECK(e820_from_efi(NULL, 0, 48, NULL, 0, &n) == LDR_OK && n == 0, "empty map, NULLs");
	CHECK(e820_from_efi(NULL, 96, 48, out, 8, &n) == LDR_E_INVAL, "NULL map");
	CHECK(e820_from_efi(m.buf, m.size, 48, NULL, 8, &n) == LDR_E_INVAL, "NULL out");
	CHECK(e820_from_efi(m.buf, m.size, 48, NULL, 0, &n) == LDR_E_MMAP_TOO_BIG, "no room");
	mmap_free_buf(&m);
}

/* -------------------------------------------------- table-driven overlaps */

struct desc {
	uint32_t type;
	uint64_t attr;
	uint64_t phys;
	uint64_t pages;
};

#define P(x) ((x) / EFI_MD_PAGE_SIZE) /* bytes to pages */

static const struct {
	const char *name;
	struct desc in[8];
	size_t nin;
	struct mem_region want[8];
	size_t nwant;
	struct mem_region want_free[8];
	size_t nwant_free;
} table_cases[] = {
	{ "adjacent RAM kinds merge",
	  { { EFI_MT_LOADER_CODE, 0, 1 * MIB, P(1 * MIB) },
	    { EFI_MT_CONVENTIONAL, 0, 2 * MIB, P(2 * MIB) },
	    { EFI_MT_BOOT_SERVICES_DATA, 0, 4 * MIB, P(4 * MIB) } }, 3,
	  { R(1 * MIB, 7 * MIB, E820_RAM) }, 1,
	  { R(2 * MIB, 2 * MIB, E820_RAM) }, 1 },
	{ "adjacent different types stay apart",
	  { { EFI_MT_CONVENTIONAL, 0, 0, P(1 * MIB) },
	    { EFI_MT_ACPI_RECLAIM, 0, 1 * MIB, P(64 * KIB) },
	    { EFI_MT_CONVENTIONAL, 0, 1 * MIB + 64 * KIB, P(64 * KIB) } }, 3,
	  { R(0, 1 * MIB, E820_RAM), R(1 * MIB, 64 * KIB, E820_ACPI),
	    R(1 * MIB + 64 * KIB, 64 * KIB, E820_RAM) }, 3,
	  { R(0, 1 * MIB, E820_RAM), R(1 * MIB + 64 * KIB, 64 * KIB, E820_RAM) }, 2 },
	{ "hole keeps same types apart",
	  { { EFI_MT_CONVENTIONAL, 0, 0, 1 }, { EFI_MT_CONVENTIONAL, 0, 2 * EFI_MD_PAGE_SIZE, 1 } }, 2,
	  { R(0, 4 * KIB, E820_RAM), R(8 * KIB, 4 * KIB, E820_RAM) }, 2,
	  { R(0, 4 * KIB, E820_RAM), R(8 * KIB, 4 * KIB, E820_RAM) }, 2 },
	{ "zero-length dropped",
	  { { EFI_MT_CONVENTIONAL, 0, 0, 0 }, { EFI_MT_RESERVED, 0, 4 * KIB, 0 },
	    { EFI_MT_CONVENTIONAL, 0, 8 * KIB, 1 } }, 3,
	  { R(8 * KIB, 4 * KIB, E820_RAM) }, 1,
	  { R(8 * KIB, 4 * KIB, E820_RAM) }, 1 },
	{ "the diagram in e820.c",
	  { { EFI_MT_CONVENTIONAL, 0, 0, 100 }, { EFI_MT_RESERVED, 0, 20 * 4096, 20 },
	    { EFI_MT_ACPI_RECLAIM, 0, 30 * 4096, 30 } }, 3,
	  { R(0, 20 * 4096, E820_RAM), R(20 * 4096, 20 * 4096, E820_RESERVED),
	    R(40 * 4096, 20 * 4096, E820_ACPI), R(60 * 4096, 40 * 4096, E820_RAM) }, 4,
	  { R(0, 20 * 4096, E820_RAM), R(60 * 4096, 40 * 4096, E820_RAM) }, 2 },
	{ "same-type overlap is a union",
	  { { EFI_MT_CONVENTIONAL, 0, 0, 10 }, { EFI_MT_BOOT_SERVICES_CODE, 0, 5 * 4096, 10 } }, 2,
	  { R(0, 15 * 4096, E820_RAM) }, 1,
	  { R(0, 5 * 4096, E820_RAM) }, 1 },
	{ "RAM inside reserved vanishes",
	  { { EFI_MT_MMIO, 0, 0, 10 }, { EFI_MT_CONVENTIONAL, 0, 2 * 4096, 3 } }, 2,
	  { R(0, 10 * 4096, E820_RESERVED) }, 1,
	  { R(0, 0, 0) }, 0 },
	{ "equal ranges: unusable beats reserved beats NVS beats ACPI",
	  { { EFI_MT_ACPI_RECLAIM, 0, 0, 4 }, { EFI_MT_ACPI_NVS, 0, 4096, 4 },
	    { EFI_MT_RESERVED, 0, 2 * 4096, 4 }, { EFI_MT_UNUSABLE, 0, 3 * 4096, 4 } }, 4,
	  { R(0, 4096, E820_ACPI), R(4096, 4096, E820_NVS), R(2 * 4096, 4096, E820_RESERVED),
	    R(3 * 4096, 4 * 4096, E820_UNUSABLE) }, 4,
	  { R(0, 0, 0) }, 0 },
	{ "PMEM beats NVS, soft-reserved beats RAM",
	  { { EFI_MT_ACPI_NVS, 0, 0, 4 }, { EFI_MT_PERSISTENT, 0, 2 * 4096, 4 },
	    { EFI_MT_CONVENTIONAL, 0, 6 * 4096, 4 }, { EFI_MT_CONVENTIONAL, EFI_MA_SP, 8 * 4096, 1 } }, 4,
	  { R(0, 2 * 4096, E820_NVS), R(2 * 4096, 4 * 4096, E820_PMEM), R(6 * 4096, 2 * 4096, E820_RAM),
	    R(8 * 4096, 4096, E820_SOFT_RESERVED), R(9 * 4096, 4096, E820_RAM) }, 5,
	  { R(6 * 4096, 2 * 4096, E820_RAM), R(9 * 4096, 4096, E820_RAM) }, 2 },
	{ "many islands in one RAM range",
	  { { EFI_MT_CONVENTIONAL, 0, 0, 64 }, { EFI_MT_RESERVED, 0, 4096, 1 },
	    { EFI_MT_ACPI_NVS, 0, 10 * 4096, 2 }, { EFI_MT_RESERVED, 0, 20 * 4096, 1 },
	    { EFI_MT_RESERVED, 0, 21 * 4096, 1 }, { EFI_MT_UNUSABLE, 0, 63 * 4096, 5 } }, 6,
	  { R(0, 4096, E820_RAM), R(4096, 4096, E820_RESERVED), R(2 * 4096, 8 * 4096, E820_RAM),
	    R(10 * 4096, 2 * 4096, E820_NVS), R(12 * 4096, 8 * 4096, E820_RAM),
	    R(20 * 4096, 2 * 4096, E820_RESERVED), R(22 * 4096, 41 * 4096, E820_RAM),
	    R(63 * 4096, 5 * 4096, E820_UNUSABLE) }, 8,
	  { R(0, 4096, E820_RAM), R(2 * 4096, 8 * 4096, E820_RAM), R(12 * 4096, 8 * 4096, E820_RAM),
	    R(22 * 4096, 41 * 4096, E820_RAM) }, 4 },
	{ "nested three deep",
	  { { EFI_MT_CONVENTIONAL, 0, 0, 10 }, { EFI_MT_ACPI_RECLAIM, 0, 4096, 8 },
	    { EFI_MT_RESERVED, 0, 2 * 4096, 6 }, { EFI_MT_UNUSABLE, 0, 3 * 4096, 4 } }, 4,
	  { R(0, 4096, E820_RAM), R(4096, 4096, E820_ACPI), R(2 * 4096, 4096, E820_RESERVED),
	    R(3 * 4096, 4 * 4096, E820_UNUSABLE), R(7 * 4096, 4096, E820_RESERVED),
	    R(8 * 4096, 4096, E820_ACPI), R(9 * 4096, 4096, E820_RAM) }, 7,
	  { R(0, 4096, E820_RAM), R(9 * 4096, 4096, E820_RAM) }, 2 },
	{ "unknown and unaccepted are busy for the free list",
	  { { EFI_MT_CONVENTIONAL, 0, 0, 10 }, { 0x80000001u, 0, 2 * 4096, 1 },
	    { EFI_MT_UNACCEPTED, 0, 5 * 4096, 1 } }, 3,
	  { R(0, 10 * 4096, E820_RAM) }, 1,
	  { R(0, 2 * 4096, E820_RAM), R(3 * 4096, 2 * 4096, E820_RAM),
	    R(6 * 4096, 4 * 4096, E820_RAM) }, 3 },
	{ "top of the address space",
	  { { EFI_MT_CONVENTIONAL, 0, 0ULL - 4 * 4096, 4 },     /* ends at 2^64: top page clipped */
	    { EFI_MT_RESERVED, 0, 0ULL - 8 * 4096, 9 },         /* wraps: dropped */
	    { EFI_MT_RESERVED, 0, 0ULL - 4096, 1 },             /* only the top page: dropped */
	    { EFI_MT_CONVENTIONAL, 0, 0, 1ULL << 52 },          /* size overflows: dropped */
	    { EFI_MT_CONVENTIONAL, 0, 4096, (1ULL << 52) - 1 }, /* [4K, 2^64): clipped */
	    { EFI_MT_RESERVED, 0, 1ULL << 40, (1ULL << 52) - 1 } }, /* wraps: dropped */ 6,
	  { R(4096, E820_ADDR_END - 4096, E820_RAM) }, 1,
	  { R(4096, E820_ADDR_END - 4096, E820_RAM) }, 1 },
	{ "exactly below the top page",
	  { { EFI_MT_ACPI_NVS, 0, 0ULL - 3 * 4096, 2 } }, 1,
	  { R(0ULL - 3 * 4096, 2 * 4096, E820_NVS) }, 1,
	  { R(0, 0, 0) }, 0 },
};

TEST(test_table_cases)
{
	for (size_t c = 0; c < sizeof(table_cases) / sizeof(table_cases[0]); c++) {
		struct mem_region out[32], first[32];
		size_t n = 0, nfirst = 0, nfree = 0;
		struct mmap_buf m;
		uint64_t seed = 0x1234567 + c;
		int ok;

		mmap_init(&m, 48);
		for (size_t i = 0; i < table_cases[c].nin; i++)
			mmap_add(&m, table_cases[c].in[i].type, table_cases[c].in[i].attr,
				 table_cases[c].in[i].phys, table_cases[c].in[i].pages);

		ok = conv(&m, 0, out, 32, &n) == LDR_OK &&
		     regions_equal(out, n, table_cases[c].want, table_cases[c].nwant);
		CHECK(ok, "table: %s", table_cases[c].name);
		if (!ok) {
			dump("got", out, n);
			dump("want", table_cases[c].want, table_cases[c].nwant);
		}
		CHECK(well_formed(out, n), "well formed: %s", table_cases[c].name);
		ok = conv(&m, 1, out, 32, &nfree) == LDR_OK &&
		     regions_equal(out, nfree, table_cases[c].want_free, table_cases[c].nwant_free);
		CHECK(ok, "free: %s", table_cases[c].name);
		if (!ok) {
			dump("got", out, nfree);
			dump("want", table_cases[c].want_free, table_cases[c].nwant_free);
		}
		/* any order gives the same bytes */
		conv(&m, 0, first, 32, &nfirst);
		for (int s = 0; s < 20; s++) {
			mmap_shuffle(&m, &seed);
			CHECK(conv(&m, 0, out, 32, &n) == LDR_OK && regions_equal(out, n, first, nfirst),
			      "shuffle %d: %s", s, table_cases[c].name);
		}
		mmap_free_buf(&m);
	}
}

/* ------------------------------------------------- SP and the mirror rule */

TEST(test_sp_and_mirror)
{
	struct mem_region out[16];
	struct mmap_buf m;
	size_t n;

	/* SP: soft-reserved in the table, absent from the free list */
	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf, 0, P(16 * MIB));
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf | EFI_MA_SP, 16 * MIB, P(16 * MIB));
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf, 32 * MIB, P(16 * MIB));
	CHECK(conv(&m, 0, out, 16, &n) == LDR_OK && n == 3 && out[1].type == E820_SOFT_RESERVED &&
	      out[0].type == E820_RAM && out[2].type == E820_RAM, "SP -> soft reserved");
	CHECK(conv(&m, 1, out, 16, &n) == LDR_OK && n == 2 && out[0].size == 16 * MIB &&
	      out[1].addr == 32 * MIB, "SP excluded from free");
	CHECK(!e820_efi_has_mirror(m.buf, m.size, m.desc_size), "no mirror");
	mmap_free_buf(&m);

	/* mirror: only mirrored conventional memory is free */
	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf, 0, P(16 * MIB));
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf | EFI_MA_MORE_RELIABLE, 16 * MIB, P(16 * MIB));
	mmap_add(&m, EFI_MT_BOOT_SERVICES_DATA, 0xf | EFI_MA_MORE_RELIABLE, 32 * MIB, P(1 * MIB));
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf | EFI_MA_MORE_RELIABLE, 33 * MIB, P(1 * MIB));
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf | EFI_MA_MORE_RELIABLE | EFI_MA_SP, 34 * MIB, P(1 * MIB));
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0xf, 64 * MIB, P(64 * MIB));
	CHECK(e820_efi_has_mirror(m.buf, m.size, m.desc_size), "mirror found");
	CHECK(conv(&m, 1, out, 16, &n) == LDR_OK && n == 2 &&
	      out[0].addr == 16 * MIB && out[0].size == 16 * MIB &&
	      out[1].addr == 33 * MIB && out[1].size == 1 * MIB, "mirror: only mirrored free");
	/* the e820 table itself ignores mirroring */
	CHECK(conv(&m, 0, out, 16, &n) == LDR_OK && n == 3 && out[0].size == 34 * MIB &&
	      out[1].type == E820_SOFT_RESERVED && out[2].addr == 64 * MIB, "mirror: table");
	mmap_free_buf(&m);

	/* mirror bit only on a non-conventional descriptor: still mirror mode */
	mmap_init(&m, 40);
	mmap_add(&m, EFI_MT_RUNTIME_CODE, EFI_MA_MORE_RELIABLE, 0, 1);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 16 * MIB, P(64 * MIB));
	CHECK(e820_efi_has_mirror(m.buf, m.size, m.desc_size), "mirror on runtime code");
	CHECK(conv(&m, 1, out, 16, &n) == LDR_OK && n == 0, "mirror rule: nothing mirrored free");
	mmap_free_buf(&m);
}

/* ------------------------------------------------------ capacity and size */

TEST(test_capacity)
{
	struct mem_region out[16];
	struct mmap_buf m;
	size_t n = 99;

	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 0, 100);
	mmap_add(&m, EFI_MT_RESERVED, 0, 10 * 4096, 1);
	mmap_add(&m, EFI_MT_RESERVED, 0, 20 * 4096, 1);
	/* 3 descriptors, 5 output entries: needs room for the splits */
	CHECK(conv(&m, 0, out, 3, &n) == LDR_E_MMAP_TOO_BIG && n == 99, "splits need room");
	CHECK(conv(&m, 0, out, 2, &n) == LDR_E_MMAP_TOO_BIG && n == 99, "cap below count");
	CHECK(conv(&m, 0, out, E820_CAP_FOR(3), &n) == LDR_OK && n == 5, "cap for 3");
	mmap_free_buf(&m);

	/* no overlaps: one entry per descriptor is enough, even if merging shrinks it */
	mmap_init(&m, 48);
	for (int i = 0; i < 16; i++)
		mmap_add(&m, EFI_MT_CONVENTIONAL, 0, (uint64_t)i * 4096, 1);
	CHECK(conv(&m, 0, out, 16, &n) == LDR_OK && n == 1 && out[0].size == 16 * 4096,
	      "16 pieces merge");
	CHECK(conv(&m, 0, out, 15, &n) == LDR_E_MMAP_TOO_BIG, "cap 15 < 16 descriptors");
	mmap_free_buf(&m);

	/* space freed by merging is reused for split tails: 11 descriptors, cap 11 */
	mmap_init(&m, 48);
	for (int i = 0; i < 10; i++)
		mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 0, 100);
	mmap_add(&m, EFI_MT_RESERVED, 0, 50 * 4096, 1);
	CHECK(conv(&m, 0, out, 11, &n) == LDR_OK && n == 3 && out[1].type == E820_RESERVED &&
	      out[2].addr == 51 * 4096, "merged duplicates leave room for the split");
	mmap_free_buf(&m);
}

/* Hundreds of entries: a realistic fragmented map, shuffled. */
TEST(test_many)
{
	static struct mem_region out[E820_CAP_FOR(600)], first[E820_CAP_FOR(600)];
	static const uint32_t kinds[] = { EFI_MT_CONVENTIONAL, EFI_MT_BOOT_SERVICES_DATA,
					  EFI_MT_RUNTIME_DATA, EFI_MT_ACPI_RECLAIM,
					  EFI_MT_LOADER_DATA, EFI_MT_MMIO };
	uint64_t seed = 0xfeedface12345ULL, addr = 0;
	size_t n, nfirst, nfree;
	struct mmap_buf m;
	uint64_t ram = 0;

	mmap_init(&m, 48);
	for (int i = 0; i < 500; i++) {
		uint32_t t = kinds[mmap_rand(&seed) % 6];
		uint64_t pages = 1 + mmap_rand(&seed) % 300;

		if (mmap_rand(&seed) % 7 == 0)
			addr += 4096 * (1 + mmap_rand(&seed) % 5); /* a hole */
		mmap_add(&m, t, 0xf, addr, pages);
		if (want_type[t] == E820_RAM)
			ram += pages * 4096;
		addr += pages * 4096;
	}
	CHECK(conv(&m, 0, first, E820_CAP_FOR(500), &nfirst) == LDR_OK, "500 entries");
	CHECK(well_formed(first, nfirst), "500 entries well formed");
	{
		uint64_t sum = 0;

		for (size_t i = 0; i < nfirst; i++)
			if (first[i].type == E820_RAM)
				sum += first[i].size;
		CHECK_EQ_U64(sum, ram, "RAM bytes preserved");
	}
	CHECK(conv(&m, 0, out, 500, &n) == LDR_OK, "no overlaps: cap = descriptors is enough");
	for (int s = 0; s < 10; s++) {
		mmap_shuffle(&m, &seed);
		CHECK(conv(&m, 0, out, E820_CAP_FOR(500), &n) == LDR_OK &&
		      regions_equal(out, n, first, nfirst), "500 shuffled #%d byte-identical", s);
		CHECK(conv(&m, 1, out, E820_CAP_FOR(500), &nfree) == LDR_OK && well_formed(out, nfree),
		      "500 free list #%d", s);
	}
	mmap_free_buf(&m);

	/* 500 mutually overlapping entries: worst case for the splitter */
	mmap_init(&m, 56);
	for (int i = 0; i < 500; i++) {
		uint32_t t = (uint32_t)(mmap_rand(&seed) % 16);

		mmap_add(&m, t, (mmap_rand(&seed) % 5 == 0) ? EFI_MA_SP : 0,
			 (mmap_rand(&seed) % 2000) * 4096, 1 + mmap_rand(&seed) % 1000);
	}
	CHECK(conv(&m, 0, first, E820_CAP_FOR(500), &nfirst) == LDR_OK && well_formed(first, nfirst),
	      "500 overlapping");
	for (int s = 0; s < 5; s++) {
		mmap_shuffle(&m, &seed);
		CHECK(conv(&m, 0, out, E820_CAP_FOR(500), &n) == LDR_OK &&
		      regions_equal(out, n, first, nfirst), "500 overlapping shuffled #%d", s);
	}
	mmap_free_buf(&m);
}

/* ---------------------------------------------- random vs reference model */

#define REF_PAGES 48                /* descriptors start in the first 48 pages */
#define REF_SPAN (2 * REF_PAGES)    /* and end within 96 */
#define REF_BASE (1ULL << 32)       /* away from 0 so addresses are not small */

/* Page-by-page truth: the winning type (0 = none) of each page, as runs. */
static size_t ref_build(const struct desc *d, size_t nd, int free_list, struct mem_region *out)
{
	uint32_t page[REF_SPAN];
	int mirror = 0;
	size_t n = 0;

	for (size_t i = 0; i < nd; i++)
		if (d[i].attr & EFI_MA_MORE_RELIABLE)
			mirror = 1;
	memset(page, 0, sizeof(page));
	for (size_t i = 0; i < nd; i++) {
		uint64_t first = (d[i].phys - REF_BASE) / 4096;
		uint32_t t;

		if (free_list) {
			int ok = d[i].type == EFI_MT_CONVENTIONAL && !(d[i].attr & EFI_MA_SP) &&
				 (!mirror || (d[i].attr & EFI_MA_MORE_RELIABLE));

			t = ok ? E820_RAM : 0xffffffffu;
		} else {
			t = ref_type(d[i].type, d[i].attr);
		}
		if (!t)
			continue;
		for (uint64_t p = first; p < first + d[i].pages; p++) {
			if (free_list) {
				if (page[p] != 0xffffffffu)
					page[p] = t;
			} else if (!page[p] || ref_rank(t) > ref_rank(page[p])) {
				page[p] = t;
			}
		}
	}
	for (size_t p = 0; p < REF_SPAN; p++) {
		uint32_t t = page[p];

		if (!t || t == 0xffffffffu)
			continue;
		if (n && out[n - 1].type == t && out[n - 1].addr + out[n - 1].size == REF_BASE + p * 4096)
			out[n - 1].size += 4096;
		else
			out[n++] = (struct mem_region)R(REF_BASE + p * 4096, 4096, t);
	}
	return n;
}

TEST(test_random_reference)
{
	static const uint32_t types[] = { 0, 1, 3, 4, 5, 7, 7, 7, 8, 9, 10, 11, 14, 15, 99 };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int bad = 0, badfree = 0, toobig = 0;

	for (int iter = 0; iter < 20000; iter++) {
		struct desc d[12];
		struct mem_region want[REF_SPAN], got[E820_CAP_FOR(12)];
		size_t nd = 1 + mmap_rand(&seed) % 12, nwant, ngot = 0;
		struct mmap_buf m;
		enum ldr_err err;

		mmap_init(&m, (mmap_rand(&seed) & 1) ? 40 : 48);
		for (size_t i = 0; i < nd; i++) {
			uint64_t r = mmap_rand(&seed);

			d[i].type = types[r % (sizeof(types) / sizeof(types[0]))];
			d[i].attr = 0;
			if ((r >> 8) % 8 == 0)
				d[i].attr |= EFI_MA_SP;
			if ((r >> 12) % 16 == 0)
				d[i].attr |= EFI_MA_MORE_RELIABLE;
			d[i].phys = REF_BASE + ((r >> 20) % REF_PAGES) * 4096;
			d[i].pages = (r >> 32) % (REF_PAGES / 2);
			mmap_add(&m, d[i].type, d[i].attr, d[i].phys, d[i].pages);
		}
		for (int fl = 0; fl < 2; fl++) {
			nwant = ref_build(d, nd, fl, want);
			err = conv(&m, fl, got, E820_CAP_FOR(nd), &ngot);
			if (err == LDR_E_MMAP_TOO_BIG)
				toobig++;
			if (err != LDR_OK || !regions_equal(got, ngot, want, nwant)) {
				if (fl ? badfree++ : bad++)
					continue;
				printf("     random case %d (%s):\n", iter, fl ? "free" : "table");
				for (size_t i = 0; i < nd; i++)
					printf("       desc type %u attr %#llx page %llu +%llu\n", d[i].type,
					       (unsigned long long)d[i].attr,
					       (unsigned long long)((d[i].phys - REF_BASE) / 4096),
					       (unsigned long long)d[i].pages);
				dump("got", got, ngot);
				dump("want", want, nwant);
			}
		}
		mmap_free_buf(&m);
	}
	CHECK(bad == 0, "random maps match the page model (%d bad)", bad);
	CHECK(badfree == 0, "random free lists match the page model (%d bad)", badfree);
	CHECK(toobig == 0, "E820_CAP_FOR always enough (%d too big)", toobig);
}

/* ------------------------------------------------------------- fixtures */

TEST(test_fixtures)
{
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
			size_t cap = E820_CAP_FOR(nd), n, nfirst, nfree;
			struct mem_region *out = calloc(cap, sizeof(*out));
			struct mem_region *first = calloc(cap, sizeof(*first));
			struct mem_region *fr = calloc(cap, sizeof(*fr));
			uint64_t seed = 42;

			CHECK(conv(&m, 0, first, cap, &nfirst) == LDR_OK && well_formed(first, nfirst),
			      "fixture %s: table", names[f]);
			CHECK(conv(&m, 1, fr, cap, &nfree) == LDR_OK && well_formed(fr, nfree) && nfree > 0,
			      "fixture %s: free list", names[f]);
			/* every free range lies inside one RAM entry of the table */
			for (size_t i = 0; i < nfree; i++) {
				int inside = 0;

				for (size_t j = 0; j < nfirst; j++)
					if (first[j].type == E820_RAM && fr[i].addr >= first[j].addr &&
					    fr[i].addr + fr[i].size <= first[j].addr + first[j].size)
						inside = 1;
				CHECK(inside, "fixture %s: free %#llx inside RAM", names[f],
				      (unsigned long long)fr[i].addr);
			}
			for (int s = 0; s < 5; s++) {
				mmap_shuffle(&m, &seed);
				CHECK(conv(&m, 0, out, cap, &n) == LDR_OK && regions_equal(out, n, first, nfirst),
				      "fixture %s: shuffle %d byte-identical", names[f], s);
			}
			free(out);
			free(first);
			free(fr);
		}
		mmap_free_buf(&m);
		free(names[f]);
	}
}

/*
 * The boot protocol's table: the loader's OS-loader types and LoaderCode
 * stay apart as KERNEL / LOADER_RECLAIMABLE, while the Linux-compatible
 * table calls them RAM; neither is ever free.
 */
TEST(test_protocol_types)
{
	struct mmap_buf m;
	struct mem_region out[16];
	size_t n = 0;

	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 0x100000, 0x100);      /* 1 MiB..2 MiB */
	mmap_add(&m, EFI_MT_OSLOADER_KERNEL, 0, 0x200000, 0x200);   /* 2..4 MiB */
	mmap_add(&m, EFI_MT_OSLOADER_RECLAIM, 0, 0x400000, 0x10);   /* 4 MiB + 64 KiB */
	mmap_add(&m, EFI_MT_LOADER_CODE, 0, 0x410000, 0x10);
	mmap_add(&m, EFI_MT_BOOT_SERVICES_DATA, 0, 0x420000, 0x10);

	CHECK(e820_protocol_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK,
	      "protocol table");
	CHECK_EQ_U64(n, 4, "protocol: RAM, KERNEL, RECLAIMABLE (merged), RAM");
	CHECK(out[0].type == E820_RAM && out[0].size == 0x100000, "protocol: conventional is RAM");
	CHECK(out[1].type == E820_KERNEL && out[1].addr == 0x200000 && out[1].size == 0x200000,
	      "protocol: kernel pages");
	CHECK(out[2].type == E820_LOADER_RECLAIMABLE && out[2].addr == 0x400000 &&
	      out[2].size == 0x20000, "protocol: reclaimable + LoaderCode merged");
	CHECK(out[3].type == E820_RAM && out[3].addr == 0x420000, "protocol: boot services RAM");

	CHECK(e820_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK, "linux table");
	CHECK_EQ_U64(n, 1, "linux table: all of it RAM, merged");
	CHECK(out[0].type == E820_RAM && out[0].addr == 0x100000 && out[0].size == 0x330000,
	      "linux table: one RAM range");

	CHECK(e820_free_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK, "free");
	CHECK(n == 1 && out[0].addr == 0x100000 && out[0].size == 0x100000,
	      "free: only conventional memory");
	mmap_free_buf(&m);
}

/*
 * Free once boot services exit: conventional memory and boot services'
 * code and data (merged when adjacent), never the loader's own, runtime,
 * ACPI or specific-purpose memory; the mirror rule as for the free list.
 */
TEST(test_exit_free)
{
	struct mmap_buf m;
	struct mem_region out[16];
	size_t n = 0;

	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_BOOT_SERVICES_DATA, 0, 0x900000, 0xc00);    /* 9..21 MiB */
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 0x1500000, 0x1000);        /* 21..37 MiB */
	mmap_add(&m, EFI_MT_LOADER_DATA, 0, 0x2500000, 0x100);
	mmap_add(&m, EFI_MT_BOOT_SERVICES_CODE, 0, 0x2600000, 0x100);
	mmap_add(&m, EFI_MT_RUNTIME_DATA, 0, 0x2700000, 0x10);
	mmap_add(&m, EFI_MT_OSLOADER_RECLAIM, 0, 0x2710000, 0x10);
	mmap_add(&m, EFI_MT_BOOT_SERVICES_DATA, EFI_MA_SP, 0x2720000, 0x10);
	mmap_add(&m, EFI_MT_ACPI_RECLAIM, 0, 0x2730000, 0x10);
	CHECK(e820_exit_free_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK,
	      "exit-free list");
	CHECK(n == 2 && out[0].addr == 0x900000 && out[0].size == 0x1c00000 &&
	      out[1].addr == 0x2600000 && out[1].size == 0x100000 && out[0].type == E820_RAM,
	      "boot services memory and conventional, merged; nothing else");
	CHECK(e820_free_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK && n == 1 &&
	      out[0].addr == 0x1500000, "free now: the conventional range only");
	/* mirrored memory present: only mirrored boot services memory counts */
	mmap_add(&m, EFI_MT_CONVENTIONAL, EFI_MA_MORE_RELIABLE, 0x10000000, 0x100);
	CHECK(e820_exit_free_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK &&
	      n == 1 && out[0].addr == 0x10000000, "with a mirror: only mirrored memory");
	CHECK(e820_exit_free_from_efi(m.buf, m.size - 8, m.desc_size, out, 16, &n) ==
	      LDR_E_MMAP_DESC_SIZE, "a cut map refused");
	mmap_free_buf(&m);
}

/* Modules: their own type in the protocol's table, RAM to Linux, never free. */
TEST(test_protocol_module_type)
{
	struct mmap_buf m;
	struct mem_region out[16];
	size_t n = 0;

	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 0x100000, 0x100);
	mmap_add(&m, EFI_MT_OSLOADER_MODULE, 0, 0x200000, 0x3);
	mmap_add(&m, EFI_MT_OSLOADER_KERNEL, 0, 0x203000, 0x1fd);
	CHECK(e820_protocol_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK,
	      "module: protocol table");
	CHECK(n == 3 && out[1].type == E820_MODULE && out[1].addr == 0x200000 &&
	      out[1].size == 0x3000 && out[2].type == E820_KERNEL, "module: its own entry");
	CHECK(strcmp(e820_type_name(E820_MODULE), "module") == 0, "module: its name");
	CHECK(e820_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK && n == 1 &&
	      out[0].type == E820_RAM, "module: RAM in the Linux table");
	CHECK(e820_free_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK && n == 1 &&
	      out[0].size == 0x100000, "module: not free");
	mmap_free_buf(&m);
}

/*
 * The protocol's table is whole pages even when firmware's descriptors are
 * not: RAM shrinks to its whole pages, anything else grows to them (and
 * takes the bytes from RAM it now overlaps); the Linux table is as given.
 */
TEST(test_protocol_whole_pages)
{
	struct mmap_buf m;
	struct mem_region out[16];
	size_t n = 0;

	mmap_init(&m, 48);
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 0x1800, 4);            /* [0x1800, 0x5800) */
	mmap_add(&m, EFI_MT_RESERVED, 0, 0x10800, 1);               /* [0x10800, 0x11800) */
	mmap_add(&m, EFI_MT_BOOT_SERVICES_DATA, 0, 0x11800, 8);     /* [0x11800, 0x19800) */
	mmap_add(&m, EFI_MT_CONVENTIONAL, 0, 0x100010, 1);          /* no whole page */
	mmap_add(&m, EFI_MT_OSLOADER_RECLAIM, 0, 0x200000, 2);
	CHECK(e820_protocol_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK,
	      "pages: protocol table");
	CHECK_EQ_U64(n, 4, "pages: RAM, reserved, RAM, reclaimable");
	for (size_t i = 0; i < n; i++)
		CHECK(out[i].addr % 4096 == 0 && out[i].size % 4096 == 0,
		      "pages: entry %zu [0x%llx +0x%llx) whole pages", i,
		      (unsigned long long)out[i].addr, (unsigned long long)out[i].size);
	CHECK(out[0].type == E820_RAM && out[0].addr == 0x2000 && out[0].size == 0x3000,
	      "pages: RAM shrinks to [0x2000, 0x5000)");
	CHECK(out[1].type == E820_RESERVED && out[1].addr == 0x10000 && out[1].size == 0x2000,
	      "pages: reserved grows to [0x10000, 0x12000)");
	CHECK(out[2].type == E820_RAM && out[2].addr == 0x12000 && out[2].size == 0x7000,
	      "pages: boot-services RAM keeps [0x12000, 0x19000)");
	CHECK(out[3].type == E820_LOADER_RECLAIMABLE && out[3].addr == 0x200000,
	      "pages: the page-sized RAM fragment is gone");
	CHECK(e820_from_efi(m.buf, m.size, m.desc_size, out, 16, &n) == LDR_OK && n == 5 &&
	      out[0].addr == 0x1800 && out[3].addr == 0x100010,
	      "pages: the Linux table is as given");
	mmap_free_buf(&m);
}
