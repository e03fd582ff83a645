/*
 * decompress.c - the decompression driver shared by every format: magic
 * detection, the output buffer (sized from a hint, doubled when full, never
 * past the limit: a bomb is refused as soon as its output would pass the
 * limit, not after), the guard around each library call, the reservation of
 * the library's state, progress, and the end-of-input judgement.
 */
#include <string.h>

#include "decomp_backend.h"

/* input handed to a library per call (zlib's avail_in is 32-bit) */
#define DECOMP_IN_STEP (1ULL << 30)

enum decomp_format decomp_detect(const void *buf, uint64_t len)
{
	static const struct {
		uint8_t magic[6];
		uint8_t len;
		enum decomp_format fmt;
	} m[] = {
		/* ID1 ID2 only: a bad CM byte is then reported by the
		 * decompressor as a bad header, not as "not an ELF file" */
		{ { 0x1f, 0x8b }, 2, DECOMP_GZIP },
		{ { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6, DECOMP_XZ },
		{ { 0x02, 0x21, 0x4c, 0x18 }, 4, DECOMP_LZ4 },
		{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, DECOMP_ZSTD },
		{ { 0x04, 0x22, 0x4d, 0x18 }, 4, DECOMP_LZ4_FRAME },
		{ { 0x89, 'L', 'Z', 'O' }, 4, DECOMP_LZO },
		/* properties lc=3 lp=0 pb=2 and a dictionary size whose low
		 * 16 bits are 0: what lzma(1) writes */
		{ { 0x5d, 0x00, 0x00 }, 3, DECOMP_LZMA },
	};
	const uint8_t *b = buf;

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (len >= m[i].len && memcmp(b, m[i].magic, m[i].len) == 0)
			return m[i].fmt;
	if (len >= 4 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' && b[3] <= '9')
		return DECOMP_BZIP2;
	/* zlib: CM = 8 (deflate), CINFO <= 7, and the header checksum */
	if (len >= 2 && (b[0] & 0x0f) == 8 && (b[0] >> 4) <= 7 &&
	    ((b[0] << 8) | b[1]) % 31 == 0)
		return DECOMP_ZLIB;
	return DECOMP_NONE;
}

const char *decomp_format_name(enum decomp_format fmt)
{
	static const char *const names[DECOMP_FORMAT_COUNT] = {
		[DECOMP_NONE] = "none", [DECOMP_GZIP] = "gzip", [DECOMP_ZLIB] = "zlib",
		[DECOMP_XZ] = "xz", [DECOMP_LZ4] = "lz4", [DECOMP_ZSTD] = "zstd",
		[DECOMP_BZIP2] = "bzip2", [DECOMP_LZMA] = "lzma", [DECOMP_LZO] = "lzo",
		[DECOMP_LZ4_FRAME] = "lz4 frame",
	};

	return (unsigned)fmt < DECOMP_FORMAT_COUNT ? names[fmt] : "unknown";
}

void *decomp_lib_alloc(const struct decomp_alloc *a, uint64_t size)
{
	uint64_t *p;

	if (size > UINT64_MAX - DECOMP_LIB_OVERHEAD)
		return NULL;
	p = a->alloc(a->ctx, size + DECOMP_LIB_OVERHEAD);
	if (!p)
		return NULL;
	p[0] = size + DECOMP_LIB_OVERHEAD;
	return (uint8_t *)p + DECOMP_LIB_OVERHEAD;
}

void decomp_lib_free(const struct decomp_alloc *a, void *q)
{
	uint64_t *p;

	if (!q)
		return;
	p = (uint64_t *)(void *)((uint8_t *)q - DECOMP_LIB_OVERHEAD);
	a->free(a->ctx, p, p[0]);
}

static void decomp_guard(const struct decomp_alloc *a, int enter)
{
	if (a->guard)
		a->guard(a->ctx, enter);
}

static int decomp_reserve(const struct decomp_alloc *a, uint64_t bytes)
{
	return a->reserve ? a->reserve(a->ctx, bytes) : 1;
}

static const struct decomp_backend *decomp_backend_of(enum decomp_format fmt,
						      enum ldr_err *ret_err)
{
	switch (fmt) {
	case DECOMP_GZIP: return &decomp_gzip;
	case DECOMP_ZLIB: return &decomp_zlib;
	case DECOMP_XZ: return &decomp_xz;
	case DECOMP_LZ4: return &decomp_lz4;
	case DECOMP_ZSTD: return &decomp_zstd;
	case DECOMP_BZIP2: *ret_err = LDR_E_UNSUPPORTED_BZIP2; return NULL;
	case DECOMP_LZMA: *ret_err = LDR_E_UNSUPPORTED_LZMA; return NULL;
	case DECOMP_LZO: *ret_err = LDR_E_UNSUPPORTED_LZO; return NULL;
	case DECOMP_LZ4_FRAME: *ret_err = LDR_E_UNSUPPORTED_LZ4_FRAME; return NULL;
	default: *ret_err = LDR_E_INVAL; return NULL;
	}
}

/*
 * The first buffer: the hint (the caller's, else the stream's own claim),
 * unless it is smaller than the input - a lie, or a size modulo 2^32 -
 * then four times the input; at least 64 KiB, at most the limit.
 */
static uint64_t decomp_first_size(uint64_t hint, uint64_t in_len, uint64_t limit)
{
	uint64_t guess = hint;

	if (guess < in_len)
		guess = in_len > UINT64_MAX / 4 ? in_len : in_len * 4;
	if (guess < 64 * KIB)
		guess = 64 * KIB;
	return guess > limit ? limit : guess;
}

/* Output full (or too small for the next unit): double it, up to the limit. */
static enum ldr_err decomp_grow(const struct decomp_alloc *a, uint8_t **out, uint64_t used,
				uint64_t *cap, uint64_t limit)
{
	uint64_t ncap = *cap > limit / 2 ? limit : *cap * 2;
	uint8_t *n;

	if (*cap >= limit)
		return LDR_E_DECOMP_TOO_BIG;
	n = a->alloc(a->ctx, ncap);
	if (!n)
		return LDR_E_NOMEM;
	memcpy(n, *out, used);
	a->free(a->ctx, *out, *cap);
	*out = n;
	*cap = ncap;
	return LDR_OK;
}

/* Reserve r->mem_need for the library, refusing more than the backend allows. */
static enum ldr_err decomp_want_mem(const struct decomp_backend *b, struct decomp_run *r)
{
	if (r->mem_need > b->mem_max)
		return LDR_E_DECOMP_MEMORY;
	return decomp_reserve(r->a, r->mem_need) ? LDR_OK : LDR_E_NOMEM;
}

/* The step loop; on success the stream ended and *ret_used bytes came out. */
static enum ldr_err decomp_loop(const struct decomp_backend *b, struct decomp_run *r,
				uint8_t **out, uint64_t *cap, uint64_t limit, uint64_t *ret_used)
{
	const struct decomp_alloc *a = r->a;
	uint64_t chunk = b->out_chunk ? b->out_chunk : DECOMP_CHUNK;
	uint64_t used = 0, consumed = 0, raised = r->mem_need;
	enum ldr_err err;

	for (;;) {
		struct decomp_io io;
		enum decomp_status st;
		uint64_t in_left = r->in_len - consumed, room = *cap - used;

		io.in = r->in + consumed;
		io.in_avail = in_left > DECOMP_IN_STEP ? DECOMP_IN_STEP : in_left;
		io.in_last = io.in_avail == in_left;
		io.out = *out + used;
		io.out_avail = room > chunk ? chunk : room;
		io.buf = *out;
		io.buf_cap = *cap;
		io.buf_used = used;
		io.in_used = 0;
		io.out_made = 0;
		decomp_guard(a, 1);
		st = b->step(r, &io);
		decomp_guard(a, 0);
		consumed += io.in_used;
		used += io.out_made;
		r->produced = used;
		if (a->progress)
			a->progress(a->ctx, consumed, r->in_len);

		switch (st) {
		case DS_END:
			*ret_used = used;
			return consumed == r->in_len ? LDR_OK : LDR_E_DECOMP_TRAILING;
		case DS_ERROR:
			return r->err;
		case DS_NEED_MEM:
			/* each raise must grow, or a confused library loops */
			if (r->mem_need <= raised)
				return LDR_E_DECOMP_CORRUPT;
			raised = r->mem_need;
			err = decomp_want_mem(b, r);
			if (err == LDR_OK) {
				decomp_guard(a, 1);
				err = b->raise_mem(r);
				decomp_guard(a, 0);
			}
			if (err != LDR_OK)
				return err;
			continue;
		case DS_NEED_OUT:
			break;
		case DS_MORE:
			if (io.in_used || io.out_made)
				continue;
			/* no progress: for want of output only if there was none
			 * to give (a full buffer is first offered zero bytes, so
			 * that a stream ending exactly there needs no growth) */
			if (room == 0)
				break;
			return consumed == r->in_len ? LDR_E_DECOMP_TRUNCATED : LDR_E_DECOMP_CORRUPT;
		}
		err = decomp_grow(a, out, used, cap, limit);
		if (err != LDR_OK)
			return err;
	}
}

/*
 * zlib's magic is two bytes, and one two-byte start in 31 with the right
 * low nibble passes it: flat x86 binaries often begin "48 89" (mov with a
 * REX.W prefix), which does.  Such a file fails within its first few dozen
 * bytes: invalid data, or a block that ends at once followed by a wrong
 * Adler-32.  So a zlib-detected file that fails either way while its output
 * does not begin with the ELF magic is reported as not a kernel, not as a
 * damaged compressed one.  (The other formats' magics are four or more
 * checked bytes: a file that fails is a damaged file of that format.)
 */
static enum ldr_err decomp_verdict(enum decomp_format fmt, enum ldr_err err,
				   const uint8_t *out, uint64_t produced)
{
	static const uint8_t elf_magic[4] = { 0x7f, 'E', 'L', 'F' };

	if (fmt != DECOMP_ZLIB || (err != LDR_E_DECOMP_CORRUPT && err != LDR_E_DECOMP_CHECK))
		return err;
	if (produced >= sizeof(elf_magic) && memcmp(out, elf_magic, sizeof(elf_magic)) == 0)
		return err;
	return LDR_E_NOT_KERNEL;
}

enum ldr_err decomp_image(const void *in, uint64_t in_len, uint64_t limit,
			  uint64_t size_hint, const struct decomp_alloc *a,
			  void **ret_out, uint64_t *ret_len, uint64_t *ret_cap)
{
	enum ldr_err err = LDR_E_INVAL;
	const struct decomp_backend *b = decomp_backend_of(decomp_detect(in, in_len), &err);
	struct decomp_run r;
	uint8_t *out;
	uint64_t cap, used = 0;

	if (!b)
		return err;
	if (limit == 0)
		return LDR_E_INVAL;
	memset(&r, 0, sizeof(r));
	r.a = a;
	r.in = in;
	r.in_len = in_len;
	r.limit = limit;

	decomp_guard(a, 1);
	err = b->prepare(&r);
	decomp_guard(a, 0);
	if (err == LDR_OK)
		err = decomp_want_mem(b, &r);
	if (err != LDR_OK)
		goto unreserve;

	cap = decomp_first_size(size_hint ? size_hint : r.size_hint, in_len, limit);
	out = a->alloc(a->ctx, cap);
	if (!out) {
		err = LDR_E_NOMEM;
		goto unreserve;
	}
	decomp_guard(a, 1);
	err = b->init(&r);
	decomp_guard(a, 0);
	if (err == LDR_OK) {
		err = decomp_loop(b, &r, &out, &cap, limit, &used);
		decomp_guard(a, 1);
		b->end(&r);
		decomp_guard(a, 0);
	}
	if (err != LDR_OK) {
		err = decomp_verdict(decomp_detect(in, in_len), err, out, r.produced);
		a->free(a->ctx, out, cap);
		goto unreserve;
	}
	decomp_reserve(a, 0);
	*ret_out = out;
	*ret_len = used;
	*ret_cap = cap;
	return LDR_OK;
unreserve:
	decomp_reserve(a, 0);
	return err;
}
