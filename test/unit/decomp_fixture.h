/*
 * decomp_fixture.h - test streams for the decompression tests, made on the
 * host with the same libraries the loader decodes with: xz (with the x86
 * BCJ filter, as Linux), LZ4 legacy frames (as lz4 -l), zstd (with its
 * checksum, as the zstd tool), gzip; a small synthetic bzImage around a
 * stream; and a counting allocator capability
 * that also checks the reserve contract (library state allocated inside
 * the guard never exceeds what was reserved).
 */
#ifndef DECOMP_FIXTURE_H
#define DECOMP_FIXTURE_H

#include <lz4.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader */
#include <zstd.h>

#include "decompress.h"

struct buf {
	uint8_t *p;
	size_t len;
};

/* Compressible but not trivial: runs of a counter and LCG noise. */
static inline uint8_t *fx_data(size_t n, uint32_t seed)
{
	uint8_t *d = malloc(n ? n : 1);
	uint32_t x = seed;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		d[i] = (i / 64) % 3 == 0 ? (uint8_t)(x >> 24) : (uint8_t)(i / 7);
	}
	return d;
}

static inline void fx_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* xz, CRC32 check; x86 BCJ + LZMA2 with the preset's dictionary (or dict) */
static inline struct buf fx_xz(const uint8_t *d, size_t n, uint32_t preset, uint32_t dict)
{
	lzma_options_lzma opt;
	lzma_filter f[3] = { { LZMA_FILTER_X86, NULL }, { LZMA_FILTER_LZMA2, &opt },
			     { LZMA_VLI_UNKNOWN, NULL } };
	struct buf b;
	size_t pos = 0;

	if (lzma_lzma_preset(&opt, preset))
		abort();
	if (dict)
		opt.dict_size = dict;
	b.len = lzma_stream_buffer_bound(n);
	b.p = malloc(b.len);
	if (lzma_stream_buffer_encode(f, LZMA_CHECK_CRC32, NULL, d, n, b.p, &pos, b.len) != LZMA_OK)
		abort();
	b.len = pos;
	return b;
}

/* LZ4 legacy frame: magic, then [le32 size][block] per 8 MiB of input */
static inline struct buf fx_lz4(const uint8_t *d, size_t n)
{
	size_t nblocks = n / DECOMP_LZ4_BLOCK + 1;
	struct buf b = { malloc(4 + nblocks * (4 + LZ4_COMPRESSBOUND(DECOMP_LZ4_BLOCK))), 4 };

	fx_put_le32(b.p, 0x184c2102u);
	for (size_t off = 0; off < n || off == 0; off += DECOMP_LZ4_BLOCK) {
		size_t len = n - off > DECOMP_LZ4_BLOCK ? DECOMP_LZ4_BLOCK : n - off;
		int c = LZ4_compress_default((const char *)d + off, (char *)b.p + b.len + 4,
					     (int)len, LZ4_COMPRESSBOUND(DECOMP_LZ4_BLOCK));

		if (c <= 0)
			abort();
		fx_put_le32(b.p + b.len, (uint32_t)c);
		b.len += 4 + (size_t)c;
		if (n == 0)
			break;
	}
	return b;
}

/* zstd with the content checksum; content size in the header if sized */
static inline struct buf fx_zstd(const uint8_t *d, size_t n, int level, int sized)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	struct buf b;
	size_t r;

	b.len = ZSTD_compressBound(n);
	b.p = malloc(b.len);
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	if (sized) {
		r = ZSTD_compress2(c, b.p, b.len, d, n);
	} else {
		ZSTD_inBuffer in = { d, n, 0 };
		ZSTD_outBuffer out = { b.p, b.len, 0 };

		/* streamed without a pledged size: no content size field */
		ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
		do
			r = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
		while (r && !ZSTD_isError(r));
		if (!ZSTD_isError(r))
			r = out.pos;
	}
	if (ZSTD_isError(r))
		abort();
	b.len = r;
	ZSTD_freeCCtx(c);
	return b;
}

/* deflate at level 9: window_bits 31 gzip, 15 zlib, -15 raw */
static inline struct buf fx_deflate(const uint8_t *d, size_t n, int window_bits)
{
	struct buf b;
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	b.len = deflateBound(&zs, n) + 64;
	b.p = malloc(b.len);
	zs.next_in = (Bytef *)d;
	zs.avail_in = (uInt)n;
	zs.next_out = b.p;
	zs.avail_out = (uInt)b.len;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		abort();
	b.len = zs.total_out;
	deflateEnd(&zs);
	return b;
}

static inline struct buf fx_gzip(const uint8_t *d, size_t n) { return fx_deflate(d, n, 31); }

/*
 * A small synthetic bzImage around a compressed stream: 3 setup sectors
 * (the header as boot protocol 2.15 lays it out), 0x100 bytes of "code",
 * the payload (the stream, then - but for gzip - size as le32), padding to
 * 16 bytes.  FX_BZ_SETUP + FX_BZ_POFF is where the payload starts.
 */
