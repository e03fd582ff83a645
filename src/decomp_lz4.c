/*
 * decomp_lz4.c - the LZ4 legacy-frame backend of the decompression driver
 * (what `lz4 -l` writes and Linux's CONFIG_KERNEL_LZ4 uses): the magic
 * 02 21 4c 18, then blocks of [le32 compressed size][LZ4 block], each
 * decompressing to 8 MiB, the last to at most 8 MiB; the stream ends with
 * the input.  Each block is one LZ4_decompress_safe() call straight into
 * the output buffer; liblz4 keeps no state.  A repeated magic starts a new
 * frame (concatenated files), as Linux's own decompressor allows.
 */
#include <lz4.h>

#include "decomp_backend.h"

#define LZ4_LEGACY_MAGIC 0x184c2102u

static enum decomp_status lz4_error(struct decomp_run *r, enum ldr_err err)
{
	r->err = err;
	return DS_ERROR;
}

static enum ldr_err lz4_prepare(struct decomp_run *r)
{
	r->mem_need = 0;
	return LDR_OK;
}

static enum ldr_err lz4_init(struct decomp_run *r)
{
	r->pos = 0;
	r->lz4_short = 0;
	return LDR_OK;
}

/*
 * One unit per call: the magic, or one block.  The backend reads r->in at
 * its own position r->pos (which is what the driver has counted as
 * consumed), so that a block never straddles the driver's input window.
 */
static enum decomp_status lz4_step(struct decomp_run *r, struct decomp_io *io)
{
	uint64_t left = r->in_len - r->pos;
	uint64_t win = io->out_avail > DECOMP_LZ4_BLOCK ? DECOMP_LZ4_BLOCK : io->out_avail;
	const char *src;
	uint32_t size;
	int n;

	if (left == 0)
		return r->pos ? DS_END : lz4_error(r, LDR_E_DECOMP_TRUNCATED);
	if (left < 4)
		return lz4_error(r, LDR_E_DECOMP_TRUNCATED);
	size = ldr_le32(r->in + r->pos);
	if (size == LZ4_LEGACY_MAGIC) {
		r->pos += 4;
		io->in_used = 4;
		r->lz4_short = 0;
		return DS_MORE;
	}
	if (r->pos == 0)
		return lz4_error(r, LDR_E_DECOMP_HEADER);
	/* only the last block of a frame may be short */
	if (r->lz4_short)
		return lz4_error(r, LDR_E_DECOMP_TRAILING);
	if (size == 0 || size > (uint32_t)LZ4_COMPRESSBOUND(DECOMP_LZ4_BLOCK))
		return lz4_error(r, LDR_E_DECOMP_CORRUPT);
	if (size > left - 4)
		return lz4_error(r, LDR_E_DECOMP_TRUNCATED);
	src = (const char *)r->in + r->pos + 4;
	n = LZ4_decompress_safe(src, (char *)io->out, (int)size, (int)win);
	if (n < 0) {
		/* liblz4 fails alike on bad data and on a full buffer: a
		 * block that is good as far as the room goes needs more */
		if (win < DECOMP_LZ4_BLOCK &&
		    LZ4_decompress_safe_partial(src, (char *)io->out, (int)size, (int)win,
						(int)win) == (int)win)
			return DS_NEED_OUT;
		return lz4_error(r, LDR_E_DECOMP_CORRUPT);
	}
	r->pos += 4 + (uint64_t)size;
	io->in_used = 4 + (uint64_t)size;
	io->out_made = (uint64_t)n;
	if ((uint64_t)n < DECOMP_LZ4_BLOCK)
		r->lz4_short = 1;
	return DS_MORE;
}

static void lz4_end(struct decomp_run *r)
{
	(void)r;
}

const struct decomp_backend decomp_lz4 = {
	.prepare = lz4_prepare, .init = lz4_init, .step = lz4_step, .end = lz4_end,
	.mem_max = 0, .out_chunk = DECOMP_LZ4_BLOCK,
};
