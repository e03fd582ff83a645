/*
 * test_desc.c - host tests for src/desc.c: decode every GDT entry field by
 * field (base, limit, type, S, DPL, P, L, D/B, G), decode IDT gates written
 * for several vectors and handlers (incl. higher-half ones) byte by byte,
 * check that nothing outside the gate is touched, and that bad input is
 * refused.
 */
#include <string.h>

#include "desc.h"
#include "test.h"

struct seg_fields {
	uint32_t base, limit;
	unsigned type, s, dpl, p, avl, l, db, g;
};

static struct seg_fields seg_decode(uint64_t d)
{
	struct seg_fields f;

	f.limit = (uint32_t)(d & 0xffff) | (uint32_t)((d >> 48) & 0xf) << 16;
	f.base = (uint32_t)((d >> 16) & 0xffffff) | (uint32_t)(d >> 56) << 24;
	f.type = (d >> 40) & 0xf;
	f.s = (d >> 44) & 1;
	f.dpl = (d >> 45) & 3;
	f.p = (d >> 47) & 1;
	f.avl = (d >> 52) & 1;
	f.l = (d >> 53) & 1;
	f.db = (d >> 54) & 1;
	f.g = (d >> 55) & 1;
	return f;
}

TEST(test_gdt)
{
	static const struct {
		unsigned sel;
		const char *name;
		int null;
		unsigned type, l, db;
	} want[] = {
		{ 0x00, "null", 1, 0, 0, 0 },
		{ 0x08, "unused", 1, 0, 0, 0 },
		/* type 0xB: code, execute/read, accessed */
		{ DESC_KERNEL_CS, "kernel code", 0, 0xb, 1, 0 },
		/* type 0x3: data, read/write, accessed */
		{ DESC_KERNEL_DS, "kernel data", 0, 0x3, 0, 1 },
	};
	uint64_t gdt[DESC_GDT_ENTRIES];

	CHECK_EQ_U64(DESC_KERNEL_CS, 0x10, "Linux boot protocol __BOOT_CS");
	CHECK_EQ_U64(DESC_KERNEL_DS, 0x18, "Linux boot protocol __BOOT_DS");
	memset(gdt, 0xee, sizeof(gdt));
	desc_gdt_build(gdt, 0x123456789abcd000ULL);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t d = gdt[want[i].sel / 8];
		struct seg_fields f = seg_decode(d);

		if (want[i].null) {
			CHECK_EQ_U64(d, 0, "%s descriptor is zero", want[i].name);
			continue;
		}
		CHECK_EQ_U64(f.base, 0, "%s base", want[i].name);
		CHECK_EQ_U64(f.limit, 0xfffff, "%s limit", want[i].name);
		CHECK_EQ_U64(f.type, want[i].type, "%s type", want[i].name);
		CHECK_EQ_U64(f.type & 1, 1, "%s accessed bit pre-set", want[i].name);
		CHECK_EQ_U64(f.s, 1, "%s S (code/data)", want[i].name);
		CHECK_EQ_U64(f.dpl, 0, "%s DPL", want[i].name);
		CHECK_EQ_U64(f.p, 1, "%s present", want[i].name);
		CHECK_EQ_U64(f.avl, 0, "%s AVL", want[i].name);
		CHECK_EQ_U64(f.l, want[i].l, "%s L", want[i].name);
		CHECK_EQ_U64(f.db, want[i].db, "%s D/B", want[i].name);
		CHECK_EQ_U64(f.g, 1, "%s G", want[i].name);
	}
	/* the well-known encodings of these two descriptors */
	CHECK_EQ_U64(gdt[2], 0x00af9b000000ffffULL, "64-bit code raw");
	CHECK_EQ_U64(gdt[3], 0x00cf93000000ffffULL, "data raw");
	CHECK_EQ_U64(gdt[2], DESC_GDT_CODE64, "DESC_GDT_CODE64 matches");
	CHECK_EQ_U64(gdt[3], DESC_GDT_DATA, "DESC_GDT_DATA matches");
}

static uint64_t get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* the TSS descriptor (two slots) and the TSS itself, field by field */
TEST(test_tss)
{
	const uint64_t base = 0x0000123480ab1f00ULL;
	uint64_t gdt[DESC_GDT_ENTRIES];
	uint64_t ist[DESC_IST_MAX] = { 0x1000, 0x2000, 0, 0xffff800000004000ULL, 0, 0, 0x7000 };
	uint8_t tss[DESC_TSS_SIZE + 8];
	struct seg_fields f;

	CHECK_EQ_U64(DESC_TSS_SEL, 0x20, "TSS selector after the data segment");
	CHECK_EQ_U64(DESC_TSS_SEL / 8 + 2, DESC_GDT_ENTRIES, "TSS takes the last two slots");
	desc_gdt_build(gdt, base);
	f = seg_decode(gdt[DESC_TSS_SEL / 8]);
	CHECK_EQ_U64(f.base, base & 0xffffffff, "TSS base 31..0");
	CHECK_EQ_U64(gdt[DESC_TSS_SEL / 8 + 1], base >> 32, "TSS base 63..32, rest zero");
	CHECK_EQ_U64(f.limit, DESC_TSS_SIZE - 1, "TSS limit");
	CHECK_EQ_U64(f.type, 9, "available 64-bit TSS");
	CHECK(f.s == 0 && f.dpl == 0 && f.p == 1 && f.g == 0 && f.l == 0 && f.db == 0,
	      "system descriptor, present, byte granular");

	memset(tss, 0xee, sizeof(tss));
	desc_tss_build(tss, ist);
	for (unsigned i = 0; i < DESC_IST_MAX; i++)
		CHECK_EQ_U64(get_le(tss + 0x24 + 8 * i, 8), ist[i], "IST%u", i + 1);
	CHECK_EQ_U64(get_le(tss + 0x66, 2), DESC_TSS_SIZE, "no I/O bitmap");
	CHECK_EQ_U64(get_le(tss + 4, 8), 0, "RSP0 unused");
	CHECK_EQ_U64(get_le(tss, 4), 0, "reserved");
	CHECK_EQ_U64(tss[DESC_TSS_SIZE], 0xee, "nothing written past the TSS");
}

