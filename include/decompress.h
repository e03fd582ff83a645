/*
 * decompress.h - recognise a compressed kernel by its magic bytes and
 * decompress it into memory from the caller's allocator: gzip and zlib
 * (zlib), xz (liblzma), LZ4 legacy frames (liblz4) and zstd (libzstd), under
 * an output limit, in bounded chunks, with a guard around every library call.
 */
#ifndef DECOMPRESS_H
#define DECOMPRESS_H

#include "ldr.h"

enum decomp_format {
	DECOMP_NONE = 0,  /* no known magic: not compressed */
	DECOMP_GZIP,      /* 1f 8b */
	DECOMP_ZLIB,      /* CMF/FLG with CM 8 and a valid check */
	DECOMP_XZ,        /* fd '7zXZ' 00 */
	DECOMP_LZ4,       /* LZ4 legacy frame: 02 21 4c 18 (lz4 -l, Linux) */
	DECOMP_ZSTD,      /* 28 b5 2f fd */
	/* recognised but refused, each with its own LDR_E_UNSUPPORTED_* */
	DECOMP_BZIP2,     /* 'BZh' '1'..'9' */
	DECOMP_LZMA,      /* LZMA-alone: 5d 00 00 */
	DECOMP_LZO,       /* lzop: 89 'LZO' */
	DECOMP_LZ4_FRAME, /* LZ4 frame format: 04 22 4d 18 */
	DECOMP_FORMAT_COUNT
};

/* kaslr.maxsize= default: the largest decompressed kernel accepted */
#define DECOMP_DEFAULT_LIMIT (512 * MIB)

/* output handed to zlib, liblzma and libzstd per call: bounds the time
 * spent inside one call (an LZ4 call decodes one block, at most 8 MiB; a
 * zstd call into a buffer that holds the whole frame, one 128 KiB block) */
#define DECOMP_CHUNK (1 * MIB)
#define DECOMP_LZ4_BLOCK (8 * MIB)

/*
 * The most library state a stream may ask for: an xz dictionary of 64 MiB
 * (xz -9; Linux's kernels use 32 MiB) plus liblzma's own state, and a zstd
 * window of 128 MiB (2^27, libzstd's default decoder limit and what Linux's
 * zstd -22 kernels use; only allocated when the frame does not state its
 * content size).  A stream that needs more is LDR_E_DECOMP_MEMORY.
 */
#define DECOMP_XZ_MEM_MAX      (64 * MIB + 1 * MIB)
#define DECOMP_ZSTD_WINDOW_LOG 27

/*
 * Memory for the output buffer and for the libraries' state, and hooks
 * around every library call.
 *   alloc/free  every allocation; the libraries' state is allocated and
 *               freed inside guarded calls, the output buffer between them.
 *   guard       may be NULL; called with enter=1 before and enter=0 after
 *               every call into a library.  (The EFI side masks interrupts
 *               there: see efi/zglue.c.)
 *   reserve     may be NULL; called outside the guard with the most state
 *               (bytes, in total) the library may allocate from now on,
 *               before it does, and with 0 once the library has ended.  A
 *               host that cannot allocate inside the guard sets an arena of
 *               that size aside here.  Returns 0 when it cannot (NOMEM).
 *   progress    may be NULL; after each chunk: compressed bytes consumed so
 *               far, of total.
 */
struct decomp_alloc {
	void *(*alloc)(void *ctx, uint64_t size);
	void (*free)(void *ctx, void *p, uint64_t size);
	void (*guard)(void *ctx, int enter);
	int (*reserve)(void *ctx, uint64_t bytes);
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *ctx;
};

/* Which format buf starts with, by its magic bytes (DECOMP_NONE if none). */
enum decomp_format decomp_detect(const void *buf, uint64_t len);

/* "gzip", "xz", ... ; "none" for DECOMP_NONE.  Never NULL. */
const char *decomp_format_name(enum decomp_format fmt);

/*
 * Decompress in[0..in_len), whose format decomp_detect() tells, into one
 * buffer from a->alloc of at most `limit` bytes.  The whole input must be
 * one stream: bytes after its end are LDR_E_DECOMP_TRAILING.  size_hint
 * (0: none) is the expected output size, e.g. from a bzImage; like gzip's
 * ISIZE, xz's index and zstd's frame header it only sizes the first buffer,
 * which doubles when full, never beyond the limit.
 * On success *ret_out and *ret_len hold the result and *ret_cap the
 * allocated size (pass it to a->free).
 * Errors: LDR_E_DECOMP_HEADER, _CORRUPT, _CHECK, _TRUNCATED, _TOO_BIG,
 * _TRAILING, _MEMORY; LDR_E_UNSUPPORTED_BZIP2, _LZMA, _LZO, _LZ4_FRAME;
 * LDR_E_NOMEM; LDR_E_INVAL (not compressed, or a limit of 0).
 */
enum ldr_err decomp_image(const void *in, uint64_t in_len, uint64_t limit,
			  uint64_t size_hint, const struct decomp_alloc *a,
			  void **ret_out, uint64_t *ret_len, uint64_t *ret_cap);

#endif
