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

/*
 * The block functions behind sha256_update, for tests and benchmarks.
 * sha256_round_k: the 64 round constants (the first 32 bits of the
 * fractional parts of the cube roots of the first 64 primes).
 * sha256_x86_blocks
 * (src/sha256_x86.c) runs on the x86 SHA extensions and may be called only
 * when sha256_x86_usable() says the CPU has them; sha256_update uses it
 * for runs of at least SHA256_X86_MIN bytes.  It keeps UEFI's (Microsoft
 * x64) calling convention, which leaves XMM6-XMM15 as it found them.
 */
#define SHA256_X86_MIN 1024
extern const uint32_t sha256_round_k[64];
void sha256_portable_blocks(uint32_t state[8], const uint8_t *p, size_t nblocks);
int sha256_x86_usable(void);
#if defined(__x86_64__)
__attribute__((ms_abi)) void sha256_x86_blocks(uint32_t state[8], const uint8_t *p,
					       size_t nblocks);
#endif

#endif
