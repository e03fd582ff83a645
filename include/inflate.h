/*
 * inflate.h - recognise and decompress gzip (RFC 1952) and zlib (RFC 1950)
 * kernel images with zlib, under a size limit that refuses decompression
 * bombs before they exhaust memory.
 */
#ifndef INFLATE_H
#define INFLATE_H

#include "ldr.h"

enum inflate_format {
	INFLATE_NONE = 0,
	INFLATE_GZIP,
	INFLATE_ZLIB,
};

#define INFLATE_DEFAULT_LIMIT (512 * MIB)

/*
 * Memory for the output buffer and for zlib's own state, and an optional
 * guard called with enter=1 before and enter=0 after every call into zlib.
 * alloc/free for zlib's state happen inside those calls; the output buffer
 * is allocated between them.  (The EFI side masks interrupts in the guard:
 * see efi/zglue.c.)
 */
struct inflate_alloc {
	void *(*alloc)(void *ctx, uint64_t size);
	void (*free)(void *ctx, void *p, uint64_t size);
	void (*guard)(void *ctx, int enter); /* may be NULL */
	/* after each chunk: compressed bytes consumed so far, of total */
	void (*progress)(void *ctx, uint64_t done, uint64_t total); /* may be NULL */
	void *ctx;
};

/* output handed to zlib per call: bounds the time spent inside one call */
#define INFLATE_CHUNK (1 * MIB)

/* Which compressed format buf starts with, by its magic bytes. */
enum inflate_format inflate_detect(const void *buf, uint64_t len);

/*
 * Decompress in[0..in_len) (gzip or zlib, as inflate_detect says) into a
 * buffer from a->alloc of at most `limit` bytes.  On success *ret_out and
 * *ret_len hold the result and *ret_cap the allocated size (pass it to
 * a->free).  Errors: LDR_E_GZIP_HEADER, _CORRUPT, _CRC, _TRUNCATED,
 * _TOO_BIG, _TRAILING, LDR_E_NOMEM, LDR_E_INVAL (not compressed),
 * LDR_E_NOT_KERNEL (zlib's two-byte magic matched by chance: the data is
 * invalid, or fails its Adler-32, and the output does not begin with the
 * ELF magic).
 */
enum ldr_err inflate_image(const void *in, uint64_t in_len, uint64_t limit,
			   const struct inflate_alloc *a, void **ret_out,
			   uint64_t *ret_len, uint64_t *ret_cap);

#endif
