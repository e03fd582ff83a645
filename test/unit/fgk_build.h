/*
 * fgk_build.h - builds, in memory, ET_EXEC kernels shaped like a GNU ld
 * link of -ffunction-sections objects with --emit-relocs and .text.* left
 * to orphan placement: one section per function, each followed by its own
 * .rela section, for the function-granular KASLR tests, fuzz target and
 * benchmark.  The builder plays the linker: every relocation added is
 * resolved at link addresses into the section bytes, and recorded so that
 * a test can recompute what each field must hold after a shuffle.
 *
 *   file 0x1000  text R-X  FB_V: .text (16 bytes, entry), .text.f0 ...
 *                           .text.f<n-1> each at its alignment, then
 *                           .fgk_reserve (NOBITS, the shuffle's room)
 *   next page    R--       .rodata, .fgk_abs, .fgk_rel (sorted tables)
 *   next page    RW-       .data
 *   then         .symtab (+ .symtab_shndx past 0xff00 sections), .strtab,
 *                .rela.*, .note.kaslr, .shstrtab, section headers
 *                (extended numbering past 0xff00 sections)
 *
 * fb_oracle() says what a shuffle must have produced, from the builder's
 * record and the draws, computed independently of src/fgkaslr.c.
 *
 * Tables: .fgk_abs entries are { u64 function address (R_X86_64_64),
 * u64 id }; .fgk_rel entries are { s32 function - field (PC32),
 * s32 &fb_anchor[id] - field (PC32), u32 id, u32 0 }.
 */
#ifndef FGK_BUILD_H
#define FGK_BUILD_H

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfnote.h"

#define FB_V        0xffffffff81000000ULL
#define FB_P        0x1000000ULL
#define FB_FILE_V   0x1000ULL         /* file offset of FB_V */
#define FB_TEXT_SZ  16
#define FB_TAB_ENT  16

/* areas: the allocated sections; function k is FB_A_FUNC0 + k */
enum { FB_A_TEXT, FB_A_RODATA, FB_A_DATA, FB_A_TABABS, FB_A_TABREL, FB_A_FUNC0 };

/* symbols: 0, one STT_SECTION per area, then globals */
#define FB_SYM_SECT(area)  (1u + (area))
#define FB_SYM_ABS(b)      (1u + (b)->narea)
#define FB_SYM_WEAK(b)     (2u + (b)->narea)
#define FB_SYM_FUNC(b, k)  (3u + (b)->narea + (k))

struct fb_rel {
	uint64_t off;         /* inside its area */
	uint32_t type, sym;
	int64_t addend;
};

struct fb_area {
	uint64_t size, align, addr;
	uint8_t *bytes;
	struct fb_rel *rel;
	uint32_t nrel, caprel;
	uint32_t shidx, relidx;   /* section numbers (after fb_finish) */
};

struct fb {
	uint32_t nfunc, narea;
	struct fb_area *area;
	uint64_t reserve;        /* .fgk_reserve bytes */
	uint64_t abs_value;      /* value of the SHN_ABS symbol */
	uint32_t entry_func;     /* 0: entry in .text; k + 1: start of function k */
	int note;                /* write the functions note (default 1) */
	const uint8_t *note_desc;/* raw descriptor instead of the default one */
	uint32_t note_descsz;
	uint8_t *buf;
	uint64_t size;
	uint64_t text_end;       /* end of the last function (link address) */
	uint32_t shnum;
};

static inline void fb_init(struct fb *b, uint32_t nfunc)
{
	memset(b, 0, sizeof(*b));
	b->nfunc = nfunc;
	b->narea = FB_A_FUNC0 + nfunc;
	b->area = calloc(b->narea, sizeof(*b->area));
	if (!b->area)
		abort();
	b->area[FB_A_TEXT].size = FB_TEXT_SZ;
	b->area[FB_A_TEXT].align = 16;
	b->area[FB_A_RODATA].size = 0x100;
	b->area[FB_A_RODATA].align = 16;
	b->area[FB_A_DATA].size = 0x100;
	b->area[FB_A_DATA].align = 16;
	b->area[FB_A_TABABS].align = 8;
	b->area[FB_A_TABREL].align = 8;
	for (uint32_t k = 0; k < nfunc; k++) {
		b->area[FB_A_FUNC0 + k].size = 16;
		b->area[FB_A_FUNC0 + k].align = 16;
	}
	b->abs_value = FB_V - 0x100000;   /* in reach of 32-bit fields at any kernel base */
	b->note = 1;
}

