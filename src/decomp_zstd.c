/*
 * decomp_zstd.c - the zstd backend of the decompression driver: libzstd's
 * streaming decoder (ZSTD_decompressStream) with the loader's allocator.
 * The frame header names the window; the decoder's state is then known
 * before it starts (its context, one block of input and the window, at
 * most min(window, content size) + a block), so it is reserved up front
 * and a window over 2^DECOMP_ZSTD_WINDOW_LOG is refused.  One frame is
 * one stream: bytes after it are trailing, as after a gzip member.
 */
#define ZSTD_STATIC_LINKING_ONLY /* custom allocator, frame header, estimates */
#include <zstd.h>
#include <zstd_errors.h>

#include "decomp_backend.h"

/* alignment padding and headers of the decoder's few allocations */
#define ZSTD_STATE_SLACK (4 * KIB)

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

static enum ldr_err zstd_prepare(struct decomp_run *r)
{
	ZSTD_frameHeader fh;
	size_t ret = ZSTD_getFrameHeader(&fh, r->in, (size_t)r->in_len);

	if (ZSTD_isError(ret))
		return zstd_error(ret);
	if (ret > 0) /* more bytes needed for the header itself */
		return LDR_E_DECOMP_TRUNCATED;
	if (fh.windowSize > (1ULL << DECOMP_ZSTD_WINDOW_LOG))
		return LDR_E_DECOMP_MEMORY;
	r->mem_need = ZSTD_estimateDStreamSize((size_t)fh.windowSize) + ZSTD_STATE_SLACK;
	if (fh.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN)
		r->size_hint = fh.frameContentSize;
	return LDR_OK;
}

static enum ldr_err zstd_init(struct decomp_run *r)
{
	ZSTD_customMem mem = { zstd_alloc, zstd_free, (void *)r->a };
	ZSTD_DCtx *d = ZSTD_createDCtx_advanced(mem);

	if (!d)
		return LDR_E_NOMEM;
	if (ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, DECOMP_ZSTD_WINDOW_LOG))) {
		ZSTD_freeDCtx(d);
		return LDR_E_INVAL;
	}
	r->lib = d;
	return LDR_OK;
}

static enum decomp_status zstd_step(struct decomp_run *r, struct decomp_io *io)
{
	ZSTD_inBuffer in = { io->in, (size_t)io->in_avail, 0 };
	ZSTD_outBuffer out = { io->out, (size_t)io->out_avail, 0 };
	size_t ret = ZSTD_decompressStream(r->lib, &out, &in);

	io->in_used = in.pos;
	io->out_made = out.pos;
	if (ZSTD_isError(ret)) {
		r->err = zstd_error(ret);
		return DS_ERROR;
	}
	/* 0: the frame is complete and all of it flushed */
	return ret == 0 ? DS_END : DS_MORE;
}

static void zstd_end(struct decomp_run *r)
{
	ZSTD_freeDCtx(r->lib);
	r->lib = NULL;
}

const struct decomp_backend decomp_zstd = {
	.prepare = zstd_prepare, .init = zstd_init, .step = zstd_step, .end = zstd_end,
	.mem_max = (1ULL << DECOMP_ZSTD_WINDOW_LOG) + 1 * MIB,
};
