/*
 * fgkaslr.c - function-granular KASLR (see fgkaslr.h): finding the function
 * sections of an --emit-relocs kernel and checking everything about them
 * before anything is drawn, the shuffle and its layout, the byte copy, the
 * re-sort of the kernel's sorted tables, and the entropy report.
 * Relocation itself is reloc_apply_map() (reloc.c) with a displacement per
 * section.  Section headers and names are untrusted bytes: every field is
 * read with memcpy and checked before use; all memory comes from the
 * caller's allocator.
 */
#include <elf.h>
#include <string.h>

#include "fgkaslr.h"

#define FGK_TEXT_PREFIX ".text."

#define FGK_KIND_FUNCTION 1u   /* a function section (fgk_is_function) */
#define FGK_KIND_ALLOC    2u   /* SHF_ALLOC */

struct fgk_sec {
	uint64_t addr, size, align;
	uint64_t new_addr;      /* after the shuffle */
	uint32_t idx;           /* section number */
};

/* One allocation to give back. */
struct fgk_mem {
	void *p;
	uint64_t size;
};

/* allocations alive at once: kinds, sections, order, map, symbol cache,
 * and three for a table's sort (or one for the move) */
#define FGK_MAX_MEM 8

struct fgk_ctx {
	const struct elf_image *img;
	const struct kaslr_fgk_request *req;
	const struct fgk_alloc *a;
	struct fgk_report *rep;
	uint64_t str_off, str_size;        /* section names */
	struct fgk_sec *sec;               /* function sections, by address */
	uint32_t n;
	unsigned seg;                      /* their executable PT_LOAD */
	uint64_t lo, hi, limit;            /* run [lo, hi), room up to limit */
	uint8_t *kind;                     /* per section: FGK_KIND_* */
	uint32_t tab_idx[KASLR_FGK_MAX_TABLES], tab_hits[KASLR_FGK_MAX_TABLES];
	uint64_t tab_addr[KASLR_FGK_MAX_TABLES], tab_size[KASLR_FGK_MAX_TABLES];
	struct fgk_mem mem[FGK_MAX_MEM];
	unsigned nmem;
};

/* ------------------------------------------------------------- memory */

static void *fgk_alloc(struct fgk_ctx *c, uint64_t size)
{
	void *p;

	if (c->nmem == FGK_MAX_MEM)
		return NULL;
	p = c->a->alloc(c->a->ctx, size ? size : 1);
	if (!p)
		return NULL;
	c->mem[c->nmem].p = p;
	c->mem[c->nmem].size = size ? size : 1;
	c->nmem++;
	return p;
}

/*
 * Give back the last allocation (tables are sorted one after the other),
 * wiped: the order, the displacements, the symbol cache and the copy of
 * the text say where each function went, and the memory is the kernel's
 * after the hand-off.
 */
static void fgk_free_last(struct fgk_ctx *c)
{
	c->nmem--;
	ldr_wipe(c->mem[c->nmem].p, (size_t)c->mem[c->nmem].size);
	c->a->free(c->a->ctx, c->mem[c->nmem].p, c->mem[c->nmem].size);
}

static void fgk_free_all(struct fgk_ctx *c)
{
	while (c->nmem)
		fgk_free_last(c);
}

/* count elements of size each, or NULL when the product would not fit */
static void *fgk_alloc_array(struct fgk_ctx *c, uint64_t count, uint64_t size)
{
	if (count > UINT64_MAX / size)
		return NULL;
	return fgk_alloc(c, count * size);
}

/* ------------------------------------------------------------ sorting */

#define FGK_RADIX_BITS 11
#define FGK_RADIX      (1u << FGK_RADIX_BITS)

/*
 * Stable sort of n (key, idx) pairs by key: least-significant-digit radix
 * sort, FGK_RADIX_BITS per pass, over key - min only (code addresses of
 * one kernel differ in their low 20-30 bits: two or three passes), through
 * the scratch arrays tkey/tidx (n entries each) and count (FGK_RADIX).
 * No comparisons, so no branch to mispredict on random keys; O(n) per
 * pass whatever the input.  The result is left in key/idx.
 */
