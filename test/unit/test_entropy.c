/*
 * test_entropy.c - host tests for src/entropy.c: pool mixing and domain
 * separation, hardware-RNG health checks driven by scripted step functions,
 * the generator's construction and determinism, exact uniformity of the
 * acceptance step (exhaustively over 16-bit draws) and chi-square tests
 * of drbg_below over 10^6 draws.
 */
#include <stdlib.h>
#include <string.h>

#include "entropy.h"
#include "test.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ pool */

static void fill_seed(uint8_t seed[ENTROPY_SEED_SIZE], uint8_t start)
{
	for (unsigned i = 0; i < ENTROPY_SEED_SIZE; i++)
		seed[i] = (uint8_t)(start + 13 * i);
}

static void pool_seed_of(const char *a, const char *b, uint32_t bit_a, uint32_t bit_b,
			 uint8_t out[ENTROPY_SEED_SIZE])
{
	struct entropy_pool pool;

	entropy_init(&pool);
	entropy_add(&pool, bit_a, a, strlen(a));
	entropy_add(&pool, bit_b, b, strlen(b));
	CHECK(entropy_finish(&pool, out) == LDR_OK, "finish %s|%s", a, b);
}

TEST(test_pool)
{
	struct entropy_pool pool;
	uint8_t s1[32], s2[32], untouched[32], want[32];

	/* nothing added: error, output untouched */
	memset(s1, 0xaa, sizeof(s1));
	memset(untouched, 0xaa, sizeof(untouched));
	entropy_init(&pool);
	CHECK(pool.sources == 0, "fresh pool has no sources");
	CHECK(entropy_finish(&pool, s1) == LDR_E_NO_ENTROPY, "empty pool -> NO_ENTROPY");
	CHECK(memcmp(s1, untouched, 32) == 0, "empty pool leaves ret_seed untouched");

	/* sources are ORed in */
	entropy_init(&pool);
	entropy_add(&pool, KB_RNG_RDRAND, "x", 1);
	entropy_add(&pool, KB_RNG_RDTSC, "y", 1);
	entropy_add(&pool, KB_RNG_RDTSC, "z", 1);
	CHECK_EQ_U64(pool.sources, KB_RNG_RDRAND | KB_RNG_RDTSC, "sources mask");
	CHECK(entropy_finish(&pool, s1) == LDR_OK, "finish with sources");
	CHECK_EQ_U64(pool.sources, KB_RNG_RDRAND | KB_RNG_RDTSC, "sources kept after finish");

	/* deterministic */
	pool_seed_of("ab", "c", KB_RNG_EFI, KB_RNG_EFI, s1);
	pool_seed_of("ab", "c", KB_RNG_EFI, KB_RNG_EFI, s2);
	CHECK(memcmp(s1, s2, 32) == 0, "same input, same seed");

	/* record boundaries are part of the input */
	pool_seed_of("a", "bc", KB_RNG_EFI, KB_RNG_EFI, s2);
	CHECK(memcmp(s1, s2, 32) != 0, "ab|c differs from a|bc");

	/* the source id is part of the input */
	pool_seed_of("ab", "c", KB_RNG_EFI, KB_RNG_RDSEED, s2);
	CHECK(memcmp(s1, s2, 32) != 0, "same bytes from another source differ");

	/* the pinned encoding: tag || {u32 src, u64 len, data}... */
	{
		static const uint8_t enc[] = {
			'k', 'a', 's', 'l', 'r', '-', 'l', 'o', 'a', 'd', 'e', 'r', ' ',
			'e', 'n', 't', 'r', 'o', 'p', 'y', ' ', 'p', 'o', 'o', 'l', ' ',
			'v', '1',
			0x04, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c',
			0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		};

		sha256(enc, sizeof(enc), want);
		entropy_init(&pool);
		entropy_add(&pool, KB_RNG_RDRAND, "abc", 3);
		entropy_add(&pool, KB_RNG_RDTSC, NULL, 0);
		CHECK(entropy_finish(&pool, s1) == LDR_OK, "finish pinned");
		CHECK(memcmp(s1, want, 32) == 0, "pool encoding as documented");
	}
}

/* ------------------------------------------------------------ hardware RNG */

struct hw_step {
	int cf;
	uint64_t value;
};