static inline void fb_free(struct fb *b)
{
	for (uint32_t a = 0; a < b->narea; a++) {
		free(b->area[a].bytes);
		free(b->area[a].rel);
	}
	free(b->area);
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* The byte a function's (or area's) contents start with at offset j. */
static inline uint8_t fb_pattern(uint32_t area, uint64_t j)
{
	uint64_t x = (area + 1) * 0x9e3779b97f4a7c15ULL + j * 0xbf58476d1ce4e5b9ULL;

	return (uint8_t)(x >> 56);
}

static inline uint64_t fb_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* .text and the functions from FB_V, as ld lays out orphans: in order,
 * each at its alignment. */
static inline void fb_layout_text(struct fb *b)
{
	uint64_t cur = FB_V + FB_TEXT_SZ;

	b->area[FB_A_TEXT].addr = FB_V;
	for (uint32_t k = 0; k < b->nfunc; k++) {
		struct fb_area *r = &b->area[FB_A_FUNC0 + k];

		cur = fb_align_up(cur, r->align ? r->align : 1);
		r->addr = cur;
		cur += r->size;
	}
	b->text_end = cur;
}

/*
 * Link addresses of every area (text, then the reserve, then the data
 * pages), and their initial bytes.  Call after sizing the functions and
 * tables, before adding relocations.
 */
static inline void fb_place(struct fb *b)
{
	uint64_t cur;

	fb_layout_text(b);
	cur = fb_align_up(b->text_end + b->reserve, 0x1000);
	b->area[FB_A_RODATA].addr = cur;
	cur += b->area[FB_A_RODATA].size;
	cur = fb_align_up(cur, 8);
	b->area[FB_A_TABABS].addr = cur;
	cur += b->area[FB_A_TABABS].size;
	b->area[FB_A_TABREL].addr = cur;
	cur += b->area[FB_A_TABREL].size;
	cur = fb_align_up(cur, 0x1000);
	b->area[FB_A_DATA].addr = cur;
	for (uint32_t a = 0; a < b->narea; a++) {
		struct fb_area *r = &b->area[a];

		free(r->bytes);
		r->bytes = malloc(r->size ? r->size : 1);
		if (!r->bytes)
			abort();
		for (uint64_t j = 0; j < r->size; j++)
			r->bytes[j] = fb_pattern(a, j);
	}
}

static inline uint64_t fb_sym_value(const struct fb *b, uint32_t sym)
{
	if (sym == 0 || sym == FB_SYM_WEAK(b))
		return 0;
	if (sym == FB_SYM_ABS(b))
		return b->abs_value;
	if (sym < FB_SYM_ABS(b))
		return b->area[sym - 1].addr;
	return b->area[FB_A_FUNC0 + (sym - FB_SYM_FUNC(b, 0))].addr;
}

/* The area a symbol lives in, or -1 (none, SHN_ABS, undefined weak). */
static inline int64_t fb_sym_area(const struct fb *b, uint32_t sym)
{
	if (sym == 0 || sym == FB_SYM_WEAK(b) || sym == FB_SYM_ABS(b))
		return -1;
	if (sym < FB_SYM_ABS(b))
		return sym - 1;
	return FB_A_FUNC0 + (sym - FB_SYM_FUNC(b, 0));
}

static inline int fb_is_pc(uint32_t type)
{
	return type == R_X86_64_PC32 || type == R_X86_64_PLT32 || type == R_X86_64_PC64;
}

static inline unsigned fb_width(uint32_t type)
{
	return type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
}

/* The linker's value of a field: S + A, or S + A - P (truncated). */
static inline uint64_t fb_link_value(const struct fb *b, uint32_t area, const struct fb_rel *r)
{
	uint64_t v = fb_sym_value(b, r->sym) + (uint64_t)r->addend;

	if (fb_is_pc(r->type))
		v -= b->area[area].addr + r->off;
	return v;
}

