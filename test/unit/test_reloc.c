/*
 * test_reloc.c - host tests for src/reloc.c: a PIE with RELATIVE, 64,
 * GLOB_DAT, JUMP_SLOT and RELR relocations and an ET_EXEC with
 * --emit-relocs sections, relocated to several bases and checked word by
 * word; then a table of bad relocations and the exact error (and reported
 * type / symbol) each must give.
 */
#include <stdio.h>
#include <string.h>

#include "elf_load.h"
#include "reloc.h"
#include "elf_build.h"
#include "test.h"

static struct eb e;
static uint8_t dest[0x8000];
static int run_pad;     /* run(): zero-pad the file to a 4 KiB multiple */

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

/* Serialise e, parse, load and relocate to new_vbase. */
static enum ldr_err run(uint64_t new_vbase, struct reloc_report *rep)
{
	struct elf_image img;
	enum ldr_err err;

	eb_write(&e);
	if (run_pad)
		e.size = ldr_align_up(e.size, PAGE_SIZE);
	err = elf_parse(e.buf, e.size, NULL, &img);
	if (err != LDR_OK) {
		printf("  (parse failed: %s)\n", ldr_strerror(err));
		return err;
	}
	memset(dest, 0xee, sizeof(dest));
	if (elf_load(&img, dest, sizeof(dest)) != LDR_OK)
		return LDR_E_INVAL;
	return reloc_apply(&img, dest, sizeof(dest), new_vbase, rep);
}

/* ------------------------------------------------------------------ PIE */

static void pie_full(void)
{
	eb_pie(&e);
	eb_rela(&e, 0, 0, R_X86_64_NONE, 0, 0);
	eb_rela(&e, 0, 0x2800, R_X86_64_RELATIVE, 0, 0x100);
	eb_rela(&e, 0, 0x2808, R_X86_64_64, EB_SYM_DATA, 8);
	eb_rela(&e, 0, 0x2810, R_X86_64_64, EB_SYM_ABS, 1);
	eb_rela(&e, 0, 0x2818, R_X86_64_GLOB_DAT, EB_SYM_TEXT, 0);
	eb_rela(&e, 0, 0x2828, R_X86_64_GLOB_DAT, EB_SYM_WEAK, 0);
	eb_rela(&e, 1, 0x2820, R_X86_64_JUMP_SLOT, EB_SYM_TEXT, 0);
	eb_relr(&e, 0x2830);
	eb_relr(&e, (1u << 1) | (1u << 3) | 1);    /* 0x2838, 0x2848 */
	eb_relr(&e, (1u << 1) | 1);                /* next run: 0x2a30 */
	eb_put64(&e, eb_pie_off(0x2830), 0x40);
	eb_put64(&e, eb_pie_off(0x2838), 0x50);
	eb_put64(&e, eb_pie_off(0x2840), 0x99);
	eb_put64(&e, eb_pie_off(0x2848), 0x60);
	eb_put64(&e, eb_pie_off(0x2a30), 0x70);
	eb_put64(&e, eb_pie_off(0x2a38), 0x77);
}

TEST(test_pie_bases)
{
	static const uint64_t bases[] = { 0, 0x200000, 0x40000000, 0x123456789000ULL,
					  0xffffffff80000000ULL };

	for (unsigned i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		uint64_t b = bases[i];
		struct reloc_report rep;

		pie_full();
		CHECK(run(b, &rep) == LDR_OK, "PIE at 0x%llx", (unsigned long long)b);
		CHECK_EQ_U64(rep.count, 10, "PIE relocation count");
		CHECK_EQ_U64(rep.source, ELF_RELOC_DYNAMIC, "PIE source");
		CHECK_EQ_U64(rd64(0x2800), b + 0x100, "RELATIVE");
		CHECK_EQ_U64(rd64(0x2808), b + 0x2808, "64 against a defined symbol");
		CHECK_EQ_U64(rd64(0x2810), 0x5001, "64 against SHN_ABS");
		CHECK_EQ_U64(rd64(0x2818), b + 0x100, "GLOB_DAT");
		CHECK_EQ_U64(rd64(0x2820), b + 0x100, "JUMP_SLOT");
		CHECK_EQ_U64(rd64(0x2828), 0, "GLOB_DAT against undefined weak");
		CHECK_EQ_U64(rd64(0x2830), b + 0x40, "RELR address");
		CHECK_EQ_U64(rd64(0x2838), b + 0x50, "RELR bitmap bit 1");
		CHECK_EQ_U64(rd64(0x2840), 0x99, "RELR bitmap bit 2 clear");
		CHECK_EQ_U64(rd64(0x2848), b + 0x60, "RELR bitmap bit 3");
		CHECK_EQ_U64(rd64(0x2a30), b + 0x70, "RELR second bitmap");
		CHECK_EQ_U64(rd64(0x2a38), 0x77, "RELR second bitmap bit 2 clear");
	}
}

