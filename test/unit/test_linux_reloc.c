/*
 * test_linux_reloc.c - host tests for src/linux_reloc.c: finding the table
 * Linux appends to vmlinux.bin (with and without padding), applying its
 * 64-bit, inverse-32 and 32-bit lists to a Linux-like image laid out by
 * physical address (including a field in the vaddr-0 per-cpu segment), and
 * the exact error for malformed tables and bad targets.
 */
#include <stdio.h>
#include <string.h>

#include "elf_load.h"
#include "linux_reloc.h"
#include "reloc.h"
#include "elf_build.h"
#include "test.h"

static struct eb e;
static uint8_t dest[0x8000];

#define A(x) ((uint32_t)(EB_V + (x)))

static uint64_t rd64(uint64_t off)
{
	uint64_t v;

	memcpy(&v, dest + off, 8);
	return v;
}

static uint32_t rd32(uint64_t off)
{
	uint32_t v;

	memcpy(&v, dest + off, 4);
	return v;
}

/* Linux-like image with two fields of each kind (one in per-cpu/init). */
static void linux_full(void)
{
	static const uint32_t r64[] = { A(0x1100), A(0x2010) };
	static const uint32_t rinv[] = { A(0x1300) };
	static const uint32_t r32[] = { A(0x1200), A(0x3100) };

	eb_linux(&e);
	eb_linux_table(&e, r64, 2, rinv, 1, r32, 2);
	eb_put64(&e, 0x2100, EB_V + 0x40);
	eb_put32(&e, 0x2200, A(0x80));
	eb_put32(&e, 0x2300, 0x1000);
	eb_put64(&e, 0x3010, EB_V + 0x123);
	eb_put32(&e, 0x4100, A(0x200));
}

/* Serialise, parse, load by paddr and relocate to new_vbase. */
static enum ldr_err run(uint64_t new_vbase, struct reloc_report *rep,
			struct elf_image *ret_img)
{
	struct elf_image img;
	enum ldr_err err;

	eb_write(&e);
	err = elf_parse(e.buf, e.size, NULL, &img);
	if (err != LDR_OK)
		return err;
	memset(dest, 0xee, sizeof(dest));
	if (elf_load(&img, dest, sizeof(dest)) != LDR_OK)
		return LDR_E_INVAL;
	if (ret_img)
		*ret_img = img;
	return reloc_apply(&img, dest, sizeof(dest), new_vbase, rep);
}

TEST(test_apply_bases)
{
	static const uint64_t bases[] = { EB_V, EB_V + 0x200000, EB_V + 0x3e000000,
					  EB_V - 0x1000000 };

	for (unsigned i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		uint64_t b = bases[i], d = b - EB_V;
		struct reloc_report rep;
		struct elf_image img;

		linux_full();
		CHECK(run(b, &rep, &img) == LDR_OK, "Linux at 0x%llx", (unsigned long long)b);
		CHECK_EQ_U64(rep.source, ELF_RELOC_LINUX, "source");
		CHECK_EQ_U64(rep.count, 5, "fields adjusted");
		CHECK_EQ_U64(rd64(0x1100), EB_V + 0x40 + d, "64-bit field in data");
		CHECK_EQ_U64(rd64(0x2010), EB_V + 0x123 + d, "64-bit field in per-cpu");
		CHECK_EQ_U64(rd32(0x1200), (uint32_t)(A(0x80) + d), "32-bit field");
		CHECK_EQ_U64(rd32(0x3100), (uint32_t)(A(0x200) + d), "32-bit field in init");
		CHECK_EQ_U64(rd32(0x1300), (uint32_t)(0x1000 - d), "inverse 32-bit field");
		CHECK_EQ_U64(rd64(0x1108), 0, "neighbour untouched");
	}
}

TEST(test_find)
{
	struct elf_linux_relocs lr;
	struct elf_image img;

	linux_full();
	eb_write(&e);
	CHECK(linux_relocs_find(e.buf, e.size, 0x5000, &lr) == LDR_OK, "find");
	CHECK_EQ_U64(lr.off, 0x5000, "table offset");
	CHECK_EQ_U64(lr.len, 4 * 8, "table length");
	CHECK_EQ_U64(lr.n64, 2, "64-bit entries");
	CHECK_EQ_U64(lr.ninv32, 1, "inverse entries");
	CHECK_EQ_U64(lr.n32, 2, "32-bit entries");
	CHECK(linux_relocs_find(e.buf, e.size, e.size + 1, &lr) == LDR_E_INVAL, "elf_end > size");
	CHECK(linux_relocs_find(e.buf, e.size, e.size - 8, &lr) == LDR_E_LINUX_RELOCS,
	      "tail of two words");

	/* Zero padding between the ELF image and the table is accepted. */
	for (unsigned pad = 1; pad <= 8; pad++) {
		linux_full();
		eb_write(&e);
		memmove(e.buf + 0x5000 + pad, e.buf + 0x5000, e.size - 0x5000);
		memset(e.buf + 0x5000, 0, pad);
		e.size += pad;
		CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_OK, "padding %u parses", pad);
		CHECK_EQ_U64(img.linux_relocs.off, 0x5000 + pad, "table after %u bytes of padding", pad);
		CHECK_EQ_U64(img.linux_relocs.n64, 2, "padding %u: 64-bit entries", pad);
	}

	/* Empty lists: three zero words have the table's format ... */
	eb_linux(&e);
	eb_linux_table(&e, NULL, 0, NULL, 0, NULL, 0);
	eb_write(&e);
	CHECK(linux_relocs_find(e.buf, e.size, 0x5000, &lr) == LDR_OK, "empty table: format");
	CHECK_EQ_U64(lr.len, 12, "empty table length");
	CHECK_EQ_U64(lr.n64 + lr.ninv32 + lr.n32, 0, "empty table: no entries");
	/* ... but zeros are padding, not a table: no Linux, no W+X */
	CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_E_WX_SEGMENT,
	      "empty table: not Linux, W+X init refused");
	e.ph[3].p_flags &= ~(uint32_t)PF_X;
	e.ph[2].p_vaddr = EB_V + 0x2000;
	e.eh.e_entry = EB_V;
	e.size = 0x5000;
	eb_write(&e);
	CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_OK, "empty table, no W+X: parses");
	CHECK_EQ_U64(img.reloc_kind, ELF_RELOC_NONE, "empty table: no relocations");
}

