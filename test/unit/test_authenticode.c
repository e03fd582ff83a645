/*
 * test_authenticode.c - host tests for src/authenticode.c: the digests of
 * small PE files (test/unit/pe_build.h) are the ones `pesign -h` (Debian's
 * pesign 0.112) prints for the same bytes; a file without a certificate
 * directory entry is hashed as UEFI firmware (EDK II) hashes it; what the
 * digest must and must not cover (CheckSum, the certificate entry and
 * table, every other byte); and hostile headers (truncation at every
 * length, sections and certificate tables outside the file, too many
 * sections) refused without reading outside the bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "authenticode.h"
#include "sha256.h"
#include "pe_build.h"
#include "test.h"

static uint8_t img[64 * 1024];

static void hex_of(const uint8_t *d, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* the digest of s's file as hex, "" on an error */
static const char *digest_of(const struct pb_spec *s, uint64_t *ret_len)
{
	static char h[65];
	uint8_t d[32];
	uint64_t len = pb_build(s, img, sizeof(img));

	*ret_len = len;
	h[0] = 0;
	if (len && authenticode_sha256(img, len, d) == LDR_OK)
		hex_of(d, h);
	return h;
}

/* what pesign -h prints for these files */
static const struct {
	struct pb_spec s;
	const char *pesign;
} vectors[] = {
	/* two sections, no certificate table, a CheckSum */
	{ { .nsect = 2, .sect = { { 0x400, 0x600, 1 }, { 0xa00, 0x200, 2 } }, .ndirs = 16,
	    .checksum = 0x12345678 },
	  "8c7fc06eab5210cbbe26bb438660cc47bc6e1b2a994e7546debaf5f2152475ab" },
	/* sections out of file order, one without raw data, trailing data,
	 * a certificate table */
	{ { .nsect = 3, .sect = { { 0x800, 0x200, 3 }, { 0x400, 0x400, 4 }, { 0xa00, 0, 5 } },
	    .ndirs = 16, .checksum = 0xdeadbeef, .trailing = 0x123, .cert_len = 0x80 },
	  "2520499ee40c716eee91a1bdf6ba3a7807f7fa71dc9818f149710abdde30ab8e" },
	/* trailing data and no certificate table */
	{ { .nsect = 1, .sect = { { 0x400, 0x200, 6 } }, .ndirs = 16, .trailing = 0x10 },
	  "5b179ef0af19b3ea0df234787dc868eaec8752fc1fdaf90f1bfc98d6d0d803dc" },
};

TEST(test_pesign_vectors)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		uint64_t len;
		const char *h = digest_of(&vectors[i].s, &len);

		CHECK(len > 0, "vector %zu builds", i);
		CHECK(strcmp(h, vectors[i].pesign) == 0, "vector %zu: %s, pesign says %s", i, h,
		      vectors[i].pesign);
	}
}

/*
 * Four directories, so no certificate entry: EDK II hashes everything
 * after CheckSum up to SizeOfHeaders (pesign would still skip the bytes
 * where the entry would be).  The expected stream is written out here.
 */
TEST(test_no_certificate_entry)
{
	struct pb_spec s = { .nsect = 2, .sect = { { 0x600, 0x400, 8 }, { 0x400, 0x200, 7 } },
			     .ndirs = 4, .checksum = 1, .trailing = 0x33 };
	uint64_t len = pb_build(&s, img, sizeof(img));
	struct sha256_ctx c;
	uint8_t want[32], got[32];

	sha256_init(&c);
	sha256_update(&c, img, PB_OPT + 64);
	sha256_update(&c, img + PB_OPT + 68, PB_HEADERS - (PB_OPT + 68));
	sha256_update(&c, img + 0x400, 0x200);
	sha256_update(&c, img + 0x600, 0x400);
	sha256_update(&c, img + 0xa00, 0x33);
	sha256_final(&c, want);
	CHECK(authenticode_sha256(img, len, got) == LDR_OK, "four directories: accepted");
	CHECK(memcmp(got, want, 32) == 0, "four directories: the headers after CheckSum whole");
}

/* PE32 (magic 0x10b): its directories 16 bytes earlier than PE32+'s */
TEST(test_pe32)
{
	struct pb_spec s = { .nsect = 1, .sect = { { 0x400, 0x200, 9 } }, .ndirs = 16,
			     .magic = 0x10b, .cert_len = 0x40 };
	uint64_t len = pb_build(&s, img, sizeof(img));
	struct authenticode a;
	uint64_t ent = PB_OPT + 96 + 4 * 8;

	CHECK(authenticode_ranges(img, len, &a) == LDR_OK, "PE32 accepted");
	CHECK(a.n == 4 && a.r[1].off == PB_OPT + 68 && a.r[1].off + a.r[1].len == ent &&
		      a.r[2].off == ent + 8 && a.r[3].off == 0x400,
	      "PE32: the certificate entry at its own offset (%u ranges)", a.n);
	CHECK(a.cert_len == 0x40 && a.cert_off == len - 0x40, "PE32: the certificate table");
}

/* which bytes count: flip each byte of a file, the digest changes exactly
 * where it must */