/* Add a relocation at area + off, resolved into the bytes at once. */
static inline void fb_rel(struct fb *b, uint32_t area, uint64_t off, uint32_t type,
			  uint32_t sym, int64_t addend)
{
	struct fb_area *r = &b->area[area];
	struct fb_rel *e;
	uint64_t v;

	if (r->nrel == r->caprel) {
		r->caprel = r->caprel ? 2 * r->caprel : 8;
		r->rel = realloc(r->rel, r->caprel * sizeof(*r->rel));
		if (!r->rel)
			abort();
	}
	e = &r->rel[r->nrel++];
	e->off = off;
	e->type = type;
	e->sym = sym;
	e->addend = addend;
	v = fb_link_value(b, area, e);
	if (off <= r->size && r->size - off >= fb_width(type))
		memcpy(r->bytes + off, &v, fb_width(type));
}

/*
 * Table entries, in the given order of function ids (the caller decides
 * whether that order is the link order): .fgk_abs and/or .fgk_rel get one
 * entry per id.  Call after fb_place() with the areas sized by
 * fb_tables_size().
 */
static inline void fb_tables_size(struct fb *b, uint32_t nabs, uint32_t nrel)
{
	b->area[FB_A_TABABS].size = (uint64_t)nabs * FB_TAB_ENT;
	b->area[FB_A_TABREL].size = (uint64_t)nrel * FB_TAB_ENT;
	if (b->area[FB_A_RODATA].size < 8ULL * b->nfunc)
		b->area[FB_A_RODATA].size = 8ULL * b->nfunc;
}

static inline void fb_tables_fill(struct fb *b, const uint32_t *abs_ids, uint32_t nabs,
				  const uint32_t *rel_ids, uint32_t nrel)
{
	for (uint32_t i = 0; i < nabs; i++) {
		uint64_t id = abs_ids[i];

		fb_rel(b, FB_A_TABABS, (uint64_t)i * FB_TAB_ENT, R_X86_64_64,
		       FB_SYM_FUNC(b, abs_ids[i]), 0);
		memcpy(b->area[FB_A_TABABS].bytes + (uint64_t)i * FB_TAB_ENT + 8, &id, 8);
	}
	for (uint32_t i = 0; i < nrel; i++) {
		uint32_t id = rel_ids[i], zero = 0;
		uint64_t e = (uint64_t)i * FB_TAB_ENT;

		fb_rel(b, FB_A_TABREL, e, R_X86_64_PC32, FB_SYM_FUNC(b, id), 0);
		fb_rel(b, FB_A_TABREL, e + 4, R_X86_64_PC32, FB_SYM_SECT(FB_A_RODATA),
		       8 * (int64_t)id);
		memcpy(b->area[FB_A_TABREL].bytes + e + 8, &id, 4);
		memcpy(b->area[FB_A_TABREL].bytes + e + 12, &zero, 4);
	}
}

/* The default functions note: one record per non-empty table. */
static inline uint32_t fb_default_note(const struct fb *b, uint8_t *desc)
{
	uint32_t n = 0, ver = KASLR_FGK_VERSION;

	memset(desc, 0, KASLR_FGK_HEADER + 2 * KASLR_FGK_RECORD);
	memcpy(desc, &ver, 4);
	for (int t = 0; t < 2; t++) {
		uint8_t *r = desc + KASLR_FGK_HEADER + n * KASLR_FGK_RECORD;
		uint32_t v[4] = { FB_TAB_ENT, 0, t == 0 ? KASLR_FGK_KEY_ABS64 : KASLR_FGK_KEY_REL32,
				  t == 0 ? 0u : 3u };

		if (b->area[t == 0 ? FB_A_TABABS : FB_A_TABREL].size == 0)
			continue;
		strcpy((char *)r, t == 0 ? ".fgk_abs" : ".fgk_rel");
		memcpy(r + KASLR_FGK_NAME_MAX, v, sizeof(v));
		n++;
	}
	memcpy(desc + 4, &n, 4);
	return KASLR_FGK_HEADER + n * KASLR_FGK_RECORD;
}

/* growable byte string */
struct fb_str {
	uint8_t *p;
	uint64_t n, cap;
};

static inline uint64_t fb_put(struct fb_str *s, const void *p, uint64_t n)
{
	uint64_t at = s->n;

	if (s->n + n > s->cap) {
		while (s->n + n > s->cap)
			s->cap = s->cap ? 2 * s->cap : 4096;
		s->p = realloc(s->p, s->cap);
		if (!s->p)
			abort();
	}
	if (n)
		memcpy(s->p + s->n, p, n);
	s->n += n;
	return at;
}

