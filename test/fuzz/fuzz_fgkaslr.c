/*
 * fuzz_fgkaslr.c - libFuzzer target: function-granular KASLR over section
 * and relocation tables.  Two kinds of input:
 *
 *   "\x7fELF...": a kernel file as is (the payload kernels are seeds):
 *     elf_parse, the note, fgk_check and fgk_apply with draws from a DRBG
 *     seeded by the input's length.
 *   anything else: a recipe for test/unit/fgk_build.h - function sizes and
 *     alignments, reserve, tables, relocations (any type, symbol, addend,
 *     place) - built into a kernel, which is then damaged by edits to its
 *     section headers, relocation entries, symbols and note bytes, all
 *     chosen by the input.  Without edits and with relocations the builder
 *     resolved in range, the result must match fb_oracle() exactly.
 *
 * Either way the image is loaded into a heap buffer of exactly its size
 * (ASan guards both sides), the draws come from the input, and: every
 * allocation is given back, the report is consistent, the entry stays in
 * the image.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_load.h"
#include "elfnote.h"
#include "entropy.h"
#include "fgkaslr.h"
#include "../unit/fgk_build.h"

#define FZ_MAX_LOAD (16 * MIB)

/* the input as a stream of small numbers; zeros once it runs out */
struct fz_in {
	const uint8_t *p;
	size_t n, at;
};

static uint64_t fz_u(struct fz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)(in->at < in->n ? in->p[in->at++] : 0) << (8 * i);
	return v;
}

static long fz_blocks;

static void *fz_alloc(void *ctx, uint64_t size)
{
	(void)ctx;
	fz_blocks++;
	return malloc(size);
}

static void fz_free(void *ctx, void *p, uint64_t size)
{
	(void)ctx;
	(void)size;
	fz_blocks--;
	free(p);
}

/* draws: a DRBG, with input-chosen misbehaviour (an index out of range,
 * a failure) at one input-chosen call, and every index logged */
struct fz_draw {
	struct drbg d;
	uint64_t *log, *range;
	uint32_t n, cap, bad_at, calls;
	uint8_t bad_kind;
};

static enum ldr_err fz_draw(void *ctx, uint64_t n, uint64_t *ret)
{
	struct fz_draw *z = ctx;
	enum ldr_err err;

	if (++z->calls == z->bad_at) {
		if (z->bad_kind & 1)
			return LDR_E_NO_ENTROPY;
		*ret = n + (z->bad_kind >> 1);
		return LDR_OK;
	}
	err = drbg_below(&z->d, n, ret);
	if (err == LDR_OK && z->n < z->cap) {
		z->range[z->n] = n;
		z->log[z->n++] = *ret;
	}
	return err;
}

/*
 * Shuffle file[0, size).  With b (a recipe that was not damaged), the
 * result must be what the oracle says.  Returns nothing: failures abort.
 */
static void fz_run(const uint8_t *file, size_t size, struct fz_in *in, const struct fb *b)
{
	struct elf_image img;
	struct kaslr_fgk_request req;
	struct fgk_report rep;
	struct fgk_alloc a = { fz_alloc, fz_free, NULL };
	struct fz_draw z;
	uint8_t seed[ENTROPY_SEED_SIZE] = { 0 };
	uint64_t base, dsize;
	enum ldr_err cerr, err;
	uint8_t *dest;

	if (elf_parse(file, size, NULL, &img) != LDR_OK || img.load_size > FZ_MAX_LOAD)
		return;
	if (elf_note_fgkaslr(&img, &req) != LDR_OK)
		return;
	cerr = fgk_check(&img, &req, &a, &rep);
	if (fz_blocks != 0)
		abort();
	memset(&z, 0, sizeof(z));
	seed[0] = (uint8_t)fz_u(in, 1);
	drbg_init(&z.d, seed);
	z.cap = img.shnum;
	z.log = calloc(z.cap ? z.cap : 1, sizeof(*z.log));
	z.range = calloc(z.cap ? z.cap : 1, sizeof(*z.range));
	z.bad_at = (uint32_t)fz_u(in, 1) % 64;     /* 0: never */
	z.bad_kind = (uint8_t)fz_u(in, 1);
	base = img.link_vbase + ((fz_u(in, 1) % 5) - 2) * 2 * MIB;
	/* exactly the image's size: ASan reports a byte written on either side */
	dsize = img.load_size;
	dest = malloc(dsize);
	if (!dest || elf_load(&img, dest, dsize) != LDR_OK)
		abort();
	err = fgk_apply(&img, &req, dest, dsize, base, fz_draw, &z, &a, &rep);
	if (fz_blocks != 0)
		abort();
	/* fgk_apply checks what fgk_check does, first */
	if (cerr != LDR_OK && err != cerr)
		abort();
	if (err == LDR_OK) {
		if (rep.functions < 2 || rep.moved > rep.functions || rep.tables != req.ntables ||
		    rep.entropy_millibits > 1000ULL * FGK_SEED_BITS ||
		    rep.entropy_millibits > rep.perm_millibits || rep.entry_off >= img.load_size ||
		    rep.room_need > rep.room_have || z.n == 0 || z.n > rep.functions - 1)
			abort();
		if (b) {
			char msg[256];

			if (fb_oracle(b, dest, z.range, z.log, z.n, base, rep.entry_off, msg,
				      sizeof(msg)) != 0) {
				fprintf(stderr, "oracle: %s\n", msg);
				abort();
			}
		}
	}
	free(z.log);
	free(z.range);
	free(dest);
}