#define FX_BZ_SETUP (4 * 512)
#define FX_BZ_POFF  0x100
static inline struct buf fx_bzimage(const uint8_t *stream, size_t n, int gzip, uint32_t size)
{
	size_t plen = n + (gzip ? 0 : 4);
	size_t len = (FX_BZ_SETUP + FX_BZ_POFF + plen + 15) & ~(size_t)15;
	/* room behind: cases that append a signature or grow the image */
	struct buf b = { calloc(1, len + 4096), len };
	uint8_t *h = b.p;

	if (!h)
		abort();
	h[0x1f1] = 3;                                       /* setup_sects */
	fx_put_le32(h + 0x1f4, (uint32_t)((len - FX_BZ_SETUP) / 16)); /* syssize */
	h[0x1fe] = 0x55;
	h[0x1ff] = 0xaa;
	h[0x200] = 0xeb;                                    /* jump over the header: */
	h[0x201] = 0x6a;                                    /* it ends at 0x26c */
	memcpy(h + 0x202, "HdrS", 4);
	h[0x206] = 0x0f;                                    /* version 2.15 */
	h[0x207] = 0x02;
	fx_put_le32(h + 0x22c, 0x7fffffff);                 /* initrd_addr_max */
	fx_put_le32(h + 0x230, 0x200000);                   /* kernel_alignment */
	h[0x234] = 1;                                       /* relocatable_kernel */
	h[0x235] = 21;                                      /* min_alignment */
	h[0x236] = 0x03;                                    /* XLF_KERNEL_64 | ABOVE_4G */
	fx_put_le32(h + 0x238, 2047);                       /* cmdline_size */
	fx_put_le32(h + 0x248, FX_BZ_POFF);                 /* payload_offset */
	fx_put_le32(h + 0x24c, (uint32_t)plen);             /* payload_length */
	fx_put_le32(h + 0x258, 0x1000000);                  /* pref_address */
	fx_put_le32(h + 0x260, 0x4000000);                  /* init_size */
	memcpy(h + FX_BZ_SETUP + FX_BZ_POFF, stream, n);
	if (!gzip)
		fx_put_le32(h + FX_BZ_SETUP + FX_BZ_POFF + n, size);
	return b;
}

/* ---------------------------------------------------------- allocator */

/* The plain capability: malloc and free, no guard, no reservation. */
static inline void *fx_heap_alloc(void *ctx, uint64_t size)
{
	(void)ctx;
	return malloc(size ? size : 1);
}

static inline void fx_heap_free(void *ctx, void *p, uint64_t size)
{
	(void)ctx;
	(void)size;
	free(p);
}

static const struct decomp_alloc fx_heap = { .alloc = fx_heap_alloc, .free = fx_heap_free };

/* Counts what decomp_image() takes; fails allocation number fail_at. */
struct counting_alloc {
	uint64_t live, peak, largest, total;
	uint64_t largest_out;    /* the largest allocated outside the guard */
	uint64_t guarded_live;   /* allocated inside the guard, not yet freed */
	uint64_t guarded_peak;
	uint64_t reserved;       /* the last reserve() */
	uint64_t reserve_max;    /* the largest reserve() */
	unsigned calls, reserves, guards;
	long fail_at;            /* -1: never fail */
	int bad_free;            /* free told a size other than the allocated one */
	int over_reserve;        /* guarded state passed the reservation */
	int in_guard, bad_guard;
};

struct ca_hdr {
	uint64_t size;
	uint64_t guarded;        /* also keeps the payload 16-byte aligned */
};

static inline void *ca_alloc(void *ctx, uint64_t size)
{
	struct counting_alloc *c = ctx;
	struct ca_hdr *h;

	if (c->fail_at >= 0 && (long)c->calls == c->fail_at) {
		c->calls++;
		return NULL;
	}
	c->calls++;
	h = malloc(sizeof(*h) + size);
	if (!h)
		return NULL;
	h->size = size;
	h->guarded = (uint64_t)c->in_guard;
	c->live += size;
	c->total += size;
	if (c->live > c->peak)
		c->peak = c->live;
	if (size > c->largest)
		c->largest = size;
	if (!c->in_guard && size > c->largest_out)
		c->largest_out = size;
	if (c->in_guard) {
		c->guarded_live += size;
		if (c->guarded_live > c->guarded_peak)
			c->guarded_peak = c->guarded_live;
		if (c->guarded_live > c->reserved)
			c->over_reserve = 1;
	}
	return h + 1;
}

static inline void ca_free(void *ctx, void *p, uint64_t size)
{
	struct counting_alloc *c = ctx;
	struct ca_hdr *h;

	if (!p)
		return;
	h = (struct ca_hdr *)p - 1;
	if (h->size != size)
		c->bad_free = 1;
	c->live -= h->size;
	if (h->guarded)
		c->guarded_live -= h->size;
	free(h);
}

static inline void ca_guard(void *ctx, int enter)
{
	struct counting_alloc *c = ctx;

	if (enter == c->in_guard)
		c->bad_guard = 1;
	c->in_guard = enter;
	c->guards++;
}

static inline int ca_reserve(void *ctx, uint64_t bytes)
{
	struct counting_alloc *c = ctx;

	if (c->in_guard)
		c->bad_guard = 1;
	c->reserved = bytes;
	c->reserves++;
	if (bytes > c->reserve_max)
		c->reserve_max = bytes;
	return 1;
}

static inline struct decomp_alloc ca_cap(struct counting_alloc *c)
{
	memset(c, 0, sizeof(*c));
	c->fail_at = -1;
	return (struct decomp_alloc){ .alloc = ca_alloc, .free = ca_free, .guard = ca_guard,
				      .reserve = ca_reserve, .ctx = c };
}

#endif