/* A scripted instruction: steps[] in order, the last one repeated forever. */
struct hw_script {
	const struct hw_step *steps;
	size_t n;
	size_t pos;
	unsigned calls;
};

static int script_step(void *ctx, uint64_t *ret_value)
{
	struct hw_script *s = ctx;
	const struct hw_step *st = &s->steps[s->pos < s->n ? s->pos : s->n - 1];

	s->pos++;
	s->calls++;
	if (!st->cf)
		return 0;
	*ret_value = st->value;
	return 1;
}

#define CF0     { 0, 0x5555 }
#define ONES    { 1, UINT64_MAX }
#define ZERO    { 1, 0 }
#define V(x)    { 1, (x) }
#define STEPS(...) ((const struct hw_step[]){ __VA_ARGS__ }), \
	ARRAY_LEN(((const struct hw_step[]){ __VA_ARGS__ }))

static const struct hwrng_case {
	const char *name;
	const struct hw_step *steps;
	size_t n_steps;
	unsigned want;
	unsigned expect_n;
	uint64_t expect[4];
	unsigned expect_calls;
} hwrng_cases[] = {
	{ "healthy", STEPS(V(11), V(22), V(33), V(44)), 4, 4, { 11, 22, 33, 44 }, 4 },
	{ "want zero", STEPS(V(11)), 0, 0, { 0 }, 0 },
	{ "always CF=0", STEPS(CF0), 4, 0, { 0 }, 10 },
	{ "always all-ones, CF=1 (AMD)", STEPS(ONES), 4, 0, { 0 }, 10 },
	{ "always zero, CF=1", STEPS(ZERO), 4, 0, { 0 }, 10 },
	{ "stuck value", STEPS(V(0x1234)), 4, 1, { 0x1234 }, 11 },
	{ "recovers after 9 CF=0",
	  STEPS(CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, V(7), V(8), V(9), V(10)),
	  4, 4, { 7, 8, 9, 10 }, 13 },
	{ "fails after 10 CF=0",
	  STEPS(CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, V(7), V(8), V(9), V(10)),
	  4, 0, { 0 }, 10 },
	{ "recovers after 9 mixed failures",
	  STEPS(CF0, ZERO, ONES, CF0, ONES, ZERO, CF0, CF0, ONES, V(5), V(6)),
	  2, 2, { 5, 6 }, 11 },
	{ "second value fails",
	  STEPS(V(1), CF0), 4, 1, { 1 }, 11 },
	{ "good then all-ones forever",
	  STEPS(V(100), V(200), ONES), 4, 2, { 100, 200 }, 12 },
	{ "repeat of last accepted after a rejected value",
	  STEPS(V(42), ZERO, V(42), V(43)), 2, 2, { 42, 43 }, 4 },
	{ "repeat of the previous CF=1 value",
	  STEPS(V(1), V(9), V(9), V(3)), 3, 3, { 1, 9, 3 }, 4 },
	{ "retries reset per value",
	  STEPS(CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, V(1),
		CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, CF0, V(2)),
	  2, 2, { 1, 2 }, 20 },
};

TEST(test_hwrng)
{
	for (size_t i = 0; i < ARRAY_LEN(hwrng_cases); i++) {
		const struct hwrng_case *c = &hwrng_cases[i];
		struct hw_script s = { c->steps, c->n_steps, 0, 0 };
		uint64_t out[5] = { 0, 0, 0, 0, 0xfeed };
		unsigned n = entropy_hwrng_collect(script_step, &s, out, c->want);

		CHECK_EQ_U64(n, c->expect_n, "%s: count", c->name);
		CHECK_EQ_U64(s.calls, c->expect_calls, "%s: steps executed", c->name);
		for (unsigned j = 0; j < n && j < c->expect_n; j++)
			CHECK_EQ_U64(out[j], c->expect[j], "%s: value %u", c->name, j);
		CHECK_EQ_U64(out[4], 0xfeed, "%s: no write past want", c->name);
	}
}

/* ------------------------------------------------------------ derive, drbg */

