/*
 * test_reloc_limit.c - host tests for the placement limit of kernels with
 * 32-bit absolute relocations (elf_image.max_vend, reloc_max_vend()): its
 * value for each mix of relocation types, and on the captured 8 GiB OVMF
 * map that every slot the slot code can choose under the limit relocates,
 * while without it most slots do not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_load.h"
#include "reloc.h"
#include "slot.h"
#include "elf_build.h"
#include "mmap_fixture.h"
#include "test.h"

#define FIXTURE_8G "ovmf-q35-8G.mmap"

static struct eb e;

/* identity-linked ET_EXEC at EB_P: file offset of link address v */
static uint64_t off_of(uint64_t v)
{
	return v - EB_P + 0x1000;
}

static enum ldr_err parse(struct elf_image *img)
{
	eb_write(&e);
	return elf_parse(e.buf, e.size, NULL, img);
}

/* A small-code-model kernel: what -mcmodel=small -fno-pic code relocates. */
static void small_kernel(void)
{
	eb_exec_at(&e, EB_P);
	/* mov $data, %eax (32); movq $text, %rax and arr(,%rax,8) (32S) */
	eb_srela(&e, 1, EB_P + 0x40, R_X86_64_32, EB_SYM_DATA, 0);
	eb_put32(&e, off_of(EB_P + 0x40), (uint32_t)(EB_P + 0x1000));
	eb_srela(&e, 1, EB_P + 0x44, R_X86_64_32S, EB_SYM_TEXT, 0);
	eb_put32(&e, off_of(EB_P + 0x44), (uint32_t)(EB_P + 0x10));
	eb_srela(&e, 1, EB_P + 0x48, R_X86_64_PC32, EB_SYM_DATA, -4);
	eb_put32(&e, off_of(EB_P + 0x48), 0x1000 - 0x48 - 4);
	eb_srela(&e, 0, EB_P + 0x1100, R_X86_64_64, EB_SYM_DATA, 8);
	eb_put64(&e, off_of(EB_P + 0x1100), EB_P + 0x1008);
}

/*
 * ... whose image is exactly 2 MiB (text page + data + BSS) and which
 * compares against its own end (cmp $_end: a 32S field holding the address
 * one past the last byte), so the slot ending at 2 GiB is one too high.
 */
static void small_kernel_2m(void)
{
	small_kernel();
	e.ph[1].p_memsz = 2 * MIB - 0x1000;
	eb_srela(&e, 1, EB_P + 0x4c, R_X86_64_32S, EB_SYM_DATA, 0);
	eb_put32(&e, off_of(EB_P + 0x4c), (uint32_t)(EB_P + 2 * MIB));
}

/* Fill the stack below the caller with junk, where the next call's
 * locals will be: a local the code under test forgets to set reads it. */