static inline void fb_pad(struct fb_str *s, uint64_t align)
{
	static const uint8_t zero[64];

	while (s->n % align)
		fb_put(s, zero, (align - s->n % align) < 64 ? align - s->n % align : 64);
}

static inline uint32_t fb_name(struct fb_str *names, const char *n)
{
	return (uint32_t)fb_put(names, n, strlen(n) + 1);
}

/* Serialise: headers, segments, sections, symbols, relocations, note. */
static inline void fb_finish(struct fb *b)
{
	struct fb_str f = { 0 }, names = { 0 }, strs = { 0 };
	Elf64_Shdr *sh;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[3];
	Elf64_Sym *sym;
	uint32_t nsym = 3 + b->narea + b->nfunc, nsh = 0, symtab, strtab, shndx = 0, shstr, note = 0;
	uint32_t reserve;
	uint32_t *xndx;
	uint64_t rod_end, data_end;
	char nm[64];
	uint8_t desc[KASLR_FGK_HEADER + KASLR_FGK_MAX_TABLES * KASLR_FGK_RECORD];
	uint32_t descsz;

	/* section numbers, in ld's order: each function then its .rela */
	nsh = 1;
	b->area[FB_A_TEXT].shidx = nsh++;
	b->area[FB_A_TEXT].relidx = b->area[FB_A_TEXT].nrel ? nsh++ : 0;
	for (uint32_t k = 0; k < b->nfunc; k++) {
		struct fb_area *r = &b->area[FB_A_FUNC0 + k];

		r->shidx = nsh++;
		r->relidx = r->nrel ? nsh++ : 0;
	}
	reserve = nsh++;
	for (uint32_t a = FB_A_RODATA; a < FB_A_FUNC0; a++) {
		b->area[a].shidx = nsh++;
		b->area[a].relidx = b->area[a].nrel ? nsh++ : 0;
	}
	symtab = nsh++;
	if (nsh + 4 >= SHN_LORESERVE)
		shndx = nsh++;
	strtab = nsh++;
	if (b->note)
		note = nsh++;
	shstr = nsh++;
	b->shnum = nsh;
	sh = calloc(nsh, sizeof(*sh));
	sym = calloc(nsym, sizeof(*sym));
	xndx = calloc(nsym, sizeof(*xndx));
	if (!sh || !sym || !xndx)
		abort();

	/* the loaded part: file offset = FB_FILE_V + (vaddr - FB_V) */
	rod_end = b->area[FB_A_TABREL].addr + b->area[FB_A_TABREL].size;
	data_end = b->area[FB_A_DATA].addr + b->area[FB_A_DATA].size;
	{
		uint64_t file_end = FB_FILE_V + (data_end - FB_V);
		uint8_t *img = calloc(1, file_end);

		if (!img)
			abort();
		for (uint32_t a = 0; a < b->narea; a++) {
			struct fb_area *r = &b->area[a];

			memcpy(img + FB_FILE_V + (r->addr - FB_V), r->bytes, r->size);
		}
		fb_put(&f, img, file_end);
		free(img);
	}

	/* section headers of the allocated sections */
	fb_name(&names, "");
	for (uint32_t a = 0; a < b->narea; a++) {
		struct fb_area *r = &b->area[a];
		Elf64_Shdr *s = &sh[r->shidx];

		if (a >= FB_A_FUNC0)
			snprintf(nm, sizeof(nm), ".text.f%u", a - FB_A_FUNC0);
		else
			snprintf(nm, sizeof(nm), "%s", a == FB_A_TEXT ? ".text" : a == FB_A_RODATA ?
				 ".rodata" : a == FB_A_DATA ? ".data" : a == FB_A_TABABS ?
				 ".fgk_abs" : ".fgk_rel");
		s->sh_name = fb_name(&names, nm);
		s->sh_type = SHT_PROGBITS;
		s->sh_flags = SHF_ALLOC | (a == FB_A_TEXT || a >= FB_A_FUNC0 ? SHF_EXECINSTR :
					   a == FB_A_DATA ? SHF_WRITE : 0);
		s->sh_addr = r->addr;
		s->sh_offset = FB_FILE_V + (r->addr - FB_V);
		s->sh_size = r->size;
		s->sh_addralign = r->align;
	}
	/* .fgk_reserve: NOBITS room after the last function section */
	sh[reserve].sh_name = fb_name(&names, ".fgk_reserve");
	sh[reserve].sh_type = SHT_NOBITS;
	sh[reserve].sh_flags = SHF_ALLOC | SHF_WRITE;
	sh[reserve].sh_addr = b->text_end;
	sh[reserve].sh_offset = FB_FILE_V + (b->text_end - FB_V);
	sh[reserve].sh_size = b->reserve;
	sh[reserve].sh_addralign = 1;

	/* symbols */
	for (uint32_t a = 0; a < b->narea; a++) {
		Elf64_Sym *s = &sym[FB_SYM_SECT(a)];

		s->st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
		s->st_value = b->area[a].addr;
		s->st_shndx = b->area[a].shidx;
		xndx[FB_SYM_SECT(a)] = b->area[a].shidx;
	}
	fb_name(&strs, "");
	sym[FB_SYM_ABS(b)].st_name = fb_name(&strs, "abs_sym");
	sym[FB_SYM_ABS(b)].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE);
	sym[FB_SYM_ABS(b)].st_shndx = SHN_ABS;
	sym[FB_SYM_ABS(b)].st_value = b->abs_value;
	sym[FB_SYM_WEAK(b)].st_name = fb_name(&strs, "weak_sym");
	sym[FB_SYM_WEAK(b)].st_info = ELF64_ST_INFO(STB_WEAK, STT_NOTYPE);
	for (uint32_t k = 0; k < b->nfunc; k++) {
		Elf64_Sym *s = &sym[FB_SYM_FUNC(b, k)];
		const struct fb_area *r = &b->area[FB_A_FUNC0 + k];

		snprintf(nm, sizeof(nm), "f%u", k);
		s->st_name = fb_name(&strs, nm);
		s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s->st_value = r->addr;
		s->st_size = r->size;
		s->st_shndx = r->shidx;
		xndx[FB_SYM_FUNC(b, k)] = r->shidx;
	}
	for (uint32_t i = 0; i < nsym; i++) {
		if (sym[i].st_shndx >= SHN_LORESERVE && sym[i].st_shndx != SHN_ABS) {
			sym[i].st_shndx = SHN_XINDEX;
		} else if (xndx[i] >= SHN_LORESERVE) {
			sym[i].st_shndx = SHN_XINDEX;
		}
		if (sym[i].st_shndx != SHN_XINDEX)
			xndx[i] = 0;
	}

	/* non-allocated sections */
	fb_pad(&f, 8);
	sh[symtab].sh_name = fb_name(&names, ".symtab");
	sh[symtab].sh_type = SHT_SYMTAB;
	sh[symtab].sh_offset = fb_put(&f, sym, (uint64_t)nsym * sizeof(*sym));
	sh[symtab].sh_size = (uint64_t)nsym * sizeof(*sym);
	sh[symtab].sh_link = strtab;
	sh[symtab].sh_info = FB_SYM_ABS(b);
	sh[symtab].sh_addralign = 8;
	sh[symtab].sh_entsize = sizeof(*sym);
	if (shndx) {
		sh[shndx].sh_name = fb_name(&names, ".symtab_shndx");
		sh[shndx].sh_type = SHT_SYMTAB_SHNDX;
		sh[shndx].sh_offset = fb_put(&f, xndx, (uint64_t)nsym * 4);
		sh[shndx].sh_size = (uint64_t)nsym * 4;
		sh[shndx].sh_link = symtab;
		sh[shndx].sh_addralign = 4;
		sh[shndx].sh_entsize = 4;
	}
	for (uint32_t a = 0; a < b->narea; a++) {
		struct fb_area *r = &b->area[a];
		Elf64_Shdr *s = &sh[r->relidx];

		if (!r->relidx)
			continue;
		fb_pad(&f, 8);
		s->sh_offset = f.n;
		for (uint32_t i = 0; i < r->nrel; i++) {
			Elf64_Rela e = { .r_offset = r->addr + r->rel[i].off,
					 .r_info = ELF64_R_INFO(r->rel[i].sym, r->rel[i].type),
					 .r_addend = r->rel[i].addend };

			fb_put(&f, &e, sizeof(e));
		}
		snprintf(nm, sizeof(nm), ".rela%s", (const char *)names.p + sh[r->shidx].sh_name);
		s->sh_name = fb_name(&names, nm);
		s->sh_type = SHT_RELA;
		s->sh_flags = SHF_INFO_LINK;
		s->sh_size = (uint64_t)r->nrel * sizeof(Elf64_Rela);
		s->sh_link = symtab;
		s->sh_info = r->shidx;
		s->sh_addralign = 8;
		s->sh_entsize = sizeof(Elf64_Rela);
	}
	sh[strtab].sh_name = fb_name(&names, ".strtab");
	sh[strtab].sh_type = SHT_STRTAB;
	sh[strtab].sh_offset = fb_put(&f, strs.p, strs.n);
	sh[strtab].sh_size = strs.n;
	sh[strtab].sh_addralign = 1;
	if (note) {
		uint32_t hdr[3] = { 6, 0, KASLR_NOTE_FUNCTIONS };

		if (b->note_desc) {
			descsz = b->note_descsz;
		} else {
			descsz = fb_default_note(b, desc);
		}
		hdr[1] = descsz;
		fb_pad(&f, 4);
		sh[note].sh_name = fb_name(&names, ".note.kaslr");
		sh[note].sh_type = SHT_NOTE;
		sh[note].sh_offset = fb_put(&f, hdr, sizeof(hdr));
		fb_put(&f, "KASLR\0\0\0", 8);
		fb_put(&f, b->note_desc ? b->note_desc : desc, descsz);
		fb_pad(&f, 4);
		sh[note].sh_size = f.n - sh[note].sh_offset;
		sh[note].sh_addralign = 4;
	}
	sh[shstr].sh_name = fb_name(&names, ".shstrtab");
	sh[shstr].sh_type = SHT_STRTAB;
	sh[shstr].sh_offset = fb_put(&f, names.p, names.n);
	sh[shstr].sh_size = names.n;
	sh[shstr].sh_addralign = 1;

	/* headers */
	fb_pad(&f, 8);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = b->entry_func ? b->area[FB_A_FUNC0 + b->entry_func - 1].addr : FB_V;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 3;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shoff = f.n;
	if (nsh >= SHN_LORESERVE) {
		eh.e_shnum = 0;
		sh[0].sh_size = nsh;
	} else {
		eh.e_shnum = (uint16_t)nsh;
	}
	if (shstr >= SHN_LORESERVE) {
		eh.e_shstrndx = SHN_XINDEX;
		sh[0].sh_link = shstr;
	} else {
		eh.e_shstrndx = (uint16_t)shstr;
	}
	fb_put(&f, sh, (uint64_t)nsh * sizeof(*sh));
	memset(ph, 0, sizeof(ph));
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R | PF_X;
	ph[0].p_offset = FB_FILE_V;
	ph[0].p_vaddr = FB_V;
	ph[0].p_paddr = FB_P;
	ph[0].p_filesz = b->text_end - FB_V;
	ph[0].p_memsz = b->text_end + b->reserve - FB_V;
	ph[0].p_align = 0x1000;
	ph[1] = ph[0];
	ph[1].p_flags = PF_R;
	ph[1].p_vaddr = b->area[FB_A_RODATA].addr;
	ph[1].p_offset = FB_FILE_V + (ph[1].p_vaddr - FB_V);
	ph[1].p_paddr = FB_P + (ph[1].p_vaddr - FB_V);
	ph[1].p_filesz = ph[1].p_memsz = rod_end - ph[1].p_vaddr;
	ph[2] = ph[1];
	ph[2].p_flags = PF_R | PF_W;
	ph[2].p_vaddr = b->area[FB_A_DATA].addr;
	ph[2].p_offset = FB_FILE_V + (ph[2].p_vaddr - FB_V);
	ph[2].p_paddr = FB_P + (ph[2].p_vaddr - FB_V);
	ph[2].p_filesz = ph[2].p_memsz = data_end - ph[2].p_vaddr;
	memcpy(f.p, &eh, sizeof(eh));
	memcpy(f.p + sizeof(eh), ph, sizeof(ph));

	free(b->buf);
	b->buf = f.p;
	b->size = f.n;
	free(names.p);
	free(strs.p);
	free(sh);
	free(sym);
	free(xndx);
}