TEST(test_derive)
{
	uint8_t seed[32], k1[32], k2[32], p1[32], want[32];
	struct drbg d;
	uint8_t block0[32];

	fill_seed(seed, 1);
	entropy_derive(seed, "kernel rng_seed", k1);
	entropy_derive(seed, "kernel rng_seed", k2);
	CHECK(memcmp(k1, k2, 32) == 0, "derive is deterministic");
	CHECK(memcmp(k1, seed, 32) != 0, "derived value is not the seed");
	entropy_derive(seed, "placement", p1);
	CHECK(memcmp(k1, p1, 32) != 0, "different labels differ");
	entropy_derive(seed, "", p1);
	CHECK(memcmp(k1, p1, 32) != 0, "empty label differs");

	drbg_init(&d, seed);
	drbg_bytes(&d, block0, 32);
	CHECK(memcmp(k1, block0, 32) != 0, "derived value is not drbg output");

	seed[31] ^= 1;
	entropy_derive(seed, "kernel rng_seed", k2);
	CHECK(memcmp(k1, k2, 32) != 0, "different seeds differ");

	/* pinned encoding: tag || u64 LE len(label) || label || seed */
	{
		uint8_t enc[22 + 8 + 3 + 32];

		fill_seed(seed, 1);
		memcpy(enc, "kaslr-loader derive v1", 22);
		memset(enc + 22, 0, 8);
		enc[22] = 3;
		memcpy(enc + 30, "abc", 3);
		memcpy(enc + 33, seed, 32);
		sha256(enc, sizeof(enc), want);
		entropy_derive(seed, "abc", k1);
		CHECK(memcmp(k1, want, 32) == 0, "derive encoding as documented");
	}
}

TEST(test_drbg_construction)
{
	uint8_t seed[32], enc[20 + 32 + 8], want[64], got[64];
	struct drbg d;

	fill_seed(seed, 99);
	memcpy(enc, "kaslr-loader drbg v1", 20);
	memcpy(enc + 20, seed, 32);
	for (unsigned blk = 0; blk < 2; blk++) {
		memset(enc + 52, 0, 8);
		enc[52] = (uint8_t)blk;
		sha256(enc, sizeof(enc), want + 32 * blk);
	}

	/* byte-wise through drbg_bytes, in odd-sized pieces */
	drbg_init(&d, seed);
	drbg_bytes(&d, got, 5);
	drbg_bytes(&d, got + 5, 0);
	drbg_bytes(&d, got + 5, 30);
	drbg_bytes(&d, got + 35, 29);
	CHECK(memcmp(got, want, 64) == 0, "drbg blocks = SHA-256(tag||key||ctr)");
	CHECK_EQ_U64(d.counter, 2, "two blocks computed");

	/* drbg_u64 consumes the same stream, 8 bytes little-endian */
	drbg_init(&d, seed);
	for (unsigned i = 0; i < 8; i++) {
		uint64_t v = drbg_u64(&d), w = 0;

		for (unsigned b = 0; b < 8; b++)
			w |= (uint64_t)want[8 * i + b] << (8 * b);
		CHECK_EQ_U64(v, w, "u64 #%u is the next 8 stream bytes", i);
	}

	/* mixing the two interfaces never repeats or skips stream bytes */
	drbg_init(&d, seed);
	drbg_bytes(&d, got, 3);
	{
		uint64_t v = drbg_u64(&d), w = 0;

		for (unsigned b = 0; b < 8; b++)
			w |= (uint64_t)want[3 + b] << (8 * b);
		CHECK_EQ_U64(v, w, "u64 after 3 bytes starts at byte 3");
	}
}

TEST(test_drbg_determinism)
{
	uint8_t s1[32], s2[32];
	struct drbg a, b, c;
	int same_ab = 1, diff_ac = 0, distinct = 1;
	static uint64_t seen[4096];

	fill_seed(s1, 7);
	memcpy(s2, s1, 32);
	s2[0] ^= 0x80;
	drbg_init(&a, s1);
	drbg_init(&b, s1);
	drbg_init(&c, s2);
	for (unsigned i = 0; i < 4096; i++) {
		uint64_t va = drbg_u64(&a), vb = drbg_u64(&b), vc = drbg_u64(&c);

		same_ab &= va == vb;
		diff_ac += va != vc;
		seen[i] = va;
	}
	CHECK(same_ab, "same seed, same stream");
	CHECK(diff_ac == 4096, "one-bit seed change, every draw differs (%d)", diff_ac);

	/* fresh bits every call: no two of 4096 draws collide (p ~ 2^-41) */
	for (unsigned i = 0; i < 4096 && distinct; i++)
		for (unsigned j = i + 1; j < 4096; j++)
			if (seen[i] == seen[j]) {
				distinct = 0;
				break;
			}
	CHECK(distinct, "4096 draws are pairwise distinct");
}

