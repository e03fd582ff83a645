/*
 * decomp_run.h - the decompression tests' runner (test_decompress.c,
 * test_inflate.c): one decomp_image() through the counting capability of
 * decomp_fixture.h, checking what every run must satisfy - no leak, outputs
 * untouched on error, balanced guard calls, library state within the
 * reservation and the reservation released - and on success the bytes.
 * Include after test.h.
 */
#ifndef DECOMP_RUN_H
#define DECOMP_RUN_H

#include "decomp_fixture.h"

/*
 * decompress in[0..len) with limit and hint; checks leaks, the guard and
 * reserve contract, and on success the bytes (when want is given).
 */
static inline enum ldr_err run_hint(const char *name, const void *in, size_t len, uint64_t limit,
			     uint64_t hint, const uint8_t *want, size_t want_len,
			     struct counting_alloc *cnt)
{
	struct counting_alloc local;
	struct counting_alloc *c = cnt ? cnt : &local;
	struct decomp_alloc a = ca_cap(c);
	void *out = (void *)0x1;
	uint64_t olen = 7, ocap = 9;
	enum ldr_err err;

	err = decomp_image(in, len, limit, hint, &a, &out, &olen, &ocap);
	if (err == LDR_OK) {
		CHECK(ocap <= limit && olen <= ocap, "%s: len %llu cap %llu limit %llu", name,
		      (unsigned long long)olen, (unsigned long long)ocap,
		      (unsigned long long)limit);
		CHECK_EQ_U64(c->live, ocap, "%s: only the output stays allocated", name);
		if (want) {
			CHECK_EQ_U64(olen, want_len, "%s: length", name);
			CHECK(olen == want_len && memcmp(out, want, want_len) == 0,
			      "%s: bytes differ", name);
		}
		a.free(a.ctx, out, ocap);
	} else {
		CHECK(out == (void *)0x1 && olen == 7 && ocap == 9,
		      "%s: outputs written on error", name);
	}
	CHECK_EQ_U64(c->live, 0, "%s: leak", name);
	CHECK(!c->bad_free, "%s: free() told the wrong size", name);
	CHECK(!c->bad_guard && !c->in_guard, "%s: guard calls unbalanced", name);
	CHECK(!c->over_reserve, "%s: library state %llu passed the reservation %llu", name,
	      (unsigned long long)c->guarded_peak, (unsigned long long)c->reserve_max);
	if (c->reserves)
		CHECK_EQ_U64(c->reserved, 0, "%s: reservation released at the end", name);
	return err;
}

static inline enum ldr_err run(const char *name, const void *in, size_t len, uint64_t limit,
			const uint8_t *want, size_t want_len, struct counting_alloc *cnt)
{
	return run_hint(name, in, len, limit, 0, want, want_len, cnt);
}

/*
 * Fail allocation k for k = 0, 1, ...: NOMEM and nothing leaked, until one
 * run no longer reaches allocation k and succeeds with want[0..n).
 * Returns the number of allocations the successful run made.
 */
static inline long alloc_failure_sweep(const char *name, const struct buf *s,
				       const uint8_t *want, size_t n)
{
	long fail;
	int ok = 0;

	for (fail = 0; fail < 64 && !ok; fail++) {
		struct counting_alloc c;
		struct decomp_alloc a = ca_cap(&c);
		void *out = NULL;
		uint64_t olen = 0, ocap = 0;
		enum ldr_err err;

		c.fail_at = fail;
		err = decomp_image(s->p, s->len, DECOMP_DEFAULT_LIMIT, 0, &a, &out, &olen, &ocap);
		if (err == LDR_OK) {
			ok = 1;
			CHECK(olen == n && memcmp(out, want, n) == 0, "%s: fail_at %ld data", name,
			      fail);
			a.free(a.ctx, out, ocap);
		} else {
			CHECK_EQ_U64(err, LDR_E_NOMEM, "%s: allocation %ld fails", name, fail);
		}
		CHECK_EQ_U64(c.live, 0, "%s: fail_at %ld leaks", name, fail);
		CHECK(!c.bad_free, "%s: fail_at %ld bad free size", name, fail);
	}
	CHECK(ok, "%s: never succeeded in %ld tries", name, fail);
	return fail;
}

#endif
