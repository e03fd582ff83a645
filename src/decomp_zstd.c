/*
 * decomp_zstd.c - the zstd backend of the decompression driver: libzstd's
 * streaming decoder (ZSTD_decompressStream) with the loader's allocator.
 * One frame is one stream: bytes after it are trailing, as after a gzip
 * member.  The frame header is read before the decoder starts; a window
 * over 2^DECOMP_ZSTD_WINDOW_LOG is refused.  Two ways to run:
 *
 *   stable   the frame states its content size and the output buffer holds
 *            it: libzstd decodes straight into that buffer (its window is
 *            the output itself, no copy) and keeps only its context and one
 *            block of input; each call is handed exactly the next block
 *            (found from the 3-byte block headers), so it makes at most one
 *            block, 128 KiB, of output.
 *   buffered otherwise: libzstd keeps the window itself and each call is
 *            handed DECOMP_CHUNK of output, as for the other libraries.
 *
 * The state each needs is known from the frame header and reserved up
 * front; should the buffer turn out smaller than the content size (a
 * caller's smaller hint), the backend asks for the buffered state instead.
 */
#define ZSTD_STATIC_LINKING_ONLY /* custom allocator, frame header, stable output */
#include <zstd.h>
#include <zstd_errors.h>

#include "decomp_backend.h"

/* alignment padding and headers of the decoder's few allocations */
#define ZSTD_STATE_SLACK (4 * KIB)
#define ZSTD_BLOCK_HEADER 3
#define ZSTD_CHECKSUM 4

struct zstd_state {
	ZSTD_DCtx *d;
	uint64_t content;       /* ZSTD_CONTENTSIZE_UNKNOWN if the frame does not say */
	uint64_t window;
	uint64_t header;        /* frame header bytes */
	int checksum;           /* a content checksum follows the last block */
	int decided, stable;
};

static void *zstd_alloc(void *opaque, size_t size)
{
	return decomp_lib_alloc(opaque, size);
}

static void zstd_free(void *opaque, void *address)
{
	decomp_lib_free(opaque, address);
}

static enum ldr_err zstd_error(size_t code)
{
	switch (ZSTD_getErrorCode(code)) {
	case ZSTD_error_prefix_unknown:
	case ZSTD_error_version_unsupported:
	case ZSTD_error_frameParameter_unsupported:
	case ZSTD_error_dictionary_wrong: /* needs a dictionary: we have none */
		return LDR_E_DECOMP_HEADER;
	case ZSTD_error_frameParameter_windowTooLarge:
		return LDR_E_DECOMP_MEMORY;
	case ZSTD_error_checksum_wrong:
		return LDR_E_DECOMP_CHECK;
	case ZSTD_error_memory_allocation:
		return LDR_E_NOMEM;
	default:
		return LDR_E_DECOMP_CORRUPT;
	}
}

/* The frame header, checked; LDR_OK and *fh, or the error. */
static enum ldr_err zstd_header(const struct decomp_run *r, ZSTD_frameHeader *fh)
{
	size_t ret = ZSTD_getFrameHeader(fh, r->in, (size_t)r->in_len);

	if (ZSTD_isError(ret))
		return zstd_error(ret);
	if (ret > 0) /* more bytes needed for the header itself */
		return LDR_E_DECOMP_TRUNCATED;
	if (fh->windowSize > (1ULL << DECOMP_ZSTD_WINDOW_LOG))
		return LDR_E_DECOMP_MEMORY;
	return LDR_OK;
}

/* state of the stable way: the context and one block of input */
static uint64_t zstd_stable_need(void)
{
	return ZSTD_estimateDCtxSize() + ZSTD_BLOCKSIZE_MAX + ZSTD_STATE_SLACK;
}

static uint64_t zstd_buffered_need(uint64_t window)
{
	return ZSTD_estimateDStreamSize((size_t)window) + ZSTD_STATE_SLACK;
}

static enum ldr_err zstd_prepare(struct decomp_run *r)
{
	ZSTD_frameHeader fh;
	enum ldr_err err = zstd_header(r, &fh);

	if (err != LDR_OK)
		return err;
	if (fh.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN && fh.frameContentSize <= r->limit) {
		r->size_hint = fh.frameContentSize;
		r->mem_need = zstd_stable_need();
	} else {
		r->mem_need = zstd_buffered_need(fh.windowSize);
	}
	return LDR_OK;
}

static enum ldr_err zstd_init(struct decomp_run *r)
{
	ZSTD_customMem mem = { zstd_alloc, zstd_free, (void *)r->a };
	struct zstd_state *s;
	ZSTD_frameHeader fh;
	enum ldr_err err = zstd_header(r, &fh);