/* ------------------------------------------------------------ uniform selection */

static uint64_t small_mask(uint64_t n)
{
	uint64_t m = 0;

	while (m < n - 1)
		m = m * 2 + 1;
	return m;
}

TEST(test_accept_exhaustive)
{
	static unsigned counts[300];

	for (uint64_t n = 1; n <= 300; n++) {
		unsigned accepted = 0, out_of_range = 0, unequal = 0, clobbered = 0;
		uint64_t per = 65536 / (small_mask(n) + 1);

		memset(counts, 0, sizeof(counts));
		for (uint64_t r = 0; r < 65536; r++) {
			uint64_t idx = 0xdead;

			if (!rng_uniform_accept(r, n, &idx)) {
				clobbered += idx != 0xdead;
				continue;
			}
			accepted++;
			if (idx >= n)
				out_of_range++;
			else
				counts[idx]++;
		}
		for (uint64_t i = 0; i < n; i++)
			unequal += counts[i] != counts[0];
		CHECK(clobbered == 0, "n=%llu: a rejection wrote ret_idx", (unsigned long long)n);
		CHECK(out_of_range == 0, "n=%llu: index out of range", (unsigned long long)n);
		CHECK(unequal == 0, "n=%llu: every index has the same preimage count",
		      (unsigned long long)n);
		CHECK_EQ_U64(counts[0], per, "n=%llu: preimages per index", (unsigned long long)n);
		/* the mask is the smallest one: more than half of all r accepted */
		CHECK(2 * accepted > 65536, "n=%llu: acceptance %u/65536",
		      (unsigned long long)n, accepted);
	}
}

TEST(test_accept_edges)
{
	static const struct {
		const char *name;
		uint64_t r, n;
		int accept;
		uint64_t idx;
	} cases[] = {
		{ "n=0 never accepts", 0, 0, 0, 0 },
		{ "n=0 never accepts (r=~0)", UINT64_MAX, 0, 0, 0 },
		{ "n=1 always 0", UINT64_MAX, 1, 1, 0 },
		{ "n=2 low bit", 0xfffffffffffffffeULL, 2, 1, 0 },
		{ "n=3 mask 3, reject 3", 7, 3, 0, 0 },
		{ "n=3 mask 3, accept 2", 6, 3, 1, 2 },
		{ "n=2^32 exact power", 0x123456789abcdefULL, 1ULL << 32, 1, 0x89abcdefULL },
		{ "n=2^32+1 rejects high", 0x3ffffffffULL, (1ULL << 32) + 1, 0, 0 },
		{ "n=2^32+1 accepts 2^32", 0x100000000ULL, (1ULL << 32) + 1, 1, 1ULL << 32 },
		{ "n=2^63 accepts all", UINT64_MAX, 1ULL << 63, 1, (1ULL << 63) - 1 },
		{ "n=2^63+1 full mask rejects", UINT64_MAX, (1ULL << 63) + 1, 0, 0 },
		{ "n=2^63+1 accepts 2^63", 1ULL << 63, (1ULL << 63) + 1, 1, 1ULL << 63 },
		{ "n=~0 rejects ~0", UINT64_MAX, UINT64_MAX, 0, 0 },
		{ "n=~0 accepts ~0-1", UINT64_MAX - 1, UINT64_MAX, 1, UINT64_MAX - 1 },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		uint64_t idx = 0xabcd;
		int a = rng_uniform_accept(cases[i].r, cases[i].n, &idx);

		CHECK_EQ_U64(a, cases[i].accept, "%s: accept", cases[i].name);
		CHECK_EQ_U64(idx, cases[i].accept ? cases[i].idx : 0xabcd, "%s: idx", cases[i].name);
	}
}

