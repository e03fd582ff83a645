/*
 * test_inflate.c - host tests for the gzip/zlib backend (src/decomp_gzip.c)
 * through decomp_image(): gzip and zlib streams made here with the host's
 * zlib, decompressed through a counting allocator capability; round trips,
 * limits, every malformation class, a bomb, and allocation failures (no
 * leaks: the capability tracks live bytes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "test.h"
#include "decomp_run.h"

/* ---------------------------------------------------------- streams */

static struct buf make_gzip(const uint8_t *d, size_t n) { return fx_gzip(d, n); }

/* zlib format through compress2(), the other way the host makes streams */
static struct buf make_zlib(const uint8_t *d, size_t n)
{
	struct buf b;
	uLongf len = compressBound(n);

	b.p = malloc(len);
	if (compress2(b.p, &len, d, n, 9) != Z_OK)
		abort();
	b.len = len;
	return b;
}

/* nzero zero bytes, streamed through deflate a chunk at a time */
static struct buf make_zero_bomb(uint64_t nzero, int window_bits)
{
	static const uint8_t zeros[1 << 16];
	struct buf b = { malloc(4 * MIB), 0 };
	uint64_t left = nzero;
	z_stream zs;
	int flush;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	do {
		uInt chunk = left > sizeof(zeros) ? sizeof(zeros) : (uInt)left;

		left -= chunk;
		flush = left ? Z_NO_FLUSH : Z_FINISH;
		zs.next_in = (Bytef *)zeros;
		zs.avail_in = chunk;
		do {
			zs.next_out = b.p + zs.total_out;
			zs.avail_out = (uInt)(4 * MIB - zs.total_out);
			if (zs.avail_out == 0)
				abort();
			deflate(&zs, flush);
		} while (zs.avail_in);
	} while (flush != Z_FINISH);
	b.len = zs.total_out;
	deflateEnd(&zs);
	return b;
}

/*
 * A gzip member whose deflate data was made against a preset dictionary
 * (raw deflate + deflateSetDictionary, wrapped by hand): its first match
 * points into the dictionary, i.e. before the start of the output.
 */
static struct buf far_back_gzip(void)
{
	static const char dict[] = "the quick brown fox jumps over the lazy dog";
	static const char text[] = "lazy dog, quick fox";
	struct buf b = { malloc(256), 0 };
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK ||
	    deflateSetDictionary(&zs, (const Bytef *)dict, sizeof(dict) - 1) != Z_OK)
		abort();
	memcpy(b.p, "\x1f\x8b\x08\0\0\0\0\0\0\x03", 10);
	zs.next_in = (Bytef *)text;
	zs.avail_in = sizeof(text) - 1;
	zs.next_out = b.p + 10;
	zs.avail_out = 200;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		abort();
	b.len = 10 + zs.total_out;
	deflateEnd(&zs);
	fx_put_le32(b.p + b.len, (uint32_t)crc32(0, (const Bytef *)text, sizeof(text) - 1));
	fx_put_le32(b.p + b.len + 4, sizeof(text) - 1);
	b.len += 8;
	return b;
}

/* ---------------------------------------------------------- tests */

