/*
 * fuzz_elf.c - libFuzzer target: elf_parse() of untrusted bytes, then (for
 * images up to 64 MiB) elf_load() into an exact-size buffer and
 * reloc_apply() to a base the input chooses; checks what elf_parse()
 * promises about the image it accepted, its page map (elf_page_map()) and
 * its end limit (max_vend).
 *
 * Bytes 9..15 of the input (EI_PAD, which elf_parse() ignores) steer the
 * harness, so the fuzzer can vary them without breaking the ELF:
 *   [15] bits 0-1 layout (AUTO, VADDR, PADDR, AUTO), bit 2 refuse Linux W+X,
 *        bit 3 a 1 MiB image limit, bit 4 a limit of 4 program headers
 *   [14] which new base (low 4 bits): see fuzz_base()
 *   [9..13] a 2 MiB slot number for the "any slot" bases
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_load.h"
#include "elf_pages.h"
#include "linux_boot.h"
#include "reloc.h"

#define FUZZ_MAX_LOAD (64 * MIB)
#define FUZZ_GUARD    (64 * KIB)

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

/*
 * The destination: one reused arena (a fresh malloc of up to 64 MiB per
 * execution would spend the run in page faults).  The image is placed at
 * the end of the arena's usable part, [arena + FUZZ_MAX_LOAD - load_size,
 * arena + FUZZ_MAX_LOAD), followed by a guard that stays poisoned; the
 * part before the image is kept poisoned, adjusting only the bytes whose
 * state changes.  So ASan reports a write on either side of the image.
 */
static uint8_t fuzz_arena[FUZZ_MAX_LOAD + FUZZ_GUARD] __attribute__((aligned(4096)));
static uint64_t fuzz_lo = FUZZ_MAX_LOAD;   /* start of the unpoisoned part */

static uint8_t *fuzz_dest(uint64_t size)
{
	uint64_t lo = FUZZ_MAX_LOAD - size;

	if (fuzz_lo == FUZZ_MAX_LOAD && lo == FUZZ_MAX_LOAD)
		return fuzz_arena + lo;
	if (lo > fuzz_lo)
		ASAN_POISON_MEMORY_REGION(fuzz_arena + fuzz_lo, lo - fuzz_lo);
	else if (lo < fuzz_lo)
		ASAN_UNPOISON_MEMORY_REGION(fuzz_arena + lo, fuzz_lo - lo);
	fuzz_lo = lo;
	return fuzz_arena + lo;
}

static uint64_t fuzz_base(const uint8_t *d, size_t n, const struct elf_image *img)
{
	uint64_t slot = 0;

	if (n < 16)
		return 0x40000000;
	for (int i = 13; i >= 9; i--)
		slot = slot << 8 | d[i];
	switch (d[14] & 15) {
	case 0: return 0x40000000;                      /* what check_corpus uses */
	case 1: return img->link_vbase;                 /* delta 0 */
	case 2: return 0xffffffff80000000ULL + slot % 512 * 2 * MIB;  /* kernel space */
	case 3: return slot * 2 * MIB;                  /* anywhere (wraps) */
	case 4: return 0;
	case 5: return img->link_vbase + 2 * MIB;
	case 6: return img->link_vbase - 2 * MIB;
	case 8:                                         /* the highest slot under max_vend */
		if (img->max_vend > img->load_size)
			return ldr_align_down(img->max_vend - img->load_size, 2 * MIB);
		return 0x40000000;
	default: return UINT64_MAX - 2 * MIB + 1;
	}
}

/*
 * elf_page_map() of an accepted image: sorted, page-aligned, inside the
 * image, W+X only when tolerated (has_wx then says so); and for images up
 * to 4 MiB, page by page the union of the segments touching it (gaps in no
 * range), a Linux W+X segment mapped by section adding its kept sections'
 * flags instead of its own.
 */
static void check_pages(const struct elf_image *img)
{
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	unsigned n = 0, k = 0;
	uint64_t end = 0;
	int wx = 0;

	if (elf_page_map(img, r, ELF_PAGE_RANGES_MAX, &n, NULL) != LDR_OK)
		abort();
	for (unsigned i = 0; i < n; i++) {
		if (r[i].off % PAGE_SIZE || r[i].size == 0 || r[i].size % PAGE_SIZE ||
		    r[i].off < end || !ldr_in_bounds(r[i].off, r[i].size, img->load_size))
			abort();
		if ((r[i].flags & (PT_W | PT_X)) == (PT_W | PT_X))
			wx = 1;
		if (i > 0 && r[i].off == end && r[i].flags == r[i - 1].flags)
			abort();   /* not merged */
		end = r[i].off + r[i].size;
	}
	if (wx != img->has_wx || (wx && !img->wx_linux))
		abort();
	/* the kept sections lie inside a W+X segment of theirs */
	for (unsigned i = 0; i < img->nwx_sec; i++) {
		const struct elf_wx_section *w = &img->wx_sec[i];
		int in = 0;

		for (unsigned j = 0; j < img->nseg; j++) {
			const struct elf_segment *s = &img->seg[j];

			in |= (s->flags & (PF_W | PF_X)) == (PF_W | PF_X) && w->size &&
			      w->load_off >= s->load_off &&
			      ldr_in_bounds(w->load_off - s->load_off, w->size, s->memsz);
		}
		if (!in || !img->wx_by_section)
			abort();
	}
	if (img->load_size > 4 * MIB)
		return;
	for (uint64_t p = 0; p < img->load_size; p += PAGE_SIZE) {
		uint32_t f = 0;
		int touched = 0;

		for (unsigned i = 0; i < img->nseg; i++) {
			const struct elf_segment *s = &img->seg[i];
			uint32_t sf = s->flags;

			if (img->wx_by_section && (sf & (PF_W | PF_X)) == (PF_W | PF_X))
				sf = 0;
			if (s->load_off < p + PAGE_SIZE && s->load_off + s->memsz > p) {
				touched = 1;
				f |= ((sf & PF_W) ? PT_W : 0) | ((sf & PF_X) ? PT_X : 0);
			}
		}
		for (unsigned i = 0; img->wx_by_section && i < img->nwx_sec; i++) {
			const struct elf_wx_section *w = &img->wx_sec[i];

			if (w->load_off < p + PAGE_SIZE && w->load_off + w->size > p)
				f |= ((w->flags & PF_W) ? PT_W : 0) | ((w->flags & PF_X) ? PT_X : 0);
		}
		while (k < n && r[k].off + r[k].size <= p)
			k++;
		if (touched != (k < n && r[k].off <= p) || (touched && r[k].flags != f))
			abort();
	}
}

