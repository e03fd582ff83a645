/*
 * elfnote.h - ELF notes a kernel can carry to tell the loader something:
 * the virtual window it wants its base drawn from, and that it wants its
 * functions shuffled (function-granular KASLR, fgkaslr.h).
 *
 *   name "KASLR" (namesz 6), type KASLR_NOTE_VWINDOW (1),
 *   desc 16 bytes: uint64_t start, uint64_t end  (little-endian, virtual,
 *   [start, end) must lie inside the loader's default window and hold the
 *   whole image; both 2 MiB-aligned)
 *
 *   name "KASLR", type KASLR_NOTE_FUNCTIONS (2), desc (little-endian):
 *     uint32_t version (1), uint32_t ntables (0..KASLR_FGK_MAX_TABLES),
 *     then ntables records of KASLR_FGK_RECORD (48) bytes:
 *       char name[32]      section name, NUL-terminated, NUL-padded
 *       uint32_t entsize   bytes per entry
 *       uint32_t key_off   offset of the sort key inside an entry
 *       uint32_t key_kind  KASLR_FGK_KEY_ABS64 or KASLR_FGK_KEY_REL32
 *       uint32_t rel_mask  bit i: the 32-bit word at offset 4 * i is
 *                          PC-relative (the key's word included when the
 *                          key is REL32): corrected when its entry moves
 *     naming the tables the kernel keeps sorted by code address.
 *
 * Carried in a PT_NOTE segment or in an SHT_NOTE section (e.g. added with
 * `objcopy --add-section .note.kaslr=FILE`).
 */
#ifndef ELFNOTE_H
#define ELFNOTE_H

#include "elf_load.h"
#include "kaslr_boot.h"

/* the protocol's own constants (kaslr_boot.h), for the loader's code */
#define KASLR_NOTE_NAME      KB_NOTE_NAME
#define KASLR_NOTE_VWINDOW   KB_NOTE_VWINDOW
#define KASLR_NOTE_FUNCTIONS KB_NOTE_FUNCTIONS

#define KASLR_FGK_VERSION    1u
#define KASLR_FGK_MAX_TABLES 8u
#define KASLR_FGK_NAME_MAX   32u    /* the name field, its NUL included */
#define KASLR_FGK_RECORD     48u    /* bytes per table record */
#define KASLR_FGK_HEADER     8u     /* version, ntables */
#define KASLR_FGK_MAX_ENTSIZE 4096u

/* How an entry's sort key gives a code address. */
enum kaslr_fgk_key {
	KASLR_FGK_KEY_ABS64 = 1,  /* uint64_t: the address itself */
	KASLR_FGK_KEY_REL32 = 2,  /* int32_t: address minus the field's own address */
};

/* One table of the note, checked: name fits, key and every relative word
 * lie inside an entry, REL32 keys are 4-aligned words marked in rel_mask. */
struct kaslr_fgk_table {
	char name[KASLR_FGK_NAME_MAX];
	uint32_t entsize, key_off, key_kind, rel_mask;
};

struct kaslr_fgk_request {
	uint32_t ntables;
	struct kaslr_fgk_table table[KASLR_FGK_MAX_TABLES];
};

/*
 * Find the first note called name (NUL-terminated, compared with the
 * note's namesz including its NUL) of the given type in img's PT_NOTE
 * segments and SHT_NOTE sections.  On success *ret_off / *ret_size give
 * its descriptor's bytes inside img->file.
 * Errors: LDR_E_INVAL (not found), LDR_E_DYN_BAD (a malformed note area).
 */
enum ldr_err elf_note_find(const struct elf_image *img, const char *name, uint32_t type,
			   uint64_t *ret_off, uint64_t *ret_size);

/*
 * The virtual window the kernel asks for, if it carries the note.
 * Returns LDR_OK and sets *ret_start and *ret_end when present and well formed;
 * LDR_E_INVAL when absent; LDR_E_OPT_VALUE when present but malformed
 * (wrong size, unaligned, empty or reversed range).
 */
enum ldr_err elf_note_vwindow(const struct elf_image *img, uint64_t *ret_start,
			      uint64_t *ret_end);

/*
 * Whether the kernel asks for function-granular KASLR, and which sorted
 * tables it names.  Returns LDR_OK and fills *ret when the note is present
 * and well formed; LDR_E_INVAL when absent; LDR_E_FGK_NOTE when present but
 * malformed (wrong size, unknown version or key kind, more than
 * KASLR_FGK_MAX_TABLES tables, an empty or unterminated name, an entry size
 * of 0 or above KASLR_FGK_MAX_ENTSIZE, a key or relative word outside its
 * entry, a REL32 key that is not a marked 4-aligned word).
 */
enum ldr_err elf_note_fgkaslr(const struct elf_image *img, struct kaslr_fgk_request *ret);

/* 1 when t passes the checks elf_note_fgkaslr() makes of each table. */
int elf_note_fgk_table_ok(const struct kaslr_fgk_table *t);

#endif
