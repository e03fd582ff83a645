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
#include <stddef.h>
#include <string.h>

#include "reloc.h"
#include "linux_reloc.h"

/* Where -mcmodel=kernel code is linked: the top 2 GiB, which sign-extended
 * 32-bit fields reach. */
#define RELOC_TOP_2G 0xffffffff80000000ULL
/* symbol tables with extended section numbers looked at (a kernel has one) */
#define RELOC_MAX_XNDX 4

struct reloc_ctx {
	const struct elf_image *img;
	uint8_t *dest;              /* NULL: scan for max_vend, write nothing */
	uint64_t delta;
	struct reloc_report *rep;
	uint64_t max_vend;          /* scan: the lowest limit so far, 0 = none */
	const struct reloc_map *map;  /* NULL: no section moves on its own */
	/* the SHT_SYMTAB_SHNDX sections (extended section numbers), found
	 * in one pass the first time a symbol needs one */
	int xndx_scanned;
	unsigned nxndx;
	struct {
		uint32_t symtab;
		uint64_t off, count;
	} xndx[RELOC_MAX_XNDX];
	/* map->symcache for the symbol table cache_symtab (the first one
	 * used): per symbol, once resolved, RELOC_CACHE_* bits and its
	 * section's displacement in the high 32 bits */
	uint64_t *cache, cache_n;
	uint32_t cache_symtab;
};

#define RELOC_CACHE_READY 1u
#define RELOC_CACHE_MOVES 2u

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
	return ldr_get64(c->dest + off);
}

static void reloc_put64(struct reloc_ctx *c, uint64_t off, uint64_t v)
{
	ldr_put64(c->dest + off, v);
	c->rep->count++;
}

static uint32_t reloc_get32(const struct reloc_ctx *c, uint64_t off)
{
	return ldr_get32(c->dest + off);
}