/* ------------------------------------------------------------- ET_EXEC */

#define X_ABS (EB_V - 0x100000)

static void exec_full(void)
{
	eb_exec(&e);
	eb_sym(&e, EB_SYMTAB_OFF, EB_SYM_ABS, EB_N_ABS, STB_GLOBAL, STT_NOTYPE, SHN_ABS, X_ABS);
	eb_srela(&e, 0, EB_V + 0x1100, R_X86_64_64, EB_SYM_DATA, 8);
	eb_srela(&e, 0, EB_V + 0x1108, R_X86_64_64, EB_SYM_ABS, 0);
	eb_srela(&e, 0, EB_V + 0x1110, R_X86_64_64, 0, 0x1234);
	eb_srela(&e, 0, EB_V + 0x1118, R_X86_64_32S, EB_SYM_TEXT, 0);
	eb_srela(&e, 0, EB_V + 0x1120, R_X86_64_64, EB_SYM_WEAK, 0);
	eb_srela(&e, 0, EB_V + 0x1128, R_X86_64_PC64, EB_SYM_ABS, 0);
	eb_srela(&e, 0, EB_V + 0x1130, R_X86_64_64, EB_SYM_DEBUG, 0);
	eb_srela(&e, 0, EB_V + 0x1138, R_X86_64_NONE, 0, 0);
	eb_srela(&e, 1, EB_V + 0x20, R_X86_64_PC32, EB_SYM_DATA, -4);
	eb_srela(&e, 1, EB_V + 0x24, R_X86_64_PLT32, EB_SYM_TEXT, -4);
	eb_srela(&e, 1, EB_V + 0x28, R_X86_64_PC32, EB_SYM_ABS, -4);
	eb_srela(&e, 2, 0x10, 0xff, 1, 0);    /* debug info: never looked at */
	eb_put64(&e, eb_exec_off(EB_V + 0x1100), EB_V + 0x1008);
	eb_put64(&e, eb_exec_off(EB_V + 0x1108), X_ABS);
	eb_put64(&e, eb_exec_off(EB_V + 0x1110), 0x1234);
	eb_put32(&e, eb_exec_off(EB_V + 0x1118), (uint32_t)(EB_V + 0x10));
	eb_put64(&e, eb_exec_off(EB_V + 0x1120), 0);
	eb_put64(&e, eb_exec_off(EB_V + 0x1128), X_ABS - (EB_V + 0x1128));
	eb_put64(&e, eb_exec_off(EB_V + 0x1130), 0x42);
	eb_put32(&e, eb_exec_off(EB_V + 0x20), 0xdeadbeef);
	eb_put32(&e, eb_exec_off(EB_V + 0x24), 0xcafebabe);
	eb_put32(&e, eb_exec_off(EB_V + 0x28), (uint32_t)(X_ABS - (EB_V + 0x28) - 4));
}