TEST(test_detect)
{
	static const struct {
		const char *name;
		uint8_t b[4];
		size_t len;
		enum decomp_format want;
	} t[] = {
		{ "gzip", { 0x1f, 0x8b, 8, 0 }, 4, DECOMP_GZIP },
		{ "gzip 2 bytes", { 0x1f, 0x8b }, 2, DECOMP_GZIP },
		{ "gzip method 7 (reported by inflate)", { 0x1f, 0x8b, 7, 0 }, 4, DECOMP_GZIP },
		{ "zlib 78 9c", { 0x78, 0x9c }, 2, DECOMP_ZLIB },
		{ "zlib 78 01", { 0x78, 0x01 }, 2, DECOMP_ZLIB },
		{ "zlib 78 da", { 0x78, 0xda }, 2, DECOMP_ZLIB },
		{ "zlib 08 1d (4-bit window)", { 0x08, 0x1d }, 2, DECOMP_ZLIB },
		{ "zlib bad check", { 0x78, 0x9d }, 2, DECOMP_NONE },
		{ "zlib CINFO 8", { 0x88, 0x98 }, 2, DECOMP_NONE },
		{ "ELF", { 0x7f, 'E', 'L', 'F' }, 4, DECOMP_NONE },
		{ "empty", { 0 }, 0, DECOMP_NONE },
		{ "one byte 1f", { 0x1f }, 1, DECOMP_NONE },
		{ "one byte 78", { 0x78 }, 1, DECOMP_NONE },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_EQ_U64(decomp_detect(t[i].b, t[i].len), t[i].want, "detect %s", t[i].name);
}

TEST(test_roundtrip)
{
	static const size_t sizes[] = { 0, 1, 2, 100, 64 * KIB - 1, 64 * KIB, 64 * KIB + 1,
					1 * MIB, 3 * MIB };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		uint8_t *d = fx_data(n, (uint32_t)n);
		struct buf g = make_gzip(d, n), z = make_zlib(d, n), z2 = fx_deflate(d, n, 15);
		char name[64];

		snprintf(name, sizeof(name), "gzip %zu", n);
		CHECK_EQ_U64(run(name, g.p, g.len, DECOMP_DEFAULT_LIMIT, d, n, NULL), LDR_OK,
			     "%s", name);
		snprintf(name, sizeof(name), "zlib compress2 %zu", n);
		CHECK_EQ_U64(run(name, z.p, z.len, DECOMP_DEFAULT_LIMIT, d, n, NULL), LDR_OK,
			     "%s", name);
		snprintf(name, sizeof(name), "zlib deflate %zu", n);
		CHECK_EQ_U64(run(name, z2.p, z2.len, DECOMP_DEFAULT_LIMIT, d, n, NULL), LDR_OK,
			     "%s", name);
		free(d);
		free(g.p);
		free(z.p);
		free(z2.p);
	}
}

/* Highly compressible data: a zlib stream (no size hint) must grow its buffer. */
TEST(test_growth)
{
	size_t n = 5 * MIB + 3;
	uint8_t *d = calloc(1, n);
	struct buf z, g;
	struct counting_alloc c;

	for (size_t i = 0; i < n; i += 4099)
		d[i] = (uint8_t)i;
	z = make_zlib(d, n);
	CHECK(z.len * 8 < n, "zlib of sparse data is small (%zu)", z.len);
	CHECK_EQ_U64(run("zlib growth", z.p, z.len, DECOMP_DEFAULT_LIMIT, d, n, &c), LDR_OK,
		     "zlib growth");
	CHECK(c.calls > 2, "zlib growth: the buffer was grown (%u allocations)", c.calls);

	/* gzip whose ISIZE says 0 (as for a 4 GiB multiple): the hint is
	 * ignored, the buffer grows, and zlib's length check refuses it */
	g = make_gzip(d, n);
	fx_put_le32(g.p + g.len - 4, 0);
	CHECK_EQ_U64(run("gzip ISIZE 0", g.p, g.len, DECOMP_DEFAULT_LIMIT, NULL, 0, &c),
		     LDR_E_DECOMP_CHECK, "gzip ISIZE 0");
	CHECK(c.calls > 2, "gzip ISIZE 0: grown past the lie (%u allocations)", c.calls);
	free(d);
	free(z.p);
	free(g.p);
}

/*
 * ISIZE is only a hint for the first buffer; zlib verifies it against the
 * real length at the end (RFC 1952's ISIZE check), so a lying ISIZE never
 * yields a short or long result: it is a checksum failure, found after the
 * data decompressed into a buffer sized as the lie or grown past it.
 */
TEST(test_isize_lies)
{
	size_t n = 300 * KIB;
	uint8_t *d = fx_data(n, 7);
	struct buf g = make_gzip(d, n);
	static const struct {
		const char *name;
		uint32_t isize;
		uint64_t limit;
	} t[] = {
		{ "ISIZE smaller", 1000, DECOMP_DEFAULT_LIMIT },
		{ "ISIZE larger", 64 * 1024 * 1024, DECOMP_DEFAULT_LIMIT },
		{ "ISIZE 0xffffffff, 1 MiB limit", 0xffffffffu, 1 * MIB },
		{ "ISIZE real + 1", 300 * 1024 + 1, DECOMP_DEFAULT_LIMIT },
		{ "ISIZE real - 1", 300 * 1024 - 1, DECOMP_DEFAULT_LIMIT },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct counting_alloc c;

		fx_put_le32(g.p + g.len - 4, t[i].isize);
		CHECK_EQ_U64(run(t[i].name, g.p, g.len, t[i].limit, NULL, 0, &c),
			     LDR_E_DECOMP_CHECK, "%s", t[i].name);
		CHECK(c.largest <= t[i].limit + 64 * KIB, "%s: first buffer bounded by the limit",
		      t[i].name);
	}
	/* the true ISIZE, and a 1 MiB limit: the hint is clamped, data fits */
	fx_put_le32(g.p + g.len - 4, (uint32_t)n);
	CHECK_EQ_U64(run("ISIZE true", g.p, g.len, 1 * MIB, d, n, NULL), LDR_OK, "ISIZE true");
	free(d);
	free(g.p);
}

