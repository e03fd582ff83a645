/*
 * decomp_gzip.c - the gzip (RFC 1952) and zlib (RFC 1950) backend of the
 * decompression driver: zlib's inflate() with the loader's allocator.
 * gzip's ISIZE (the length modulo 2^32) is the stream's size hint.
 */
#include <string.h>
#include <zlib.h>

#include "decomp_backend.h"

/* zlib's inflate state (about 7 KiB) and its 32 KiB window, with room */
#define GZIP_STATE (48 * KIB)

static voidpf gzip_zalloc(voidpf opaque, uInt items, uInt size)
{
	/* both are 32-bit: the product cannot wrap */
	return decomp_lib_alloc(opaque, (uint64_t)items * size);
}

static void gzip_zfree(voidpf opaque, voidpf address)
{
	decomp_lib_free(opaque, address);
}

/* zlib reports every data error as Z_DATA_ERROR; its message tells which. */
static enum ldr_err gzip_data_error(const char *msg)
{
	static const char *const header_msgs[] = {
		"incorrect header check", "unknown compression method",
		"invalid window size", "unknown header flags set",
		"header crc mismatch",
	};
	size_t i;

	if (!msg)
		return LDR_E_DECOMP_CORRUPT;
	for (i = 0; i < sizeof(header_msgs) / sizeof(header_msgs[0]); i++)
		if (strcmp(msg, header_msgs[i]) == 0)
			return LDR_E_DECOMP_HEADER;
	if (strcmp(msg, "incorrect data check") == 0 ||
	    strcmp(msg, "incorrect length check") == 0)
		return LDR_E_DECOMP_CHECK;
	return LDR_E_DECOMP_CORRUPT;
}

static enum ldr_err gzip_prepare(struct decomp_run *r)
{
	r->mem_need = GZIP_STATE;
	/* ISIZE: only a member of at least header + trailer has one */
	if (r->in_len >= 18)
		r->size_hint = ldr_le32(r->in + r->in_len - 4);
	return LDR_OK;
}

static enum ldr_err zlib_prepare(struct decomp_run *r)
{
	r->mem_need = GZIP_STATE;
	return LDR_OK;
}

static enum ldr_err inflate_init_bits(struct decomp_run *r, int window_bits)
{
	z_stream *zs = decomp_lib_alloc(r->a, sizeof(*zs));

	if (!zs)
		return LDR_E_NOMEM;
	memset(zs, 0, sizeof(*zs));
	zs->zalloc = gzip_zalloc;
	zs->zfree = gzip_zfree;
	zs->opaque = (voidpf)r->a;
	if (inflateInit2(zs, window_bits) != Z_OK) {
		decomp_lib_free(r->a, zs);
		return LDR_E_NOMEM;
	}
	r->lib = zs;
	return LDR_OK;
}

/* 15 + 16: the gzip wrapper only; 15: the zlib wrapper only */
static enum ldr_err gzip_init(struct decomp_run *r) { return inflate_init_bits(r, 15 + 16); }
static enum ldr_err zlib_init(struct decomp_run *r) { return inflate_init_bits(r, 15); }

static enum decomp_status gzip_step(struct decomp_run *r, struct decomp_io *io)
{
	z_stream *zs = r->lib;
	int zr;

	zs->next_in = (Bytef *)io->in;
	zs->avail_in = (uInt)io->in_avail;
	zs->next_out = io->out;
	zs->avail_out = (uInt)io->out_avail;
	zr = inflate(zs, Z_NO_FLUSH);
	io->in_used = io->in_avail - zs->avail_in;
	io->out_made = io->out_avail - zs->avail_out;
	switch (zr) {
	case Z_STREAM_END:
		return DS_END;
	case Z_OK:
	case Z_BUF_ERROR: /* no progress possible: the driver judges why */
		return DS_MORE;
	case Z_DATA_ERROR:
		r->err = gzip_data_error(zs->msg);
		return DS_ERROR;
	case Z_NEED_DICT:
		/* zlib FDICT: a preset dictionary the loader cannot supply */
		r->err = LDR_E_DECOMP_HEADER;
		return DS_ERROR;
	case Z_MEM_ERROR:
		r->err = LDR_E_NOMEM;
		return DS_ERROR;
	default:
		r->err = LDR_E_DECOMP_CORRUPT;
		return DS_ERROR;
	}
}

static void gzip_end(struct decomp_run *r)
{
	inflateEnd(r->lib);
	decomp_lib_free(r->a, r->lib);
	r->lib = NULL;
}

const struct decomp_backend decomp_gzip = {
	.prepare = gzip_prepare, .init = gzip_init, .step = gzip_step, .end = gzip_end,
	.mem_max = GZIP_STATE,
};

const struct decomp_backend decomp_zlib = {
	.prepare = zlib_prepare, .init = zlib_init, .step = gzip_step, .end = gzip_end,
	.mem_max = GZIP_STATE,
};