static void reloc_put32(struct reloc_ctx *c, uint64_t off, uint32_t v)
{
	ldr_put32(c->dest + off, v);
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

/* One 64-bit field of section header i (offsetof(Elf64_Shdr, field)):
 * what the per-relocation lookups read, not the whole 64-byte header. */
static uint64_t reloc_shdr_u64(const struct elf_image *img, uint32_t i, size_t field)
{
	uint64_t v;

	memcpy(&v, img->file + img->shoff + (uint64_t)i * sizeof(Elf64_Shdr) + field, sizeof(v));
	return v;
}

/* The map's entry of section i, or NULL (no map, or i past it). */
static const struct reloc_sec *reloc_map_sec(const struct reloc_ctx *c, uint32_t i)
{
	return c->map && i < c->map->nsec ? &c->map->sec[i] : NULL;
}

/*
 * Find the SHT_SYMTAB_SHNDX sections (at most RELOC_MAX_XNDX, in bounds):
 * one pass over the section headers, the first time one is needed, so
 * that no file can make every symbol lookup walk the whole table.
 */
static void reloc_scan_xndx(struct reloc_ctx *c)
{
	const struct elf_image *img = c->img;

	c->xndx_scanned = 1;
	for (uint32_t i = 1; i < img->shnum && c->nxndx < RELOC_MAX_XNDX; i++) {
		Elf64_Shdr sh;

		elf_shdr(img, i, &sh);
		if (sh.sh_type != SHT_SYMTAB_SHNDX ||
		    !ldr_in_bounds(sh.sh_offset, sh.sh_size, img->file_size))
			continue;
		c->xndx[c->nxndx].symtab = sh.sh_link;
		c->xndx[c->nxndx].off = sh.sh_offset;
		c->xndx[c->nxndx].count = sh.sh_size / sizeof(uint32_t);
		c->nxndx++;
	}
}

/*
 * The section a defined symbol lives in: st_shndx, or for SHN_XINDEX its
 * entry in the symbol table's SHT_SYMTAB_SHNDX.  Reserved indexes other
 * than SHN_ABS and SHN_XINDEX (SHN_COMMON, processor-specific) and indexes
 * past the section table are errors; SHN_ABS gives 0 ("does not move").
 */
static enum ldr_err reloc_sym_section(struct reloc_ctx *c, uint32_t symtab, uint32_t sym,
				      const Elf64_Sym *s, uint32_t *ret_sec)
{
	uint32_t sec = s->st_shndx;

	if (sec == SHN_ABS) {
		*ret_sec = 0;
		return LDR_OK;
	}
	if (sec == SHN_XINDEX) {
		unsigned k = 0;

		if (!c->xndx_scanned)
			reloc_scan_xndx(c);
		while (k < c->nxndx && c->xndx[k].symtab != symtab)
			k++;
		if (k == c->nxndx || sym >= c->xndx[k].count)
			return LDR_E_RELOC_SYMBOL;
		memcpy(&sec, c->img->file + c->xndx[k].off + (uint64_t)sym * sizeof(sec), sizeof(sec));
	} else if (sec >= SHN_LORESERVE) {
		return LDR_E_RELOC_SYMBOL;
	}
	if (sec == 0 || sec >= c->img->shnum)
		return LDR_E_RELOC_SYMBOL;
	*ret_sec = sec;
	return LDR_OK;
}

/* The symbol table a relocation section uses, and its names. */
struct reloc_symtab {
	uint32_t index;                /* section number */
	uint64_t off, count;           /* entries inside the file */
	uint64_t str_off, str_size;    /* its string table, or 0 size */
};

/*
 * What the relocations against symbol sym need: whether S moves with the
 * image (defined in an SHF_ALLOC section) and how far its section moved
 * inside the image (map).  A symbol of a movable section must lie inside
 * it, its end included.
 * Errors: those of reloc_symbol() and reloc_sym_section();
 * LDR_E_RELOC_SYMBOL for a symbol outside its movable section.
 */
static enum ldr_err reloc_resolve(struct reloc_ctx *c, const struct reloc_symtab *st, uint32_t sym,
				  int *ret_moves, uint64_t *ret_ds)
{
	const struct reloc_sec *m;
	Elf64_Sym s;
	uint32_t sec = 0;
	enum ldr_err err;

	err = reloc_symbol(c, st->off, st->count, st->str_off, st->str_size, sym, &s);
	if (err == LDR_OK && s.st_shndx != SHN_UNDEF)
		err = reloc_sym_section(c, st->index, sym, &s, &sec);
	if (err != LDR_OK)
		return err;
	*ret_moves = 0;
	*ret_ds = 0;
	if (sec == 0)
		return LDR_OK;
	m = reloc_map_sec(c, sec);
	if (!m) {
		*ret_moves = (reloc_shdr_u64(c->img, sec, offsetof(Elf64_Shdr, sh_flags)) &
			      SHF_ALLOC) != 0;
		return LDR_OK;
	}
	if ((m->flags & RELOC_SEC_MOVABLE) &&
	    (s.st_value < m->addr || s.st_value - m->addr > m->size))
		return LDR_E_RELOC_SYMBOL;
	*ret_moves = (m->flags & RELOC_SEC_ALLOC) != 0;
	*ret_ds = (uint64_t)m->disp;
	return LDR_OK;
}

/*
 * Resolve every symbol of st into the cache in one pass in table order
 * (sequential reads, where looking them up relocation by relocation jumps
 * around the table).  A symbol that would fail is left unresolved, so that
 * the relocation using it, if any, reports it; an unused broken symbol is
 * no error.
 */
static void reloc_cache_fill(struct reloc_ctx *c, const struct reloc_symtab *st)
{
	uint64_t n = c->cache_n < st->count ? c->cache_n : st->count;

	if (n > UINT32_MAX)
		n = UINT32_MAX;
	for (uint64_t i = 1; i < n; i++) {
		int moves;
		uint64_t ds;

		if (reloc_resolve(c, st, (uint32_t)i, &moves, &ds) == LDR_OK &&
		    (int64_t)ds == (int32_t)ds)
			c->cache[i] = (uint64_t)(uint32_t)ds << 32 | RELOC_CACHE_READY |
				      (moves ? RELOC_CACHE_MOVES : 0);
	}
	c->rep->sym_name = NULL;
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
 * S + A - P) in each field, so a field is adjusted in place.  With
 * dS = how far S's section moved inside the image (map) plus delta when S
 * moves with the image (defined in an SHF_ALLOC section), and dP the same
 * for the place (whose section always moves with the image):
 *   64, 32, 32S:        + dS               (written when S moves)
 *   PC32, PLT32, PC64:  + dS - dP          (written when it is not 0 or S
 *                                           does not move: SHN_ABS,
 *                                           undefined weak, symbol 0)
 * 32 and 32S are range-checked as zero- and sign-extended values, PC32 and
 * PLT32 as signed ones: a result that does not fit is refused.
 * With a map, a place in a section that moved is found at its new offset
 * (or at its link-time one, map->places_unmoved, when the caller moves
 * the bytes afterwards; the value is the same), and a section's SHF_ALLOC comes from the map (one small entry instead
 * of a 64-byte header read per relocation: a kernel with a section per
 * function has tens of thousands).  A place in a movable section must lie
 * inside it, and a symbol of a movable section must lie inside it (its end
 * included): anything else could not be said to move with it.  (Checked
 * whether or not this draw happened to move the section, so that
 * acceptance never depends on it.)  With map->symcache, the symbols of
 * the first symbol table used are resolved once, in table order, and the
 * results reused: a 40,000-function kernel has half a million relocations
 * against a hundred thousand symbols.
 * Scan mode (c->dest NULL) only feeds the 32 and 32S fields that would be
 * adjusted to reloc_limit32().
 */
static enum ldr_err reloc_section(struct reloc_ctx *c, const Elf64_Shdr *rs)
{
	const struct elf_image *img = c->img;
	Elf64_Shdr symtab, strtab, tgt;
	struct reloc_symtab st = { 0 };
	const struct reloc_sec *pm = reloc_map_sec(c, rs->sh_info);
	int64_t dp = pm ? pm->disp : 0;
	int pmov = pm && (pm->flags & RELOC_SEC_MOVABLE);

