/*
 * entropy.c - mixing entropy sources into one seed (SHA-256, never XOR),
 * health-checking hardware RNG samples, and the deterministic generator
 * with exactly uniform bounded draws that slot selection consumes.
 *
 * Every hash input starts with a domain tag, so the three uses of SHA-256
 * here can never produce each other's outputs.  The tags differ within
 * their first 15 bytes:
 *
 *   pool:   "kaslr-loader entropy pool v1" || {src, len, data}...
 *   drbg:   "kaslr-loader drbg v1"   || key[32] || counter (u64 LE)
 *   derive: "kaslr-loader derive v1" || len(label) (u64 LE) || label || seed[32]
 */
#include <string.h>

#include "entropy.h"

static const char entropy_pool_tag[] = "kaslr-loader entropy pool v1";
static const char entropy_drbg_tag[] = "kaslr-loader drbg v1";
static const char entropy_derive_tag[] = "kaslr-loader derive v1";

static void entropy_put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int entropy_one_byte(const uint8_t *p, size_t len)
{
	for (size_t i = 1; i < len; i++)
		if (p[i] != p[0])
			return 0;
	return 1;
}

int entropy_output_plausible(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint8_t diff = 0;

	if (!a || !b || len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		diff |= a[i] ^ b[i];
	return diff != 0 && !entropy_one_byte(a, len) && !entropy_one_byte(b, len);
}

/* Start an empty pool (no sources). */
void entropy_init(struct entropy_pool *pool)
{
	sha256_init(&pool->hash);
	sha256_update(&pool->hash, entropy_pool_tag, sizeof(entropy_pool_tag) - 1);
	pool->sources = 0;
}

/*
 * Absorb {source_bit (u32 LE), len (u64 LE), data[len]} and OR source_bit
 * into pool->sources.  data may be NULL only when len is 0.  The length
 * prefix keeps record boundaries unambiguous: add(A, "ab"), add(A, "c")
 * hashes differently from add(A, "a"), add(A, "bc").
 */
void entropy_add(struct entropy_pool *pool, uint32_t source_bit,
		 const void *data, size_t len)
{
	uint8_t hdr[12];

	entropy_put_le(hdr, source_bit, 4);
	entropy_put_le(hdr + 4, len, 8);
	sha256_update(&pool->hash, hdr, sizeof(hdr));
	sha256_update(&pool->hash, data, len);
	pool->sources |= source_bit;
}

/*
 * ret_seed = SHA-256 of the pool; the hash state is wiped either way,
 * pool->sources is left for the caller to report.
 * Errors: LDR_E_NO_ENTROPY when no source was ever added.
 */
enum ldr_err entropy_finish(struct entropy_pool *pool, uint8_t ret_seed[ENTROPY_SEED_SIZE])
{
	uint8_t seed[ENTROPY_SEED_SIZE];
	uint32_t sources = pool->sources;

	/* pool->sources is kept: it is not secret, and callers report it */
	sha256_final(&pool->hash, seed);
	if (!sources) {
		ldr_wipe(seed, sizeof(seed));
		return LDR_E_NO_ENTROPY;
	}
	memcpy(ret_seed, seed, sizeof(seed));
	ldr_wipe(seed, sizeof(seed));
	return LDR_OK;
}

/*
 * Up to want health-checked values from step(ctx) into out[]; returns how
 * many.  Rejected, each costing one of the value's ENTROPY_HWRNG_TRIES
 * attempts: CF=0; 0 and all-ones (AMD family 15h/16h parts return ~0 with
 * CF=1 after suspend); a repeat of the previous CF=1 value or of the last
 * accepted one (a stuck generator).
 */
unsigned entropy_hwrng_collect(hwrng_step_fn step, void *ctx, uint64_t *out,
			       unsigned want)
{
	uint64_t last_seen = 0, last_ok = 0;
	int have_seen = 0, have_ok = 0;
	unsigned got = 0;

	while (got < want) {
		int accepted = 0;

		for (unsigned t = 0; t < ENTROPY_HWRNG_TRIES && !accepted; t++) {
			uint64_t v;

			if (!step(ctx, &v))
				continue;
			accepted = v != 0 && v != UINT64_MAX &&
				   !(have_seen && v == last_seen) &&
				   !(have_ok && v == last_ok);
			last_seen = v;
			have_seen = 1;
		}
		if (!accepted)
			break;
		out[got++] = last_seen;
		last_ok = last_seen;
		have_ok = 1;
	}
	return got;
}

static size_t entropy_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/*
 * ret = SHA-256(derive tag || len(label) || label || seed).  label is a
 * NUL-terminated string naming the purpose, e.g. "kernel rng_seed".
 */
void entropy_derive(const uint8_t seed[ENTROPY_SEED_SIZE], const char *label,
		    uint8_t ret[ENTROPY_SEED_SIZE])
{
	struct sha256_ctx ctx;
	size_t label_len = entropy_strlen(label);
	uint8_t len_le[8];

	entropy_put_le(len_le, label_len, 8);
	sha256_init(&ctx);
	sha256_update(&ctx, entropy_derive_tag, sizeof(entropy_derive_tag) - 1);
	sha256_update(&ctx, len_le, sizeof(len_le));
	sha256_update(&ctx, label, label_len);
	sha256_update(&ctx, seed, ENTROPY_SEED_SIZE);
	sha256_final(&ctx, ret);
}

/* Seed a generator: key = seed, counter = 0, nothing buffered. */
void drbg_init(struct drbg *d, const uint8_t seed[ENTROPY_SEED_SIZE])
{
	memcpy(d->key, seed, ENTROPY_SEED_SIZE);
	d->counter = 0;
	d->used = sizeof(d->block); /* empty: the first draw computes block 0 */
}

/*
 * Compute the next output block.  The 64-bit counter cannot wrap in
 * practice (2^64 blocks), so no check is made.
 */
static void drbg_refill(struct drbg *d)
{
	struct sha256_ctx ctx;
	uint8_t ctr[8];

	entropy_put_le(ctr, d->counter, 8);
	sha256_init(&ctx);
	sha256_update(&ctx, entropy_drbg_tag, sizeof(entropy_drbg_tag) - 1);
	sha256_update(&ctx, d->key, sizeof(d->key));
	sha256_update(&ctx, ctr, sizeof(ctr));
	sha256_final(&ctx, d->block);
	d->counter++;
	d->used = 0;
}

/* Next len fresh bytes of the stream into out; consumed bytes are zeroed. */
void drbg_bytes(struct drbg *d, void *out, size_t len)
{
	uint8_t *p = out;

	while (len) {
		size_t take;

		if (d->used >= sizeof(d->block))
			drbg_refill(d);
		take = sizeof(d->block) - d->used;
		if (take > len)
			take = len;
		memcpy(p, d->block + d->used, take);
		ldr_wipe(d->block + d->used, take);
		d->used += (unsigned)take;
		p += take;
		len -= take;
	}
}

/* Next 64 fresh bits: the next 8 stream bytes, little-endian. */
uint64_t drbg_u64(struct drbg *d)
{
	uint8_t b[8];
	uint64_t v = 0;

	drbg_bytes(d, b, sizeof(b));
	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

/*
 * Accept r for [0, n) iff (r & mask) < n, mask = smallest 2^k - 1 >= n - 1.
 * The low k bits of r are uniform over [0, 2^k), so conditioned on
 * acceptance they are uniform over [0, n); 2^k < 2n, so more than half of
 * all r are accepted.  Returns 1 and *ret_idx on acceptance, else 0.
 */
int rng_uniform_accept(uint64_t r, uint64_t n, uint64_t *ret_idx)
{
	uint64_t mask;

	if (n == 0)
		return 0;
	/* smear the top bit of n - 1 downwards */
	mask = n - 1;
	mask |= mask >> 1;
	mask |= mask >> 2;
	mask |= mask >> 4;
	mask |= mask >> 8;
	mask |= mask >> 16;
	mask |= mask >> 32;
	if ((r & mask) >= n)
		return 0;
	*ret_idx = r & mask;
	return 1;
}

/*
 * Uniform index in [0, n) from fresh draws of d.
 * Errors: LDR_E_INVAL (n == 0), LDR_E_NO_ENTROPY (DRBG_BELOW_TRIES rejections).
 */
enum ldr_err drbg_below(struct drbg *d, uint64_t n, uint64_t *ret)
{
	if (n == 0)
		return LDR_E_INVAL;
	for (unsigned i = 0; i < DRBG_BELOW_TRIES; i++) {
		uint64_t idx;

		if (rng_uniform_accept(drbg_u64(d), n, &idx)) {
			*ret = idx;
			return LDR_OK;
		}
	}
	return LDR_E_NO_ENTROPY;
}
