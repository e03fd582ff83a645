/*
 * sha256.c - SHA-256 as specified in FIPS 180-4 (sections 4.1.2, 4.2.2,
 * 5.1.1, 5.3.3 and 6.2).  Byte-oriented, endian-independent, no tables
 * beyond the round constants.  On x86-64 long inputs go through the CPU's
 * SHA extensions when CPUID offers them (src/sha256_x86.c).
 */
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "ldr.h"
#include "sha256.h"

/* FIPS 180-4 4.2.2: first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes. */
const uint32_t sha256_round_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t sha256_rotr(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static uint32_t sha256_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void sha256_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * FIPS 180-4 6.2.2: one 512-bit block into the state.  The 64 rounds are
 * written out in blocks of 16 (the working variables rename instead of
 * moving), and the message schedule lives in a 16-word ring, each word
 * extended in the round that needs it.  Ch and Maj in their fewer-operation
 * forms: Ch = g ^ (e & (f ^ g)), Maj = b ^ ((a ^ b) & (b ^ c)).
 */
/* the Sigmas nested: one copy of x fewer than three rotations of it */
#define S_BIG0(x) sha256_rotr(sha256_rotr(sha256_rotr(x, 9) ^ (x), 11) ^ (x), 2)
#define S_BIG1(x) sha256_rotr(sha256_rotr(sha256_rotr(x, 14) ^ (x), 5) ^ (x), 6)
#define S_SMALL0(x) (sha256_rotr(x, 7) ^ sha256_rotr(x, 18) ^ ((x) >> 3))
#define S_SMALL1(x) (sha256_rotr(x, 17) ^ sha256_rotr(x, 19) ^ ((x) >> 10))
/* w[i & 15] becomes W[t] for t = i + 16 * k, k >= 1 */
#define S_EXTEND(i) \
	(w[(i) & 15] += S_SMALL1(w[((i) + 14) & 15]) + w[((i) + 9) & 15] + S_SMALL0(w[((i) + 1) & 15]))
#define S_ROUND(a, b, c, d, e, f, g, h, t, wt) \
	do { \
		uint32_t t1 = h + S_BIG1(e) + (g ^ (e & (f ^ g))) + k[t] + (wt); \
		d += t1; \
		h = t1 + S_BIG0(a) + (b ^ ((a ^ b) & (b ^ c))); \
	} while (0)
#define S_EIGHT(t, W) \
	do { \
		S_ROUND(a, b, c, d, e, f, g, h, (t) + 0, W((t) + 0)); \
		S_ROUND(h, a, b, c, d, e, f, g, (t) + 1, W((t) + 1)); \
		S_ROUND(g, h, a, b, c, d, e, f, (t) + 2, W((t) + 2)); \
		S_ROUND(f, g, h, a, b, c, d, e, (t) + 3, W((t) + 3)); \
		S_ROUND(e, f, g, h, a, b, c, d, (t) + 4, W((t) + 4)); \
		S_ROUND(d, e, f, g, h, a, b, c, (t) + 5, W((t) + 5)); \
		S_ROUND(c, d, e, f, g, h, a, b, (t) + 6, W((t) + 6)); \
		S_ROUND(b, c, d, e, f, g, h, a, (t) + 7, W((t) + 7)); \
	} while (0)
#define S_W_FIRST(t) (w[t])
#define S_W_LATER(t) S_EXTEND(t)

static void sha256_compress(uint32_t state[8], const uint8_t block[SHA256_BLOCK_SIZE])
{
	uint32_t w[16];
	uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
	uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
	const uint32_t *k = sha256_round_k;
	unsigned t;

	for (t = 0; t < 16; t++)
		w[t] = sha256_load_be32(block + 4 * t);
	S_EIGHT(0, S_W_FIRST);
	S_EIGHT(8, S_W_FIRST);
	/* rounds 16-63: the ring's index and k restart at 0 every 16 */
	for (k += 16; k < sha256_round_k + 64; k += 16) {
		S_EIGHT(0, S_W_LATER);
		S_EIGHT(8, S_W_LATER);
	}
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
	state[5] += f;
	state[6] += g;
	state[7] += h;
}

/* nblocks whole blocks at p, in the portable code */
void sha256_portable_blocks(uint32_t state[8], const uint8_t *p, size_t nblocks)
{
	for (; nblocks; nblocks--, p += SHA256_BLOCK_SIZE)
		sha256_compress(state, p);
}

/*
 * Nonzero when the CPU has what sha256_x86_blocks runs on: the SHA
 * extensions (CPUID leaf 7 EBX bit 29), SSSE3 and SSE4.1 (leaf 1 ECX bits
 * 9 and 19).  Asked on every long update, not remembered: the core keeps
 * no state of its own.  Under a hypervisor CPUID traps to it (a microsecond
 * or two, about what 2 KiB take to hash), which is nothing for the loader:
 * it hashes each file in one call.
 */
int sha256_x86_usable(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	if (!__get_cpuid_count(1, 0, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b & bit_SHA) != 0;
#else
	return 0;
#endif
}

/* Start a new hash: FIPS 180-4 5.3.3 initial hash value. */
void sha256_init(struct sha256_ctx *ctx)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(ctx->state, iv, sizeof(iv));
	ctx->total = 0;
	ctx->buf_len = 0;
}

/* Absorb len bytes at data; data may be NULL only when len is 0. */
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (len == 0)
		return;
	ctx->total += len;

	if (ctx->buf_len) {
		size_t take = SHA256_BLOCK_SIZE - ctx->buf_len;

		if (take > len)
			take = len;
		memcpy(ctx->buf + ctx->buf_len, p, take);
		ctx->buf_len += take;
		p += take;
		len -= take;
		if (ctx->buf_len < SHA256_BLOCK_SIZE)
			return;
		sha256_compress(ctx->state, ctx->buf);
		ctx->buf_len = 0;
	}
#if defined(__x86_64__)
	if (len >= SHA256_X86_MIN && sha256_x86_usable()) {
		size_t n = len / SHA256_BLOCK_SIZE;

		sha256_x86_blocks(ctx->state, p, n);
		p += n * SHA256_BLOCK_SIZE;
		len -= n * SHA256_BLOCK_SIZE;
	}
#endif
	while (len >= SHA256_BLOCK_SIZE) {
		sha256_compress(ctx->state, p);
		p += SHA256_BLOCK_SIZE;
		len -= SHA256_BLOCK_SIZE;
	}
	if (len) {
		memcpy(ctx->buf, p, len);
		ctx->buf_len = len;
	}
}