/* ------------------------------------------------------------- oracle */

/*
 * The order of n sections after the draws (range[d], value[d]), d <
 * ndraws: Fisher-Yates replayed from position n-1 down, each draw read as
 * a mixed-radix numeral whose digits are the j of consecutive positions
 * (j_i = J mod (i+1), then J / (i+1) for the next), its range exactly the
 * product of theirs.  order[k] is the section placed k-th.  Returns 0
 * when the draws do not decode into exactly n-1 positions.
 */
static inline int fb_replay(uint32_t n, const uint64_t *range, const uint64_t *value,
			    uint32_t ndraws, uint32_t *order)
{
	uint32_t i = n - 1;
	int ok = 1;

	for (uint32_t k = 0; k < n; k++)
		order[k] = k;
	for (uint32_t d = 0; d < ndraws && ok; d++) {
		uint64_t rem = range[d], J = value[d];

		if (J >= rem)
			ok = 0;
		while (ok && rem > 1) {
			uint64_t j;
			uint32_t t;

			if (i == 0 || rem % ((uint64_t)i + 1)) {
				ok = 0;
				break;
			}
			j = J % ((uint64_t)i + 1);
			J /= (uint64_t)i + 1;
			rem /= (uint64_t)i + 1;
			t = order[i];
			order[i] = order[j];
			order[j] = t;
			i--;
		}
	}
	return ok && i == 0;
}

