/*
 * payload/leftovers.c - what the loader left behind besides the kernel
 * (payload/leftovers.h): its image's page permissions, its TSS, and
 * whether the secret its seeds came from is still in memory.
 */
#include <stddef.h>
#include <stdint.h>

#include "leftovers.h"
#include "cpu.h"
#include "entropy.h"

#define LO_TSS_SEL      0x20
#define LO_TSS_IST      0x24
#define LO_PE_SCAN_MAX  (8ULL << 20) /* how far below a stub to look for "MZ" */
#define LO_SCN_EXECUTE  0x20000000u  /* IMAGE_SCN_MEM_EXECUTE */
#define LO_SCN_WRITE    0x80000000u  /* IMAGE_SCN_MEM_WRITE */

struct lo_image {
	uint64_t base, size;          /* [ImageBase, + SizeOfImage) */
	uint64_t sections, nsections; /* address of the section table, count */
};

/* freestanding: the core's SHA-256 and derivation use these */
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);

void *memcpy(void *d, const void *s, size_t n)
{
	uint8_t *dp = d;
	const uint8_t *sp = s;

	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memset(void *d, int c, size_t n)
{
	uint8_t *dp = d;

	while (n--)
		*dp++ = (uint8_t)c;
	return d;
}

static uint32_t lo_u32(uint64_t a)
{
	return *(const volatile uint32_t *)(uintptr_t)a;
}

static uint16_t lo_u16(uint64_t a)
{
	return *(const volatile uint16_t *)(uintptr_t)a;
}

/* the handler address of IDT gate v, read through the read-only alias */
static uint64_t lo_gate(const struct kaslr_boot_info *info, unsigned v)
{
	uint64_t g = info->idt_alias + 16ULL * v;

	return lo_u16(g) | (uint64_t)lo_u16(g + 6) << 16 | (uint64_t)lo_u32(g + 8) << 32;
}

/* Walk down from the page of the first exception stub to "MZ" + "PE\0\0". */
static int lo_find_image(const struct kaslr_boot_info *info, struct lo_image *img)
{
	uint64_t stub = lo_gate(info, 0), p = stub & ~(CPU_PAGE - 1);

	for (uint64_t walked = 0; walked < LO_PE_SCAN_MAX && p >= CPU_PAGE;
	     walked += CPU_PAGE, p -= CPU_PAGE) {
		uint32_t lfanew;
		uint64_t opt;

		if (!cpu_mapped(p, 64) || lo_u16(p) != 0x5a4d) /* "MZ" */
			continue;
		lfanew = lo_u32(p + 0x3c);
		if (lfanew > CPU_PAGE - 0x100 || lo_u32(p + lfanew) != 0x00004550) /* "PE\0\0" */
			continue;
		opt = p + lfanew + 24;
		if (lo_u16(opt) != 0x20b) /* PE32+ */
			continue;
		img->base = p;
		img->size = lo_u32(opt + 56); /* SizeOfImage */
		img->nsections = lo_u16(p + lfanew + 6);
		img->sections = opt + lo_u16(p + lfanew + 20);
		return stub - p < img->size;
	}
	return 0;
}

/* the characteristics of the section holding image offset off, or 0 */
static uint32_t lo_section_of(const struct lo_image *img, uint64_t off)
{
	for (uint64_t i = 0; i < img->nsections; i++) {
		uint64_t s = img->sections + 40 * i;
		uint64_t va = lo_u32(s + 12), vsize = lo_u32(s + 8);

		if (off >= va && off - va < ((vsize + CPU_PAGE - 1) & ~(CPU_PAGE - 1)))
			return lo_u32(s + 36);
	}
	return 0;
}

uint64_t lo_check_loader_image(const struct kaslr_boot_info *info, lo_fail_fn fail)
{
	int no_nx = (info->flags & KB_FLAG_NO_NX) != 0;
	struct lo_image img;
	uint64_t pages = 0;

	if (!lo_find_image(info, &img))
		fail("loader_image_not_found", "stub", lo_gate(info, 0), 0, 0);
	for (uint64_t off = 0; off < img.size; off += CPU_PAGE, pages++) {
		uint32_t ch = lo_section_of(&img, off);
		struct cpu_walk w;

		if (!cpu_translate(img.base + off, &w))
			fail("loader_page_unmapped", "addr", img.base + off, 0, 0);
		if (no_nx) /* everything is executable: write protection is all */
			continue;
		if (w.writable && !w.nx)
			fail("loader_page_wx", "addr", img.base + off, "chars", ch);
		if (!!(ch & LO_SCN_EXECUTE) != !w.nx)
			fail(ch & LO_SCN_EXECUTE ? "loader_code_nx" : "loader_data_executable",
			     "addr", img.base + off, "chars", ch);
	}
	return pages;
}

unsigned lo_check_tss(const struct kaslr_boot_info *info, lo_fail_fn fail)
{
	struct __attribute__((packed)) { uint16_t limit; uint64_t base; } gdtr;
	static const unsigned vectors[] = { 8, 2, 14, 18 };
	uint16_t tr;
	uint64_t d0, d1, tss;
	unsigned n = 0;

	__asm__ volatile("str %0" : "=r"(tr));
	__asm__ volatile("sgdt %0" : "=m"(gdtr));
	if (tr != LO_TSS_SEL || gdtr.limit < LO_TSS_SEL + 15)
		fail("tss_not_loaded", "tr", tr, "gdt_limit", gdtr.limit);
	d0 = *(const volatile uint64_t *)(uintptr_t)(gdtr.base + LO_TSS_SEL);
	d1 = *(const volatile uint64_t *)(uintptr_t)(gdtr.base + LO_TSS_SEL + 8);
	/* type 0xB: busy 64-bit TSS (LTR marked it) */
	if (((d0 >> 40) & 0xf) != 0xb)
		fail("tss_type", "desc", d0, 0, 0);
	tss = ((d0 >> 16) & 0xffffff) | ((d0 >> 56) & 0xff) << 24 | (d1 & 0xffffffff) << 32;
	for (unsigned i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		uint64_t g = info->idt_alias + 16ULL * vectors[i];
		unsigned ist = *(const volatile uint8_t *)(uintptr_t)(g + 4) & 7;
		uint64_t top;
		struct cpu_walk w;

		if (ist == 0)
			fail("ist_missing", "vector", vectors[i], 0, 0);
		top = *(const volatile uint64_t *)(uintptr_t)(tss + LO_TSS_IST + 8 * (ist - 1));
		if (top & 15 || !cpu_translate(top - 8, &w) || !w.writable ||
		    (!w.nx && !(info->flags & KB_FLAG_NO_NX)))
			fail("ist_stack", "vector", vectors[i], "top", top);
		n++;
	}
	return n;
}

/* every 8-byte-aligned 32-byte window of [a, a + len) as a pool output */
static uint64_t lo_scan_range(const struct kaslr_boot_info *info, uint64_t a, uint64_t len,
			      lo_fail_fn fail)
{
	uint64_t tried = 0;
	uint8_t d[32];

	for (uint64_t off = 0; len >= 32 && off <= len - 32; off += 8) {
		int same = 1;

		/* a window reaching into an unmapped page (a guard): skip to
		 * the page after it */
		if (!cpu_mapped(a + off, 32)) {
			off = ((a + off + 31) & ~(CPU_PAGE - 1)) + CPU_PAGE - a - 8;
			continue;
		}
		tried++;
		entropy_derive((const uint8_t *)(uintptr_t)(a + off), "kernel rng_seed", d);
		for (int i = 0; i < 32; i++)
			same &= d[i] == info->rng_seed[i];
		if (same)
			fail("seed_source_survives", "addr", a + off, 0, 0);
	}
	return tried;
}

/* ------------------------------------------------ the layout's values */

#define LO_EFI_LOADER_CODE 1u
#define LO_EFI_LOADER_DATA 2u
#define LO_EFI_RECLAIM     0x80000002u /* the loader's reclaimable pages */
#define LO_FACTS_WORDS     7           /* tag + 6 values: kaslr_boot.h */

static int lo_in(uint64_t a, uint64_t lo, uint64_t len)
{
	return a >= lo && a - lo < len;
}

/*
 * Is the word at a one the loader leaves by design: the kernel itself,
 * the hand-off data that tells the kernel where it is (this structure, the
 * memory maps), the stack the kernel runs on, its modules, or the
 * crash-report facts (tagged KB_CRASH_FACTS_MAGIC, in the loader image).
 */
static int lo_by_design(const struct kaslr_boot_info *info, uint64_t a)
{
	const struct kb_module *mod = (const struct kb_module *)(uintptr_t)info->modules;

	if (lo_in(a, info->phys_base, info->image_size) ||
	    lo_in(a, (uint64_t)(uintptr_t)info, info->size) ||
	    lo_in(a, info->mem_map, (uint64_t)info->mem_map_count * info->mem_map_entry_size) ||
	    lo_in(a, info->efi_mmap, info->efi_mmap_size) ||
	    lo_in(a, info->stack_top + 8 - info->stack_size, info->stack_size))
		return 1;
	for (uint32_t i = 0; i < info->module_count; i++)
		if (lo_in(a, mod[i].addr, mod[i].size))
			return 1;
	for (unsigned k = 1; k < LO_FACTS_WORDS; k++)
		if (a >= 8 * k && *(const volatile uint64_t *)(uintptr_t)(a - 8 * k) ==
				      KB_CRASH_FACTS_MAGIC)
			return 1;
	return 0;
}

/* every 8-byte-aligned word of [a, a + len) against the two bases */
static uint64_t lo_scan_words(const struct kaslr_boot_info *info, uint64_t a, uint64_t len,
			      lo_fail_fn fail)
{
	uint64_t words = 0, end = a + len;

	for (uint64_t page = a & ~(CPU_PAGE - 1); page < end; page += CPU_PAGE) {
		uint64_t p = page < a ? a : page, stop = page + CPU_PAGE < end ? page + CPU_PAGE : end;

		if (!cpu_mapped(page, CPU_PAGE))
			continue;
		for (p = (p + 7) & ~7ULL; p + 8 <= stop; p += 8) {
			uint64_t v = *(const volatile uint64_t *)(uintptr_t)p;

			words++;
			if ((v == info->phys_base || v == info->virt_base) && !lo_by_design(info, p))
				fail(v == info->phys_base ? "phys_base_survives" : "virt_base_survives",
				     "addr", p, "value", v);
		}
	}
	return words;
}

uint64_t lo_scan_layout(const struct kaslr_boot_info *info, lo_fail_fn fail)
{
	const uint8_t *m = (const uint8_t *)(uintptr_t)info->efi_mmap;
	struct lo_image img;
	uint64_t words = 0;

	if (!lo_find_image(info, &img))
		fail("loader_image_not_found", "stub", lo_gate(info, 0), 0, 0);
	if (info->efi_desc_size < 40 || !info->efi_mmap)
		fail("no_efi_map", "desc_size", info->efi_desc_size, 0, 0);
	for (uint64_t off = 0; off + info->efi_desc_size <= info->efi_mmap_size;
	     off += info->efi_desc_size) {
		uint32_t type = *(const uint32_t *)(m + off);
		uint64_t start = *(const uint64_t *)(m + off + 8);
		uint64_t pages = *(const uint64_t *)(m + off + 24);

		/* the loader's image (LoaderCode), its pool (LoaderData: the
		 * function-granular core's memory, the maps it read), its
		 * reclaimable pages (page tables, hand-off blocks) */
		if (type == LO_EFI_LOADER_CODE || type == LO_EFI_LOADER_DATA ||
		    type == LO_EFI_RECLAIM)
			words += lo_scan_words(info, start, pages * CPU_PAGE, fail);
	}
	/* the image itself, whatever type firmware gave it */
	words += lo_scan_words(info, img.base, img.size, fail);
	return words;
}

uint64_t lo_scan_secrets(const struct kaslr_boot_info *info, lo_fail_fn fail)
{
	const struct kb_mem_entry *m = (const struct kb_mem_entry *)(uintptr_t)info->mem_map;
	struct lo_image img;
	uint64_t tried = 0;

	if (!lo_find_image(info, &img))
		fail("loader_image_not_found", "stub", lo_gate(info, 0), 0, 0);
	tried += lo_scan_range(info, img.base, img.size, fail);
	for (uint32_t i = 0; i < info->mem_map_count; i++)
		if (m[i].type == KB_MEM_LOADER_RECLAIMABLE)
			tried += lo_scan_range(info, m[i].addr, m[i].size, fail);
	return tried;
}