static __attribute__((noinline)) void dirty_stack(void)
{
	volatile unsigned char junk[16384];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

/* reloc_max_vend() walks with a context of its own: every field of it
 * set (an unset map or symbol cache pointer was followed at -O2). */
TEST(test_limit_stack_junk)
{
	struct elf_image img;

	small_kernel();
	CHECK(parse(&img) == LDR_OK, "small-model kernel parses");
	dirty_stack();
	CHECK_EQ_U64(reloc_max_vend(&img), 2 * GIB, "reloc_max_vend over a dirty stack");
}

TEST(test_limit_values)
{
	struct elf_image img;

	small_kernel();
	CHECK(parse(&img) == LDR_OK, "small-model kernel parses");
	CHECK_EQ_U64(img.max_vend, 2 * GIB, "32S present: image ends by 2 GiB");
	CHECK_EQ_U64(reloc_max_vend(&img), img.max_vend, "reloc_max_vend agrees");

	small_kernel_2m();
	CHECK(parse(&img) == LDR_OK, "2 MiB small-model kernel parses");
	CHECK_EQ_U64(img.load_size, 2 * MIB, "image is 2 MiB");
	CHECK_EQ_U64(img.max_vend, 2 * GIB - 1, "a field at the end: one byte lower");

	/* 32 only: zero-extended fields reach 4 GiB */
	eb_exec_at(&e, EB_P);
	eb_srela(&e, 1, EB_P + 0x40, R_X86_64_32, EB_SYM_DATA, 0);
	eb_put32(&e, off_of(EB_P + 0x40), (uint32_t)(EB_P + 0x1000));
	CHECK(parse(&img) == LDR_OK && img.max_vend == 4 * GIB, "32 only: 4 GiB");
	/* ... one pointing 0x100 bytes past the end */
	eb_srela(&e, 1, EB_P + 0x44, R_X86_64_32, EB_SYM_DATA, 0);
	eb_put32(&e, off_of(EB_P + 0x44), (uint32_t)(EB_P + 0x3000 + 0x100));
	CHECK(parse(&img) == LDR_OK, "32 past the end parses");
	CHECK_EQ_U64(img.max_vend, 4 * GIB - 0x101, "32 past the end: 0x101 lower");

	/* 64-bit and PC-relative only: no limit */
	eb_exec_at(&e, EB_P);
	eb_srela(&e, 0, EB_P + 0x1100, R_X86_64_64, EB_SYM_DATA, 0);
	eb_srela(&e, 1, EB_P + 0x48, R_X86_64_PC32, EB_SYM_DATA, -4);
	eb_srela(&e, 1, EB_P + 0x4c, R_X86_64_PLT32, EB_SYM_TEXT, -4);
	CHECK(parse(&img) == LDR_OK && img.max_vend == 0, "64 and PC-relative: no limit");
	/* a 32S field whose symbol does not move is never adjusted */
	eb_srela(&e, 1, EB_P + 0x50, R_X86_64_32S, EB_SYM_ABS, 0);
	CHECK(parse(&img) == LDR_OK && img.max_vend == 0, "32S against SHN_ABS: no limit");
	/* a 32S in a debug section is never applied */
	eb_srela(&e, 2, 0x10, R_X86_64_32S, EB_SYM_DATA, 0);
	CHECK(parse(&img) == LDR_OK && img.max_vend == 0, "32S in debug info: no limit");

	/* higher half: 32S fields hold top-2-GiB addresses; the physical
	 * placement does not touch them */
	eb_exec(&e);
	eb_srela(&e, 1, EB_V + 0x44, R_X86_64_32S, EB_SYM_TEXT, 0);
	eb_put32(&e, eb_exec_off(EB_V + 0x44), (uint32_t)(EB_V + 0x10));
	CHECK(parse(&img) == LDR_OK && img.max_vend == 0, "higher-half 32S: no limit");

	/* no relocations, PIE, Linux: no limit */
	eb_exec_at(&e, EB_P);
	e.eh.e_shnum = 0;
	e.eh.e_shoff = 0;
	e.size = 0x3000;
	CHECK(parse(&img) == LDR_OK && img.max_vend == 0, "ET_EXEC without relocations");
	eb_pie(&e);
	eb_rela(&e, 0, EB_WORDS, R_X86_64_RELATIVE, 0, 0x100);
	CHECK(parse(&img) == LDR_OK && img.max_vend == 0, "PIE");

	/* a relocation that will fail anyway (bad symbol) does not matter */
	small_kernel();
	eb_srela(&e, 1, EB_P + 0x60, R_X86_64_32S, 99, 0);
	CHECK(parse(&img) == LDR_OK, "bad symbol: parse leaves it to reloc_apply");
	CHECK(reloc_apply(&img, (uint8_t[0x3000]){ 0 }, 0x3000, EB_P, NULL) ==
	      LDR_E_RELOC_SYMBOL, "bad symbol: reloc_apply refuses it");
}

/* At the limit and one 2 MiB step above: fits, then does not. */
TEST(test_limit_edge)
{
	static uint8_t dest[2 * MIB];
	struct elf_image img;
	uint64_t top;

	small_kernel_2m();
	CHECK(parse(&img) == LDR_OK, "2 MiB small-model kernel parses");
	top = ldr_align_down(img.max_vend - img.load_size, 2 * MIB);
	CHECK_EQ_U64(top, 2 * GIB - 4 * MIB, "highest 2 MiB-aligned base");
	CHECK(elf_load(&img, dest, sizeof(dest)) == LDR_OK, "load");
	CHECK(reloc_apply(&img, dest, sizeof(dest), top, NULL) == LDR_OK, "ends below the limit");
	CHECK(elf_load(&img, dest, sizeof(dest)) == LDR_OK, "load again");
	CHECK(reloc_apply(&img, dest, sizeof(dest), top + 2 * MIB, NULL) == LDR_E_RELOC_RANGE,
	      "ends at 2 GiB: _end no longer fits a 32S field");
}

/* The captured 8 GiB map's free regions into *ret (malloc'd); count or 0. */
static size_t fixture_free(const char *name, struct mem_region **ret)
{
	const char *dir = getenv("MMAP_FIXTURE_DIR");
	char path[512], err[600];
	struct mmap_buf m;
	size_t cap, n = 0;
	long nd;

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : MMAP_FIXTURE_DEFAULT_DIR, name);
	mmap_init(&m, 48);
	nd = mmap_load_fixture(path, &m, err, sizeof(err));
	CHECK(nd > 0, "fixture %s loads (%s)", path, nd < 0 ? err : "empty");
	if (nd <= 0) {
		mmap_free_buf(&m);
		return 0;
	}
	cap = E820_CAP_FOR(nd);
	*ret = calloc(cap, sizeof(**ret));
	CHECK(e820_free_from_efi(m.buf, m.size, m.desc_size, *ret, cap, &n) == LDR_OK,
	      "fixture %s converts", path);
	mmap_free_buf(&m);
	return n;
}