	if (err != LDR_OK)
		return err;
	s = decomp_lib_alloc(r->a, sizeof(*s));
	if (!s)
		return LDR_E_NOMEM;
	s->content = fh.frameContentSize;
	s->window = fh.windowSize;
	s->header = fh.headerSize;
	s->checksum = fh.checksumFlag != 0;
	s->decided = 0;
	s->stable = 0;
	s->d = ZSTD_createDCtx_advanced(mem);
	if (!s->d) {
		decomp_lib_free(r->a, s);
		return LDR_E_NOMEM;
	}
	if (ZSTD_isError(ZSTD_DCtx_setParameter(s->d, ZSTD_d_windowLogMax,
						DECOMP_ZSTD_WINDOW_LOG))) {
		ZSTD_freeDCtx(s->d);
		decomp_lib_free(r->a, s);
		return LDR_E_INVAL;
	}
	r->lib = s;
	return LDR_OK;
}

/*
 * Stable way: the input up to the end of the next unit - the frame header,
 * or one block (3-byte header: bit 0 last, bits 1-2 type, the rest its size;
 * an RLE block carries one byte), the last with the checksum after it.
 * Only a bound on each call: libzstd checks the stream itself.
 */
static uint64_t zstd_next_unit(const struct decomp_run *r, const struct zstd_state *s,
			       uint64_t pos)
{
	uint64_t left = r->in_len - pos, unit;
	uint32_t h;

	if (pos < s->header)
		return s->header - pos;
	if (left < ZSTD_BLOCK_HEADER)
		return left;
	h = (uint32_t)r->in[pos] | (uint32_t)r->in[pos + 1] << 8 |
	    (uint32_t)r->in[pos + 2] << 16;
	unit = ZSTD_BLOCK_HEADER + (((h >> 1) & 3) == 1 ? 1 : h >> 3);
	if ((h & 1) && s->checksum)
		unit += ZSTD_CHECKSUM;
	return unit < left ? unit : left;
}

static enum decomp_status zstd_fail(struct decomp_run *r, enum ldr_err err)
{
	r->err = err;
	return DS_ERROR;
}

static enum decomp_status zstd_step(struct decomp_run *r, struct decomp_io *io)
{
	struct zstd_state *s = r->lib;
	uint64_t pos = (uint64_t)(io->in - r->in), feed = io->in_avail;
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	size_t ret;

	if (!s->decided) {
		s->decided = 1;
		s->stable = s->content != ZSTD_CONTENTSIZE_UNKNOWN && s->content <= io->buf_cap;
		if (s->stable &&
		    ZSTD_isError(ZSTD_DCtx_setParameter(s->d, ZSTD_d_stableOutBuffer, 1)))
			return zstd_fail(r, LDR_E_INVAL);
		if (!s->stable && r->mem_need < zstd_buffered_need(s->window)) {
			r->mem_need = zstd_buffered_need(s->window);
			return DS_NEED_MEM;
		}
	}
	if (s->stable) {
		uint64_t unit = zstd_next_unit(r, s, pos);

		/* all output of the input given so far is in the buffer already:
		 * without more input the frame cannot go on (and the driver must
		 * not move the buffer to make room) */
		if (feed == 0)
			return zstd_fail(r, LDR_E_DECOMP_TRUNCATED);
		if (unit < feed)
			feed = unit;
		out = (ZSTD_outBuffer){ io->buf, (size_t)io->buf_cap, (size_t)io->buf_used };
	} else {
		out = (ZSTD_outBuffer){ io->out, (size_t)io->out_avail, 0 };
	}
	in = (ZSTD_inBuffer){ io->in, (size_t)feed, 0 };
	ret = ZSTD_decompressStream(s->d, &out, &in);
	io->in_used = in.pos;
	io->out_made = s->stable ? out.pos - io->buf_used : out.pos;
	if (ZSTD_isError(ret))
		return zstd_fail(r, zstd_error(ret));
	/* 0: the frame is complete and all of it flushed */
	return ret == 0 ? DS_END : DS_MORE;
}

/* the driver has reserved the buffered way's state: nothing else to do */
static enum ldr_err zstd_raise_mem(struct decomp_run *r)
{
	(void)r;
	return LDR_OK;
}

static void zstd_end(struct decomp_run *r)
{
	struct zstd_state *s = r->lib;

	ZSTD_freeDCtx(s->d);
	decomp_lib_free(r->a, s);
	r->lib = NULL;
}

const struct decomp_backend decomp_zstd = {
	.prepare = zstd_prepare, .init = zstd_init, .step = zstd_step,
	.raise_mem = zstd_raise_mem, .end = zstd_end,
	.mem_max = (1ULL << DECOMP_ZSTD_WINDOW_LOG) + 1 * MIB,
};