static void fgk_sort(uint64_t *key, uint32_t *idx, uint64_t *tkey, uint32_t *tidx, uint64_t n,
		     uint32_t *count)
{
	uint64_t *sk = key, *dk = tkey, lo = UINT64_MAX, hi = 0;
	uint32_t *si = idx, *di = tidx;

	for (uint64_t i = 0; i < n; i++) {
		if (key[i] < lo)
			lo = key[i];
		if (key[i] > hi)
			hi = key[i];
	}
	for (unsigned shift = 0; n > 1 && shift < 64 && ((hi - lo) >> shift) != 0;
	     shift += FGK_RADIX_BITS) {
		uint32_t sum = 0;

		memset(count, 0, FGK_RADIX * sizeof(*count));
		for (uint64_t i = 0; i < n; i++)
			count[((sk[i] - lo) >> shift) & (FGK_RADIX - 1)]++;
		for (uint32_t d = 0; d < FGK_RADIX; d++) {
			uint32_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (uint64_t i = 0; i < n; i++) {
			uint32_t at = count[((sk[i] - lo) >> shift) & (FGK_RADIX - 1)]++;

			dk[at] = sk[i];
			di[at] = si[i];
		}
		{
			uint64_t *t = sk;
			uint32_t *u = si;

			sk = dk;
			dk = t;
			si = di;
			di = u;
		}
	}
	if (sk != key) {
		memcpy(key, sk, (size_t)n * sizeof(*key));
		memcpy(idx, si, (size_t)n * sizeof(*idx));
	}
}

/* ------------------------------------------------------------ entropy */

/* log2(x) for x >= 1 in fixed point, 32 fractional bits, rounded down
 * (bit by bit: square the mantissa, a carry past 2 is the next bit). */
static uint64_t fgk_log2_fix32(uint64_t x)
{
	unsigned e = 63 - (unsigned)__builtin_clzll(x);
	uint64_t m = e < 63 ? x << (62 - e) : x >> 1;   /* [1, 2) as Q2.62 */
	uint64_t r = (uint64_t)e << 32;

	for (unsigned bit = 32; bit-- > 0;) {
		m = (uint64_t)(((unsigned __int128)m * m) >> 62);
		if (m >> 63) {
			r |= 1ULL << bit;
			m >>= 1;
		}
	}
	return r;
}

/* log2 of a 128-bit x >= 1: of its top 64 bits, plus the bits shifted out
 * (the ones dropped change the result by less than 2^-62) */
static uint64_t fgk_log2_fix32_wide(unsigned __int128 x)
{
	unsigned shift = 0;

	while (x >> 64) {
		x >>= 1;
		shift++;
	}
	return fgk_log2_fix32((uint64_t)x) + ((uint64_t)shift << 32);
}

uint64_t fgk_log2_factorial_milli(uint64_t n)
{
	unsigned __int128 acc = 0, prod = 1;

	/* one logarithm per product of consecutive factors: flushed once it
	 * reaches 2^63, so that the next factor (< 2^64) cannot overflow it */
	for (uint64_t k = 2; k <= n; k++) {
		if (prod >> 63) {
			acc += fgk_log2_fix32_wide(prod);
			prod = 1;
		}
		prod *= k;
	}
	acc += fgk_log2_fix32_wide(prod);
	return (uint64_t)((acc * 1000) >> 32);
}

/* ----------------------------------------------------------- sections */

/*
 * Whether section name sh_name starts with the len bytes of s inside the
 * names table.  Only those bytes are read: a name is never scanned for its
 * end (tens of thousands of them in a table that need not hold a NUL).
 */
static int fgk_name_starts(const struct fgk_ctx *c, uint32_t sh_name, const char *s, uint64_t len)
{
	return ldr_in_bounds(sh_name, len, c->str_size) &&
	       memcmp(c->img->file + c->str_off + sh_name, s, (size_t)len) == 0;
}

/* Whether section sh is one of the function sections that move: named
 * ".text." and at least one more character. */
static int fgk_is_function(const struct fgk_ctx *c, const Elf64_Shdr *sh)
{
	const uint64_t plen = sizeof(FGK_TEXT_PREFIX) - 1;

	if (sh->sh_type != SHT_PROGBITS || sh->sh_size == 0 ||
	    (sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR | SHF_WRITE)) != (SHF_ALLOC | SHF_EXECINSTR))
		return 0;
	return fgk_name_starts(c, sh->sh_name, FGK_TEXT_PREFIX, plen) &&
	       ldr_in_bounds(sh->sh_name, plen + 1, c->str_size) &&
	       c->img->file[c->str_off + sh->sh_name + plen] != 0;
}

