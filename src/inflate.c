/*
 * inflate.c - the decompression wrapper around zlib's inflate().
 *
 * The output buffer starts at the size the stream announces (gzip's ISIZE,
 * the length modulo 2^32, an untrusted hint) or a multiple of the input, and
 * doubles when full, never beyond the caller's limit: a bomb is refused as
 * soon as its output would pass the limit, not after.
 */
#include <string.h>
#include <zlib.h>

#include "inflate.h"

/* zlib's avail_in is 32-bit: feed it at most this much a call */
#define INFLATE_STEP (1ULL << 30)

static void inflate_guard(const struct inflate_alloc *a, int enter)
{
	if (a->guard)
		a->guard(a->ctx, enter);
}

enum inflate_format inflate_detect(const void *buf, uint64_t len)
{
	const uint8_t *b = buf;

	/* ID1 ID2 only: a bad CM byte is then reported by inflate_image()
	 * as a bad gzip header, not as "not an ELF file" */
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return INFLATE_GZIP;
	/* zlib: CM = 8 (deflate), CINFO <= 7, and the header checksum */
	if (len >= 2 && (b[0] & 0x0f) == 8 && (b[0] >> 4) <= 7 &&
	    ((b[0] << 8) | b[1]) % 31 == 0)
		return INFLATE_ZLIB;
	return INFLATE_NONE;
}

static voidpf inflate_zalloc(voidpf opaque, uInt items, uInt size)
{
	const struct inflate_alloc *a = opaque;
	uint64_t n = (uint64_t)items * size; /* both are 32-bit: cannot wrap */
	uint64_t *p = a->alloc(a->ctx, n + 8);

	if (!p)
		return Z_NULL;
	p[0] = n + 8; /* zfree is not told the size; keep it in front */
	return p + 1;
}

static void inflate_zfree(voidpf opaque, voidpf address)
{
	const struct inflate_alloc *a = opaque;
	uint64_t *p = (uint64_t *)address - 1;

	a->free(a->ctx, p, p[0]);
}

/* zlib reports every data error as Z_DATA_ERROR; its message tells which. */
static enum ldr_err inflate_data_error(const char *msg)
{
	static const char *const header_msgs[] = {
		"incorrect header check", "unknown compression method",
		"invalid window size", "unknown header flags set",
		"header crc mismatch",
	};
	size_t i;

	if (!msg)
		return LDR_E_GZIP_CORRUPT;
	for (i = 0; i < sizeof(header_msgs) / sizeof(header_msgs[0]); i++)
		if (strcmp(msg, header_msgs[i]) == 0)
			return LDR_E_GZIP_HEADER;
	if (strcmp(msg, "incorrect data check") == 0 ||
	    strcmp(msg, "incorrect length check") == 0)
		return LDR_E_GZIP_CRC;
	return LDR_E_GZIP_CORRUPT;
}

/*
 * zlib's magic is two bytes, and one two-byte start in 31 with the right
 * low nibble passes it: flat x86 binaries often begin "48 89" (mov with a
 * REX.W prefix), which does.  Such a file fails within its first few dozen
 * bytes: invalid data, or a block that ends at once followed by a wrong
 * Adler-32.  So a zlib-detected file that fails either way while its output
 * does not begin with the ELF magic is reported as not a kernel, not as a
 * damaged compressed one.  (gzip's magic and method byte are three checked
 * bytes; a gzip file that fails is a damaged gzip file.)
 */
static enum ldr_err inflate_verdict(enum inflate_format fmt, enum ldr_err err,
				    const uint8_t *out, uint64_t used)
{
	static const uint8_t elf_magic[4] = { 0x7f, 'E', 'L', 'F' };

	if (fmt != INFLATE_ZLIB || (err != LDR_E_GZIP_CORRUPT && err != LDR_E_GZIP_CRC))
		return err;
	if (used >= sizeof(elf_magic) && memcmp(out, elf_magic, sizeof(elf_magic)) == 0)
		return err;
	return LDR_E_NOT_KERNEL;
}

static uint64_t inflate_first_size(const uint8_t *in, uint64_t in_len,
				   enum inflate_format fmt, uint64_t limit)
{
	uint64_t guess = 0;