struct lr_case {
	const char *name;
	uint32_t r64, rinv, r32;   /* one entry per list; 0: list empty */
	uint32_t field32;          /* value stored in the 32-bit / inverse field */
	uint64_t new_vbase;
	enum ldr_err want;
};

static const struct lr_case lr_cases[] = {
	{ "64-bit target past the image", A(0x10000), 0, 0, 0, EB_V, LDR_E_RELOC_TARGET },
	{ "64-bit target across the end", A(0x4ffc), 0, 0, 0, EB_V, LDR_E_RELOC_TARGET },
	{ "64-bit target below the image", 0x7fff0000, 0, 0, 0, EB_V, LDR_E_RELOC_TARGET },
	{ "32-bit target past the image", 0, 0, A(0x5000), 0, EB_V, LDR_E_RELOC_TARGET },
	{ "32-bit target in the last word", 0, 0, A(0x4ffc), 0, EB_V + 0x200000, LDR_OK },
	{ "inverse target below the image", 0, 0x00100000, 0, 0, EB_V, LDR_E_RELOC_TARGET },
	{ "inverse target across the end", 0, A(0x4ffe), 0, 0, EB_V, LDR_E_RELOC_TARGET },
	{ "32-bit field out of range", 0, 0, A(0x1200), 0x100, EB_V - 0x100000000ULL, LDR_E_RELOC_RANGE },
	{ "32-bit delta over 2^33", 0, 0, A(0x1200), 0x81000080, 0x100000000000ULL, LDR_E_RELOC_RANGE },
	{ "32-bit field, zero-extended fit", 0, 0, A(0x1200), 0x7fffff00, EB_V + 0x200000, LDR_OK },
	{ "inverse field out of range", 0, A(0x1300), 0, 0x7ffff000, EB_V - 0x200000, LDR_E_RELOC_RANGE },
	{ "inverse field in range", 0, A(0x1300), 0, 0x7ffff000, EB_V + 0x200000, LDR_OK },
};

TEST(test_cases)
{
	size_t n = sizeof(lr_cases) / sizeof(lr_cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct lr_case *c = &lr_cases[i];
		struct reloc_report rep;
		enum ldr_err err;

		eb_linux(&e);
		eb_linux_table(&e, &c->r64, c->r64 != 0, &c->rinv, c->rinv != 0,
			       &c->r32, c->r32 != 0);
		eb_put32(&e, 0x2200, c->field32);
		eb_put32(&e, 0x2300, c->field32);
		err = run(c->new_vbase, &rep, NULL);
		CHECK(err == c->want, "%s: got %s, want %s", c->name, ldr_strerror(err),
		      ldr_strerror(c->want));
	}
	printf("test_linux_reloc: %zu table cases\n", n);
}

/* linux_relocs_apply on raw tables: separators and length. */
TEST(test_apply_direct)
{
	static const uint32_t good[] = { 0, A(0x100), 0, 0, A(0x200) };
	static const uint32_t extra[] = { A(0x300), 0, A(0x100), 0, 0, A(0x200) };
	static const uint32_t two_seps[] = { A(0x100), 0, 0, A(0x200) };
	uint8_t buf[64];
	uint64_t count = 99;

	memset(dest, 0, sizeof(dest));
	CHECK(linux_relocs_apply((const uint8_t *)good, sizeof(good), dest, 0x1000,
				 EB_V, 0x200000, &count) == LDR_OK, "direct apply");
	CHECK_EQ_U64(count, 2, "direct count");
	CHECK_EQ_U64(rd64(0x100), 0x200000, "direct 64-bit");
	CHECK_EQ_U64(rd32(0x200), 0x200000, "direct 32-bit");
	count = 99;
	CHECK(linux_relocs_apply((const uint8_t *)extra, sizeof(extra), dest, 0x1000,
				 EB_V, 0x200000, &count) == LDR_E_LINUX_RELOCS, "words before the table");
	CHECK(linux_relocs_apply((const uint8_t *)two_seps, sizeof(two_seps), dest, 0x1000,
				 EB_V, 0x200000, &count) == LDR_E_LINUX_RELOCS, "separator missing");
	memcpy(buf, good, sizeof(good));
	CHECK(linux_relocs_apply(buf, sizeof(good) - 1, dest, 0x1000, EB_V, 0, &count) ==
	      LDR_E_LINUX_RELOCS, "length not a multiple of 4");
	CHECK(linux_relocs_apply(NULL, 0, dest, 0x1000, EB_V, 0, &count) == LDR_E_INVAL, "NULL table");
	CHECK_EQ_U64(count, 99, "count untouched on error");
}
