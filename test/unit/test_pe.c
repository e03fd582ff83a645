/*
 * test_pe.c - host tests for src/pe.c on a hand-built PE32+ image: the
 * named section is found in both views (file offsets, RVAs), and every
 * header that points outside the bytes, or a wrong magic, is refused.
 */
#include <stdint.h>
#include <string.h>

#include "pe.h"
#include "test.h"

#define IMG_LEN 0x3000
#define LFANEW  0x80
#define OPTSZ   0xf0
#define SECT    (LFANEW + 24 + OPTSZ)

static uint8_t img[IMG_LEN];

static void put16(unsigned off, uint16_t v)
{
	img[off] = (uint8_t)v;
	img[off + 1] = (uint8_t)(v >> 8);
}

static void put32(unsigned off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		img[off + i] = (uint8_t)(v >> (8 * i));
}

/* two sections: .text (file 0x400, rva 0x1000) and .kpolicy (file 0x1400, rva 0x2000) */
static void mk_pe(void)
{
	memset(img, 0, sizeof(img));
	img[0] = 'M';
	img[1] = 'Z';
	put32(0x3c, LFANEW);
	memcpy(img + LFANEW, "PE\0\0", 4);
	put16(LFANEW + 4, 0x8664);
	put16(LFANEW + 6, 2);
	put16(LFANEW + 20, OPTSZ);
	put16(LFANEW + 24, 0x20b);
	memcpy(img + SECT, ".text", 5);
	put32(SECT + 8, 0x800);
	put32(SECT + 12, 0x1000);
	put32(SECT + 16, 0x1000);
	put32(SECT + 20, 0x400);
	memcpy(img + SECT + 40, ".kpolicy", 8);
	put32(SECT + 48, 0x1000);
	put32(SECT + 52, 0x2000);
	put32(SECT + 56, 0x1000);
	put32(SECT + 60, 0x1400);
}

TEST(find_both_views)
{
	struct pe_section s = { 0, 0 };

	mk_pe();
	CHECK(pe_find_section(img, IMG_LEN, PE_VIEW_FILE, ".kpolicy", &s) == LDR_OK &&
	      s.off == 0x1400 && s.size == 0x1000, "file view off 0x%llx", (unsigned long long)s.off);
	CHECK(pe_find_section(img, IMG_LEN, PE_VIEW_MEMORY, ".kpolicy", &s) == LDR_OK &&
	      s.off == 0x2000 && s.size == 0x1000, "memory view");
	/* size: the smaller of VirtualSize and SizeOfRawData */
	CHECK(pe_find_section(img, IMG_LEN, PE_VIEW_FILE, ".text", &s) == LDR_OK &&
	      s.size == 0x800, "text size");
	CHECK(pe_find_section(img, IMG_LEN, PE_VIEW_FILE, ".data", &s) == LDR_E_PE_NO_SECTION,
	      "absent section");
	CHECK(pe_find_section(img, IMG_LEN, PE_VIEW_FILE, ".kpolicyx", &s) == LDR_E_INVAL,
	      "name too long");
	/* a prefix of a name is not the name */
	CHECK(pe_find_section(img, IMG_LEN, PE_VIEW_FILE, ".kpol", &s) == LDR_E_PE_NO_SECTION,
	      "prefix");
}

TEST(refused)
{
	struct pe_section s;
	struct {
		const char *name;
		unsigned off;
		uint32_t val;
		int wide;
	} cases[] = {
		{ "MZ", 0, 'X', 0 },
		{ "e_lfanew past the end", 0x3c, IMG_LEN - 4, 1 },
		{ "e_lfanew huge", 0x3c, 0xfffffff0u, 1 },
		{ "PE signature", LFANEW + 1, 'X', 0 },
		{ "optional header magic", LFANEW + 24, 0x10b, 0 },
		{ "optional header past the end", LFANEW + 20, 0xffff, 0 },
		{ "too many sections", LFANEW + 6, 0xffff, 0 },
		{ "section raw data past the end", SECT + 60, IMG_LEN - 0x800, 1 },
		{ "section raw offset wraps", SECT + 60, 0xfffff000u, 1 },
		{ "section size past the end", SECT + 56, 0xf0000000u, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mk_pe();
		if (cases[i].wide)
			put32(cases[i].off, cases[i].val);
		else
			put16(cases[i].off, (uint16_t)cases[i].val);
		if (cases[i].off == SECT + 56)
			put32(SECT + 48, 0xf0000000u); /* VirtualSize too, so the min is huge */
		CHECK(pe_find_section(img, IMG_LEN, PE_VIEW_FILE, ".kpolicy", &s) == LDR_E_PE_FORMAT,
		      "%s", cases[i].name);
	}
	mk_pe();
	for (uint64_t l = 0; l < SECT + 80; l++)
		CHECK(pe_find_section(img, l, PE_VIEW_FILE, ".kpolicy", &s) == LDR_E_PE_FORMAT,
		      "truncated to %llu", (unsigned long long)l);
}
