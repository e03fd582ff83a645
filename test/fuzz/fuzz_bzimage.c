/*
 * fuzz_bzimage.c - libFuzzer target: bzimage_parse() of untrusted bytes,
 * then bzimage_decompress() of what it accepts, with a 256 KiB limit.
 * Checks: every slice the parser returns lies inside the file (the setup
 * header, the payload inside the declared image, the stream inside the
 * payload), the facts it returns obey its own rules (protocol >= 2.12,
 * 64-bit, relocatable, power-of-two alignment, size within the limit), and
 * a successful decompression is exactly the recorded size, with nothing
 * leaked either way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bzimage.h"

#define FUZZ_LIMIT (256 * KIB)

struct fuzz_count {
	uint64_t live;
};

static void *fb_alloc(void *ctx, uint64_t size)
{
	struct fuzz_count *c = ctx;
	uint64_t *p = malloc(size + 16);

	if (!p)
		return NULL;
	p[0] = size;
	c->live += size;
	return p + 2;
}

static void fb_free(void *ctx, void *q, uint64_t size)
{
	struct fuzz_count *c = ctx;
	uint64_t *p = (uint64_t *)q - 2;

	if (p[0] != size || c->live < size)
		abort();
	c->live -= size;
	free(p);
}

/* [p, p + n) inside [base, base + len) */
static int fb_inside(const uint8_t *base, uint64_t len, const uint8_t *p, uint64_t n)
{
	return p >= base && (uint64_t)(p - base) <= len && len - (uint64_t)(p - base) >= n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_count c = { 0 };
	struct decomp_alloc a = { .alloc = fb_alloc, .free = fb_free, .ctx = &c };
	struct bzimage bz;
	void *out;
	uint64_t len, cap;
	enum ldr_err err;

	err = bzimage_parse(data, size, FUZZ_LIMIT, &bz);
	if (err != LDR_OK)
		return 0;
	if (!bzimage_detect(data, size) || bz.version < BZ_MIN_VERSION ||
	    !(bz.xloadflags & XLF_KERNEL_64) || bz.kernel_alignment == 0 ||
	    (bz.kernel_alignment & (bz.kernel_alignment - 1)) ||
	    bz.decompressed_size > FUZZ_LIMIT || bz.image_size > size)
		abort();
	if (!fb_inside(data, size, bz.setup_header, bz.setup_header_len) ||
	    bz.setup_header != data + BZ_SETUP_SECTS ||
	    !fb_inside(data, bz.image_size, bz.payload, bz.payload_len) ||
	    !fb_inside(bz.payload, bz.payload_len, bz.stream, bz.stream_len) ||
	    decomp_detect(bz.stream, bz.stream_len) != bz.format)
		abort();
	err = bzimage_decompress(&bz, FUZZ_LIMIT, &a, &out, &len, &cap);
	if (err == LDR_OK) {
		if (len != bz.decompressed_size || len > cap || cap > FUZZ_LIMIT)
			abort();
		((volatile uint8_t *)out)[len - 1];
		a.free(a.ctx, out, cap);
	}
	if (c.live != 0)
		abort();
	return 0;
}
