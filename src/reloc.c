/*
 * reloc.c - applying the relocations elf_parse() found (dynamic RELA/RELR
 * of a PIE, --emit-relocs sections of an ET_EXEC, or Linux's appended
 * table) to the loaded image.  Tables are read from the file, fields are
 * written in the destination; every field is bounds-checked first.
 *
 * A place at link-time virtual address a lives at dest + (a - link_vbase);
 * delta = new_vbase - link_vbase (mod 2^64).
 */
#include <elf.h>
#include <string.h>

#include "reloc.h"
#include "linux_reloc.h"

/* Where -mcmodel=kernel code is linked: the top 2 GiB, which sign-extended
 * 32-bit fields reach. */
#define RELOC_TOP_2G 0xffffffff80000000ULL

struct reloc_ctx {
	const struct elf_image *img;
	uint8_t *dest;              /* NULL: scan for max_vend, write nothing */
	uint64_t delta;
	struct reloc_report *rep;
	uint64_t max_vend;          /* scan: the lowest limit so far, 0 = none */
};

/* dest offset of the width-byte field at link address addr, bounds-checked. */
static int reloc_place(const struct reloc_ctx *c, uint64_t addr, unsigned width,
		       uint64_t *ret_off)
{
	uint64_t off = addr - c->img->link_vbase;

	if (!ldr_in_bounds(off, width, c->img->load_size))
		return 0;
	*ret_off = off;
	return 1;
}

static uint64_t reloc_get64(const struct reloc_ctx *c, uint64_t off)
{
	uint64_t v;

	memcpy(&v, c->dest + off, sizeof(v));
	return v;
}

static void reloc_put64(struct reloc_ctx *c, uint64_t off, uint64_t v)
{
	memcpy(c->dest + off, &v, sizeof(v));
	c->rep->count++;
}

static uint32_t reloc_get32(const struct reloc_ctx *c, uint64_t off)
{
	uint32_t v;

	memcpy(&v, c->dest + off, sizeof(v));
	return v;
}

static void reloc_put32(struct reloc_ctx *c, uint64_t off, uint32_t v)
{
	memcpy(c->dest + off, &v, sizeof(v));
	c->rep->count++;
}

/* NUL-terminated name at strtab[name] inside the file, or NULL. */
static const char *reloc_name(const struct elf_image *img, uint64_t strtab_off,
			      uint64_t strtab_size, uint32_t name)
{
	const uint8_t *s = img->file + strtab_off;

	/* A loop, not memchr: libefi provides only memcpy and memset. */
	for (uint64_t i = name; i < strtab_size; i++)
		if (s[i] == 0)
			return (const char *)s + name;
	return NULL;
}

/*
 * Symbol sym of a table of count entries at file offset tab.  Undefined:
 * weak ones read as value 0 and "does not move"; others fail and name the
 * symbol.  Out: *ret_sym.
 */
static enum ldr_err reloc_symbol(struct reloc_ctx *c, uint64_t tab, uint64_t count,
				 uint64_t str_off, uint64_t str_size,
				 uint32_t sym, Elf64_Sym *ret_sym)
{
	Elf64_Sym s;

	if (sym >= count)
		return LDR_E_RELOC_SYMBOL;
	memcpy(&s, c->img->file + tab + (uint64_t)sym * sizeof(s), sizeof(s));
	if (s.st_shndx == SHN_UNDEF && ELF64_ST_BIND(s.st_info) != STB_WEAK) {
		c->rep->sym_name = reloc_name(c->img, str_off, str_size, s.st_name);
		return LDR_E_UNDEF_SYMBOL;
	}
	/* An IFUNC would need its resolver run: not in a kernel. */
	if (ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC)
		return LDR_E_RELOC_SYMBOL;
	*ret_sym = s;
	return LDR_OK;
}

/*
 * One DT_RELA-format table of a PIE.  B (the load bias) is delta:
 *   RELATIVE: B + A    64: S + A    GLOB_DAT, JUMP_SLOT: S
 * where S = st_value + B for a defined symbol, st_value for SHN_ABS and 0
 * for an undefined weak one.
 */
static enum ldr_err reloc_dyn_rela(struct reloc_ctx *c, uint64_t off, uint64_t size)
{
	const struct elf_dyn_info *d = &c->img->dyn;