TEST(test_exec_bases)
{
	static const uint64_t bases[] = { EB_V, EB_V + 0x200000, EB_V + 0x3e000000,
					  EB_V - 0x1000000, 0xffffffffff000000ULL };

	for (unsigned i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		uint64_t b = bases[i], d = b - EB_V;
		struct reloc_report rep;

		exec_full();
		CHECK(run(b, &rep) == LDR_OK, "ET_EXEC at 0x%llx", (unsigned long long)b);
		CHECK_EQ_U64(rep.source, ELF_RELOC_SECTIONS, "ET_EXEC source");
		CHECK_EQ_U64(rep.count, 4, "ET_EXEC relocation count");
		CHECK_EQ_U64(rd64(0x1100), EB_V + 0x1008 + d, "64 moves with its symbol");
		CHECK_EQ_U64(rd64(0x1108), X_ABS, "64 against SHN_ABS stays");
		CHECK_EQ_U64(rd64(0x1110), 0x1234, "64 against symbol 0 stays");
		CHECK_EQ_U64(rd32(0x1118), (uint32_t)(EB_V + 0x10 + d), "32S moves");
		CHECK_EQ_U64(rd64(0x1120), 0, "64 against undefined weak stays");
		CHECK_EQ_U64(rd64(0x1128), X_ABS - (EB_V + 0x1128) - d, "PC64 to SHN_ABS");
		CHECK_EQ_U64(rd64(0x1130), 0x42, "64 against a non-alloc section stays");
		CHECK_EQ_U64(rd32(0x20), 0xdeadbeef, "PC32 within the image stays");
		CHECK_EQ_U64(rd32(0x24), 0xcafebabe, "PLT32 within the image stays");
		CHECK_EQ_U64(rd32(0x28), (uint32_t)(X_ABS - (b + 0x28) - 4), "PC32 to SHN_ABS");
	}
}

/* Zero padding after the file (e.g. to a sector multiple) is not a Linux
 * table: the --emit-relocs sections still move the kernel. */
TEST(test_exec_zero_padded)
{
	struct reloc_report rep;
	uint64_t d = 0x200000;

	exec_full();
	run_pad = 1;
	CHECK(run(EB_V + d, &rep) == LDR_OK, "zero-padded ET_EXEC relocates");
	run_pad = 0;
	CHECK(e.size % PAGE_SIZE == 0 && e.size > EB_SHDR_OFF + EB_S_COUNT * sizeof(Elf64_Shdr),
	      "the file was padded");
	CHECK_EQ_U64(rep.source, ELF_RELOC_SECTIONS, "zero-padded ET_EXEC: source");
	CHECK_EQ_U64(rep.count, 4, "zero-padded ET_EXEC: relocation count");
	CHECK_EQ_U64(rd64(0x1100), EB_V + 0x1008 + d, "zero-padded ET_EXEC: 64 moved");
	CHECK_EQ_U64(rd32(0x1118), (uint32_t)(EB_V + 0x10 + d), "zero-padded ET_EXEC: 32S moved");
}

TEST(test_exec_r32)
{
	struct reloc_report rep;

	eb_exec(&e);
	eb_srela(&e, 0, EB_V + 0x1140, R_X86_64_32, EB_SYM_DATA, 0);
	eb_put32(&e, eb_exec_off(EB_V + 0x1140), 0x1000);
	CHECK(run(EB_V + 0x200000, &rep) == LDR_OK, "R_X86_64_32 in range");
	CHECK_EQ_U64(rd32(0x1140), 0x201000, "R_X86_64_32 value");
	CHECK(run(EB_V - 0x2000, &rep) == LDR_E_RELOC_RANGE, "R_X86_64_32 below 0");

	/* No relocation source: only the link address is acceptable. */
	eb_exec(&e);
	e.eh.e_shnum = 0;
	e.eh.e_shoff = 0;
	e.size = 0x3000;
	CHECK(run(EB_V, &rep) == LDR_OK, "ET_EXEC without relocs at its link address");
	CHECK(run(EB_V + 0x200000, &rep) == LDR_E_NOT_RELOCATABLE, "ET_EXEC without relocs moved");
}

/* ------------------------------------------------------ bad relocations */

struct bad_case {
	const char *name;
	int exec;                 /* 0: PIE base, 1: ET_EXEC base */
	void (*add)(void);
	uint64_t new_vbase;
	enum ldr_err want;
	uint32_t want_type;       /* checked when want == LDR_E_RELOC_TYPE */
	const char *want_sym;     /* checked when want == LDR_E_UNDEF_SYMBOL */
};

