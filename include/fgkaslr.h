/*
 * fgkaslr.h - function-granular KASLR: for a kernel that asks for it (the
 * KASLR_NOTE_FUNCTIONS note, elfnote.h), shuffle its function sections
 * inside the text region they span, re-apply every relocation for the new
 * layout, and re-sort the tables it keeps sorted by code address.
 * Documented for kernel authors in include/PROTOCOL.md.
 */
#ifndef FGKASLR_H
#define FGKASLR_H

#include <stdint.h>

#include "elf_load.h"
#include "elfnote.h"
#include "ldr.h"
#include "reloc.h"

/* Largest sh_addralign of a function section (the kernel's own alignment). */
#define FGK_MAX_ALIGN (2 * MIB)

/* What one fully seeded draw can give at most: the DRBG's 256-bit seed. */
#define FGK_SEED_BITS 256

/* The byte the padding between shuffled functions is filled with (int3). */
#define FGK_PAD_BYTE 0xcc

/* Memory for the core's tables; alloc returns NULL when it has none.  Every
 * block reaches free wiped (it said where the functions went). */
struct fgk_alloc {
	void *(*alloc)(void *ctx, uint64_t size);
	void (*free)(void *ctx, void *p, uint64_t size);
	void *ctx;
};

/*
 * One uniform index in [0, n) (n >= 1) into *ret_idx, or an error that
 * fgk_apply() passes on; e.g. a wrapper around drbg_below(), the same
 * callback slot_pick() takes.
 */
typedef enum ldr_err (*fgk_draw_fn)(void *ctx, uint64_t n, uint64_t *ret_idx);

/*
 * What fgk_check() / fgk_apply() found and did, for the log line.  Filled
 * on success and, as far as it got, on failure (a diagnostic, like
 * struct reloc_report).  Addresses are link-time; the loader prints them
 * only when verbose.
 */
struct fgk_report {
	uint32_t functions;         /* function sections shuffled (n) */
	uint32_t moved;             /* of them, how many changed address */
	uint64_t region_start;      /* link address of the first function section */
	uint64_t region_size;       /* bytes they span as linked */
	uint64_t room_need;         /* bytes any order may need (see fgkaslr.c) */
	uint64_t room_have;         /* bytes up to the next section or segment end */
	uint64_t perm_millibits;    /* floor(1000 * log2(n!)) */
	uint64_t entropy_millibits; /* min(perm_millibits, 1000 * FGK_SEED_BITS) */
	uint32_t tables;            /* tables re-sorted */
	uint64_t table_entries;     /* entries in them */
	int32_t bad_table;          /* index into the note of a failing table, or -1 */
	uint64_t entry_off;         /* the entry's loaded offset after the shuffle */
	struct reloc_report reloc;  /* what relocation did (count, failing type/place) */
};

/*
 * Everything that can be checked before a layout is drawn, without the
 * loaded image: the image kind, the function sections (every SHT_PROGBITS
 * section with SHF_ALLOC | SHF_EXECINSTR, without SHF_WRITE, not empty,
 * whose name starts with ".text."), that they form one run inside one
 * executable PT_LOAD with nothing else allocated between them, their
 * alignments, the room after them, and the tables req names.  Fills rep
 * (functions, region, room, entropy).  Uses a for scratch memory and frees
 * it before returning.
 * Errors: LDR_E_INVAL (NULL argument, alloc incomplete),
 * LDR_E_FGK_NOT_SECTIONS, LDR_E_FGK_NO_FUNCTIONS, LDR_E_FGK_LAYOUT,
 * LDR_E_FGK_ROOM, LDR_E_FGK_TABLE, LDR_E_NOMEM.
 */
enum ldr_err fgk_check(const struct elf_image *img, const struct kaslr_fgk_request *req,
		       const struct fgk_alloc *a, struct fgk_report *rep);

/*
 * Function-granular KASLR in place of reloc_apply(): dest holds the image
 * as elf_load() copied it (dest_size >= img->load_size).  After the checks
 * of fgk_check(): a uniformly random order of the function sections
 * (Fisher-Yates with exactly uniform draws; several positions share one
 * draw(dctx, range) with range <= 2^62, see fgkaslr.c), laid out from the
 * region's start each at its own alignment; every relocation re-applied
 * with reloc_apply_map() for that layout and for loaded offset 0 running
 * at new_vbase; the sections moved there, padding filled with
 * FGK_PAD_BYTE; each table of req stably re-sorted by the code address its
 * key gives, PC-relative words of moved entries corrected.
 * rep->entry_off is where the entry point went (img->entry_off when it is
 * not in a function section).
 * Memory from a, all given back before returning: about 50 bytes per
 * function section, 33 per section, 8 per symbol, the region's size, and
 * 12 bytes per entry plus the size of the largest table.
 * Errors: those of fgk_check(); LDR_E_INVAL (dest too small, draw NULL or
 * returning an index out of range); whatever draw returned; those of
 * reloc_apply_map(); LDR_E_RELOC_RANGE (a corrected relative table word no
 * longer fits).  On error dest must be discarded.
 */
enum ldr_err fgk_apply(const struct elf_image *img, const struct kaslr_fgk_request *req,
		       void *dest, uint64_t dest_size, uint64_t new_vbase,
		       fgk_draw_fn draw, void *dctx, const struct fgk_alloc *a,
		       struct fgk_report *rep);

/* floor(1000 * log2(n!)), exact to the last millibit for every n < 2^32. */
uint64_t fgk_log2_factorial_milli(uint64_t n);

#endif
