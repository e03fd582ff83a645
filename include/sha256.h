/*
 * sha256.h - SHA-256 (FIPS 180-4): a streaming context and a one-shot helper.
 * Used to mix entropy sources, to run the deterministic generator and to
 * check the kernel's digest.  Portable core: no allocation, no globals.
 */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE  64

struct sha256_ctx {
	uint32_t state[8];
	uint64_t total;                    /* bytes absorbed so far */
	uint8_t buf[SHA256_BLOCK_SIZE];    /* partial block */
	size_t buf_len;                    /* bytes in buf, < SHA256_BLOCK_SIZE */
};

/* Start a new hash in ctx. */
void sha256_init(struct sha256_ctx *ctx);

/* Absorb len bytes at data (data may be NULL when len is 0). */
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);

/*
 * Pad, write the 32-byte digest to ret_digest and wipe ctx.  The context
 * must be re-initialised before further use.
 */
void sha256_final(struct sha256_ctx *ctx, uint8_t ret_digest[SHA256_DIGEST_SIZE]);

/* One-shot: ret_digest = SHA-256(data[0..len)). */
void sha256(const void *data, size_t len, uint8_t ret_digest[SHA256_DIGEST_SIZE]);

#endif