/*
 * New link addresses of the functions after the draws: fb_replay(), then
 * the functions laid out one after the other at their alignments from the
 * first one's address.  Returns what fb_replay() returned.
 */
static inline int fb_oracle_layout(const struct fb *b, const uint64_t *range, const uint64_t *value,
				   uint32_t ndraws, uint64_t *newaddr)
{
	uint32_t n = b->nfunc, *order = malloc(n * sizeof(*order));
	uint64_t cur = b->area[FB_A_FUNC0].addr;
	int ok;

	if (!order)
		abort();
	ok = fb_replay(n, range, value, ndraws, order);
	for (uint32_t k = 0; k < n; k++) {
		const struct fb_area *f = &b->area[FB_A_FUNC0 + order[k]];

		cur = fb_align_up(cur, f->align);
		newaddr[order[k]] = cur;
		cur += f->size;
	}
	free(order);
	return ok;
}

/* where area a is after the shuffle (functions move, the rest stays) */
static inline uint64_t fb_oracle_area(const struct fb *b, const uint64_t *newaddr, int64_t a)
{
	return a >= FB_A_FUNC0 ? newaddr[a - FB_A_FUNC0] : b->area[a].addr;
}

/* S + A (- P), S and P where the shuffle and new_vbase put them */
static inline uint64_t fb_oracle_value(const struct fb *b, const uint64_t *newaddr,
				       uint64_t delta, uint32_t area, const struct fb_rel *r)
{
	int64_t sa = fb_sym_area(b, r->sym);
	uint64_t S = fb_sym_value(b, r->sym), v;

	if (sa >= 0)
		S = S - b->area[sa].addr + fb_oracle_area(b, newaddr, sa) + delta;
	v = S + (uint64_t)r->addend;
	if (fb_is_pc(r->type))
		v -= fb_oracle_area(b, newaddr, area) + r->off + delta;
	return fb_width(r->type) == 8 ? v : (uint32_t)v;
}