/* A relocation type: the ones the loader applies, and a few it refuses. */
static const uint32_t fz_types[] = {
	R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32, R_X86_64_32S, R_X86_64_PC64,
	R_X86_64_32, R_X86_64_NONE, R_X86_64_GOTPCREL, R_X86_64_8, 0xff,
};

/* Build the recipe's kernel; 1 when every relocation resolved in range
 * at the link addresses (so that the oracle's values are the truth). */
static int fz_recipe(struct fb *b, struct fz_in *in)
{
	uint32_t n = 2 + (uint32_t)(fz_u(in, 1) % 40), nrel, ntab;
	uint32_t ids[64];
	int clean = 1;

	fb_init(b, n);
	for (uint32_t k = 0; k < n; k++) {
		uint64_t v = fz_u(in, 2);

		b->area[FB_A_FUNC0 + k].size = 1 + v % 400;
		b->area[FB_A_FUNC0 + k].align = 1ULL << ((v >> 9) % 8);
	}
	ntab = (uint32_t)fz_u(in, 1);
	fb_tables_size(b, (ntab & 15) % (n + 1), (ntab >> 4) % (n + 1));
	b->reserve = fz_u(in, 2);
	b->entry_func = (uint32_t)(fz_u(in, 1) % (n + 1));
	fb_place(b);
	for (uint32_t i = 0; i < 64 && i < n; i++)
		ids[i] = (uint32_t)(fz_u(in, 1) % n);
	/* a table names each function once when its ids are distinct: the
	 * oracle's order of equal keys would otherwise be its own guess */
	for (uint32_t i = 0; i < n && i < 64; i++)
		for (uint32_t j = 0; j < i; j++)
			if (ids[j] == ids[i])
				ids[i] = i;
	for (uint32_t i = 0; i < n && i < 64; i++)
		for (uint32_t j = 0; j < i; j++)
			if (ids[j] == ids[i])
				clean = 0;
	fb_tables_fill(b, ids, (uint32_t)(b->area[FB_A_TABABS].size / FB_TAB_ENT), ids,
		       (uint32_t)(b->area[FB_A_TABREL].size / FB_TAB_ENT));
	nrel = (uint32_t)fz_u(in, 1);
	for (uint32_t i = 0; i < nrel; i++) {
		uint32_t area = (uint32_t)(fz_u(in, 1) % (b->narea));
		uint32_t type = fz_types[fz_u(in, 1) % (sizeof(fz_types) / sizeof(fz_types[0]))];
		uint32_t sym = (uint32_t)(fz_u(in, 1) % (3 + b->narea + b->nfunc));
		int64_t add = (int16_t)fz_u(in, 2);
		uint64_t size = b->area[area].size, off;
		unsigned w = fb_width(type);

		if (size < 8 || area == FB_A_TABABS || area == FB_A_TABREL)
			continue;
		off = fz_u(in, 2) % (size - 7);
		/* the oracle models the applied types, fields that do not
		 * overlap, and values that fit their fields */
		if (type != R_X86_64_64 && type != R_X86_64_PC32 && type != R_X86_64_PLT32 &&
		    type != R_X86_64_32S && type != R_X86_64_PC64)
			clean = 0;
		for (uint32_t j = 0; j < b->area[area].nrel; j++) {
			const struct fb_rel *o = &b->area[area].rel[j];

			if (o->off < off + w && off < o->off + fb_width(o->type))
				clean = 0;
		}
		fb_rel(b, area, off, type, sym, add);
		if (w == 4) {
			const struct fb_rel *r = &b->area[area].rel[b->area[area].nrel - 1];
			uint64_t v = fb_link_value(b, area, r);

			if ((int64_t)v != (int32_t)v)
				clean = 0;
		}
	}
	fb_finish(b);
	return clean;
}

/* Damage: edits of section headers, relocations, symbols or note bytes. */
static int fz_damage(struct fb *b, struct fz_in *in)
{
	uint32_t edits = (uint32_t)(fz_u(in, 1) % 4);
	Elf64_Ehdr eh;

	memcpy(&eh, b->buf, sizeof(eh));
	for (uint32_t e = 0; e < edits; e++) {
		uint32_t kind = (uint32_t)fz_u(in, 1), sec = (uint32_t)(fz_u(in, 2) % b->shnum);
		uint64_t v = fz_u(in, 8), at;
		Elf64_Shdr sh;

		memcpy(&sh, b->buf + eh.e_shoff + (uint64_t)sec * sizeof(sh), sizeof(sh));
		switch (kind % 4) {
		case 0: /* one field of a section header */
			at = eh.e_shoff + (uint64_t)sec * sizeof(sh) + 8 * ((kind >> 2) % 8);
			memcpy(b->buf + at, &v, (kind >> 5) & 1 ? 4 : 8);
			break;
		default: /* 8 bytes somewhere in that section's contents */
			if (sh.sh_type == SHT_NOBITS || sh.sh_size < 8 ||
			    !ldr_in_bounds(sh.sh_offset, sh.sh_size, b->size))
				break;
			at = sh.sh_offset + fz_u(in, 4) % (sh.sh_size - 7);
			memcpy(b->buf + at, &v, 8);
			break;
		}
	}
	return edits != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size, 0 };

	if (size >= 4 && memcmp(data, ELFMAG, SELFMAG) == 0) {
		struct fz_in tail = { data + size - (size < 8 ? size : 8), size < 8 ? size : 8, 0 };

		fz_run(data, size, &tail, NULL);
	} else {
		struct fb b;
		int clean = fz_recipe(&b, &in);

		clean &= !fz_damage(&b, &in);
		fz_run(b.buf, b.size, &in, clean ? &b : NULL);
		fb_free(&b);
	}
	return 0;
}
