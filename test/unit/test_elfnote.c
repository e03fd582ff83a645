/*
 * test_elfnote.c - the KASLR window note: found in a PT_NOTE segment,
 * ignored when name or type differ, and malformed notes refused.
 */
#include <elf.h>
#include <string.h>

#include "test.h"
#include "elfnote.h"

static uint8_t file[512];

/* an ELF header + one PT_NOTE phdr + note bytes at offset 128 */
static struct elf_image make(const void *note, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct elf_image img;

	memset(file, 0, sizeof(file));
	memset(&eh, 0, sizeof(eh));
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memcpy(file, &eh, sizeof(eh));
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_NOTE;
	ph.p_offset = 128;
	ph.p_filesz = len;
	ph.p_align = 4;
	memcpy(file + sizeof(eh), &ph, sizeof(ph));
	memcpy(file + 128, note, len);
	memset(&img, 0, sizeof(img));
	img.file = file;
	img.file_size = 128 + len;
	return img;
}

static size_t note(uint8_t *out, const char *name, uint32_t type, uint64_t a, uint64_t b,
		   uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	size_t n = 0;

	memcpy(out, &namesz, 4);
	memcpy(out + 4, &descsz, 4);
	memcpy(out + 8, &type, 4);
	n = 12;
	memset(out + n, 0, 8);
	memcpy(out + n, name, namesz);
	n += (namesz + 3) & ~3u;
	memcpy(out + n, &a, 8);
	memcpy(out + n + 8, &b, 8);
	return n + ((descsz + 3) & ~3u);
}

/* the KASLR window note: found, ignored when foreign, refused when malformed */
TEST(test_vwindow_note)
{
	const uint64_t lo = 0xffffffffc0000000ULL, hi = 0xffffffffc8000000ULL;
	uint8_t buf[128], two[256];
	struct elf_image img;
	uint64_t s = 0, e = 0;
	size_t n, m;

	n = note(buf, "KASLR", KASLR_NOTE_VWINDOW, lo, hi, 16);
	img = make(buf, n);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_OK, "note found");
	CHECK(s == lo && e == hi, "window read back");

	/* a different note first, then ours */
	m = note(two, "GNU", 3, 1, 2, 16);
	memcpy(two + m, buf, n);
	img = make(two, m + n);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_OK, "found after another note");

	n = note(buf, "KASLRX", KASLR_NOTE_VWINDOW, lo, hi, 16);
	img = make(buf, n);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_INVAL, "other name ignored");
	n = note(buf, "KASLR", 2, lo, hi, 16);
	img = make(buf, n);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_INVAL, "other type ignored");

	n = note(buf, "KASLR", KASLR_NOTE_VWINDOW, lo, hi, 8);
	img = make(buf, n);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_OPT_VALUE, "descsz 8 refused");
	n = note(buf, "KASLR", KASLR_NOTE_VWINDOW, hi, lo, 16);
	img = make(buf, n);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_OPT_VALUE, "reversed window refused");
	n = note(buf, "KASLR", KASLR_NOTE_VWINDOW, lo + 4096, hi, 16);
	img = make(buf, n);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_OPT_VALUE, "unaligned window refused");

	/* descsz pointing past the area: malformed, not a crash */
	n = note(buf, "KASLR", KASLR_NOTE_VWINDOW, lo, hi, 0xfffffff0u);
	img = make(buf, 40);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_OPT_VALUE, "huge descsz refused");
	/* someone else's broken note does not hide ours in another area, and
	 * is no error when ours is absent */
	m = note(two, "JUNK", 7, 0, 0, 0xfffffff0u);
	img = make(two, 40);
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_INVAL, "foreign broken note ignored");

	/* the note area itself outside the file */
	n = note(buf, "KASLR", KASLR_NOTE_VWINDOW, lo, hi, 16);
	img = make(buf, n);
	img.file_size = 130;
	CHECK(elf_note_vwindow(&img, &s, &e) == LDR_E_OPT_VALUE, "area past EOF refused");
	CHECK(s == lo && e == hi, "outputs untouched on failure");
}