/* The section names table (e_shstrndx, or section 0's sh_link when
 * e_shstrndx is SHN_XINDEX); 0 when it is unusable. */
static int fgk_find_names(struct fgk_ctx *c)
{
	const struct elf_image *img = c->img;
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	uint32_t i;

	memcpy(&eh, img->file, sizeof(eh));
	i = eh.e_shstrndx;
	if (i == SHN_XINDEX) {
		elf_shdr(img, 0, &sh);
		i = sh.sh_link;
	}
	if (i == 0 || i >= img->shnum)
		return 0;
	elf_shdr(img, i, &sh);
	if (sh.sh_type != SHT_STRTAB || !ldr_in_bounds(sh.sh_offset, sh.sh_size, img->file_size))
		return 0;
	c->str_off = sh.sh_offset;
	c->str_size = sh.sh_size;
	return 1;
}

/* One function section: checked and recorded as c->sec[k]. */
static enum ldr_err fgk_add_function(struct fgk_ctx *c, uint32_t k, uint32_t i,
				     const Elf64_Shdr *sh)
{
	const struct elf_image *img = c->img;
	uint64_t align = sh->sh_addralign ? sh->sh_addralign : 1;
	int s;

	if (align & (align - 1) || align > FGK_MAX_ALIGN || sh->sh_addr % align)
		return LDR_E_FGK_LAYOUT;
	s = elf_seg_of(img, sh->sh_addr, sh->sh_size);
	if (s < 0 || (img->seg[s].flags & (PF_X | PF_W)) != PF_X)
		return LDR_E_FGK_LAYOUT;
	if (k == 0)
		c->seg = (unsigned)s;
	else if ((unsigned)s != c->seg)
		return LDR_E_FGK_LAYOUT;
	c->sec[k].addr = sh->sh_addr;
	c->sec[k].size = sh->sh_size;
	c->sec[k].align = align;
	c->sec[k].idx = i;
	return LDR_OK;
}

/*
 * One pass over the section headers (tens of thousands of them): which are
 * function sections, which are allocated (c->kind), how many functions,
 * and which sections carry the names of the note's tables.
 */
static enum ldr_err fgk_classify(struct fgk_ctx *c)
{
	const struct elf_image *img = c->img;
	uint32_t n = 0;

	c->kind = fgk_alloc(c, img->shnum);
	if (!c->kind)
		return LDR_E_NOMEM;
	memset(c->kind, 0, img->shnum);
	for (uint32_t i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh;

		elf_shdr(img, i, &sh);
		if (sh.sh_flags & SHF_ALLOC)
			c->kind[i] |= FGK_KIND_ALLOC;
		if (fgk_is_function(c, &sh)) {
			c->kind[i] |= FGK_KIND_FUNCTION;
			n++;
		}
		/* a table's name, its NUL included (elf_note_fgkaslr() checked
		 * that it has one within KASLR_FGK_NAME_MAX) */
		for (uint32_t t = 0; t < c->req->ntables; t++)
			if (fgk_name_starts(c, sh.sh_name, c->req->table[t].name,
					    strlen(c->req->table[t].name) + 1)) {
				c->tab_idx[t] = i;
				c->tab_hits[t]++;
			}
	}
	c->rep->functions = n;
	return n < 2 ? LDR_E_FGK_NO_FUNCTIONS : LDR_OK;
}