/*
 * Pad (FIPS 180-4 5.1.1: a 1 bit, zeros, then the 64-bit big-endian bit
 * length), write the digest to ret_digest and wipe the context, which may
 * have held secret seed material.
 */
void sha256_final(struct sha256_ctx *ctx, uint8_t ret_digest[SHA256_DIGEST_SIZE])
{
	uint64_t bits = ctx->total * 8;
	size_t i;

	ctx->buf[ctx->buf_len++] = 0x80;
	if (ctx->buf_len > SHA256_BLOCK_SIZE - 8) {
		memset(ctx->buf + ctx->buf_len, 0, SHA256_BLOCK_SIZE - ctx->buf_len);
		sha256_compress(ctx->state, ctx->buf);
		ctx->buf_len = 0;
	}
	memset(ctx->buf + ctx->buf_len, 0, SHA256_BLOCK_SIZE - 8 - ctx->buf_len);
	for (i = 0; i < 8; i++)
		ctx->buf[SHA256_BLOCK_SIZE - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha256_compress(ctx->state, ctx->buf);

	for (i = 0; i < 8; i++)
		sha256_store_be32(ret_digest + 4 * i, ctx->state[i]);

	ldr_wipe(ctx, sizeof(*ctx));
}

/* One-shot: ret_digest = SHA-256(data[0..len)). */
void sha256(const void *data, size_t len, uint8_t ret_digest[SHA256_DIGEST_SIZE])
{
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, data, len);
	sha256_final(&ctx, ret_digest);
}