TEST(test_idt)
{
	static const struct {
		unsigned vector;
		uint64_t handler;
		uint16_t cs;
		unsigned ist;
	} cases[] = {
		{ 0, 0x0000000000101000ULL, DESC_KERNEL_CS, 0 },
		{ 6, 0x00000000deadbeefULL, DESC_KERNEL_CS, 0 },
		{ 8, 0x00000001a2b3c4d0ULL, DESC_KERNEL_CS, 1 },
		{ 14, 0xffffffff80201234ULL, DESC_KERNEL_CS, 0 },
		{ 18, 0xffff800012345678ULL, 0x08, 7 },
		{ 32, 0x00007fffffffffffULL, DESC_KERNEL_CS, 3 },
		{ 255, 0xfedcba9876543210ULL, 0xfff8, 2 },
	};
	static uint8_t idt[DESC_IDT_SIZE + 1];
	static uint8_t before[DESC_IDT_SIZE + 1];

	memset(idt, 0xcc, sizeof(idt));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* idt + 1: gates need no alignment */
		uint8_t *base = idt + 1;
		uint8_t *g = base + cases[i].vector * DESC_IDT_GATE_SIZE;
		uint64_t off;

		memcpy(before, idt, sizeof(idt));
		CHECK_EQ_U64(desc_idt_set_gate(base, cases[i].vector, cases[i].handler,
					       cases[i].cs, cases[i].ist),
			     LDR_OK, "vector %u", cases[i].vector);
		off = get_le(g + 0, 2) | get_le(g + 6, 2) << 16 | get_le(g + 8, 4) << 32;
		CHECK_EQ_U64(off, cases[i].handler, "vector %u offset", cases[i].vector);
		CHECK_EQ_U64(get_le(g + 0, 2), cases[i].handler & 0xffff,
			     "vector %u offset 15..0", cases[i].vector);
		CHECK_EQ_U64(get_le(g + 6, 2), (cases[i].handler >> 16) & 0xffff,
			     "vector %u offset 31..16", cases[i].vector);
		CHECK_EQ_U64(get_le(g + 8, 4), cases[i].handler >> 32,
			     "vector %u offset 63..32", cases[i].vector);
		CHECK_EQ_U64(get_le(g + 2, 2), cases[i].cs, "vector %u selector",
			     cases[i].vector);
		CHECK_EQ_U64(g[4] & 7, cases[i].ist, "vector %u IST", cases[i].vector);
		CHECK_EQ_U64(g[4] >> 3, 0, "vector %u byte 4 high bits", cases[i].vector);
		CHECK_EQ_U64(g[5] & 0xf, 0xe, "vector %u type interrupt gate",
			     cases[i].vector);
		CHECK_EQ_U64((g[5] >> 4) & 1, 0, "vector %u S=0", cases[i].vector);
		CHECK_EQ_U64((g[5] >> 5) & 3, 0, "vector %u DPL0", cases[i].vector);
		CHECK_EQ_U64(g[5] >> 7, 1, "vector %u present", cases[i].vector);
		CHECK_EQ_U64(get_le(g + 12, 4), 0, "vector %u reserved", cases[i].vector);
		CHECK(memcmp(idt, before, (size_t)(g - idt)) == 0 &&
		      memcmp(g + 16, before + (g - idt) + 16,
			     sizeof(idt) - (size_t)(g - idt) - 16) == 0,
		      "vector %u: only its 16 bytes written", cases[i].vector);
	}

	memcpy(before, idt, sizeof(idt));
	CHECK_EQ_U64(desc_idt_set_gate(idt, 256, 0x1000, DESC_KERNEL_CS, 0),
		     LDR_E_INVAL, "vector 256 refused");
	CHECK_EQ_U64(desc_idt_set_gate(idt, 1, 0x1000, DESC_KERNEL_CS, 8),
		     LDR_E_INVAL, "IST 8 refused");
	CHECK(memcmp(idt, before, sizeof(idt)) == 0, "refused calls write nothing");
}

TEST(test_ptr)
{
	uint8_t p[DESC_PTR_SIZE + 1];

	memset(p, 0x77, sizeof(p));
	desc_make_ptr(p, 0xffffff8000123000ULL, DESC_IDT_SIZE - 1);
	CHECK_EQ_U64(get_le(p, 2), 0xfff, "pseudo-descriptor limit");
	CHECK_EQ_U64(get_le(p + 2, 8), 0xffffff8000123000ULL, "pseudo-descriptor base");
	CHECK_EQ_U64(p[DESC_PTR_SIZE], 0x77, "pseudo-descriptor is 10 bytes");
	desc_make_ptr(p, 0x1000, DESC_GDT_ENTRIES * 8 - 1);
	CHECK_EQ_U64(get_le(p, 2), 47, "GDT limit: six slots");
}