	for (uint64_t o = 0; o < size; o += sizeof(Elf64_Rela)) {
		Elf64_Rela r;
		Elf64_Sym s = { 0 };
		uint32_t type, sym;
		uint64_t place, S = 0, v;
		enum ldr_err err;

		memcpy(&r, c->img->file + off + o, sizeof(r));
		type = (uint32_t)ELF64_R_TYPE(r.r_info);
		sym = (uint32_t)ELF64_R_SYM(r.r_info);
		c->rep->bad_type = type;
		c->rep->bad_addr = r.r_offset;
		if (type == R_X86_64_NONE)
			continue;
		if (type != R_X86_64_RELATIVE && type != R_X86_64_64 &&
		    type != R_X86_64_GLOB_DAT && type != R_X86_64_JUMP_SLOT)
			return LDR_E_RELOC_TYPE;
		if (!reloc_place(c, r.r_offset, 8, &place))
			return LDR_E_RELOC_TARGET;
		if (type != R_X86_64_RELATIVE && sym != 0) {
			err = reloc_symbol(c, d->symtab_off, d->symtab_count,
					   d->strtab_off, d->strtab_size, sym, &s);
			if (err != LDR_OK)
				return err;
			S = s.st_value;
			if (s.st_shndx != SHN_UNDEF && s.st_shndx != SHN_ABS)
				S += c->delta;
		}
		switch (type) {
		case R_X86_64_RELATIVE:
			v = c->delta + (uint64_t)r.r_addend;
			break;
		case R_X86_64_64:
			v = S + (uint64_t)r.r_addend;
			break;
		default: /* GLOB_DAT, JUMP_SLOT: the psABI ignores the addend */
			v = S;
			break;
		}
		reloc_put64(c, place, v);
	}
	return LDR_OK;
}

/*
 * DT_RELR: an even word is the address of a word to relocate (and starts a
 * run); an odd word is a bitmap whose bit i (1..63) relocates the word at
 * run + (i - 1) * 8, after which the run advances by 63 words.  Each
 * relocated word gets += B.
 */
static enum ldr_err reloc_dyn_relr(struct reloc_ctx *c, uint64_t off, uint64_t size)
{
	uint64_t where = 0;
	int have = 0;

	for (uint64_t o = 0; o < size; o += sizeof(uint64_t)) {
		uint64_t w, place;

		memcpy(&w, c->img->file + off + o, sizeof(w));
		c->rep->bad_type = 0;
		if (!(w & 1)) {
			c->rep->bad_addr = w;
			if (!reloc_place(c, w, 8, &place))
				return LDR_E_RELOC_TARGET;
			reloc_put64(c, place, reloc_get64(c, place) + c->delta);
			where = w + 8;
			have = 1;
			continue;
		}
		/* A bitmap needs a preceding address; runs may not wrap. */
		if (!have || where > UINT64_MAX - 63 * 8)
			return LDR_E_RELR_BAD;
		for (unsigned bit = 1; bit < 64; bit++) {
			uint64_t a = where + (uint64_t)(bit - 1) * 8;

			if (!((w >> bit) & 1))
				continue;
			c->rep->bad_addr = a;
			if (!reloc_place(c, a, 8, &place))
				return LDR_E_RELOC_TARGET;
			reloc_put64(c, place, reloc_get64(c, place) + c->delta);
		}
		where += 63 * 8;
	}
	return LDR_OK;
}

static void reloc_shdr(const struct elf_image *img, unsigned i, Elf64_Shdr *sh)
{
	memcpy(sh, img->file + img->shoff + (uint64_t)i * sizeof(*sh), sizeof(*sh));
}

/* Signed 32-bit field value + d still representable (sign- or zero-ext). */
static int reloc_fits32(uint32_t v, int64_t d, int is_signed)
{
	int64_t r;

	if (d > (INT64_C(1) << 33) || d < -(INT64_C(1) << 33))
		return 0;
	if (is_signed) {
		r = (int64_t)(int32_t)v + d;
		return r >= INT32_MIN && r <= INT32_MAX;
	}
	r = (int64_t)v + d;
	return r >= 0 && r <= (int64_t)UINT32_MAX;
}

/*
 * The 32 bits elf_load() stores at loaded offset off: file bytes of the
 * segment there, zero in BSS and gaps.  (Segments do not overlap.)
 */
static uint32_t reloc_loaded32(const struct elf_image *img, uint64_t off)
{
	uint32_t v = 0;

	for (unsigned b = 0; b < 4; b++) {
		uint64_t o = off + b;

		for (unsigned i = 0; i < img->nseg; i++) {
			const struct elf_segment *s = &img->seg[i];

			if (o >= s->load_off && o - s->load_off < s->filesz)
				v |= (uint32_t)img->file[s->offset + (o - s->load_off)] << (8 * b);
		}
	}
	return v;
}

