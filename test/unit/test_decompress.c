/*
 * test_decompress.c - host tests for the decompression driver and its xz,
 * LZ4-legacy and zstd backends (gzip/zlib: test_inflate.c): round trips,
 * limits and bombs, truncation sweeps, corrupt bytes, trailing data, the
 * formats that are refused by name, window limits, size hints, allocation
 * failures, and the reserve contract the EFI arena relies on.
 */
#include <stdio.h>

#include "test.h"
#include "decomp_run.h"

enum fmt { F_XZ, F_LZ4, F_ZSTD, F_COUNT };
static const char *const fmt_name[F_COUNT] = { "xz", "lz4", "zstd" };

static struct buf make(enum fmt f, const uint8_t *d, size_t n)
{
	switch (f) {
	case F_XZ: return fx_xz(d, n, 0, 0);
	case F_LZ4: return fx_lz4(d, n);
	default: return fx_zstd(d, n, 3, 1);
	}
}

TEST(test_detect)
{
	static const struct {
		const char *name;
		uint8_t b[6];
		size_t len;
		enum decomp_format want;
	} t[] = {
		{ "xz", { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, DECOMP_XZ },
		{ "xz 5 bytes", { 0xfd, '7', 'z', 'X', 'Z' }, 5, DECOMP_NONE },
		{ "lz4 legacy", { 0x02, 0x21, 0x4c, 0x18 }, 4, DECOMP_LZ4 },
		{ "lz4 frame", { 0x04, 0x22, 0x4d, 0x18 }, 4, DECOMP_LZ4_FRAME },
		{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4, DECOMP_ZSTD },
		{ "zstd 3 bytes", { 0x28, 0xb5, 0x2f }, 3, DECOMP_NONE },
		{ "bzip2", { 'B', 'Z', 'h', '9' }, 4, DECOMP_BZIP2 },
		{ "bzip2 level 0", { 'B', 'Z', 'h', '0' }, 4, DECOMP_NONE },
		{ "lzma", { 0x5d, 0, 0, 0x80, 0 }, 5, DECOMP_LZMA },
		{ "lzo", { 0x89, 'L', 'Z', 'O', 0 }, 5, DECOMP_LZO },
		{ "gzip", { 0x1f, 0x8b }, 2, DECOMP_GZIP },
		{ "zlib", { 0x78, 0x9c }, 2, DECOMP_ZLIB },
		{ "ELF", { 0x7f, 'E', 'L', 'F' }, 4, DECOMP_NONE },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_EQ_U64(decomp_detect(t[i].b, t[i].len), t[i].want, "detect %s", t[i].name);
	CHECK(strcmp(decomp_format_name(DECOMP_XZ), "xz") == 0 &&
	      strcmp(decomp_format_name(DECOMP_LZ4_FRAME), "lz4 frame") == 0 &&
	      strcmp(decomp_format_name((enum decomp_format)99), "unknown") == 0,
	      "format names");
}

/* bzip2, lzma, lzo, lz4 frames: refused with their own code, nothing allocated */
TEST(test_unsupported_named)
{
	static const struct {
		const char *name;
		uint8_t b[16];
		enum ldr_err want;
		const char *word;
	} t[] = {
		{ "bzip2", "BZh91AY&SY\1\2\3\4\5", LDR_E_UNSUPPORTED_BZIP2, "bzip2" },
		{ "lzma", { 0x5d, 0, 0, 0x80, 0, 0xff, 0xff, 0xff, 0xff }, LDR_E_UNSUPPORTED_LZMA, "lzma" },
		{ "lzo", { 0x89, 'L', 'Z', 'O', 0, 0x0d, 0x0a, 0x1a, 0x0a }, LDR_E_UNSUPPORTED_LZO, "lzo" },
		{ "lz4 frame", { 0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7 }, LDR_E_UNSUPPORTED_LZ4_FRAME,
		  "lz4 frame" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct counting_alloc c;

		CHECK_EQ_U64(run(t[i].name, t[i].b, sizeof(t[i].b), DECOMP_DEFAULT_LIMIT, NULL, 0, &c),
			     t[i].want, "%s refused", t[i].name);
		CHECK_EQ_U64(c.calls, 0, "%s: nothing allocated", t[i].name);
		CHECK(strstr(ldr_strerror(t[i].want), t[i].word) != NULL, "%s: message names it",
		      t[i].name);
	}
	CHECK_EQ_U64(run("ELF", "\x7f" "ELF\2\1\1", 7, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_INVAL, "not compressed");
}

TEST(test_roundtrip)
{
	static const size_t sizes[] = { 0, 1, 100, 64 * KIB + 1, 1 * MIB + 3, 3 * MIB };

	for (int f = 0; f < F_COUNT; f++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i];
			uint8_t *d = fx_data(n, (uint32_t)n + 1);
			struct buf s = make((enum fmt)f, d, n);
			char name[64];

			snprintf(name, sizeof(name), "%s %zu", fmt_name[f], n);
			CHECK_EQ_U64(run(name, s.p, s.len, DECOMP_DEFAULT_LIMIT, d, n, NULL), LDR_OK,
				     "%s", name);
			free(s.p);
			free(d);
		}
	/* zstd without the content size, and at a high level (larger window) */
	{
		size_t n = 2 * MIB + 17;
		uint8_t *d = fx_data(n, 5);
		struct buf s = fx_zstd(d, n, 3, 0), h = fx_zstd(d, n, 19, 1);

		CHECK_EQ_U64(run("zstd unsized", s.p, s.len, DECOMP_DEFAULT_LIMIT, d, n, NULL),
			     LDR_OK, "zstd without content size");
		CHECK_EQ_U64(run("zstd -19", h.p, h.len, DECOMP_DEFAULT_LIMIT, d, n, NULL), LDR_OK,
			     "zstd -19");
		free(s.p);
		free(h.p);
		free(d);
	}
}

/* LZ4 across several 8 MiB blocks, and its legacy-format rules */
TEST(test_lz4_blocks)
{
	size_t n = 2 * DECOMP_LZ4_BLOCK + 12345;
	uint8_t *d = fx_data(n, 9);
	struct buf s = fx_lz4(d, n), one = fx_lz4(d, 1000);
	uint8_t *t = malloc(2 * s.len + 64);
	struct counting_alloc c;

	CHECK_EQ_U64(run("lz4 3 blocks", s.p, s.len, DECOMP_DEFAULT_LIMIT, d, n, NULL), LDR_OK,
		     "lz4 three blocks");
	/* exact hint: one buffer, exactly the output */
	CHECK_EQ_U64(run_hint("lz4 hinted", s.p, s.len, DECOMP_DEFAULT_LIMIT, n, d, n, &c),
		     LDR_OK, "lz4 hinted");
	CHECK_EQ_U64(c.largest, n, "lz4 hinted: the output buffer is the hint");
	/* a hint too small: grows, still right */
	CHECK_EQ_U64(run_hint("lz4 small hint", s.p, s.len, DECOMP_DEFAULT_LIMIT, s.len,
			      d, n, &c),
		     LDR_OK, "lz4 small hint");
	CHECK(c.calls > 2, "lz4 small hint: grown (%u allocations)", c.calls);
	/* two legacy frames back to back (cat a.lz4 b.lz4): Linux takes them */
	memcpy(t, one.p, one.len);
	memcpy(t + one.len, one.p, one.len);
	{
		uint8_t *dd = malloc(2000);

		memcpy(dd, d, 1000);
		memcpy(dd + 1000, d, 1000);
		CHECK_EQ_U64(run("lz4 two frames", t, 2 * one.len, DECOMP_DEFAULT_LIMIT, dd, 2000,
				 NULL),
			     LDR_OK, "lz4 concatenated frames");
		free(dd);
	}
	/* a block after a short block: what follows the stream is garbage */
	memcpy(t, one.p, one.len);
	memcpy(t + one.len, one.p + 4, one.len - 4);
	CHECK_EQ_U64(run("lz4 block after short", t, 2 * one.len - 4, DECOMP_DEFAULT_LIMIT, NULL,
			 0, NULL),
		     LDR_E_DECOMP_TRAILING, "lz4 block after a short block");
	/* the bzImage's appended size word, left on */
	memcpy(t, one.p, one.len);
	fx_put_le32(t + one.len, 1000);
	CHECK_EQ_U64(run("lz4 + size word", t, one.len + 4, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "lz4 + size word");
	/* block sizes the format does not allow */
	memcpy(t, one.p, one.len);
	fx_put_le32(t + 4, 0);
	CHECK_EQ_U64(run("lz4 size 0", t, one.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_CORRUPT, "lz4 block size 0");
	fx_put_le32(t + 4, (uint32_t)LZ4_COMPRESSBOUND(DECOMP_LZ4_BLOCK) + 1);
	CHECK_EQ_U64(run("lz4 size huge", t, one.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_CORRUPT, "lz4 block size over the bound");
	/* a block that would decompress past 8 MiB: 9 MiB of zeros as one block */
	{
		size_t z = 9 * MIB;
		uint8_t *zeros = calloc(1, z);
		int cap = LZ4_compressBound((int)z), len;
		uint8_t *big = malloc(8 + (size_t)cap);

		len = LZ4_compress_default((const char *)zeros, (char *)big + 8, (int)z, cap);
		fx_put_le32(big, 0x184c2102u);
		fx_put_le32(big + 4, (uint32_t)len);
		CHECK_EQ_U64(run("lz4 9 MiB block", big, 8 + (size_t)len, DECOMP_DEFAULT_LIMIT,
				 NULL, 0, NULL),
			     LDR_E_DECOMP_CORRUPT, "lz4 block larger than 8 MiB");
		free(big);
		free(zeros);
	}
	/* magic alone: an empty stream */
	CHECK_EQ_U64(run("lz4 magic only", one.p, 4, DECOMP_DEFAULT_LIMIT, d, 0, NULL), LDR_OK,
		     "lz4 magic only");
	free(t);
	free(s.p);
	free(one.p);
	free(d);
}

TEST(test_limit)
{
	static const size_t sizes[] = { 1, 4096, 64 * KIB + 1, 1 * MIB + 1 };

	for (int f = 0; f < F_COUNT; f++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i];
			uint8_t *d = fx_data(n, 99);
			struct buf s = make((enum fmt)f, d, n);
			char name[64];

			snprintf(name, sizeof(name), "%s %zu limit = size", fmt_name[f], n);
			CHECK_EQ_U64(run(name, s.p, s.len, n, d, n, NULL), LDR_OK, "%s", name);
			snprintf(name, sizeof(name), "%s %zu limit = size + 1", fmt_name[f], n);
			CHECK_EQ_U64(run(name, s.p, s.len, n + 1, d, n, NULL), LDR_OK, "%s", name);
			snprintf(name, sizeof(name), "%s %zu limit = size - 1", fmt_name[f], n);
			CHECK_EQ_U64(run(name, s.p, s.len, n - 1, NULL, 0, NULL),
				     n - 1 ? LDR_E_DECOMP_TOO_BIG : LDR_E_INVAL, "%s", name);
			/* the stream's own size claim is past the limit: clamped */
			snprintf(name, sizeof(name), "%s %zu hint past limit", fmt_name[f], n);
			CHECK_EQ_U64(run_hint(name, s.p, s.len, n, 1ULL << 40, d, n, NULL), LDR_OK,
				     "%s", name);
			free(s.p);
			free(d);
		}
}

/* 64 MiB of zeros in little: refused at a 16 MiB limit, memory bounded */
TEST(test_bombs)
{
	const uint64_t limit = 16 * MIB;
	size_t n = 64 * MIB;
	uint8_t *zeros = calloc(1, n);

	for (int f = 0; f < F_COUNT; f++) {
		struct buf s = f == F_XZ ? fx_xz(zeros, n, 0, 1 * MIB) : make((enum fmt)f, zeros, n);
		struct counting_alloc c;
		char name[64];

		snprintf(name, sizeof(name), "%s bomb", fmt_name[f]);
		CHECK(s.len < 1 * MIB, "%s is small: %zu bytes", name, s.len);
		CHECK_EQ_U64(run(name, s.p, s.len, limit, NULL, 0, &c), LDR_E_DECOMP_TOO_BIG, "%s",
			     name);
		CHECK(c.largest <= limit, "%s: largest allocation %llu", name,
		      (unsigned long long)c.largest);
		CHECK(c.peak <= 2 * limit + 2 * MIB, "%s: peak %llu", name,
		      (unsigned long long)c.peak);
		free(s.p);
	}
	free(zeros);
}

/* Every cut of a small stream is TRUNCATED (LZ4: but the block boundary) */
TEST(test_truncation_sweep)
{
	size_t n = 8 * KIB;
	uint8_t *d = fx_data(n, 3);

	for (int f = 0; f < F_COUNT; f++) {
		struct buf s = make((enum fmt)f, d, n);
		unsigned bad = 0;
		/* shorter than the magic: not recognised as compressed at all */
		size_t min = f == F_XZ ? 6 : 4;

		for (size_t cut = min; cut < s.len; cut++) {
			char name[64];
			enum ldr_err want = LDR_E_DECOMP_TRUNCATED, got;

			if (f == F_LZ4 && cut == 4)
				continue; /* the magic alone is an empty stream */
			snprintf(name, sizeof(name), "%s cut at %zu of %zu", fmt_name[f], cut, s.len);
			got = run(name, s.p, cut, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL);
			if (got != want) {
				if (bad++ < 5)
					CHECK_EQ_U64(got, want, "%s", name);
			}
		}
		CHECK(bad == 0, "%s: %u cut points not reported as truncated", fmt_name[f], bad);
		CHECK_EQ_U64(run("short", s.p, min - 1, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
			     LDR_E_INVAL, "%s shorter than its magic", fmt_name[f]);
		free(s.p);
	}
	free(d);
}

/* One flipped byte: an error, or (LZ4 has no check) still no crash or leak */
TEST(test_corrupt_sweep)
{
	size_t n = 20 * KIB;
	uint8_t *d = fx_data(n, 4);

	for (int f = 0; f < F_COUNT; f++) {
		struct buf s = make((enum fmt)f, d, n);
		uint8_t *t = malloc(s.len);
		unsigned silent = 0;

		for (size_t i = 0; i < s.len; i += 7) {
			struct counting_alloc c;
			struct decomp_alloc a = ca_cap(&c);
			void *out;
			uint64_t olen, ocap;
			enum ldr_err err;

			memcpy(t, s.p, s.len);
			t[i] ^= 0x5a;
			err = decomp_image(t, s.len, 4 * MIB, 0, &a, &out, &olen, &ocap);
			if (err == LDR_OK) {
				if (olen != n || memcmp(out, d, n) != 0)
					silent++;
				a.free(a.ctx, out, ocap);
			}
			CHECK_EQ_U64(c.live, 0, "%s flip at %zu: leak", fmt_name[f], i);
		}
		/* xz and zstd carry a check: nothing wrong gets through */
		if (f != F_LZ4)
			CHECK_EQ_U64(silent, 0, "%s: flipped bytes accepted with wrong output",
				     fmt_name[f]);
		free(t);
		free(s.p);
	}
	free(d);
}

/* Which error, for flips whose class is known */
TEST(test_corrupt_classes)
{
	size_t n = 50 * KIB;
	uint8_t *d = fx_data(n, 13);
	struct buf x = fx_xz(d, n, 0, 0), z = fx_zstd(d, n, 3, 1);
	uint8_t *t = malloc(x.len + z.len + 64);

	/* xz: the block's CRC32 sits before the index (4 bytes, then the
	 * index and the 12-byte footer); flip the data check */
	{
		/* index of one record: 0x00, count, two VLIs, padding, CRC32:
		 * found from the footer's backward size */
		uint32_t backward = (ldr_le32(x.p + x.len - 8) + 1) * 4;
		size_t check = x.len - 12 - backward - 4;

		memcpy(t, x.p, x.len);
		t[check] ^= 0x01;
		CHECK_EQ_U64(run("xz check", t, x.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
			     LDR_E_DECOMP_CHECK, "xz CRC32 of the block");
	}
	/* xz: the stream flags name an unknown check type */
	memcpy(t, x.p, x.len);
	t[7] = 0x0f;
	CHECK_EQ_U64(run("xz check type", t, x.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_CORRUPT, "xz header CRC no longer matches");
	/* xz + stream padding / garbage */
	memcpy(t, x.p, x.len);
	memset(t + x.len, 0, 4);
	CHECK_EQ_U64(run("xz + padding", t, x.len + 4, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "xz + stream padding");
	memcpy(t + x.len, "junk", 4);
	CHECK_EQ_U64(run("xz + junk", t, x.len + 4, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "xz + junk");
	/* zstd: the content checksum is the last 4 bytes */
	memcpy(t, z.p, z.len);
	t[z.len - 2] ^= 0x10;
	CHECK_EQ_U64(run("zstd checksum", t, z.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_CHECK, "zstd checksum");
	/* zstd: a reserved bit of the frame header descriptor */
	memcpy(t, z.p, z.len);
	t[4] |= 0x08;
	CHECK_EQ_U64(run("zstd reserved bit", t, z.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_HEADER, "zstd reserved bit");
	/* zstd: a second frame, and garbage */
	memcpy(t, z.p, z.len);
	memcpy(t + z.len, z.p, z.len);
	CHECK_EQ_U64(run("zstd two frames", t, 2 * z.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "zstd two frames");
	memcpy(t + z.len, "garbage", 7);
	CHECK_EQ_U64(run("zstd + garbage", t, z.len + 7, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "zstd + garbage");
	free(t);
	free(x.p);
	free(z.p);
	free(d);
}

/* A zstd frame made by hand: no single-segment flag, window 2^wlog, one raw block */
static struct buf zstd_raw_frame(unsigned wlog, const uint8_t *d, size_t n)
{
	struct buf b = { malloc(n + 16), 0 };
	uint32_t bh = (uint32_t)(n << 3) | 1; /* last, raw */

	fx_put_le32(b.p, 0xfd2fb528u);
	b.p[4] = 0x00;                       /* no checksum, no dictionary, no size */
	b.p[5] = (uint8_t)((wlog - 10) << 3); /* exponent, mantissa 0 */
	b.p[6] = (uint8_t)bh;
	b.p[7] = (uint8_t)(bh >> 8);
	b.p[8] = (uint8_t)(bh >> 16);
	memcpy(b.p + 9, d, n);
	b.len = 9 + n;
	return b;
}

TEST(test_window_limits)
{
	uint8_t *d = fx_data(4096, 21);
	struct buf ok = zstd_raw_frame(20, d, 4096), max = zstd_raw_frame(27, d, 4096),
		   big = zstd_raw_frame(28, d, 4096);
	struct counting_alloc c;

	CHECK_EQ_U64(run("zstd window 2^20", ok.p, ok.len, DECOMP_DEFAULT_LIMIT, d, 4096, &c),
		     LDR_OK, "zstd window 1 MiB");
	CHECK(c.reserve_max >= 1 * MIB && c.reserve_max < 2 * MIB,
	      "zstd window 1 MiB: reserved %llu", (unsigned long long)c.reserve_max);
	CHECK_EQ_U64(run("zstd window 2^27", max.p, max.len, DECOMP_DEFAULT_LIMIT, d, 4096, &c),
		     LDR_OK, "zstd window 128 MiB: the largest allowed");
	CHECK_EQ_U64(run("zstd window 2^28", big.p, big.len, DECOMP_DEFAULT_LIMIT, NULL, 0, &c),
		     LDR_E_DECOMP_MEMORY, "zstd window 256 MiB");
	CHECK_EQ_U64(c.calls, 0, "zstd window 256 MiB: refused before allocating");

	/* xz: a block header naming a 128 MiB dictionary (CRC32 fixed up) */
	{
		struct buf x = fx_xz(d, 4096, 0, 0);
		size_t hsize = ((size_t)x.p[12] + 1) * 4;
		uint8_t *h = x.p + 12;
		int found = 0;

		/* flags 0x01: two filters (x86, LZMA2), no sizes: x86 is 04 00,
		 * LZMA2 is 21 01 <dictionary byte> */
		for (size_t i = 2; i + 2 < hsize - 4; i++)
			if (h[i] == 0x21 && h[i + 1] == 0x01) {
				h[i + 2] = 30; /* 2 << (30 / 2 + 11) = 128 MiB */
				found = 1;
				break;
			}
		CHECK(found, "xz block header has the LZMA2 filter");
		fx_put_le32(h + hsize - 4, (uint32_t)crc32(0, h, (uInt)(hsize - 4)));
		CHECK_EQ_U64(run("xz dict 128 MiB", x.p, x.len, DECOMP_DEFAULT_LIMIT, NULL, 0, &c),
			     LDR_E_DECOMP_MEMORY, "xz dictionary 128 MiB");
		CHECK(c.reserve_max < 1 * MIB, "xz dict 128 MiB: not reserved (%llu)",
		      (unsigned long long)c.reserve_max);
		free(x.p);
	}
	free(ok.p);
	free(max.p);
	free(big.p);
	free(d);
}

/* The reservation covers the state and follows the stream's real need */
TEST(test_reserve)
{
	size_t n = 3 * MIB;
	uint8_t *d = fx_data(n, 31);
	struct buf x8 = fx_xz(d, n, 6, 0), x32 = fx_xz(d, n, 0, 32 * MIB);
	struct buf z = fx_zstd(d, n, 3, 1), g = fx_gzip(d, n), l = fx_lz4(d, n);
	struct counting_alloc c;

	CHECK_EQ_U64(run("xz -6", x8.p, x8.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK, "xz -6");
	CHECK(c.reserve_max >= 8 * MIB && c.reserve_max <= 8 * MIB + 512 * KIB,
	      "xz -6: reserved %llu for its 8 MiB dictionary", (unsigned long long)c.reserve_max);
	CHECK(c.guarded_peak >= 8 * MIB, "xz -6: the dictionary came from the reservation");
	CHECK_EQ_U64(run("xz 32M", x32.p, x32.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK,
		     "xz dict 32 MiB (Linux)");
	CHECK(c.reserve_max >= 32 * MIB && c.reserve_max <= 32 * MIB + 512 * KIB,
	      "xz 32 MiB: reserved %llu", (unsigned long long)c.reserve_max);
	/* zstd with its content size: decoded straight into the output, so
	 * only the context and one block are reserved, whatever the window */
	CHECK_EQ_U64(run("zstd", z.p, z.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK, "zstd");
	CHECK(c.reserve_max > 128 * KIB && c.reserve_max < 512 * KIB,
	      "zstd sized: reserved %llu, not a window", (unsigned long long)c.reserve_max);
	/* without it: the window is reserved (zstd -3 on 3 MiB: 4 MiB) */
	{
		struct buf u = fx_zstd(d, n, 3, 0);
		ZSTD_frameHeader fh;

		CHECK(ZSTD_getFrameHeader(&fh, u.p, u.len) == 0 &&
		      fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN, "zstd unsized frame");
		CHECK_EQ_U64(run("zstd unsized", u.p, u.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK,
			     "zstd unsized");
		CHECK(c.reserve_max >= fh.windowSize, "zstd unsized: reserved %llu for a %llu window",
		      (unsigned long long)c.reserve_max, (unsigned long long)fh.windowSize);
		free(u.p);
	}
	/* a caller's hint below the content size: the buffer cannot hold the
	 * frame, so the window is asked for after all, and the output grows */
	CHECK_EQ_U64(run_hint("zstd small hint", z.p, z.len, DECOMP_DEFAULT_LIMIT, n / 2, d, n, &c),
		     LDR_OK, "zstd small hint");
	CHECK(c.reserves >= 3 && c.reserve_max > 1 * MIB, "zstd small hint: raised to %llu",
	      (unsigned long long)c.reserve_max);
	CHECK_EQ_U64(run("gzip", g.p, g.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK, "gzip");
	CHECK(c.reserve_max <= 64 * KIB, "gzip: fits the static 64 KiB arena (%llu)",
	      (unsigned long long)c.reserve_max);
	CHECK_EQ_U64(run("lz4", l.p, l.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK, "lz4");
	CHECK_EQ_U64(c.guarded_peak, 0, "lz4: no library state");
	free(x8.p);
	free(x32.p);
	free(z.p);
	free(g.p);
	free(l.p);
	free(d);
}

/* Fail allocation k for k = 0, 1, ...: NOMEM and nothing leaked, until success */
TEST(test_alloc_failure)
{
	size_t n = 700 * KIB;
	uint8_t *d = fx_data(n, 17);

	for (int f = 0; f < F_COUNT; f++) {
		struct buf s = make((enum fmt)f, d, n);

		CHECK(alloc_failure_sweep(fmt_name[f], &s, d, n) >= 2,
		      "%s: failures tried at two points at least", fmt_name[f]);
		free(s.p);
	}
	free(d);
}

/* The size hint sizes the first buffer; the stream's own claim is used without one */
TEST(test_size_hints)
{
	size_t n = 2 * MIB + 5;
	uint8_t *d = fx_data(n, 41);

	for (int f = 0; f < F_COUNT; f++) {
		struct buf s = make((enum fmt)f, d, n);
		struct counting_alloc c;
		char name[64];

		snprintf(name, sizeof(name), "%s exact hint", fmt_name[f]);
		CHECK_EQ_U64(run_hint(name, s.p, s.len, DECOMP_DEFAULT_LIMIT, n, d, n, &c), LDR_OK,
			     "%s", name);
		CHECK_EQ_U64(c.largest_out, n, "%s: one buffer of exactly the output", name);
		if (f != F_LZ4) {
			/* xz's index and zstd's frame header say the size */
			snprintf(name, sizeof(name), "%s own claim", fmt_name[f]);
			CHECK_EQ_U64(run(name, s.p, s.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK,
				     "%s", name);
			CHECK_EQ_U64(c.largest_out, n, "%s: sized from the stream", name);
		}
		free(s.p);
	}
	free(d);
}
