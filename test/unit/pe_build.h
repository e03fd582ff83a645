/*
 * pe_build.h - small PE32+ files for the Authenticode tests
 * (test_authenticode.c) and the fuzzer's seeds: DOS header, PE headers
 * with 16 data directories (or fewer), sections with patterned raw data
 * at the offsets asked for, trailing data and a certificate table the
 * directory entry names.  Fields are written where the PE/COFF
 * specification puts them; nothing here knows how the digest is taken.
 */
#ifndef PE_BUILD_H
#define PE_BUILD_H

#include <stdint.h>
#include <string.h>

#define PB_LFANEW   0x80
#define PB_OPT      (PB_LFANEW + 4 + 20)
#define PB_OPTSIZE  240 /* PE32+ with 16 directories */
#define PB_SECT     (PB_OPT + PB_OPTSIZE)
#define PB_HEADERS  0x400

struct pb_section {
	uint32_t raw_off, raw_size; /* PointerToRawData, SizeOfRawData */
	uint8_t fill;               /* the raw data: fill + i for byte i */
};

struct pb_spec {
	uint32_t nsect;
	struct pb_section sect[8];
	uint32_t ndirs;      /* NumberOfRvaAndSizes (16 normally) */
	uint32_t checksum;   /* CheckSum's value */
	uint32_t trailing;   /* bytes after the sections, before the certificates */
	uint32_t cert_len;   /* the certificate table at the end (0: none) */
	uint16_t magic;      /* 0x20b (PE32+) or 0x10b (PE32) */
};

static inline void pb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void pb_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* the file for s into buf (cap bytes); returns its length, 0 if it does not fit */
static inline uint64_t pb_build(const struct pb_spec *s, uint8_t *buf, uint64_t cap)
{
	uint64_t end = PB_HEADERS, len;
	uint16_t magic = s->magic ? s->magic : 0x20b;
	/* PE32's directories start 16 bytes earlier (no 64-bit ImageBase etc.) */
	uint32_t ndirs_at = magic == 0x20b ? 108 : 92, dirs_at = magic == 0x20b ? 112 : 96;

	for (uint32_t i = 0; i < s->nsect; i++)
		if (s->sect[i].raw_off + (uint64_t)s->sect[i].raw_size > end)
			end = s->sect[i].raw_off + (uint64_t)s->sect[i].raw_size;
	len = end + s->trailing + s->cert_len;
	if (len > cap)
		return 0;
	memset(buf, 0, len);
	buf[0] = 'M';
	buf[1] = 'Z';
	pb_put32(buf + 0x3c, PB_LFANEW);
	memcpy(buf + PB_LFANEW, "PE\0\0", 4);
	pb_put16(buf + PB_LFANEW + 4, 0x8664);
	pb_put16(buf + PB_LFANEW + 6, (uint16_t)s->nsect);
	pb_put16(buf + PB_LFANEW + 20, PB_OPTSIZE);
	pb_put16(buf + PB_LFANEW + 22, 0x0022);
	pb_put16(buf + PB_OPT, magic);
	pb_put32(buf + PB_OPT + 16, 0x1000);      /* AddressOfEntryPoint */
	pb_put32(buf + PB_OPT + 32, 0x1000);      /* SectionAlignment */
	pb_put32(buf + PB_OPT + 36, 0x200);       /* FileAlignment */
	pb_put32(buf + PB_OPT + 56, 0x10000);     /* SizeOfImage */
	pb_put32(buf + PB_OPT + 60, PB_HEADERS);  /* SizeOfHeaders */
	pb_put32(buf + PB_OPT + 64, s->checksum);
	pb_put16(buf + PB_OPT + 68, 10);          /* Subsystem: EFI application */
	pb_put32(buf + PB_OPT + ndirs_at, s->ndirs);
	for (uint32_t d = 0; d < s->ndirs && d < 16; d++) {
		/* every directory but the certificate table names something */
		pb_put32(buf + PB_OPT + dirs_at + 8 * d, d == 4 ? 0 : 0x1000 + 0x10 * d);
		pb_put32(buf + PB_OPT + dirs_at + 8 * d + 4, d == 4 ? 0 : 0x10);
	}
	if (s->cert_len && s->ndirs > 4) {
		pb_put32(buf + PB_OPT + dirs_at + 8 * 4, (uint32_t)(len - s->cert_len));
		pb_put32(buf + PB_OPT + dirs_at + 8 * 4 + 4, s->cert_len);
	}
	for (uint32_t i = 0; i < s->nsect; i++) {
		uint8_t *h = buf + PB_SECT + 40 * i;

		h[0] = '.';
		h[1] = (uint8_t)('a' + i);
		pb_put32(h + 8, s->sect[i].raw_size);                /* VirtualSize */
		pb_put32(h + 12, 0x1000 + 0x1000 * i);               /* VirtualAddress */
		pb_put32(h + 16, s->sect[i].raw_size);
		pb_put32(h + 20, s->sect[i].raw_off);
		pb_put32(h + 36, 0x60000020);
		for (uint32_t k = 0; k < s->sect[i].raw_size; k++)
			buf[s->sect[i].raw_off + k] = (uint8_t)(s->sect[i].fill + k);
	}
	for (uint32_t k = 0; k < s->trailing; k++)
		buf[end + k] = (uint8_t)(0x5a ^ k);
	for (uint32_t k = 0; k < s->cert_len; k++)
		buf[end + s->trailing + k] = (uint8_t)(0xc3 + 7 * k);
	if (s->cert_len >= 8) {
		/* WIN_CERTIFICATE: dwLength, wRevision 0x200, wCertificateType 2 */
		pb_put32(buf + end + s->trailing, s->cert_len);
		pb_put16(buf + end + s->trailing + 4, 0x200);
		pb_put16(buf + end + s->trailing + 6, 2);
	}
	return len;
}

#endif