TEST(test_covered_bytes)
{
	struct pb_spec s = vectors[1].s;
	uint64_t len = pb_build(&s, img, sizeof(img)), ent = PB_OPT + 112 + 4 * 8;
	uint8_t base[32], d[32];
	int wrong = 0, skipped = 0;

	CHECK(authenticode_sha256(img, len, base) == LDR_OK, "base file");
	for (uint64_t i = 0; i < len; i++) {
		int excluded = (i >= PB_OPT + 64 && i < PB_OPT + 68) || (i >= ent && i < ent + 8) ||
			       i >= len - s.cert_len;
		/* header bytes the parser reads (offsets, counts, sizes) change
		 * the ranges themselves: only their being covered is checked */
		enum ldr_err err;

		/* the certificate table's size decides where the trailing
		 * range ends: that it is not hashed itself, the ranges show */
		if (i >= ent + 4 && i < ent + 8)
			continue;
		img[i] ^= 0x01;
		err = authenticode_sha256(img, len, d);
		img[i] ^= 0x01;
		if (err != LDR_OK) {
			skipped++;
			continue;
		}
		if ((memcmp(d, base, 32) == 0) != excluded) {
			wrong++;
			printf("     byte 0x%llx: %s\n", (unsigned long long)i,
			       excluded ? "changed the digest" : "left it as it was");
		}
	}
	CHECK(wrong == 0, "%d bytes covered or left out wrongly", wrong);
	CHECK(skipped < 64, "few flips make the file unreadable (%d)", skipped);
	{
		struct authenticode a;
		int in = 0;

		CHECK(authenticode_ranges(img, len, &a) == LDR_OK, "ranges of the base file");
		for (uint32_t r = 0; r < a.n; r++)
			in |= a.r[r].off < ent + 8 && a.r[r].off + a.r[r].len > ent;
		CHECK(!in, "no range covers the certificate entry");
	}
}

/* the order of the section table does not matter, the file order does */
TEST(test_section_order)
{
	struct pb_spec a = { .nsect = 2, .sect = { { 0x400, 0x200, 1 }, { 0x600, 0x200, 2 } },
			     .ndirs = 16 };
	struct pb_spec b = a;
	struct authenticode r;
	uint64_t len;

	b.sect[0] = a.sect[1];
	b.sect[1] = a.sect[0];
	len = pb_build(&b, img, sizeof(img));
	CHECK(authenticode_ranges(img, len, &r) == LDR_OK, "reversed table accepted");
	CHECK(r.n == 5 && r.r[3].off == 0x400 && r.r[4].off == 0x600,
	      "sections hashed in file order (%u ranges)", r.n);
}

TEST(test_hostile)
{
	struct pb_spec s = vectors[1].s;
	uint64_t len = pb_build(&s, img, sizeof(img));
	uint8_t *copy, d[32];
	int accepted = 0;

	/* truncated at every length: refused, or accepted with every range
	 * inside what is left (ASan checks the reads) */
	for (uint64_t n = 0; n < len; n++) {
		struct authenticode a;

		copy = malloc(n ? n : 1);
		memcpy(copy, img, n);
		if (authenticode_ranges(copy, n, &a) == LDR_OK) {
			accepted++;
			for (uint32_t i = 0; i < a.n; i++)
				CHECK(a.r[i].off <= n && n - a.r[i].off >= a.r[i].len,
				      "length %llu: range %u outside", (unsigned long long)n, i);
		}
		free(copy);
	}
	/* accepted, as firmware counts: at the sections' very end (nothing
	 * after them), and from there plus the certificate table's size on
	 * (the trailing data ending that much earlier): 1 + 0x123 lengths */
	CHECK(accepted == 1 + (int)s.trailing, "%d truncations accepted, want %u", accepted,
	      1 + s.trailing);

	/* a section whose raw data lies past the end */
	pb_build(&s, img, sizeof(img));
	pb_put32(img + PB_SECT + 20, 0xfffffe00);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "section past the end");
	/* a size that wraps with its offset */
	pb_build(&s, img, sizeof(img));
	pb_put32(img + PB_SECT + 16, 0xffffffff);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "section size wraps");
	/* a certificate table larger than what follows the sections */
	pb_build(&s, img, sizeof(img));
	pb_put32(img + PB_OPT + 112 + 4 * 8 + 4, (uint32_t)len);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "certificates too large");
	/* SizeOfHeaders short of the directories, or past the file */
	pb_build(&s, img, sizeof(img));
	pb_put32(img + PB_OPT + 60, PB_OPT + 100);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "headers end in the directories");
	pb_build(&s, img, sizeof(img));
	pb_put32(img + PB_OPT + 60, (uint32_t)len + 1);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "headers past the file");
	/* more sections than any loader takes, a PE offset past the file,
	 * no MZ, an unknown optional header */
	pb_build(&s, img, sizeof(img));
	pb_put16(img + PB_LFANEW + 6, AUTHENTICODE_SECTIONS_MAX + 1);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "too many sections");
	pb_build(&s, img, sizeof(img));
	pb_put32(img + 0x3c, 0xfffffff0);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "e_lfanew past the end");
	pb_build(&s, img, sizeof(img));
	img[0] = 'X';
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "no MZ");
	pb_build(&s, img, sizeof(img));
	pb_put16(img + PB_OPT, 0x107);
	CHECK(authenticode_sha256(img, len, d) == LDR_E_PE_FORMAT, "ROM optional header");
	/* random damage: never a read outside the bytes */
	uint64_t seed = 0x5eed;

	for (int k = 0; k < 2000; k++) {
		pb_build(&s, img, sizeof(img));
		for (int j = 0; j < 4; j++)
			img[test_rand(&seed) % 0x400] = (uint8_t)test_rand(&seed);
		(void)authenticode_sha256(img, len, d);
	}
	CHECK(1, "random damage survived");
}