/* Collect the function sections, sorted by address, without overlaps. */
static enum ldr_err fgk_functions(struct fgk_ctx *c)
{
	const struct elf_image *img = c->img;
	struct fgk_sec *sorted;
	uint64_t *key;
	uint32_t *idx, n = c->rep->functions, k = 0;
	int in_order = 1;
	enum ldr_err err;

	c->sec = fgk_alloc_array(c, n, sizeof(*c->sec));
	sorted = fgk_alloc_array(c, n, sizeof(*sorted));
	key = fgk_alloc_array(c, 2 * (uint64_t)n, sizeof(*key));
	idx = fgk_alloc_array(c, 2 * (uint64_t)n + FGK_RADIX, sizeof(*idx));
	if (!c->sec || !sorted || !key || !idx)
		return LDR_E_NOMEM;
	for (uint32_t i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh;

		if (!(c->kind[i] & FGK_KIND_FUNCTION))
			continue;
		elf_shdr(img, i, &sh);
		err = fgk_add_function(c, k, i, &sh);
		if (err != LDR_OK)
			return err;
		key[k] = sh.sh_addr;
		idx[k] = k;
		in_order &= k == 0 || key[k - 1] <= key[k];
		k++;
	}
	/* ld writes them in address order: then there is nothing to sort */
	if (!in_order) {
		fgk_sort(key, idx, key + n, idx + n, n, idx + 2 * (uint64_t)n);
		for (uint32_t j = 0; j < n; j++)
			sorted[j] = c->sec[idx[j]];
		memcpy(c->sec, sorted, (size_t)n * sizeof(*sorted));
	}
	/* the scratch arrays were the last three allocations */
	fgk_free_last(c);
	fgk_free_last(c);
	fgk_free_last(c);
	for (uint32_t j = 1; j < n; j++)
		if (c->sec[j].addr - c->sec[j - 1].addr < c->sec[j - 1].size)
			return LDR_E_FGK_LAYOUT;
	c->lo = c->sec[0].addr;
	c->hi = c->sec[n - 1].addr + c->sec[n - 1].size;
	return LDR_OK;
}

/* [a, a + an) and [b, b + bn) share a byte; no sums, so no wrap. */
static int fgk_overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return (a >= b && a - b < bn) || (b >= a && b - a < an);
}

/*
 * Nothing else allocated inside [lo, hi); the room ends at the first
 * section with contents at or after hi, the next segment, or the end of
 * the executable segment's last page (mapped with its permissions),
 * whichever comes first.  SHT_NOBITS sections in the room are reserve the
 * kernel left for the shuffle (no contents, nothing can write them in an
 * executable segment).
 */
static enum ldr_err fgk_room(struct fgk_ctx *c)
{
	const struct elf_image *img = c->img;
	const struct elf_segment *g = &img->seg[c->seg];

	c->limit = ldr_align_up(g->vaddr + g->memsz, PAGE_SIZE);
	for (unsigned s = 0; s < img->nseg; s++)
		if (s != c->seg && img->seg[s].vaddr >= c->hi && img->seg[s].vaddr < c->limit)
			c->limit = img->seg[s].vaddr;
	for (uint32_t i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh;

		if (c->kind[i] != FGK_KIND_ALLOC)
			continue;
		elf_shdr(img, i, &sh);
		if (sh.sh_size == 0)
			continue;
		/* TLS templates have addresses that overlay other sections */
		if ((sh.sh_flags & SHF_TLS) && sh.sh_type == SHT_NOBITS)
			continue;
		if (fgk_overlap(sh.sh_addr, sh.sh_size, c->lo, c->hi - c->lo))
			return LDR_E_FGK_LAYOUT;
		if (sh.sh_type != SHT_NOBITS && sh.sh_addr >= c->hi && sh.sh_addr < c->limit)
			c->limit = sh.sh_addr;
	}
	return LDR_OK;
}