static void b_irelative(void) { eb_rela(&e, 0, 0x2800, R_X86_64_IRELATIVE, 0, 0x100); }
static void b_copy(void) { eb_rela(&e, 0, 0x2800, R_X86_64_COPY, EB_SYM_DATA, 0); }
static void b_tpoff_plt(void) { eb_rela(&e, 1, 0x2800, R_X86_64_TPOFF64, EB_SYM_DATA, 0); }
static void b_pc32_dyn(void) { eb_rela(&e, 0, 0x2800, R_X86_64_PC32, EB_SYM_DATA, 0); }
static void b_target_end(void) { eb_rela(&e, 0, 0x3ffc, R_X86_64_RELATIVE, 0, 0); }
static void b_target_far(void) { eb_rela(&e, 0, 0x100000, R_X86_64_RELATIVE, 0, 0); }
static void b_target_wrap(void) { eb_rela(&e, 0, UINT64_MAX - 3, R_X86_64_64, EB_SYM_DATA, 0); }
static void b_glob_target(void) { eb_rela(&e, 1, 0x4000, R_X86_64_JUMP_SLOT, EB_SYM_TEXT, 0); }
static void b_sym_range(void) { eb_rela(&e, 0, 0x2800, R_X86_64_64, 1000000, 0); }
static void b_sym_range_glob(void) { eb_rela(&e, 0, 0x2800, R_X86_64_GLOB_DAT, 0xffffff, 0); }
static void b_undef(void) { eb_rela(&e, 0, 0x2800, R_X86_64_GLOB_DAT, EB_SYM_UNDEF, 0); }
static void b_undef_badname(void)
{
	eb_sym(&e, EB_DYNSYM, EB_SYM_UNDEF, 0xffff, STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0);
	eb_rela(&e, 1, 0x2800, R_X86_64_JUMP_SLOT, EB_SYM_UNDEF, 0);
}
static void b_ifunc(void)
{
	eb_sym(&e, EB_DYNSYM, EB_SYM_TEXT, EB_N_TEXT, STB_GLOBAL, STT_GNU_IFUNC, 1, 0x100);
	eb_rela(&e, 0, 0x2800, R_X86_64_GLOB_DAT, EB_SYM_TEXT, 0);
}
static void b_no_symtab(void)
{
	eb_del_dyn(&e, DT_SYMTAB);
	eb_rela(&e, 0, 0x2800, R_X86_64_64, EB_SYM_DATA, 0);
}
static void b_relr_bitmap_first(void) { eb_relr(&e, 0x3); }
static void b_relr_addr_out(void) { eb_relr(&e, 0x5000); }
static void b_relr_bit_out(void) { eb_relr(&e, 0x3ff0); eb_relr(&e, (1u << 2) | 1); }
static void b_relr_run_wrap(void)
{
	eb_relr(&e, 0x2800);
	for (unsigned i = 0; i < 12; i++)   /* 12 runs of 63 words: 0x2808 -> 0x3fa8 */
		eb_relr(&e, 1);
	eb_relr(&e, (1ull << 63) | 1);
}

