/*
 * decomp_xz.c - the xz backend of the decompression driver: liblzma's
 * stream decoder (any filter chain liblzma decodes, e.g. Linux's x86 BCJ +
 * LZMA2; the stream's own integrity check) with the loader's allocator.
 *
 * The dictionary is most of the state and the stream names its size only
 * in each block's header, so the decoder starts with a memory limit that
 * covers its own state; liblzma stops with LZMA_MEMLIMIT_ERROR before it
 * allocates a block's dictionary, the driver reserves what
 * lzma_memusage() then says (at most DECOMP_XZ_MEM_MAX), and decoding
 * goes on with the raised limit.
 */
#include <string.h>
#include <lzma.h>

#include "decomp_backend.h"

/* the stream decoder before its first block: liblzma's base of 32 KiB
 * plus the index hash, with room */
#define XZ_STATE_START (64 * KIB)
/* liblzma's memusage is its own estimate of its allocations: room for the
 * loader's per-allocation headers and alignment on top */
#define XZ_STATE_SLACK (64 * KIB)

static void *xz_alloc(void *opaque, size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	return decomp_lib_alloc(opaque, (uint64_t)nmemb * size);
}

static void xz_free(void *opaque, void *ptr)
{
	decomp_lib_free(opaque, ptr);
}

struct xz_state {
	lzma_stream strm;
	lzma_allocator alloc;
};

/* xz's variable-length integer; 0 when it runs past end or is too long */
static int xz_vli(const uint8_t **p, const uint8_t *end, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 9 && *p < end; i++) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*ret = v;
			return 1;
		}
	}
	return 0;
}

/*
 * The uncompressed size the index at the end of the stream records (its
 * records' sum), or 0.  Untrusted: it only sizes the first buffer, and
 * liblzma checks the index against the blocks while decoding.
 * Footer (12 bytes): CRC32, Backward Size ((n + 1) * 4 bytes of index),
 * flags, "YZ".  Index: 0x00, record count, (unpadded, uncompressed) pairs.
 */
static uint64_t xz_index_size(const uint8_t *in, uint64_t len)
{
	const uint8_t *foot, *p, *end;
	uint64_t backward, count, sum = 0;

	if (len < 12 + 12 + 8)
		return 0;
	foot = in + len - 12;
	if (foot[10] != 'Y' || foot[11] != 'Z')
		return 0;
	backward = ((uint64_t)ldr_le32(foot + 4) + 1) * 4;
	if (backward > len - 24)
		return 0;
	p = foot - backward;
	end = foot;
	if (*p++ != 0x00 || !xz_vli(&p, end, &count))
		return 0;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t unpadded, size;

		if (!xz_vli(&p, end, &unpadded) || !xz_vli(&p, end, &size) ||
		    !ldr_add_ok(sum, size, &sum))
			return 0;
	}
	return sum;
}

static enum ldr_err xz_prepare(struct decomp_run *r)
{
	r->mem_need = XZ_STATE_START;
	r->size_hint = xz_index_size(r->in, r->in_len);
	return LDR_OK;
}

static enum ldr_err xz_init(struct decomp_run *r)
{
	struct xz_state *s = decomp_lib_alloc(r->a, sizeof(*s));
	lzma_stream init = LZMA_STREAM_INIT;
	lzma_ret lr;

	if (!s)
		return LDR_E_NOMEM;
	s->strm = init;
	s->alloc.alloc = xz_alloc;
	s->alloc.free = xz_free;
	s->alloc.opaque = (void *)r->a;
	s->strm.allocator = &s->alloc;
	/* an unknown check type is an error, not a silently skipped check */
	lr = lzma_stream_decoder(&s->strm, XZ_STATE_START, LZMA_TELL_UNSUPPORTED_CHECK);
	if (lr != LZMA_OK) {
		decomp_lib_free(r->a, s);
		return lr == LZMA_MEM_ERROR ? LDR_E_NOMEM : LDR_E_INVAL;
	}
	r->lib = s;
	return LDR_OK;
}

static enum decomp_status xz_error(struct decomp_run *r, enum ldr_err err)
{
	r->err = err;
	return DS_ERROR;
}

static enum decomp_status xz_step(struct decomp_run *r, struct decomp_io *io)
{
	struct xz_state *s = r->lib;
	lzma_ret lr;

	s->strm.next_in = io->in;
	s->strm.avail_in = (size_t)io->in_avail;
	s->strm.next_out = io->out;
	s->strm.avail_out = (size_t)io->out_avail;
	lr = lzma_code(&s->strm, io->in_last ? LZMA_FINISH : LZMA_RUN);
	io->in_used = io->in_avail - s->strm.avail_in;
	io->out_made = io->out_avail - s->strm.avail_out;
	switch (lr) {
	case LZMA_STREAM_END:
		return DS_END;
	case LZMA_OK:
	case LZMA_BUF_ERROR: /* no progress possible: the driver judges why */
		return DS_MORE;
	case LZMA_MEMLIMIT_ERROR:
		r->mem_need = lzma_memusage(&s->strm) + XZ_STATE_SLACK;
		return DS_NEED_MEM;
	case LZMA_MEM_ERROR:
		return xz_error(r, LDR_E_NOMEM);
	case LZMA_FORMAT_ERROR:
	case LZMA_OPTIONS_ERROR:
	case LZMA_UNSUPPORTED_CHECK:
		return xz_error(r, LDR_E_DECOMP_HEADER);
	case LZMA_DATA_ERROR:
		/* liblzma says LZMA_DATA_ERROR for corrupt data and for a
		 * failed check alike; the check (and the index after it) is
		 * read once a block's output is complete, so an error with all
		 * the output the index records already made is the check */
		if (r->size_hint && r->produced + io->out_made == r->size_hint)
			return xz_error(r, LDR_E_DECOMP_CHECK);
		return xz_error(r, LDR_E_DECOMP_CORRUPT);
	default:
		return xz_error(r, LDR_E_DECOMP_CORRUPT);
	}
}

static enum ldr_err xz_raise_mem(struct decomp_run *r)
{
	struct xz_state *s = r->lib;

	return lzma_memlimit_set(&s->strm, r->mem_need) == LZMA_OK ? LDR_OK
								    : LDR_E_DECOMP_CORRUPT;
}

static void xz_end(struct decomp_run *r)
{
	struct xz_state *s = r->lib;

	lzma_end(&s->strm);
	decomp_lib_free(r->a, s);
	r->lib = NULL;
}

const struct decomp_backend decomp_xz = {
	.prepare = xz_prepare, .init = xz_init, .step = xz_step,
	.raise_mem = xz_raise_mem, .end = xz_end, .mem_max = DECOMP_XZ_MEM_MAX,
};