	if (fmt == INFLATE_GZIP && in_len >= 18) {
		const uint8_t *t = in + in_len - 4;

		guess = (uint64_t)t[0] | (uint64_t)t[1] << 8 |
			(uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
	}
	/* deflate expands at most ~1032:1; a smaller claim than the input
	 * is a lie or a wrapped ISIZE: start from the input size instead */
	if (guess < in_len)
		guess = in_len > UINT64_MAX / 4 ? in_len : in_len * 4;
	if (guess < 64 * KIB)
		guess = 64 * KIB;
	return guess > limit ? limit : guess;
}

enum ldr_err inflate_image(const void *in, uint64_t in_len, uint64_t limit,
			   const struct inflate_alloc *a, void **ret_out,
			   uint64_t *ret_len, uint64_t *ret_cap)
{
	enum inflate_format fmt = inflate_detect(in, in_len);
	const uint8_t *src = in;
	uint8_t *out = NULL;
	uint64_t cap, used = 0, consumed = 0;
	enum ldr_err err = LDR_OK;
	z_stream zs;
	int zr;

	if (fmt == INFLATE_NONE || limit == 0)
		return LDR_E_INVAL;
	cap = inflate_first_size(src, in_len, fmt, limit);
	out = a->alloc(a->ctx, cap);
	if (!out)
		return LDR_E_NOMEM;

	memset(&zs, 0, sizeof(zs));
	zs.zalloc = inflate_zalloc;
	zs.zfree = inflate_zfree;
	zs.opaque = (voidpf)a;
	/* 15 + 16: gzip wrapper only; 15: zlib wrapper only */
	inflate_guard(a, 1);
	zr = inflateInit2(&zs, fmt == INFLATE_GZIP ? 15 + 16 : 15);
	inflate_guard(a, 0);
	if (zr != Z_OK) {
		a->free(a->ctx, out, cap);
		return LDR_E_NOMEM;
	}

	for (;;) {
		uint64_t in_left = in_len - consumed, out_left = cap - used;

		zs.next_in = (Bytef *)(src + consumed);
		zs.avail_in = (uInt)(in_left > INFLATE_STEP ? INFLATE_STEP : in_left);
		zs.next_out = out + used;
		zs.avail_out = (uInt)(out_left > INFLATE_CHUNK ? INFLATE_CHUNK : out_left);
		{
			uInt gave_in = zs.avail_in, gave_out = zs.avail_out;

			inflate_guard(a, 1);
			zr = inflate(&zs, Z_NO_FLUSH);
			inflate_guard(a, 0);
			consumed += gave_in - zs.avail_in;
			used += gave_out - zs.avail_out;
		}
		if (a->progress)
			a->progress(a->ctx, consumed, in_len);
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_DATA_ERROR) {
			err = inflate_verdict(fmt, inflate_data_error(zs.msg), out, used);
			goto out;
		}
		if (zr == Z_NEED_DICT) {
			/* zlib FDICT: a preset dictionary the loader cannot supply */
			err = LDR_E_GZIP_HEADER;
			goto out;
		}
		if (zr == Z_MEM_ERROR) {
			err = LDR_E_NOMEM;
			goto out;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			err = LDR_E_GZIP_CORRUPT;
			goto out;
		}
		if (used == cap) {
			/* output full: grow, unless that passes the limit */
			uint64_t ncap = cap > limit / 2 ? limit : cap * 2;
			uint8_t *n;

			if (cap >= limit) {
				err = LDR_E_GZIP_TOO_BIG;
				goto out;
			}
			n = a->alloc(a->ctx, ncap);
			if (!n) {
				err = LDR_E_NOMEM;
				goto out;
			}
			memcpy(n, out, used);
			a->free(a->ctx, out, cap);
			out = n;
			cap = ncap;
		} else if (consumed == in_len && zr == Z_BUF_ERROR) {
			/* room left, input gone, stream not finished */
			err = LDR_E_GZIP_TRUNCATED;
			goto out;
		}
	}
	if (consumed != in_len) {
		err = LDR_E_GZIP_TRAILING;
		goto out;
	}
	inflate_guard(a, 1);
	inflateEnd(&zs);
	inflate_guard(a, 0);
	*ret_out = out;
	*ret_len = used;
	*ret_cap = cap;
	return LDR_OK;
out:
	inflate_guard(a, 1);
	inflateEnd(&zs);
	inflate_guard(a, 0);
	a->free(a->ctx, out, cap);
	return err;
}