static void x_gotpcrelx(void) { eb_srela(&e, 1, EB_V + 0x30, R_X86_64_REX_GOTPCRELX, EB_SYM_DATA, -4); }
static void x_r8(void) { eb_srela(&e, 0, EB_V + 0x1100, R_X86_64_8, EB_SYM_DATA, 0); }
static void x_dtpmod(void) { eb_srela(&e, 0, EB_V + 0x1100, R_X86_64_DTPMOD64, EB_SYM_DATA, 0); }
static void x_target_end(void) { eb_srela(&e, 0, EB_V + 0x2ffc, R_X86_64_64, EB_SYM_DATA, 0); }
static void x_target_low(void) { eb_srela(&e, 0, 0x1000, R_X86_64_64, EB_SYM_DATA, 0); }
static void x_target_pc32_end(void) { eb_srela(&e, 1, EB_V + 0x2ffe, R_X86_64_PC32, EB_SYM_ABS, 0); }
static void x_sym_range(void) { eb_srela(&e, 0, EB_V + 0x1100, R_X86_64_64, 99, 0); }
static void x_sym_shndx(void)
{
	eb_sym(&e, EB_SYMTAB_OFF, EB_SYM_DATA, EB_N_DATA, STB_GLOBAL, STT_OBJECT, 200, EB_V);
	eb_srela(&e, 0, EB_V + 0x1100, R_X86_64_64, EB_SYM_DATA, 0);
}
static void x_sym_common(void)
{
	eb_sym(&e, EB_SYMTAB_OFF, EB_SYM_DATA, EB_N_DATA, STB_GLOBAL, STT_OBJECT, SHN_COMMON, 8);
	eb_srela(&e, 0, EB_V + 0x1100, R_X86_64_64, EB_SYM_DATA, 0);
}
static void x_undef(void) { eb_srela(&e, 1, EB_V + 0x30, R_X86_64_PLT32, EB_SYM_UNDEF, -4); }
static void x_32s_range(void)
{
	eb_srela(&e, 0, EB_V + 0x1118, R_X86_64_32S, EB_SYM_TEXT, 0);
	eb_put32(&e, eb_exec_off(EB_V + 0x1118), (uint32_t)(EB_V + 0x10));
}
static void x_32_range(void)
{
	eb_srela(&e, 0, EB_V + 0x1140, R_X86_64_32, EB_SYM_DATA, 0);
	eb_put32(&e, eb_exec_off(EB_V + 0x1140), 0xfffff000);
}
static void x_pc32_range(void)
{
	/* S = 0x5000 (SHN_ABS), P near the top: S - P is just under 2^31. */
	eb_srela(&e, 1, EB_V + 0x28, R_X86_64_PC32, EB_SYM_ABS, -4);
	eb_put32(&e, eb_exec_off(EB_V + 0x28), (uint32_t)(0x5000 - (EB_V + 0x28) - 4));
}

static const struct bad_case bad_cases[] = {
	{ "PIE IRELATIVE", 0, b_irelative, 0x200000, LDR_E_RELOC_TYPE, R_X86_64_IRELATIVE, NULL },
	{ "PIE COPY", 0, b_copy, 0x200000, LDR_E_RELOC_TYPE, R_X86_64_COPY, NULL },
	{ "PIE TPOFF64 in JMPREL", 0, b_tpoff_plt, 0x200000, LDR_E_RELOC_TYPE, R_X86_64_TPOFF64, NULL },
	{ "PIE PC32 dynamic", 0, b_pc32_dyn, 0x200000, LDR_E_RELOC_TYPE, R_X86_64_PC32, NULL },
	{ "PIE target across the end", 0, b_target_end, 0x200000, LDR_E_RELOC_TARGET, 0, NULL },
	{ "PIE target far outside", 0, b_target_far, 0x200000, LDR_E_RELOC_TARGET, 0, NULL },
	{ "PIE target wraps", 0, b_target_wrap, 0x200000, LDR_E_RELOC_TARGET, 0, NULL },
	{ "PIE JUMP_SLOT at the end", 0, b_glob_target, 0, LDR_E_RELOC_TARGET, 0, NULL },
	{ "PIE symbol 1000000", 0, b_sym_range, 0x200000, LDR_E_RELOC_SYMBOL, 0, NULL },
	{ "PIE GLOB_DAT symbol 0xffffff", 0, b_sym_range_glob, 0, LDR_E_RELOC_SYMBOL, 0, NULL },
	{ "PIE no DT_SYMTAB", 0, b_no_symtab, 0x200000, LDR_E_RELOC_SYMBOL, 0, NULL },
	{ "PIE undefined symbol", 0, b_undef, 0x200000, LDR_E_UNDEF_SYMBOL, 0, "undef_sym" },
	{ "PIE undefined, bad name", 0, b_undef_badname, 0x200000, LDR_E_UNDEF_SYMBOL, 0, NULL },
	{ "PIE IFUNC symbol", 0, b_ifunc, 0x200000, LDR_E_RELOC_SYMBOL, 0, NULL },
	{ "RELR bitmap first", 0, b_relr_bitmap_first, 0x200000, LDR_E_RELR_BAD, 0, NULL },
	{ "RELR address outside", 0, b_relr_addr_out, 0x200000, LDR_E_RELOC_TARGET, 0, NULL },
	{ "RELR bitmap bit outside", 0, b_relr_bit_out, 0x200000, LDR_E_RELOC_TARGET, 0, NULL },
	{ "RELR run past the end", 0, b_relr_run_wrap, 0x200000, LDR_E_RELOC_TARGET, 0, NULL },
	{ "EXEC REX_GOTPCRELX", 1, x_gotpcrelx, EB_V, LDR_E_RELOC_TYPE, R_X86_64_REX_GOTPCRELX, NULL },
	{ "EXEC R_X86_64_8", 1, x_r8, EB_V, LDR_E_RELOC_TYPE, R_X86_64_8, NULL },
	{ "EXEC DTPMOD64", 1, x_dtpmod, EB_V, LDR_E_RELOC_TYPE, R_X86_64_DTPMOD64, NULL },
	{ "EXEC target across the end", 1, x_target_end, EB_V, LDR_E_RELOC_TARGET, 0, NULL },
	{ "EXEC target below vbase", 1, x_target_low, EB_V, LDR_E_RELOC_TARGET, 0, NULL },
	{ "EXEC PC32 across the end", 1, x_target_pc32_end, EB_V, LDR_E_RELOC_TARGET, 0, NULL },
	{ "EXEC symbol 99", 1, x_sym_range, EB_V, LDR_E_RELOC_SYMBOL, 0, NULL },
	{ "EXEC symbol in section 200", 1, x_sym_shndx, EB_V, LDR_E_RELOC_SYMBOL, 0, NULL },
	{ "EXEC SHN_COMMON symbol", 1, x_sym_common, EB_V, LDR_E_RELOC_SYMBOL, 0, NULL },
	{ "EXEC undefined symbol", 1, x_undef, EB_V, LDR_E_UNDEF_SYMBOL, 0, "undef_sym" },
	{ "EXEC 32S out of range", 1, x_32s_range, 0x100000000000ULL, LDR_E_RELOC_RANGE, 0, NULL },
	{ "EXEC 32 out of range", 1, x_32_range, EB_V + 0x200000, LDR_E_RELOC_RANGE, 0, NULL },
	{ "EXEC PC32 to ABS out of range", 1, x_pc32_range, EB_V - 0x1000000, LDR_E_RELOC_RANGE, 0, NULL },
};