/*
 * Scan: lower c->max_vend for the 32-bit field at loaded offset off.  It
 * holds v (zero- or sign-extended), r = v - link_vbase past the image
 * start; at a new base b it becomes b + r, which must stay <= top
 * (0xffffffff, or 0x7fffffff for 32S).  With the image end E = b +
 * load_size that is E <= top - r + load_size, never more than top + 1 (the
 * 4 or 2 GiB of the type) while the field points inside the image; a
 * field at or past the end (cmp $_end) lowers it by how far past the last
 * byte it points.  A field below the image start (r < 0) bounds how far
 * the image may move down, which is not an end limit: reloc_apply()
 * still checks every field.
 */
static void reloc_limit32(struct reloc_ctx *c, uint64_t off, int is_signed)
{
	const struct elf_image *img = c->img;
	uint32_t v = reloc_loaded32(img, off);
	uint64_t ext = is_signed ? (uint64_t)(int64_t)(int32_t)v : (uint64_t)v;
	int64_t r = (int64_t)(ext - img->link_vbase);
	uint64_t lim = is_signed ? (uint64_t)INT32_MAX + 1 : (uint64_t)UINT32_MAX + 1;

	if (r > 0 && (uint64_t)r >= img->load_size) {
		uint64_t past = (uint64_t)r - img->load_size + 1;

		/* past < lim for any v that fitted at link time; 1 = nowhere */
		lim = past < lim ? lim - past : 1;
	}
	if (c->max_vend == 0 || lim < c->max_vend)
		c->max_vend = lim;
}

/*
 * One --emit-relocs section.  The linker has already stored S + A (or
 * S + A - P) in each field, so a field is adjusted in place:
 *   64, 32, 32S:        + delta when S moves (defined in an SHF_ALLOC section)
 *   PC32, PLT32, PC64:  - delta when S does not move (SHN_ABS, undefined
 *                       weak, symbol 0), since P moves and S stays
 * 32 and 32S are range-checked as zero- and sign-extended values.
 * Scan mode (c->dest NULL) only feeds the 32 and 32S fields that would be
 * adjusted to reloc_limit32().
 */
static enum ldr_err reloc_section(struct reloc_ctx *c, const Elf64_Shdr *rs)
{
	const struct elf_image *img = c->img;
	Elf64_Shdr symtab, strtab;
	uint64_t nsym, str_off = 0, str_size = 0;
	int64_t sd = (int64_t)c->delta;

	reloc_shdr(img, rs->sh_link, &symtab);
	nsym = symtab.sh_size / sizeof(Elf64_Sym);
	if (symtab.sh_link && symtab.sh_link < img->shnum) {
		reloc_shdr(img, symtab.sh_link, &strtab);
		if (strtab.sh_type == SHT_STRTAB &&
		    ldr_in_bounds(strtab.sh_offset, strtab.sh_size, img->file_size)) {
			str_off = strtab.sh_offset;
			str_size = strtab.sh_size;
		}
	}
	for (uint64_t o = 0; o < rs->sh_size; o += sizeof(Elf64_Rela)) {
		Elf64_Rela r;
		Elf64_Sym s = { 0 };
		uint32_t type, sym;
		uint64_t place;
		unsigned width;
		int moves = 0;
		enum ldr_err err;

		memcpy(&r, img->file + rs->sh_offset + o, sizeof(r));
		type = (uint32_t)ELF64_R_TYPE(r.r_info);
		sym = (uint32_t)ELF64_R_SYM(r.r_info);
		c->rep->bad_type = type;
		c->rep->bad_addr = r.r_offset;
		switch (type) {
		case R_X86_64_NONE:
			continue;
		case R_X86_64_64:
		case R_X86_64_PC64:
			width = 8;
			break;
		case R_X86_64_32:
		case R_X86_64_32S:
		case R_X86_64_PC32:
		case R_X86_64_PLT32:
			width = 4;
			break;
		default:
			return LDR_E_RELOC_TYPE;
		}
		if (!reloc_place(c, r.r_offset, width, &place))
			return LDR_E_RELOC_TARGET;
		if (sym != 0) {
			err = reloc_symbol(c, symtab.sh_offset, nsym, str_off, str_size, sym, &s);
			if (err != LDR_OK)
				return err;
			if (s.st_shndx != SHN_UNDEF && s.st_shndx != SHN_ABS) {
				Elf64_Shdr home;

				if (s.st_shndx >= img->shnum)
					return LDR_E_RELOC_SYMBOL;
				reloc_shdr(img, s.st_shndx, &home);
				moves = (home.sh_flags & SHF_ALLOC) != 0;
			}
		}
		if (!c->dest) {
			if (moves && (type == R_X86_64_32 || type == R_X86_64_32S))
				reloc_limit32(c, place, type == R_X86_64_32S);
			continue;
		}
		switch (type) {
		case R_X86_64_64:
			if (moves)
				reloc_put64(c, place, reloc_get64(c, place) + c->delta);
			break;
		case R_X86_64_PC64:
			if (!moves)
				reloc_put64(c, place, reloc_get64(c, place) - c->delta);
			break;
		case R_X86_64_32:
		case R_X86_64_32S:
			if (!moves)
				break;
			if (!reloc_fits32(reloc_get32(c, place), sd, type == R_X86_64_32S))
				return LDR_E_RELOC_RANGE;
			reloc_put32(c, place, reloc_get32(c, place) + (uint32_t)c->delta);
			break;
		default: /* PC32, PLT32 */
			if (moves)
				break;
			if (sd == INT64_MIN || !reloc_fits32(reloc_get32(c, place), -sd, 1))
				return LDR_E_RELOC_RANGE;
			reloc_put32(c, place, reloc_get32(c, place) - (uint32_t)c->delta);
			break;
		}
	}
	return LDR_OK;
}

