/*
 * elfnote.h - ELF notes a kernel can carry to tell the loader something;
 * today one: the virtual window it wants its base drawn from.
 *
 *   name "KASLR" (namesz 6), type KASLR_NOTE_VWINDOW (1),
 *   desc 16 bytes: uint64_t start, uint64_t end  (little-endian, virtual,
 *   [start, end) must lie inside the loader's default window and hold the
 *   whole image; both 2 MiB-aligned)
 *
 * Carried in a PT_NOTE segment or in an SHT_NOTE section (e.g. added with
 * `objcopy --add-section .note.kaslr=FILE`).
 */
#ifndef ELFNOTE_H
#define ELFNOTE_H

#include "elf_load.h"
#include "kaslr_boot.h"

/* the protocol's own constants (kaslr_boot.h), for the loader's code */
#define KASLR_NOTE_NAME    KB_NOTE_NAME
#define KASLR_NOTE_VWINDOW KB_NOTE_VWINDOW

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

#endif
