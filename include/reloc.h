/*
 * reloc.h - applying an ELF image's relocations to its loaded copy so that
 * it runs with loaded offset 0 at a new virtual address.  The image must
 * have been validated by elf_parse() and copied by elf_load().
 */
#ifndef RELOC_H
#define RELOC_H

#include <stdint.h>

#include "ldr.h"
#include "elf_load.h"

/*
 * What reloc_apply() did, for the log line.  Filled on success AND on
 * failure (it is a diagnostic, not an out-parameter in the STYLE sense).
 */
struct reloc_report {
	enum elf_reloc_kind source;  /* which table was used */
	uint64_t count;              /* fields written */
	uint32_t bad_type;           /* r_type of the failing relocation */
	uint64_t bad_addr;           /* link-time vaddr of the failing place */
	const char *sym_name;        /* failing symbol's name, or NULL */
};

/*
 * Relocate the image loaded at dest (dest_size >= img->load_size) so that
 * loaded offset 0 runs at virtual address new_vbase; the delta is
 * new_vbase - img->link_vbase (mod 2^64).
 *
 *   ET_DYN:   DT_RELA and DT_JMPREL (R_X86_64_NONE, RELATIVE, 64, GLOB_DAT,
 *             JUMP_SLOT) against DT_SYMTAB, then DT_RELR.
 *   ET_EXEC:  the appended Linux table if any, else the SHT_RELA sections
 *             of --emit-relocs that relocate SHF_ALLOC sections
 *             (R_X86_64_NONE, 64, 32, 32S, PC32, PLT32, PC64).  Fields are
 *             adjusted in place (+ delta) when their symbol lives in an
 *             allocated section; PC-relative ones only when the symbol
 *             does not move (SHN_ABS, undefined weak, index 0: - delta).
 *   ET_EXEC without relocations: fine only when the delta is 0.
 *
 * report may be NULL.
 * Errors: LDR_E_INVAL, LDR_E_NOT_RELOCATABLE, LDR_E_RELOC_TYPE,
 * LDR_E_RELOC_TARGET, LDR_E_RELOC_RANGE, LDR_E_RELOC_SYMBOL,
 * LDR_E_UNDEF_SYMBOL, LDR_E_RELR_BAD, LDR_E_LINUX_RELOCS.  On error dest
 * may be partly relocated and must be discarded.
 */
enum ldr_err reloc_apply(const struct elf_image *img, void *dest,
			 uint64_t dest_size, uint64_t new_vbase,
			 struct reloc_report *report);

/*
 * The highest virtual address the relocated image may end at (new_vbase +
 * load_size <= limit) for its 32-bit absolute fields to keep fitting, or 0
 * for no limit; elf_parse() stores it as img->max_vend (see elf_load.h).
 * Reads img's tables and file only.
 */
uint64_t reloc_max_vend(const struct elf_image *img);

/*
 * Sections that move on their own inside the image (function-granular
 * KASLR, fgkaslr.h), by section number, filled from the section headers;
 * sections at or past nsec are read from their headers and stay.
 */
#define RELOC_SEC_ALLOC   1u   /* SHF_ALLOC: moves with the image */
#define RELOC_SEC_MOVABLE 2u   /* may move on its own: its relocation
				* places and symbols must lie inside it,
				* whether or not this layout moved it */

struct reloc_sec {
	int64_t disp;             /* new link address minus old (0: stays) */
	uint64_t addr, size;      /* link-time extent (for RELOC_SEC_MOVABLE) */
	uint32_t flags;           /* RELOC_SEC_* */
	uint32_t reserved;
};

struct reloc_map {
	const struct reloc_sec *sec;
	uint32_t nsec;
	/* optional scratch (NULL/0: none): one slot per symbol of the symbol
	 * table the relocations use, overwritten; each symbol is then looked
	 * up once instead of once per relocation */
	uint64_t *symcache;
	uint64_t nsymcache;
	/* 1: the movable sections' bytes are still where elf_load() put them
	 * (the caller moves them afterwards); fields are written there, with
	 * the values they need at their new places */
	int places_unmoved;
};

/*
 * reloc_apply() for an image whose movable sections were already copied to
 * their new places in dest (loaded offset = link address + disp - link_vbase),
 * or will be (map->places_unmoved): every --emit-relocs field is adjusted
 * for its place's and its symbol's section's displacement as well as for
 * new_vbase (see src/reloc.c).  map NULL is exactly reloc_apply().
 * Errors: as reloc_apply(); LDR_E_INVAL also when map is given for an
 * image that is not ELF_RELOC_SECTIONS or lacks its arrays;
 * LDR_E_RELOC_TARGET for a place outside its movable target section;
 * LDR_E_RELOC_SYMBOL for a symbol outside its movable section;
 * LDR_E_RELOC_RANGE for a 32-bit result that does not fit.
 */
enum ldr_err reloc_apply_map(const struct elf_image *img, void *dest,
			     uint64_t dest_size, uint64_t new_vbase,
			     const struct reloc_map *map, struct reloc_report *report);

#endif