/* Every non-allocated SHT_RELA section relocating an SHF_ALLOC section. */
static enum ldr_err reloc_sections(struct reloc_ctx *c)
{
	const struct elf_image *img = c->img;

	for (unsigned i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh, tgt;
		enum ldr_err err;

		reloc_shdr(img, i, &sh);
		if (sh.sh_type != SHT_RELA || (sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_info == 0 || sh.sh_info >= img->shnum)
			continue;
		reloc_shdr(img, sh.sh_info, &tgt);
		if (!(tgt.sh_flags & SHF_ALLOC))
			continue;
		/* elf_parse() validated entsize, bounds and sh_link. */
		err = reloc_section(c, &sh);
		if (err != LDR_OK)
			return err;
	}
	return LDR_OK;
}

/*
 * Relocate dest so that loaded offset 0 runs at new_vbase, from the one
 * source elf_parse() chose; *report says what happened either way.
 * Errors: see reloc.h.
 */
enum ldr_err reloc_apply(const struct elf_image *img, void *dest,
			 uint64_t dest_size, uint64_t new_vbase,
			 struct reloc_report *report)
{
	struct reloc_report scratch;
	struct reloc_ctx c;
	enum ldr_err err = LDR_OK;

	if (!report)
		report = &scratch;
	memset(report, 0, sizeof(*report));
	if (!img || !dest || dest_size < img->load_size)
		return LDR_E_INVAL;
	report->source = img->reloc_kind;
	c.img = img;
	c.dest = dest;
	c.delta = new_vbase - img->link_vbase;
	c.rep = report;
	c.max_vend = 0;

	switch (img->reloc_kind) {
	case ELF_RELOC_NONE:
		return c.delta == 0 ? LDR_OK : LDR_E_NOT_RELOCATABLE;
	case ELF_RELOC_DYNAMIC:
		err = reloc_dyn_rela(&c, img->dyn.rela_off, img->dyn.rela_size);
		if (err == LDR_OK)
			err = reloc_dyn_rela(&c, img->dyn.jmprel_off, img->dyn.jmprel_size);
		if (err == LDR_OK)
			err = reloc_dyn_relr(&c, img->dyn.relr_off, img->dyn.relr_size);
		break;
	case ELF_RELOC_SECTIONS:
		err = reloc_sections(&c);
		break;
	case ELF_RELOC_LINUX:
		err = linux_relocs_apply(img->file + img->linux_relocs.off,
					 img->linux_relocs.len, dest, img->load_size,
					 img->link_vbase, c.delta, &report->count);
		break;
	}
	if (err == LDR_OK) {
		report->bad_type = 0;
		report->bad_addr = 0;
	}
	return err;
}

/*
 * The end limit of an image with --emit-relocs sections linked below the
 * top 2 GiB: the same walk as reloc_apply(), writing nothing.  A walk that
 * stops at a bad entry returns the limit so far: reloc_apply() refuses
 * that entry at every base anyway.
 */
uint64_t reloc_max_vend(const struct elf_image *img)
{
	struct reloc_report scratch;
	struct reloc_ctx c;

	if (!img || img->reloc_kind != ELF_RELOC_SECTIONS || img->link_vbase >= RELOC_TOP_2G)
		return 0;
	memset(&scratch, 0, sizeof(scratch));
	c.img = img;
	c.dest = NULL;
	c.delta = 0;
	c.rep = &scratch;
	c.max_vend = 0;
	(void)reloc_sections(&c);
	return c.max_vend;
}
