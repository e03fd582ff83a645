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

int elf_note_fgk_table_ok(const struct kaslr_fgk_table *t)
{
	uint32_t keysz;
	unsigned len = 0;

	while (len < KASLR_FGK_NAME_MAX && t->name[len])
		len++;
	if (len == 0 || len == KASLR_FGK_NAME_MAX)
		return 0;
	if (t->entsize == 0 || t->entsize > KASLR_FGK_MAX_ENTSIZE)
		return 0;
	if (t->key_kind == KASLR_FGK_KEY_ABS64)
		keysz = 8;
	else if (t->key_kind == KASLR_FGK_KEY_REL32)
		keysz = 4;
	else
		return 0;
	/* entsize <= KASLR_FGK_MAX_ENTSIZE: no sum below wraps */
	if (t->key_off > t->entsize || t->entsize - t->key_off < keysz)
		return 0;
	if (t->key_kind == KASLR_FGK_KEY_REL32 &&
	    (t->key_off % 4 || t->key_off / 4 >= 32 || !(t->rel_mask >> (t->key_off / 4) & 1)))
		return 0;
	for (unsigned w = 0; w < 32; w++)
		if ((t->rel_mask >> w & 1) && 4 * w + 4 > t->entsize)
			return 0;
	return 1;
}

/* One 48-byte table record of the functions note, read and checked. */
static int note_fgk_table(const uint8_t *p, struct kaslr_fgk_table *t)
{
	memcpy(t->name, p, KASLR_FGK_NAME_MAX);
	t->entsize = note_rd32(p + KASLR_FGK_NAME_MAX);
	t->key_off = note_rd32(p + KASLR_FGK_NAME_MAX + 4);
	t->key_kind = note_rd32(p + KASLR_FGK_NAME_MAX + 8);
	t->rel_mask = note_rd32(p + KASLR_FGK_NAME_MAX + 12);
	return elf_note_fgk_table_ok(t);
}

enum ldr_err elf_note_fgkaslr(const struct elf_image *img, struct kaslr_fgk_request *ret)
{
	struct kaslr_fgk_request req;
	uint64_t off, size;
	enum ldr_err err;

	err = elf_note_find(img, KASLR_NOTE_NAME, KASLR_NOTE_FUNCTIONS, &off, &size);
	if (err == LDR_E_DYN_BAD)
		return LDR_E_FGK_NOTE;
	if (err != LDR_OK)
		return err;
	if (size < KASLR_FGK_HEADER || note_rd32(img->file + off) != KASLR_FGK_VERSION)
		return LDR_E_FGK_NOTE;
	memset(&req, 0, sizeof(req));
	req.ntables = note_rd32(img->file + off + 4);
	if (req.ntables > KASLR_FGK_MAX_TABLES ||
	    size != KASLR_FGK_HEADER + (uint64_t)req.ntables * KASLR_FGK_RECORD)
		return LDR_E_FGK_NOTE;
	for (uint32_t i = 0; i < req.ntables; i++)
		if (!note_fgk_table(img->file + off + KASLR_FGK_HEADER + i * KASLR_FGK_RECORD,
				    &req.table[i]))
			return LDR_E_FGK_NOTE;
	*ret = req;
	return LDR_OK;
}