struct fb_tab_ent {
	uint64_t key;
	uint32_t pos;
};

static inline int fb_tab_cmp(const void *x, const void *y)
{
	const struct fb_tab_ent *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static inline uint64_t fb_rd(const uint8_t *p, unsigned w)
{
	uint64_t v = 0;

	memcpy(&v, p, w);
	return v;
}

/*
 * Every byte a shuffle of b is responsible for, in the loaded image d
 * (offset 0 = FB_V): function bytes at their new places, padding, every
 * relocated field, both tables sorted by run-time function address with
 * their relative words recomputed, the entry's new offset.  Returns the
 * number of mismatches; msg describes the first.
 */
static inline unsigned fb_oracle(const struct fb *b, const uint8_t *d, const uint64_t *range,
				 const uint64_t *value, uint32_t ndraws, uint64_t new_vbase,
				 uint64_t entry_off, char *msg, size_t msglen)
{
	uint64_t delta = new_vbase - FB_V, *newaddr = calloc(b->nfunc, sizeof(uint64_t));
	uint64_t lo = b->area[FB_A_FUNC0].addr, end = lo;
	unsigned bad = 0;
	uint8_t *cover;

	if (!newaddr)
		abort();
	snprintf(msg, msglen, "none");
#define FB_BAD(...) do { if (bad++ == 0) snprintf(msg, msglen, __VA_ARGS__); } while (0)
	if (!fb_oracle_layout(b, range, value, ndraws, newaddr))
		FB_BAD("the draws do not decode into %u positions", b->nfunc - 1);
	for (uint32_t k = 0; k < b->nfunc; k++) {
		const struct fb_area *f = &b->area[FB_A_FUNC0 + k];

		if (newaddr[k] + f->size > end)
			end = newaddr[k] + f->size;
	}
	if (end > fb_align_up(b->text_end + b->reserve, 0x1000))
		FB_BAD("layout ends past the room");
	/* which bytes relocations own; the rest must be the function's own */
	cover = calloc(1, end - FB_V);
	if (!cover)
		abort();
	for (uint32_t k = 0; k < b->nfunc; k++) {
		const struct fb_area *f = &b->area[FB_A_FUNC0 + k];

		for (uint32_t i = 0; i < f->nrel; i++)
			memset(cover + (newaddr[k] - FB_V) + f->rel[i].off, 1, fb_width(f->rel[i].type));
		for (uint64_t j = 0; j < f->size; j++) {
			uint64_t o = newaddr[k] - FB_V + j;

			if (!cover[o] && d[o] != fb_pattern(FB_A_FUNC0 + k, j))
				FB_BAD("function %u byte %llu", k, (unsigned long long)j);
			cover[o] = 2;
		}
	}
	for (uint64_t o = lo - FB_V; o < end - FB_V; o++)
		if (!cover[o] && d[o] != FGK_PAD_BYTE)
			FB_BAD("padding at 0x%llx", (unsigned long long)o);
	free(cover);

	/* every relocated field outside the tables */
	for (uint32_t a = 0; a < b->narea; a++) {
		const struct fb_area *ar = &b->area[a];

		if (a == FB_A_TABABS || a == FB_A_TABREL)
			continue;
		for (uint32_t i = 0; i < ar->nrel; i++) {
			const struct fb_rel *x = &ar->rel[i];
			uint64_t at = fb_oracle_area(b, newaddr, a) + x->off - FB_V;
			uint64_t want = fb_oracle_value(b, newaddr, delta, a, x);
			uint64_t got = fb_rd(d + at, fb_width(x->type));

			if (got != want)
				FB_BAD("area %u rel %u type %u sym %u: got 0x%llx want 0x%llx", a, i,
				       x->type, x->sym, (unsigned long long)got, (unsigned long long)want);
		}
	}

	/* tables: entries by run-time function address, relative words recomputed */
	for (int t = 0; t < 2; t++) {
		const struct fb_area *ar = &b->area[t == 0 ? FB_A_TABABS : FB_A_TABREL];
		uint32_t n = (uint32_t)(ar->size / FB_TAB_ENT);
		struct fb_tab_ent *e = calloc(n ? n : 1, sizeof(*e));

		if (!e)
			abort();
		for (uint32_t i = 0; i < n; i++) {
			uint32_t id;

			memcpy(&id, ar->bytes + (uint64_t)i * FB_TAB_ENT + 8, 4);
			e[i].key = newaddr[id] + delta;
			e[i].pos = i;
		}
		qsort(e, n, sizeof(*e), fb_tab_cmp);
		for (uint32_t k = 0; k < n; k++) {
			const uint8_t *got = d + (ar->addr - FB_V) + (uint64_t)k * FB_TAB_ENT;
			uint64_t field = ar->addr + delta + (uint64_t)k * FB_TAB_ENT;
			uint32_t id;
			int ok;

			memcpy(&id, ar->bytes + (uint64_t)e[k].pos * FB_TAB_ENT + 8, 4);
			if (t == 0) {
				ok = fb_rd(got, 8) == e[k].key && fb_rd(got + 8, 8) == id;
			} else {
				uint64_t anchor = b->area[FB_A_RODATA].addr + delta + 8ULL * id;

				ok = fb_rd(got, 4) == (uint32_t)(e[k].key - field) &&
				     fb_rd(got + 4, 4) == (uint32_t)(anchor - (field + 4)) &&
				     fb_rd(got + 8, 4) == id;
			}
			if (!ok)
				FB_BAD("table %d entry %u", t, k);
		}
		free(e);
	}
	if (entry_off != (b->entry_func ? newaddr[b->entry_func - 1] - FB_V : 0))
		FB_BAD("entry offset 0x%llx", (unsigned long long)entry_off);
#undef FB_BAD
	free(newaddr);
	return bad;
}

#endif