TEST(test_bad_cases)
{
	size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct bad_case *c = &bad_cases[i];
		struct reloc_report rep;
		enum ldr_err err;

		if (c->exec)
			eb_exec(&e);
		else
			eb_pie(&e);
		c->add();
		err = run(c->new_vbase, &rep);
		CHECK(err == c->want, "%s: got %s, want %s", c->name, ldr_strerror(err),
		      ldr_strerror(c->want));
		if (c->want == LDR_E_RELOC_TYPE)
			CHECK_EQ_U64(rep.bad_type, c->want_type, "%s: reported type", c->name);
		if (c->want == LDR_E_UNDEF_SYMBOL)
			CHECK(c->want_sym ? rep.sym_name && !strcmp(rep.sym_name, c->want_sym)
					  : rep.sym_name == NULL,
			      "%s: reported symbol %s", c->name, rep.sym_name ? rep.sym_name : "(none)");
	}
	printf("test_reloc: %zu bad-relocation cases\n", n);
}

TEST(test_api_edges)
{
	struct elf_image img;
	struct reloc_report rep;

	pie_full();
	eb_write(&e);
	CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_OK, "PIE parses");
	CHECK(reloc_apply(NULL, dest, sizeof(dest), 0, &rep) == LDR_E_INVAL, "NULL image");
	CHECK(reloc_apply(&img, NULL, sizeof(dest), 0, &rep) == LDR_E_INVAL, "NULL dest");
	CHECK(reloc_apply(&img, dest, img.load_size - 1, 0, &rep) == LDR_E_INVAL, "dest too small");
	CHECK(elf_load(&img, dest, sizeof(dest)) == LDR_OK, "PIE loads");
	CHECK(reloc_apply(&img, dest, img.load_size, 0x400000, NULL) == LDR_OK, "NULL report");
	CHECK_EQ_U64(rd64(0x2800), 0x400100, "relocated without a report");
}