/*
 * The most any order can need, so that acceptance never depends on the
 * draw.  Laid out one after the other, each at its own alignment a_i,
 * section i starts at most a_i - 1 bytes after the previous end:
 *   B1 = sum(size_i + a_i - 1).
 * And with A the largest alignment, starting every section at a multiple
 * of A never starts one earlier than the real layout does (by induction:
 * the real cursor stays at or below a multiple of A), so also
 *   B2 = (align_up(lo, A) - lo) + sum(align_up(size_i, A)).
 * Functions of equal alignment (what compilers emit) make B2 exceed the
 * linked span by less than A; B1 is the better bound for a few large
 * alignments among small ones.  Sums stay far below 2^64: the sizes lie
 * inside one segment and n * FGK_MAX_ALIGN < 2^53.
 */
static uint64_t fgk_room_need(const struct fgk_ctx *c)
{
	uint64_t b1 = 0, b2, big = 1;

	for (uint32_t i = 0; i < c->n; i++) {
		b1 += c->sec[i].size + c->sec[i].align - 1;
		if (c->sec[i].align > big)
			big = c->sec[i].align;
	}
	b2 = ldr_align_up(c->lo, big) - c->lo;
	for (uint32_t i = 0; i < c->n; i++)
		b2 += ldr_align_up(c->sec[i].size, big);
	return b1 < b2 ? b1 : b2;
}

/* Each table of the note: one allocated section of that name with file
 * contents, a whole number of entries, clear of the function room. */
static enum ldr_err fgk_tables(struct fgk_ctx *c)
{
	const struct elf_image *img = c->img;

	for (uint32_t t = 0; t < c->req->ntables; t++) {
		const struct kaslr_fgk_table *tb = &c->req->table[t];
		Elf64_Shdr found = { 0 };

		c->rep->bad_table = (int32_t)t;
		if (c->tab_hits[t] == 1)
			elf_shdr(img, c->tab_idx[t], &found);
		if (c->tab_hits[t] != 1 || !(found.sh_flags & SHF_ALLOC) || found.sh_type == SHT_NOBITS ||
		    found.sh_size % tb->entsize || found.sh_size / tb->entsize > UINT32_MAX ||
		    elf_seg_of(img, found.sh_addr, found.sh_size) < 0 ||
		    fgk_overlap(found.sh_addr, found.sh_size, c->lo, c->limit - c->lo))
			return LDR_E_FGK_TABLE;
		c->tab_addr[t] = found.sh_addr;
		c->tab_size[t] = found.sh_size;
		c->rep->table_entries += found.sh_size / tb->entsize;
	}
	c->rep->bad_table = -1;
	return LDR_OK;
}

/* Everything fgk_check() promises; leaves c->sec allocated. */
static enum ldr_err fgk_scan(struct fgk_ctx *c)
{
	const struct elf_image *img = c->img;
	enum ldr_err err;

	if (img->type != ET_EXEC || img->reloc_kind != ELF_RELOC_SECTIONS ||
	    img->layout != ELF_LAYOUT_VADDR || img->shoff == 0)
		return LDR_E_FGK_NOT_SECTIONS;
	if (!fgk_find_names(c))
		return LDR_E_FGK_NO_FUNCTIONS;
	err = fgk_classify(c);
	if (err == LDR_OK)
		err = fgk_functions(c);
	if (err != LDR_OK)
		return err;
	c->n = c->rep->functions;
	c->rep->region_start = c->lo;
	c->rep->region_size = c->hi - c->lo;
	err = fgk_room(c);
	if (err != LDR_OK)
		return err;
	c->rep->room_need = fgk_room_need(c);
	c->rep->room_have = c->limit - c->lo;
	if (c->rep->room_need > c->rep->room_have)
		return LDR_E_FGK_ROOM;
	err = fgk_tables(c);
	if (err != LDR_OK)
		return err;
	c->rep->perm_millibits = fgk_log2_factorial_milli(c->n);
	c->rep->entropy_millibits = c->rep->perm_millibits < 1000ULL * FGK_SEED_BITS ?
				    c->rep->perm_millibits : 1000ULL * FGK_SEED_BITS;
	return LDR_OK;
}