/*
 * Every slot of the 8 GiB map, relocated: with max_vend as the window's
 * top, all succeed; without it, a slot succeeds exactly when the image
 * ends by max_vend (so the limit is neither too loose nor too tight), and
 * most slots (the ones above 2 GiB) fail.
 */
TEST(test_limit_8g_slots)
{
	static uint8_t pristine[2 * MIB], dest[2 * MIB];
	struct mem_region *fr = NULL;
	struct slot_params p;
	struct elf_image img;
	uint64_t n_lim, n_all, ok_lim = 0, ok_all = 0, agree = 0;
	size_t nfree = fixture_free(FIXTURE_8G, &fr);

	if (nfree == 0) {
		free(fr);
		return;
	}
	small_kernel_2m();
	CHECK(parse(&img) == LDR_OK, "2 MiB small-model kernel parses");
	CHECK(elf_load(&img, pristine, sizeof(pristine)) == LDR_OK, "load");
	memset(&p, 0, sizeof(p));
	p.image_size = img.load_size;
	p.align = SLOT_ALIGN;
	p.min_addr = SLOT_DEFAULT_MIN;

	p.max_addr = img.max_vend;
	n_lim = slot_count(fr, nfree, &p);
	for (uint64_t i = 0; i < n_lim; i++) {
		uint64_t base = 0;

		/* relocation writes only the first pages: restore those */
		memcpy(dest, pristine, 0x3000);
		if (slot_at(fr, nfree, &p, i, &base) == LDR_OK &&
		    reloc_apply(&img, dest, sizeof(dest), base, NULL) == LDR_OK)
			ok_lim++;
	}

	p.max_addr = 0;
	n_all = slot_count(fr, nfree, &p);
	for (uint64_t i = 0; i < n_all; i++) {
		uint64_t base = 0;
		int ok;

		memcpy(dest, pristine, 0x3000);
		if (slot_at(fr, nfree, &p, i, &base) != LDR_OK)
			continue;
		ok = reloc_apply(&img, dest, sizeof(dest), base, NULL) == LDR_OK;
		ok_all += ok;
		agree += ok == (base + img.load_size <= img.max_vend);
	}
	printf("test_reloc_limit: %s, 2 MiB kernel: %llu slots under max_vend 0x%llx, "
	       "%llu relocate; %llu slots without it, %llu relocate\n", FIXTURE_8G,
	       (unsigned long long)n_lim, (unsigned long long)img.max_vend,
	       (unsigned long long)ok_lim, (unsigned long long)n_all,
	       (unsigned long long)ok_all);
	CHECK(n_lim > 500, "hundreds of slots below 2 GiB (%llu)", (unsigned long long)n_lim);
	CHECK_EQ_U64(ok_lim, n_lim, "with the limit every slot relocates");
	CHECK(n_all > 3 * n_lim, "the map has RAM far above 2 GiB");
	CHECK(2 * (n_all - ok_all) > n_all, "without the limit most slots fail (%llu of %llu)",
	      (unsigned long long)(n_all - ok_all), (unsigned long long)n_all);
	CHECK_EQ_U64(agree, n_all, "a slot relocates exactly when it ends by max_vend");
	CHECK_EQ_U64(ok_all, n_lim, "the slots that relocate are the ones under the limit");
	free(fr);
}
