/*
 * elfnote.c - walking the notes of a kernel image (untrusted bytes): in
 * PT_NOTE segments and in SHT_NOTE sections.  Each note is
 *
 *   u32 namesz | u32 descsz | u32 type | name, padded | desc, padded
 *
 * padded to the area's alignment (4, or 8 where the area says 8).
 */
#include <elf.h>
#include <string.h>

#include "elfnote.h"

static uint32_t note_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Search one note area [off, off + size) of the file. */
static enum ldr_err note_scan(const struct elf_image *img, uint64_t off, uint64_t size,
			      uint64_t align, const char *name, uint32_t type,
			      uint64_t *ret_off, uint64_t *ret_size)
{
	uint64_t pos = 0, nlen = strlen(name) + 1;

	if (!ldr_in_bounds(off, size, img->file_size))
		return LDR_E_DYN_BAD;
	align = align == 8 ? 8 : 4;
	while (size - pos >= 12) {
		const uint8_t *h = img->file + off + pos;
		uint64_t namesz = note_rd32(h), descsz = note_rd32(h + 4);
		uint64_t npad = ldr_align_up(namesz, align), dpad = ldr_align_up(descsz, align);
		uint64_t body = size - pos - 12;

		/* namesz and descsz are 32-bit: their padded sums cannot wrap.
		 * A broken area is only an error when the broken note is the
		 * one asked for; someone else's junk ends this area's scan. */
		if (npad > body || dpad > body - npad) {
			if (namesz == nlen && npad <= body && memcmp(h + 12, name, nlen) == 0)
				return LDR_E_DYN_BAD;
			return LDR_E_INVAL;
		}
		if (note_rd32(h + 8) == type && namesz == nlen &&
		    memcmp(h + 12, name, nlen) == 0) {
			*ret_off = off + pos + 12 + npad;
			*ret_size = descsz;
			return LDR_OK;
		}
		pos += 12 + npad + dpad;
	}
	return LDR_E_INVAL;
}

enum ldr_err elf_note_find(const struct elf_image *img, const char *name, uint32_t type,
			   uint64_t *ret_off, uint64_t *ret_size)
{
	Elf64_Ehdr eh;
	enum ldr_err err;
	uint64_t i;

	if (img->file_size < sizeof(eh))
		return LDR_E_INVAL;
	memcpy(&eh, img->file, sizeof(eh));
	if (eh.e_phentsize == sizeof(Elf64_Phdr) &&
	    ldr_in_bounds(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), img->file_size)) {
		for (i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			memcpy(&ph, img->file + eh.e_phoff + i * sizeof(ph), sizeof(ph));
			if (ph.p_type != PT_NOTE)
				continue;
			err = note_scan(img, ph.p_offset, ph.p_filesz, ph.p_align, name, type,
					ret_off, ret_size);
			if (err != LDR_E_INVAL)
				return err;
		}
	}
	if (img->shoff) {
		for (i = 0; i < img->shnum; i++) {
			Elf64_Shdr sh;

			memcpy(&sh, img->file + img->shoff + i * sizeof(sh), sizeof(sh));
			if (sh.sh_type != SHT_NOTE)
				continue;
			err = note_scan(img, sh.sh_offset, sh.sh_size, sh.sh_addralign, name, type,
					ret_off, ret_size);
			if (err != LDR_E_INVAL)
				return err;
		}
	}
	return LDR_E_INVAL;
}

enum ldr_err elf_note_vwindow(const struct elf_image *img, uint64_t *ret_start,
			      uint64_t *ret_end)
{
	uint64_t off, size, start, end;
	enum ldr_err err;

	err = elf_note_find(img, KASLR_NOTE_NAME, KASLR_NOTE_VWINDOW, &off, &size);
	if (err == LDR_E_DYN_BAD)
		return LDR_E_OPT_VALUE;
	if (err != LDR_OK)
		return err;
	if (size != 16)
		return LDR_E_OPT_VALUE;
	memcpy(&start, img->file + off, 8);
	memcpy(&end, img->file + off + 8, 8);
	if (start >= end || start % (2 * MIB) || end % (2 * MIB))
		return LDR_E_OPT_VALUE;
	*ret_start = start;
	*ret_end = end;
	return LDR_OK;
}