static enum ldr_err fgk_start(struct fgk_ctx *c, const struct elf_image *img,
			      const struct kaslr_fgk_request *req, const struct fgk_alloc *a,
			      struct fgk_report *rep)
{
	memset(c, 0, sizeof(*c));
	if (!rep)
		return LDR_E_INVAL;
	memset(rep, 0, sizeof(*rep));
	rep->bad_table = -1;
	if (!img || !req || !a || !a->alloc || !a->free || req->ntables > KASLR_FGK_MAX_TABLES)
		return LDR_E_INVAL;
	for (uint32_t t = 0; t < req->ntables; t++)
		if (!elf_note_fgk_table_ok(&req->table[t]))
			return LDR_E_INVAL;
	c->img = img;
	c->req = req;
	c->a = a;
	c->rep = rep;
	rep->entry_off = img->entry_off;
	return LDR_OK;
}

enum ldr_err fgk_check(const struct elf_image *img, const struct kaslr_fgk_request *req,
		       const struct fgk_alloc *a, struct fgk_report *rep)
{
	struct fgk_ctx c;
	enum ldr_err err;

	err = fgk_start(&c, img, req, a, rep);
	if (err == LDR_OK)
		err = fgk_scan(&c);
	fgk_free_all(&c);
	return err;
}

/* ------------------------------------------------------------- layout */

/*
 * Fisher-Yates over order[0..n): for i = n-1 down to 1, swap order[i] with
 * order[j], j uniform in [0, i].  Every permutation comes from exactly one
 * sequence of j, so the order is as uniform as draw is.
 *
 * Consecutive positions share one draw while the product of their ranges
 * stays at most FGK_DRAW_MAX: J uniform in [0, (i+1) * i * ... * (p+1))
 * gives j_i = J mod (i+1), then j_(i-1) = (J / (i+1)) mod i, and so on - a
 * mixed-radix numeral, one-to-one with the tuples (j_i, ..., j_p), so
 * each j is exactly uniform and independent of the others.  For 40,000
 * functions that is four positions per draw: a quarter of the DRBG work.
 */
#define FGK_DRAW_MAX (1ULL << 62)

static enum ldr_err fgk_shuffle(uint32_t *order, uint32_t n, fgk_draw_fn draw, void *dctx)
{
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	for (uint32_t i = n - 1; i > 0;) {
		uint64_t range = (uint64_t)i + 1, J;
		uint32_t p = i;
		enum ldr_err err;

		while (p > 1 && range <= FGK_DRAW_MAX / p) {
			range *= p;   /* position p - 1 draws from [0, p) */
			p--;
		}
		err = draw(dctx, range, &J);
		if (err != LDR_OK)
			return err;
		if (J >= range)
			return LDR_E_INVAL;
		for (; i >= p && i > 0; i--) {
			uint64_t j = J % ((uint64_t)i + 1);
			uint32_t t = order[i];

			J /= (uint64_t)i + 1;
			order[i] = order[j];
			order[j] = t;
		}
	}
	return LDR_OK;
}

/* The map's entry of every section: SHF_ALLOC, from fgk_classify(). */
static void fgk_map_init(const struct fgk_ctx *c, struct reloc_sec *map)
{
	memset(map, 0, (size_t)c->img->shnum * sizeof(*map));
	for (uint32_t i = 1; i < c->img->shnum; i++)
		if (c->kind[i] & FGK_KIND_ALLOC)
			map[i].flags = RELOC_SEC_ALLOC;
}

/*
 * Lay the sections out in the drawn order from lo, each at its own
 * alignment, and record it in map for reloc_apply_map() (in address
 * order: the map is written front to back).  *ret_end: the end of the
 * new layout.
 */