TEST(test_below_bounds)
{
	static const uint64_t ns[] = {
		1, 2, 3, 5, 37, 300, 3000, 1ULL << 20, (1ULL << 20) + 1,
		(1ULL << 63) + 1, UINT64_MAX - 1, UINT64_MAX,
	};
	uint8_t seed[32];
	struct drbg d;
	uint64_t r = 0x77;
	static unsigned char hit[300];
	unsigned missing = 0;

	fill_seed(seed, 3);
	drbg_init(&d, seed);
	CHECK(drbg_below(&d, 0, &r) == LDR_E_INVAL, "n=0 -> INVAL");
	CHECK_EQ_U64(r, 0x77, "n=0 leaves ret untouched");

	for (size_t i = 0; i < ARRAY_LEN(ns); i++) {
		unsigned bad = 0, errs = 0;

		for (unsigned k = 0; k < 2000; k++) {
			uint64_t v;

			if (drbg_below(&d, ns[i], &v) != LDR_OK)
				errs++;
			else if (v >= ns[i])
				bad++;
		}
		CHECK(errs == 0 && bad == 0, "n=%llu: %u errors, %u out of range",
		      (unsigned long long)ns[i], errs, bad);
	}

	/* every slot reachable */
	for (unsigned k = 0; k < 20000; k++) {
		uint64_t v;

		if (drbg_below(&d, 300, &v) == LDR_OK && v < 300)
			hit[v] = 1;
	}
	for (unsigned i = 0; i < 300; i++)
		missing += !hit[i];
	CHECK(missing == 0, "n=300: %u slots never drawn in 20000 draws", missing);
}

/*
 * Pearson's statistic for draws of drbg_below(n) grouped into nbuckets
 * equal buckets (nbuckets divides n).  Double precision: host only.
 */
static double chi_square(uint8_t seed_start, uint64_t n, unsigned nbuckets, unsigned draws)
{
	unsigned *cnt = calloc(nbuckets, sizeof(*cnt));
	uint64_t per_bucket = n / nbuckets;
	double expect = (double)draws / nbuckets, stat = 0;
	uint8_t seed[32];
	struct drbg d;

	CHECK(cnt != NULL, "calloc");
	if (!cnt)
		return 1e300;
	fill_seed(seed, seed_start);
	drbg_init(&d, seed);
	for (unsigned k = 0; k < draws; k++) {
		uint64_t v;

		if (drbg_below(&d, n, &v) != LDR_OK || v >= n) {
			free(cnt);
			return 1e300;
		}
		cnt[v / per_bucket]++;
	}
	for (unsigned b = 0; b < nbuckets; b++) {
		double diff = cnt[b] - expect;

		stat += diff * diff / expect;
	}
	free(cnt);
	return stat;
}

TEST(test_chi_square)
{
	/* 0.99 quantiles of chi-square: 36 dof from tables; 99 dof from tables;
	 * 2999 dof by Wilson-Hilferty (accurate to < 0.1 at this size). */
	static const struct {
		const char *name;
		uint8_t seed;
		uint64_t n;
		unsigned buckets;
		double critical;
	} cases[] = {
		{ "n=37, 37 cells", 11, 37, 37, 58.619 },
		{ "n=3000, 100 buckets of 30 slots", 12, 3000, 100, 134.642 },
		{ "n=3000, every slot", 13, 3000, 3000, 3182.1 },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		double stat = chi_square(cases[i].seed, cases[i].n, cases[i].buckets, 1000000);

		printf("  chi-square %s: %.2f (critical %.2f)\n", cases[i].name, stat,
		       cases[i].critical);
		CHECK(stat < cases[i].critical, "%s: chi-square %.2f >= %.2f", cases[i].name,
		      stat, cases[i].critical);
	}
}

/* firmware RNG answers that are not credited: stuck, constant, zero */
TEST(test_output_plausible)
{
	uint8_t a[32], b[32];

	for (int i = 0; i < 32; i++) {
		a[i] = (uint8_t)(i * 37 + 11);
		b[i] = (uint8_t)(i * 91 + 3);
	}
	CHECK(entropy_output_plausible(a, b, 32), "two different answers");
	CHECK(!entropy_output_plausible(a, a, 32), "the same answer twice");
	memset(b, 0x5a, 32);
	CHECK(!entropy_output_plausible(a, b, 32), "one byte repeated");
	CHECK(!entropy_output_plausible(b, a, 32), "one byte repeated, first");
	memset(b, 0, 32);
	CHECK(!entropy_output_plausible(a, b, 32), "zeros");
	b[31] = 1;
	CHECK(entropy_output_plausible(a, b, 32), "not quite one byte");
	CHECK(!entropy_output_plausible(NULL, b, 32) && !entropy_output_plausible(a, b, 0),
	      "nothing");
}