	elf_shdr(img, rs->sh_link, &symtab);
	elf_shdr(img, rs->sh_info, &tgt);
	st.index = rs->sh_link;
	st.off = symtab.sh_offset;
	st.count = symtab.sh_size / sizeof(Elf64_Sym);
	if (symtab.sh_link && symtab.sh_link < img->shnum) {
		elf_shdr(img, symtab.sh_link, &strtab);
		if (strtab.sh_type == SHT_STRTAB &&
		    ldr_in_bounds(strtab.sh_offset, strtab.sh_size, img->file_size)) {
			st.str_off = strtab.sh_offset;
			st.str_size = strtab.sh_size;
		}
	}
	if (c->cache && c->cache_symtab == 0) {
		c->cache_symtab = rs->sh_link;
		reloc_cache_fill(c, &st);
	}
	for (uint64_t o = 0; o < rs->sh_size; o += sizeof(Elf64_Rela)) {
		Elf64_Rela r;
		uint32_t type, sym;
		uint64_t place;
		unsigned width;
		int moves = 0;
		uint64_t ds = 0, adj;
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
		if (pmov && (r.r_offset < tgt.sh_addr ||
				!ldr_in_bounds(r.r_offset - tgt.sh_addr, width, tgt.sh_size)))
			return LDR_E_RELOC_TARGET;
		if (!reloc_place(c, r.r_offset + (c->map && c->map->places_unmoved ? 0 : (uint64_t)dp),
				 width, &place))
			return LDR_E_RELOC_TARGET;
		if (sym != 0) {
			uint64_t slot = 0;

			if (c->cache && rs->sh_link == c->cache_symtab && sym < c->cache_n)
				slot = c->cache[sym];
			if (slot & RELOC_CACHE_READY) {
				moves = (slot & RELOC_CACHE_MOVES) != 0;
				ds = (uint64_t)(int64_t)(int32_t)(uint32_t)(slot >> 32);
			} else {
				err = reloc_resolve(c, &st, sym, &moves, &ds);
				if (err != LDR_OK)
					return err;
			}
		}
		if (!c->dest) {
			if (moves && (type == R_X86_64_32 || type == R_X86_64_32S))
				reloc_limit32(c, place, type == R_X86_64_32S);
			continue;
		}
		/* mod 2^64; read as signed (two's complement) for range checks */
		if (moves)
			ds += c->delta;
		adj = ds - ((uint64_t)dp + c->delta);
		switch (type) {
		case R_X86_64_64:
			if (moves)
				reloc_put64(c, place, reloc_get64(c, place) + ds);
			break;
		case R_X86_64_PC64:
			if (!moves || adj != 0)
				reloc_put64(c, place, reloc_get64(c, place) + adj);
			break;
		case R_X86_64_32:
		case R_X86_64_32S:
			if (!moves)
				break;
			if (!reloc_fits32(reloc_get32(c, place), (int64_t)ds, type == R_X86_64_32S))
				return LDR_E_RELOC_RANGE;
			reloc_put32(c, place, reloc_get32(c, place) + (uint32_t)ds);
			break;
		default: /* PC32, PLT32 */
			if (moves && adj == 0)
				break;
			if (!reloc_fits32(reloc_get32(c, place), (int64_t)adj, 1))
				return LDR_E_RELOC_RANGE;
			reloc_put32(c, place, reloc_get32(c, place) + (uint32_t)adj);
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

		elf_shdr(img, i, &sh);
		if (sh.sh_type != SHT_RELA || (sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_info == 0 || sh.sh_info >= img->shnum)
			continue;
		elf_shdr(img, sh.sh_info, &tgt);
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
	return reloc_apply_map(img, dest, dest_size, new_vbase, NULL, report);
}

/*
 * reloc_apply() with sections that moved on their own inside the image
 * (map, --emit-relocs images only); map NULL is reloc_apply().
 */
enum ldr_err reloc_apply_map(const struct elf_image *img, void *dest,
			     uint64_t dest_size, uint64_t new_vbase,
			     const struct reloc_map *map, struct reloc_report *report)
{
	struct reloc_report scratch;
	struct reloc_ctx c;
	enum ldr_err err = LDR_OK;

	if (!report)
		report = &scratch;
	memset(report, 0, sizeof(*report));
	if (!img || !dest || dest_size < img->load_size)
		return LDR_E_INVAL;
	if (map && (img->reloc_kind != ELF_RELOC_SECTIONS || (map->nsec && !map->sec)))
		return LDR_E_INVAL;
	report->source = img->reloc_kind;
	memset(&c, 0, sizeof(c));
	c.img = img;
	c.dest = dest;
	c.delta = new_vbase - img->link_vbase;
	c.rep = report;
	c.max_vend = 0;
	c.map = map;
	if (map && map->symcache && map->nsymcache) {
		c.cache = map->symcache;
		c.cache_n = map->nsymcache;
		memset(c.cache, 0, (size_t)(c.cache_n * sizeof(*c.cache)));
	}

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
	memset(&c, 0, sizeof(c)); /* no map, no symbol cache, nothing scanned */
	c.img = img;
	c.dest = NULL;
	c.rep = &scratch;
	(void)reloc_sections(&c);
	return c.max_vend;
}