static enum ldr_err fgk_layout(struct fgk_ctx *c, const uint32_t *order, struct reloc_sec *map,
			       uint64_t *ret_end)
{
	uint64_t cur = c->lo;

	for (uint32_t k = 0; k < c->n; k++) {
		struct fgk_sec *s = &c->sec[order[k]];

		s->new_addr = ldr_align_up(cur, s->align);
		cur = s->new_addr + s->size;
	}
	/* cannot happen after fgk_room_need(); checked, not assumed */
	if (cur - c->lo > c->limit - c->lo)
		return LDR_E_FGK_ROOM;
	for (uint32_t k = 0; k < c->n; k++) {
		const struct fgk_sec *s = &c->sec[k];
		struct reloc_sec *m = &map[s->idx];

		m->disp = (int64_t)(s->new_addr - s->addr);
		m->addr = s->addr;
		m->size = s->size;
		m->flags |= RELOC_SEC_MOVABLE;
		c->rep->moved += s->new_addr != s->addr;
	}
	*ret_end = cur;
	return LDR_OK;
}

/*
 * Move the (relocated) function sections to their new places: the region
 * [lo, hi) is copied aside, [lo, max(hi, end)) filled with FGK_PAD_BYTE,
 * and each section copied back in the new order (the writes stream
 * through the region once).
 */
static enum ldr_err fgk_move(struct fgk_ctx *c, const uint32_t *order, uint8_t *dest,
			     uint64_t end)
{
	uint8_t *region = dest + (c->lo - c->img->link_vbase);
	uint8_t *old = fgk_alloc(c, c->hi - c->lo);

	if (!old)
		return LDR_E_NOMEM;
	memcpy(old, region, (size_t)(c->hi - c->lo));
	memset(region, FGK_PAD_BYTE, (size_t)((end > c->hi ? end : c->hi) - c->lo));
	for (uint32_t k = 0; k < c->n; k++) {
		const struct fgk_sec *s = &c->sec[order[k]];

		memcpy(region + (s->new_addr - c->lo), old + (s->addr - c->lo), (size_t)s->size);
	}
	fgk_free_last(c);
	return LDR_OK;
}

/* Symbols in the table the first applied relocation section uses: the
 * size of reloc_apply_map()'s symbol cache (elf_parse() checked it). */
static uint64_t fgk_symbols(const struct fgk_ctx *c)
{
	const struct elf_image *img = c->img;

	for (uint32_t i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh, tgt;

		elf_shdr(img, i, &sh);
		if (sh.sh_type != SHT_RELA || (sh.sh_flags & SHF_ALLOC) || sh.sh_info == 0 ||
		    sh.sh_info >= img->shnum)
			continue;
		elf_shdr(img, sh.sh_info, &tgt);
		if (!(tgt.sh_flags & SHF_ALLOC))
			continue;
		elf_shdr(img, sh.sh_link, &tgt);
		return tgt.sh_size / sizeof(Elf64_Sym);
	}
	return 0;
}

/* The entry point's loaded offset after the shuffle. */
static uint64_t fgk_entry(const struct fgk_ctx *c)
{
	uint64_t e = c->img->entry;
	uint32_t lo = 0, hi = c->n;

	/* the last function section starting at or below e */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->sec[mid].addr <= e)
			lo = mid;
		else
			hi = mid;
	}
	if (e >= c->sec[lo].addr && e - c->sec[lo].addr < c->sec[lo].size)
		return c->img->entry_off + (c->sec[lo].new_addr - c->sec[lo].addr);
	return c->img->entry_off;
}

/* ------------------------------------------------------------- tables */

/*
 * Re-sort one table in dest by the run-time code address of each entry's
 * key (relocation already done), stably; then, for every entry that moved
 * by d bytes, each PC-relative word of rel_mask is lowered by d, so that
 * it still points where it pointed.
 */