static void check_image(const struct elf_image *img, const struct elf_limits *lim, size_t size)
{
	uint64_t end = 0;

	if (img->nseg == 0 || img->nseg > ELF_MAX_SEGMENTS)
		abort();
	if (img->load_size == 0 || img->load_size > lim->max_image_size ||
	    img->load_size % PAGE_SIZE)
		abort();
	if (img->entry_off >= img->load_size)
		abort();
	if (img->layout != ELF_LAYOUT_VADDR && img->layout != ELF_LAYOUT_PADDR)
		abort();
	if (img->elf_end > size)
		abort();
	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		if (s->filesz > s->memsz || s->memsz == 0)
			abort();
		/* (p_offset of a segment without file bytes is not checked) */
		if (s->filesz && !ldr_in_bounds(s->offset, s->filesz, size))
			abort();
		if (!ldr_in_bounds(s->load_off, s->memsz, img->load_size))
			abort();
		/* sorted by load_off, no overlap: elf_load() relies on it */
		if (s->load_off < end)
			abort();
		end = s->load_off + s->memsz;
		if ((s->flags & (PF_W | PF_X)) == (PF_W | PF_X) && !img->wx_linux)
			abort();
	}
	/* W+X only in Linux, and only when allowed; Linux is a table, or a
	 * bzImage's payload without one */
	if (img->wx_linux != (img->is_linux && lim->allow_wx_linux))
		abort();
	if (img->is_linux && (!linux_detect(img) ||
			      (img->reloc_kind == ELF_RELOC_NONE && !lim->linux_payload)))
		abort();
	check_pages(img);
	if (img->reloc_kind == ELF_RELOC_LINUX &&
	    !ldr_in_bounds(img->linux_relocs.off, img->linux_relocs.len, size))
		abort();
	/* a Linux table has entries and sits behind a Linux-shaped image */
	if (img->reloc_kind == ELF_RELOC_LINUX &&
	    (img->linux_relocs.n64 + img->linux_relocs.ninv32 + img->linux_relocs.n32 == 0 ||
	     !linux_detect(img)))
		abort();
	/* the end limit: only from --emit-relocs sections of a kernel linked
	 * below the top 2 GiB, and never above 4 GiB (32-bit fields) */
	if (img->max_vend && (img->reloc_kind != ELF_RELOC_SECTIONS ||
			      img->link_vbase >= 0xffffffff80000000ULL ||
			      img->max_vend > 4 * GIB))
		abort();
	/* an ET_EXEC with --emit-relocs sections is moved by them */
	if (img->type == ET_EXEC && img->n_rela_sections && img->reloc_kind != ELF_RELOC_SECTIONS)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_limits lim = elf_default_limits();
	struct elf_image img;
	struct reloc_report rep;
	static int poisoned;
	uint8_t *dest;

	if (size >= 16) {
		lim.layout = (enum elf_layout)(data[15] & 3) == 3 ? ELF_LAYOUT_AUTO
								 : (enum elf_layout)(data[15] & 3);
		lim.allow_wx_linux = !(data[15] & 4);
		lim.linux_payload = !!(data[15] & 32);
		if (data[15] & 8)
			lim.max_image_size = 1 * MIB;
		if (data[15] & 16)
			lim.max_phdrs = 4;
	}
	if (elf_parse(data, size, &lim, &img) != LDR_OK)
		return 0;
	check_image(&img, &lim, size);
	if (img.load_size > FUZZ_MAX_LOAD)
		return 0;
	if (!poisoned) {
		ASAN_POISON_MEMORY_REGION(fuzz_arena, sizeof(fuzz_arena));
		poisoned = 1;
	}
	dest = fuzz_dest(img.load_size);
	if (elf_load(&img, dest, img.load_size) != LDR_OK)
		abort();
	if (elf_load(&img, dest, img.load_size - 1) != LDR_E_INVAL)
		abort();
	reloc_apply(&img, dest, img.load_size, fuzz_base(data, size, &img), &rep);
	return 0;
}
