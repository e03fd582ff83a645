/*
 * pe.c - the section table of a PE32+ image: DOS header -> PE signature ->
 * COFF header -> optional header (magic 0x20b) -> section headers, and
 * the certificate table's size (is the file signed?).  The
 * bytes are untrusted (a file on disk, or firmware-loaded memory whose
 * headers are checked all the same): every offset is checked before use.
 */
#include <string.h>

#include "pe.h"

#define PE_DOS_LFANEW   0x3c
#define PE_COFF_SIZE    20
#define PE_SECT_SIZE    40
#define PE_OPT_MAGIC64  0x20b
#define PE_MAX_SECTIONS 96
#define PE_OPT_NDIRS    108 /* PE32+: NumberOfRvaAndSizes */
#define PE_OPT_DIRS     112 /* PE32+: the data directories */
#define PE_DIR_SECURITY 4   /* the certificate table */

/* the optional header's offset and size, checked */
static enum ldr_err pe_opt_header(const uint8_t *b, uint64_t len, uint64_t *ret_opt,
				  uint32_t *ret_size, uint32_t *ret_nsect)
{
	uint64_t pe, coff, opt;
	uint32_t nsect, optsize;

	if (!ldr_in_bounds(0, 0x40, len) || b[0] != 'M' || b[1] != 'Z')
		return LDR_E_PE_FORMAT;
	pe = ldr_le32(b + PE_DOS_LFANEW);
	if (!ldr_in_bounds(pe, 4 + PE_COFF_SIZE, len) || memcmp(b + pe, "PE\0\0", 4) != 0)
		return LDR_E_PE_FORMAT;
	coff = pe + 4;
	nsect = ldr_le16(b + coff + 2);
	optsize = ldr_le16(b + coff + 16);
	opt = coff + PE_COFF_SIZE;
	if (nsect > PE_MAX_SECTIONS || optsize < 2 || !ldr_in_bounds(opt, optsize, len) ||
	    ldr_le16(b + opt) != PE_OPT_MAGIC64)
		return LDR_E_PE_FORMAT;
	*ret_opt = opt;
	*ret_size = optsize;
	*ret_nsect = nsect;
	return LDR_OK;
}

enum ldr_err pe_signature_size(const void *img, uint64_t len, uint64_t *ret_size)
{
	const uint8_t *b = img;
	uint64_t opt;
	uint32_t optsize, nsect, ndirs;
	enum ldr_err err;

	err = pe_opt_header(b, len, &opt, &optsize, &nsect);
	if (err != LDR_OK)
		return err;
	if (optsize < PE_OPT_DIRS)
		return LDR_E_PE_FORMAT;
	ndirs = ldr_le32(b + opt + PE_OPT_NDIRS);
	if (ndirs <= PE_DIR_SECURITY) {
		*ret_size = 0;
		return LDR_OK;
	}
	if (!ldr_in_bounds(PE_OPT_DIRS, (uint64_t)(PE_DIR_SECURITY + 1) * 8, optsize))
		return LDR_E_PE_FORMAT;
	*ret_size = ldr_le32(b + opt + PE_OPT_DIRS + PE_DIR_SECURITY * 8 + 4);
	return LDR_OK;
}

enum ldr_err pe_find_section(const void *img, uint64_t len, enum pe_view view,
			     const char *name, struct pe_section *ret)
{
	const uint8_t *b = img;
	char want[PE_NAME_LEN] = { 0 };
	uint64_t opt, sect;
	uint32_t nsect, optsize, i;
	size_t nl = strlen(name);
	enum ldr_err err;

	if (nl == 0 || nl > PE_NAME_LEN)
		return LDR_E_INVAL;
	memcpy(want, name, nl);
	err = pe_opt_header(b, len, &opt, &optsize, &nsect);
	if (err != LDR_OK)
		return err;
	sect = opt + optsize;
	if (!ldr_in_bounds(sect, (uint64_t)nsect * PE_SECT_SIZE, len))
		return LDR_E_PE_FORMAT;
	for (i = 0; i < nsect; i++) {
		const uint8_t *s = b + sect + (uint64_t)i * PE_SECT_SIZE;
		uint32_t vsize = ldr_le32(s + 8), rva = ldr_le32(s + 12);
		uint32_t rawsize = ldr_le32(s + 16), rawoff = ldr_le32(s + 20);
		uint64_t off = view == PE_VIEW_FILE ? rawoff : rva;
		uint64_t size = vsize < rawsize ? vsize : rawsize;

		if (memcmp(s, want, PE_NAME_LEN) != 0)
			continue;
		if (!ldr_in_bounds(off, size, len))
			return LDR_E_PE_FORMAT;
		ret->off = off;
		ret->size = size;
		return LDR_OK;
	}
	return LDR_E_PE_NO_SECTION;
}
