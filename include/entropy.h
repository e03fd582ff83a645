/*
 * entropy.h - the entropy core: a pool that hashes every source's samples
 * into one 32-byte seed, the health check for RDRAND/RDSEED-style sources,
 * and the deterministic generator (and uniform selection) seeded from it.
 * The firmware side that reads the real sources is efi/rng.c.
 */
#ifndef ENTROPY_H
#define ENTROPY_H

#include <stddef.h>
#include <stdint.h>

#include "kaslr_boot.h"
#include "ldr.h"
#include "sha256.h"

#define ENTROPY_SEED_SIZE 32

/* Attempts per wanted value before a hardware RNG is given up on. */
#define ENTROPY_HWRNG_TRIES 10

/* Draws drbg_below() makes before reporting LDR_E_NO_ENTROPY.  Each draw is
 * accepted with probability > 1/2, so running out has probability < 2^-256. */
#define DRBG_BELOW_TRIES 256

struct entropy_pool {
	struct sha256_ctx hash;
	uint32_t sources; /* KB_RNG_* bits that were added */
};

/*
 * One raw step of a hardware RNG instruction: returns 1 and writes
 * *ret_value when the instruction reported success (CF=1), else returns 0.
 */
typedef int (*hwrng_step_fn)(void *ctx, uint64_t *ret_value);

struct drbg {
	uint8_t key[ENTROPY_SEED_SIZE];
	uint64_t counter;                 /* index of the next block */
	uint8_t block[SHA256_DIGEST_SIZE]; /* current output block */
	unsigned used;                    /* bytes of block already handed out */
};

/* Start an empty pool (no sources). */
void entropy_init(struct entropy_pool *pool);

/*
 * Absorb len bytes of samples from one source.  source_bit is one KB_RNG_*
 * bit; it is hashed in front of the data together with len, so samples of
 * different sources or lengths can never be confused.  The bit is ORed into
 * pool->sources.
 */
void entropy_add(struct entropy_pool *pool, uint32_t source_bit,
		 const void *data, size_t len);

/*
 * Finish the pool: ret_seed = SHA-256 over everything added.  The hash
 * state is wiped (re-initialise before reuse); pool->sources stays valid.
 * Errors: LDR_E_NO_ENTROPY if nothing was ever added (ret_seed untouched;
 * the hash state is still wiped).
 */
enum ldr_err entropy_finish(struct entropy_pool *pool, uint8_t ret_seed[ENTROPY_SEED_SIZE]);

/*
 * Is firmware RNG output plausible enough to credit?  a and b are two
 * answers of len bytes to consecutive calls.  No when they are equal (a
 * stuck or constant generator), or when either is one byte repeated (all
 * zero, all 0x5a...).  A generator that returns a fixed pattern of its own
 * cannot be told apart: this only catches the broken ones.
 */
int entropy_output_plausible(const uint8_t *a, const uint8_t *b, size_t len);

/*
 * Collect up to want health-checked values from a hardware RNG driven by
 * step(ctx).  Each value gets up to ENTROPY_HWRNG_TRIES attempts; an attempt
 * fails if the step reports CF=0 or returns 0, all-ones (a known AMD
 * erratum returns ~0 with CF=1), or a repeat of the previous CF=1 value
 * or of the last accepted value (a stuck generator).  Writes the good
 * values to out[0..n) and returns n; collection stops at the first value
 * whose attempts all failed.
 */
unsigned entropy_hwrng_collect(hwrng_step_fn step, void *ctx, uint64_t *out,
			       unsigned want);

/*
 * Derive an independent 32-byte value from seed for a named purpose:
 * ret = SHA-256("kaslr-loader derive v1" || len(label) || label || seed).
 * Different labels give unrelated outputs, and none equals seed or any
 * drbg output block (different domain tag), so e.g. the kernel's
 * rng_seed never reveals the placement seed.
 */
void entropy_derive(const uint8_t seed[ENTROPY_SEED_SIZE], const char *label,
		    uint8_t ret[ENTROPY_SEED_SIZE]);

/* Seed a generator: key = seed, counter = 0, nothing buffered. */
void drbg_init(struct drbg *d, const uint8_t seed[ENTROPY_SEED_SIZE]);

/*
 * Next 64 fresh bits.  Block i of the stream is
 * SHA-256("kaslr-loader drbg v1" || key || i as 64-bit little-endian);
 * bytes are handed out in order and never twice.
 */
uint64_t drbg_u64(struct drbg *d);

/* Next len fresh bytes of the stream into out. */
void drbg_bytes(struct drbg *d, void *out, size_t len);

/*
 * One acceptance step of exactly uniform selection in [0, n): with
 * mask = the smallest 2^k - 1 that is >= n - 1, accept iff (r & mask) < n.
 * Returns 1 and writes *ret_idx = r & mask when accepted, else 0 (also 0
 * for n == 0).  No modulo, no multiply-shift: every index has exactly the
 * same number of accepted preimages r.
 */
int rng_uniform_accept(uint64_t r, uint64_t n, uint64_t *ret_idx);

/*
 * Exactly uniform index in [0, n) from d by rejection sampling.
 * Errors: LDR_E_INVAL if n == 0; LDR_E_NO_ENTROPY if DRBG_BELOW_TRIES draws
 * were all rejected (probability < 2^-256).  *ret written only on success.
 */
enum ldr_err drbg_below(struct drbg *d, uint64_t n, uint64_t *ret);

#endif