static enum ldr_err fgk_sort_table(struct fgk_ctx *c, uint32_t t, uint8_t *dest,
				   uint64_t new_vbase)
{
	const struct kaslr_fgk_table *tb = &c->req->table[t];
	uint64_t off = c->tab_addr[t] - c->img->link_vbase, size = c->tab_size[t];
	uint64_t es = tb->entsize, n = size / es;
	uint8_t *base = dest + off, *copy;
	uint64_t *key;
	uint32_t *idx;
	enum ldr_err err = LDR_OK;

	key = fgk_alloc_array(c, 2 * n, sizeof(*key));
	idx = fgk_alloc_array(c, 2 * n + FGK_RADIX, sizeof(*idx));
	copy = fgk_alloc(c, size);
	if (!key || !idx || !copy)
		return LDR_E_NOMEM;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *f = base + i * es + tb->key_off;

		if (tb->key_kind == KASLR_FGK_KEY_ABS64) {
			memcpy(&key[i], f, sizeof(key[i]));
		} else {
			uint64_t at = new_vbase + off + i * es + tb->key_off;

			key[i] = at + (uint64_t)(int64_t)(int32_t)ldr_le32(f);
		}
		idx[i] = (uint32_t)i;
	}
	fgk_sort(key, idx, key + n, idx + n, n, idx + 2 * n);
	memcpy(copy, base, (size_t)size);
	for (uint64_t k = 0; k < n && err == LDR_OK; k++) {
		uint8_t *e = base + k * es;
		/* |k - idx| * es < size < 2^63 */
		int64_t d = ((int64_t)k - (int64_t)idx[k]) * (int64_t)es;

		memcpy(e, copy + idx[k] * es, (size_t)es);
		for (uint32_t m = d != 0 ? tb->rel_mask : 0; m != 0; m &= m - 1) {
			unsigned w = (unsigned)__builtin_ctz(m);
			int64_t v;
			uint32_t u;

			v = (int64_t)(int32_t)ldr_le32(e + 4 * w) - d;
			if (v < INT32_MIN || v > INT32_MAX) {
				err = LDR_E_RELOC_RANGE;
				break;
			}
			u = (uint32_t)(int32_t)v;
			memcpy(e + 4 * w, &u, sizeof(u));
		}
	}
	fgk_free_last(c);
	fgk_free_last(c);
	fgk_free_last(c);
	if (err != LDR_OK)
		c->rep->bad_table = (int32_t)t;
	return err;
}

enum ldr_err fgk_apply(const struct elf_image *img, const struct kaslr_fgk_request *req,
		       void *dest, uint64_t dest_size, uint64_t new_vbase,
		       fgk_draw_fn draw, void *dctx, const struct fgk_alloc *a,
		       struct fgk_report *rep)
{
	struct fgk_ctx c;
	struct reloc_map map = { 0 };
	struct reloc_sec *secmap;
	uint64_t *symcache, nsym, end;
	uint32_t *order;
	enum ldr_err err;

	err = fgk_start(&c, img, req, a, rep);
	if (err != LDR_OK)
		goto out;
	if (!dest || !draw || dest_size < img->load_size) {
		err = LDR_E_INVAL;
		goto out;
	}
	err = fgk_scan(&c);
	if (err != LDR_OK)
		goto out;
	nsym = fgk_symbols(&c);
	order = fgk_alloc_array(&c, c.n, sizeof(*order));
	secmap = fgk_alloc_array(&c, img->shnum, sizeof(*secmap));
	symcache = fgk_alloc_array(&c, nsym, sizeof(*symcache));
	if (!order || !secmap || !symcache) {
		err = LDR_E_NOMEM;
		goto out;
	}
	fgk_map_init(&c, secmap);
	err = fgk_shuffle(order, c.n, draw, dctx);
	if (err != LDR_OK)
		goto out;
	err = fgk_layout(&c, order, secmap, &end);
	if (err != LDR_OK)
		goto out;
	/* relocated where elf_load() put them (memory in order), then moved */
	map.sec = secmap;
	map.nsec = img->shnum;
	map.symcache = symcache;
	map.nsymcache = nsym;
	map.places_unmoved = 1;
	err = reloc_apply_map(img, dest, dest_size, new_vbase, &map, &rep->reloc);
	if (err == LDR_OK)
		err = fgk_move(&c, order, dest, end);
	if (err != LDR_OK)
		goto out;
	for (uint32_t t = 0; t < req->ntables && err == LDR_OK; t++) {
		err = fgk_sort_table(&c, t, dest, new_vbase);
		rep->tables += err == LDR_OK;
	}
	if (err == LDR_OK)
		rep->entry_off = fgk_entry(&c);
out:
	fgk_free_all(&c);
	return err;
}
