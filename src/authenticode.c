/*
 * authenticode.c - which bytes of a PE image its Authenticode digest
 * covers (include/authenticode.h): the arithmetic of the PE/COFF
 * specification's image hash, as firmware applies it when it measures an
 * image into PCR 4.  Every offset from the file is checked before use.
 */
#include <string.h>

#include "authenticode.h"
#include "sha256.h"

#define AC_DOS_LFANEW    0x3c
#define AC_COFF_SIZE     20
#define AC_SECT_SIZE     40
#define AC_MAGIC32       0x10b
#define AC_MAGIC64       0x20b
#define AC_OPT_CHECKSUM  64  /* both formats */
#define AC_OPT_HEADERS   60  /* SizeOfHeaders, both formats */
#define AC_DIR_SECURITY  4   /* the certificate table's directory entry */
#define AC_DIR_SIZE      8

static void ac_add(struct authenticode *a, uint64_t off, uint64_t len)
{
	if (len == 0)
		return;
	a->r[a->n].off = off;
	a->r[a->n].len = len;
	a->n++;
}

enum ldr_err authenticode_ranges(const void *img, uint64_t len, struct authenticode *ret)
{
	const uint8_t *b = img;
	uint64_t pe, opt, sect, ndirs_at, dirs_at, headers, sum, cert_size = 0;
	uint64_t checksum_end;
	uint32_t order[AUTHENTICODE_SECTIONS_MAX];
	uint32_t nsect, optsize, ndirs;
	uint16_t magic;
	struct authenticode a;

	memset(&a, 0, sizeof(a));
	if (!ldr_in_bounds(0, 0x40, len) || b[0] != 'M' || b[1] != 'Z')
		return LDR_E_PE_FORMAT;
	pe = ldr_le32(b + AC_DOS_LFANEW);
	if (!ldr_in_bounds(pe, 4 + AC_COFF_SIZE, len) || memcmp(b + pe, "PE\0\0", 4) != 0)
		return LDR_E_PE_FORMAT;
	nsect = ldr_le16(b + pe + 4 + 2);
	optsize = ldr_le16(b + pe + 4 + 16);
	opt = pe + 4 + AC_COFF_SIZE;
	if (nsect > AUTHENTICODE_SECTIONS_MAX || optsize < AC_OPT_CHECKSUM + 4 ||
	    !ldr_in_bounds(opt, optsize, len))
		return LDR_E_PE_FORMAT;
	magic = ldr_le16(b + opt);
	if (magic == AC_MAGIC64) {
		ndirs_at = 108;
		dirs_at = 112;
	} else if (magic == AC_MAGIC32) {
		ndirs_at = 92;
		dirs_at = 96;
	} else {
		return LDR_E_PE_FORMAT;
	}
	if (optsize < ndirs_at + 4)
		return LDR_E_PE_FORMAT;
	ndirs = ldr_le32(b + opt + ndirs_at);
	headers = ldr_le32(b + opt + AC_OPT_HEADERS);
	sect = opt + optsize;
	checksum_end = opt + AC_OPT_CHECKSUM + 4;
	if (headers > len || headers < checksum_end ||
	    !ldr_in_bounds(sect, (uint64_t)nsect * AC_SECT_SIZE, len))
		return LDR_E_PE_FORMAT;

	/* the headers, less CheckSum and the certificate table's entry */
	ac_add(&a, 0, opt + AC_OPT_CHECKSUM);
	if (ndirs <= AC_DIR_SECURITY) {
		ac_add(&a, checksum_end, headers - checksum_end);
	} else {
		uint64_t ent = opt + dirs_at + (uint64_t)AC_DIR_SECURITY * AC_DIR_SIZE;

		if (dirs_at + (uint64_t)(AC_DIR_SECURITY + 1) * AC_DIR_SIZE > optsize ||
		    headers < ent + AC_DIR_SIZE)
			return LDR_E_PE_FORMAT;
		ac_add(&a, checksum_end, ent - checksum_end);
		ac_add(&a, ent + AC_DIR_SIZE, headers - (ent + AC_DIR_SIZE));
		a.cert_off = ldr_le32(b + ent);
		cert_size = ldr_le32(b + ent + 4);
		a.cert_len = cert_size;
		if (cert_size == 0)
			a.cert_off = 0;
	}

	/* the sections with raw data, by PointerToRawData (insertion sort:
	 * stable, as firmware sorts them) */
	uint32_t n = 0;

	for (uint32_t i = 0; i < nsect; i++) {
		const uint8_t *s = b + sect + (uint64_t)i * AC_SECT_SIZE;
		uint64_t raw = ldr_le32(s + 16), at = ldr_le32(s + 20);
		uint32_t j;

		if (raw == 0)
			continue;
		if (!ldr_in_bounds(at, raw, len))
			return LDR_E_PE_FORMAT;
		for (j = n; j > 0 && ldr_le32(b + sect + (uint64_t)order[j - 1] * AC_SECT_SIZE + 20) > at; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	sum = headers;
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *s = b + sect + (uint64_t)order[k] * AC_SECT_SIZE;

		ac_add(&a, ldr_le32(s + 20), ldr_le32(s + 16));
		sum += ldr_le32(s + 16); /* at most 96 * 2^32: no overflow */
	}

	/* what follows, but for the certificate table's size */
	if (len > sum) {
		if (len - sum < cert_size)
			return LDR_E_PE_FORMAT;
		ac_add(&a, sum, len - sum - cert_size);
	}
	*ret = a;
	return LDR_OK;
}

enum ldr_err authenticode_sha256(const void *img, uint64_t len, uint8_t ret[32])
{
	struct authenticode a;
	struct sha256_ctx c;
	enum ldr_err err = authenticode_ranges(img, len, &a);

	if (err != LDR_OK)
		return err;
	sha256_init(&c);
	for (uint32_t i = 0; i < a.n; i++)
		sha256_update(&c, (const uint8_t *)img + a.r[i].off, (size_t)a.r[i].len);
	sha256_final(&c, ret);
	return LDR_OK;
}