TEST(test_limit)
{
	static const size_t sizes[] = { 1, 4096, 64 * KIB, 64 * KIB + 1, 3 * MIB };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		uint8_t *d = fx_data(n, 99);
		struct buf s[2] = { make_gzip(d, n), make_zlib(d, n) };

		for (int k = 0; k < 2; k++) {
			char name[64];

			snprintf(name, sizeof(name), "%s %zu limit = size", k ? "zlib" : "gzip", n);
			CHECK_EQ_U64(run(name, s[k].p, s[k].len, n, d, n, NULL), LDR_OK, "%s", name);
			snprintf(name, sizeof(name), "%s %zu limit = size + 1", k ? "zlib" : "gzip", n);
			CHECK_EQ_U64(run(name, s[k].p, s[k].len, n + 1, d, n, NULL), LDR_OK, "%s", name);
			snprintf(name, sizeof(name), "%s %zu limit = size - 1", k ? "zlib" : "gzip", n);
			CHECK_EQ_U64(run(name, s[k].p, s[k].len, n - 1, NULL, 0, NULL),
				     n - 1 ? LDR_E_DECOMP_TOO_BIG : LDR_E_INVAL, "%s", name);
			free(s[k].p);
		}
		free(d);
	}
}

TEST(test_truncated)
{
	size_t n = 200 * KIB;
	uint8_t *d = fx_data(n, 3);
	struct buf g = make_gzip(d, n), z = make_zlib(d, n);
	/* cut points: inside the header, first bytes of data, middle, trailer */
	const size_t gcut[] = { 3, 9, 10, 11, 12, 100, g.len / 2, g.len - 9, g.len - 8,
				g.len - 5, g.len - 4, g.len - 1 };
	const size_t zcut[] = { 2, 3, 50, z.len / 2, z.len - 5, z.len - 4, z.len - 1 };

	for (size_t i = 0; i < sizeof(gcut) / sizeof(gcut[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "gzip cut at %zu of %zu", gcut[i], g.len);
		CHECK_EQ_U64(run(name, g.p, gcut[i], DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
			     LDR_E_DECOMP_TRUNCATED, "%s", name);
	}
	for (size_t i = 0; i < sizeof(zcut) / sizeof(zcut[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "zlib cut at %zu of %zu", zcut[i], z.len);
		CHECK_EQ_U64(run(name, z.p, zcut[i], DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
			     LDR_E_DECOMP_TRUNCATED, "%s", name);
	}
	/* a header with FNAME whose name never ends */
	{
		static const uint8_t h[] = { 0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 3, 'k', 'e', 'r' };

		CHECK_EQ_U64(run("gzip FNAME unterminated", h, sizeof(h), DECOMP_DEFAULT_LIMIT,
				 NULL, 0, NULL),
			     LDR_E_DECOMP_TRUNCATED, "gzip FNAME unterminated");
	}
	free(d);
	free(g.p);
	free(z.p);
}

TEST(test_checksums)
{
	size_t n = 100 * KIB;
	uint8_t *d = fx_data(n, 5);
	struct buf g, z;

	/* a kernel's bytes (test_zlib_lookalike: zlib of anything else is no kernel) */
	memcpy(d, "\x7f" "ELF", 4);
	g = make_gzip(d, n);
	z = make_zlib(d, n);

	for (int byte = 0; byte < 4; byte++) {
		char name[64];

		snprintf(name, sizeof(name), "gzip CRC32 byte %d flipped", byte);
		g.p[g.len - 8 + byte] ^= 0x40;
		CHECK_EQ_U64(run(name, g.p, g.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
			     LDR_E_DECOMP_CHECK, "%s", name);
		g.p[g.len - 8 + byte] ^= 0x40;
		snprintf(name, sizeof(name), "zlib Adler-32 byte %d flipped", byte);
		z.p[z.len - 4 + byte] ^= 0x01;
		CHECK_EQ_U64(run(name, z.p, z.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
			     LDR_E_DECOMP_CHECK, "%s", name);
		z.p[z.len - 4 + byte] ^= 0x01;
	}
	CHECK_EQ_U64(run("gzip restored", g.p, g.len, DECOMP_DEFAULT_LIMIT, d, n, NULL), LDR_OK,
		     "gzip restored");
	free(d);
	free(g.p);
	free(z.p);
}

TEST(test_headers)
{
	size_t n = 10 * KIB;
	uint8_t *d = fx_data(n, 11);
	struct buf g = make_gzip(d, n), z = make_zlib(d, n);
	uint8_t *t = malloc(g.len + z.len + 64);

	/* gzip: method byte */
	memcpy(t, g.p, g.len);
	t[2] = 7;
	CHECK_EQ_U64(run("gzip method 7", t, g.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_HEADER, "gzip method 7");
	/* gzip: reserved flag bits */
	memcpy(t, g.p, g.len);
	t[3] = 0xe0;
	CHECK_EQ_U64(run("gzip reserved flags", t, g.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_HEADER, "gzip reserved flags");
	/* gzip: FHCRC set with a wrong header CRC16 in front of the data */
	t[0] = 0x1f; t[1] = 0x8b; t[2] = 8; t[3] = 0x02;
	memcpy(t + 4, g.p + 4, 6);
	t[10] = 0x12; t[11] = 0x34;
	memcpy(t + 12, g.p + 10, g.len - 10);
	CHECK_EQ_U64(run("gzip header CRC16", t, g.len + 2, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_HEADER, "gzip header CRC16");
	/* zlib: FDICT (preset dictionary) - the loader has none to give */
	memcpy(t, z.p, z.len);
	t[1] = 0xbb; /* 0x78bb: FLEVEL 2, FDICT, check ok */
	CHECK_EQ_U64(run("zlib FDICT", t, z.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_HEADER, "zlib FDICT");
	/* not compressed at all / no limit */
	CHECK_EQ_U64(run("ELF bytes", "\x7f" "ELF\2\1\1", 7, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_INVAL, "ELF bytes");
	CHECK_EQ_U64(run("empty", "", 0, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL), LDR_E_INVAL,
		     "empty input");
	CHECK_EQ_U64(run("limit 0", g.p, g.len, 0, NULL, 0, NULL), LDR_E_INVAL, "limit 0");
	free(t);
	free(d);
	free(g.p);
	free(z.p);
}

TEST(test_corrupt_and_trailing)
{
	size_t n = 50 * KIB;
	uint8_t *d = fx_data(n, 13);
	struct buf g = make_gzip(d, n), z = make_zlib(d, n);
	uint8_t *t = malloc(2 * (g.len + z.len) + 64);

	/* BTYPE = 3 (reserved) in the first deflate block header */
	memcpy(t, g.p, g.len);
	t[10] |= 0x06;
	CHECK_EQ_U64(run("gzip BTYPE 3", t, g.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_CORRUPT, "gzip BTYPE 3");
	/* zlib, in the first block: nothing came out, so nothing says this
	 * was ever a compressed kernel (test_zlib_lookalike) */
	memcpy(t, z.p, z.len);
	t[2] |= 0x06;
	CHECK_EQ_U64(run("zlib BTYPE 3", t, z.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_NOT_KERNEL, "zlib BTYPE 3");
	/* a stored block whose LEN/NLEN disagree */
	{
		static const uint8_t s[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3,
					     0x01, 0x05, 0x00, 0x00, 0x00, 'h', 'e', 'l', 'l', 'o',
					     0, 0, 0, 0, 5, 0, 0, 0 };

		CHECK_EQ_U64(run("gzip stored LEN/NLEN", s, sizeof(s), DECOMP_DEFAULT_LIMIT,
				 NULL, 0, NULL),
			     LDR_E_DECOMP_CORRUPT, "gzip stored LEN/NLEN");
	}
	/* a match reaching before the start of the output */
	{
		struct buf f = far_back_gzip();

		CHECK_EQ_U64(run("gzip distance too far", f.p, f.len, DECOMP_DEFAULT_LIMIT,
				 NULL, 0, NULL),
			     LDR_E_DECOMP_CORRUPT, "gzip distance too far back");
		free(f.p);
	}
	/* trailing bytes: garbage, zeros, a second gzip member */
	memcpy(t, g.p, g.len);
	memcpy(t + g.len, "garbage", 7);
	CHECK_EQ_U64(run("gzip + garbage", t, g.len + 7, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "gzip + garbage");
	t[g.len] = 0;
	CHECK_EQ_U64(run("gzip + 1 zero", t, g.len + 1, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "gzip + one zero byte");
	memcpy(t + g.len, g.p, g.len);
	CHECK_EQ_U64(run("gzip two members", t, 2 * g.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "two gzip members");
	memcpy(t, z.p, z.len);
	memcpy(t + z.len, "\n", 1);
	CHECK_EQ_U64(run("zlib + newline", t, z.len + 1, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_TRAILING, "zlib + newline");
	free(t);
	free(d);
	free(g.p);
	free(z.p);
}

/* 200 MiB of zeros in ~200 KiB: refused at the 16 MiB limit, memory bounded. */
TEST(test_bomb)
{
	const uint64_t limit = 16 * MIB;
	struct buf g = make_zero_bomb(200 * MIB, 31), z = make_zero_bomb(200 * MIB, 15);
	struct counting_alloc c;

	CHECK(g.len < 1 * MIB, "bomb is small: %zu bytes", g.len);
	CHECK_EQ_U64(run("gzip bomb", g.p, g.len, limit, NULL, 0, &c), LDR_E_DECOMP_TOO_BIG,
		     "gzip bomb");
	CHECK(c.largest <= limit, "gzip bomb: largest allocation %llu",
	      (unsigned long long)c.largest);
	CHECK(c.peak <= limit + 1 * MIB, "gzip bomb: peak %llu", (unsigned long long)c.peak);

	/* ISIZE lies small: the buffer grows by doubling up to the limit;
	 * while it is copied the old and new buffer are both live, so the
	 * peak is below twice the limit, no single buffer above it */
	fx_put_le32(g.p + g.len - 4, 1);
	CHECK_EQ_U64(run("gzip bomb small ISIZE", g.p, g.len, limit, NULL, 0, &c),
		     LDR_E_DECOMP_TOO_BIG, "gzip bomb, ISIZE 1");
	CHECK(c.largest <= limit, "gzip bomb ISIZE 1: largest %llu", (unsigned long long)c.largest);
	CHECK(c.peak <= 2 * limit + 1 * MIB, "gzip bomb ISIZE 1: peak %llu",
	      (unsigned long long)c.peak);

	CHECK_EQ_U64(run("zlib bomb", z.p, z.len, limit, NULL, 0, &c), LDR_E_DECOMP_TOO_BIG,
		     "zlib bomb");
	CHECK(c.peak <= 2 * limit + 1 * MIB, "zlib bomb: peak %llu",
	      (unsigned long long)c.peak);
	/* a limit that is not a power of two is still the exact cap */
	CHECK_EQ_U64(run("zlib bomb odd limit", z.p, z.len, 10 * MIB + 12345, NULL, 0, &c),
		     LDR_E_DECOMP_TOO_BIG, "zlib bomb, odd limit");
	CHECK(c.largest <= 10 * MIB + 12345, "odd limit: largest %llu",
	      (unsigned long long)c.largest);
	free(g.p);
	free(z.p);
}

/* Fail allocation k for k = 0, 1, ...: NOMEM and nothing leaked, until one
 * run no longer reaches allocation k and succeeds. */
TEST(test_alloc_failure)
{
	size_t n = 700 * KIB;
	uint8_t *d = fx_data(n, 17);
	struct buf s[2] = { make_gzip(d, n), make_zlib(d, n) };

	for (int k = 0; k < 2; k++) {
		CHECK(alloc_failure_sweep(k ? "zlib" : "gzip", &s[k], d, n) >= 3,
		      "%s: failures tried at three points at least", k ? "zlib" : "gzip");
		free(s[k].p);
	}
	free(d);
}

/*
 * zlib with a full flush after `first` input bytes, and the block after it
 * given the reserved type 3: the damage comes once the first block's
 * output is out.
 */
static struct buf zlib_bad_second_block(const uint8_t *d, size_t n, size_t first)
{
	struct buf b;
	z_stream zs;
	size_t at;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 9, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	b.len = deflateBound(&zs, n) + 64;
	b.p = malloc(b.len);
	zs.next_in = (Bytef *)d;
	zs.avail_in = (uInt)first;
	zs.next_out = b.p;
	zs.avail_out = (uInt)b.len;
	if (deflate(&zs, Z_FULL_FLUSH) != Z_OK)
		abort();
	at = zs.total_out;
	zs.avail_in = (uInt)(n - first);
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		abort();
	b.len = zs.total_out;
	deflateEnd(&zs);
	b.p[at] |= 0x06;
	return b;
}

/*
 * zlib's two-byte magic is matched by chance by flat x86 code ("48 89"):
 * such a file is no kernel, not a damaged compressed one.
 */
TEST(test_zlib_lookalike)
{
	static const uint8_t flat[] = {
		0x48, 0x89, 0xe5,             /* mov %rsp, %rbp */
		0x48, 0x83, 0xec, 0x10,       /* sub $16, %rsp */
		0x48, 0xc7, 0xc0, 1, 0, 0, 0, /* mov $1, %rax */
		0x0f, 0x01, 0xd9,             /* vmmcall */
		0xc9, 0xc3,                   /* leave; ret */
		0xf4, 0xeb, 0xfd, 0x90, 0x90, /* hlt; jmp .-1; nop; nop */
	};
	size_t n = 64 * KIB;
	uint8_t *d = fx_data(n, 21), *t = malloc(4096);
	struct buf z;
	uint32_t x = 7;
	unsigned lookalikes = 0, not_kernel = 0;

	CHECK_EQ_U64(decomp_detect(flat, sizeof(flat)), DECOMP_ZLIB, "48 89 passes as zlib");
	CHECK_EQ_U64(run("flat binary", flat, sizeof(flat), DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_NOT_KERNEL, "flat binary starting 48 89 e5");
	/* "48 89" and then anything: never blamed on the compression */
	for (unsigned k = 0; k < 500; k++) {
		t[0] = 0x48;
		t[1] = 0x89;
		for (size_t i = 2; i < 4096; i++) {
			x = x * 1103515245u + 12345u;
			t[i] = (uint8_t)(x >> 24);
		}
		lookalikes++;
		not_kernel += run("48 89 + noise", t, 4096, DECOMP_DEFAULT_LIMIT, NULL, 0,
				  NULL) == LDR_E_NOT_KERNEL;
	}
	CHECK_EQ_U64(not_kernel, lookalikes, "48 89 + noise: not a kernel every time");

	/* the same damage after an ELF header came out: a damaged kernel */
	memcpy(d, "\x7f" "ELF", 4);
	z = zlib_bad_second_block(d, n, 1000);
	CHECK_EQ_U64(run("zlib ELF, bad 2nd block", z.p, z.len, DECOMP_DEFAULT_LIMIT, NULL, 0,
			 NULL),
		     LDR_E_DECOMP_CORRUPT, "zlib of an ELF file, damaged after 1000 bytes");
	free(z.p);
	/* and without the ELF header in front: not a kernel */
	d[0] = 0;
	z = zlib_bad_second_block(d, n, 1000);
	CHECK_EQ_U64(run("zlib non-ELF, bad 2nd block", z.p, z.len, DECOMP_DEFAULT_LIMIT, NULL,
			 0, NULL),
		     LDR_E_NOT_KERNEL, "zlib of a non-ELF file, damaged after 1000 bytes");
	free(z.p);
	/* gzip's magic is not matched by chance: its errors stay its own */
	z = make_gzip(d, n);
	z.p[10] |= 0x06;
	CHECK_EQ_U64(run("gzip non-ELF BTYPE 3", z.p, z.len, DECOMP_DEFAULT_LIMIT, NULL, 0, NULL),
		     LDR_E_DECOMP_CORRUPT, "gzip BTYPE 3 of non-ELF data");
	free(z.p);
	CHECK(strstr(ldr_strerror(LDR_E_NOT_KERNEL), "not an ELF kernel") ==
		      ldr_strerror(LDR_E_NOT_KERNEL),
	      "the message starts with \"not an ELF kernel\"");
	free(t);
	free(d);
}
