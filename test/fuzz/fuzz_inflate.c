/*
 * fuzz_inflate.c - libFuzzer target: decomp_image() of untrusted bytes in
 * every format it knows (gzip, zlib, xz, LZ4 legacy, zstd; and the refused
 * ones) with a small limit through a counting allocator: no leaks, no
 * output buffer over the limit, result inside its buffer, library state
 * (allocated inside the guard) never past what was reserved, guard and
 * reserve calls balanced; then (for one input in four) the same input again
 * with one allocation failing, which must give LDR_E_NOMEM and no leak.
 * The limit is 256 KiB, not the loader's 512 MiB: a bomb costs time per
 * execution in proportion to the limit, and the growth/limit logic is the
 * same at any size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decompress.h"

#define FUZZ_LIMIT (256 * KIB)

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

/*
 * Output buffers come from two reused slots: a fresh multi-megabyte
 * malloc per execution costs page faults that would dominate the run.
 * Two, because growing holds the old and the new buffer at once.  The
 * bytes of a slot past the allocation (and all of a free slot) are
 * poisoned, so ASan still reports any access outside a buffer.
 */
#define FUZZ_SLOT (FUZZ_LIMIT + 64 * KIB)
static uint8_t fuzz_slot[2][FUZZ_SLOT] __attribute__((aligned(64)));
static int fuzz_slot_used[2];

struct fuzz_alloc {
	uint64_t live;
	uint64_t state;     /* allocated inside the guard, live */
	uint64_t reserved;  /* the last reserve() */
	unsigned calls;
	long fail_at;
	int in_guard;
};

static void *fa_alloc(void *ctx, uint64_t size)
{
	struct fuzz_alloc *c = ctx;
	uint64_t *p;

	if ((long)c->calls++ == c->fail_at)
		return NULL;
	/* library state: within the reservation (an xz dictionary or zstd
	 * window may be large; it is allocated, rarely touched in full) */
	if (c->in_guard) {
		if (c->state + size > c->reserved)
			abort();
		c->state += size;
	} else if (size > FUZZ_LIMIT) {
		abort(); /* the output buffer is at most the limit */
	}
	p = NULL;
	if (!c->in_guard && size > 64 * KIB) {
		for (int i = 0; i < 2 && !p; i++) {
			if (fuzz_slot_used[i])
				continue;
			fuzz_slot_used[i] = 1;
			p = (uint64_t *)fuzz_slot[i];
			ASAN_UNPOISON_MEMORY_REGION(p, size + 16);
		}
	}
	if (!p)
		p = malloc(size + 16);
	if (!p)
		return NULL;
	p[0] = size;
	c->live += size;
	return p + 2;
}

static void fa_free(void *ctx, void *q, uint64_t size)
{
	struct fuzz_alloc *c = ctx;
	uint64_t *p = (uint64_t *)q - 2;

	if (p[0] != size || c->live < size)
		abort();
	c->live -= size;
	if (c->in_guard)
		c->state -= size;
	for (int i = 0; i < 2; i++) {
		if ((uint8_t *)p == fuzz_slot[i]) {
			ASAN_POISON_MEMORY_REGION(p, FUZZ_SLOT);
			fuzz_slot_used[i] = 0;
			return;
		}
	}
	free(p);
}

static void fa_guard(void *ctx, int enter)
{
	struct fuzz_alloc *c = ctx;

	if (enter == c->in_guard)
		abort();
	c->in_guard = enter;
}

static int fa_reserve(void *ctx, uint64_t bytes)
{
	struct fuzz_alloc *c = ctx;

	if (c->in_guard || (bytes && bytes < c->state))
		abort();
	c->reserved = bytes;
	return 1;
}

static enum ldr_err fuzz_run(const uint8_t *data, size_t size, long fail_at, unsigned *ret_calls)
{
	struct fuzz_alloc c = { .fail_at = fail_at };
	struct decomp_alloc a = { .alloc = fa_alloc, .free = fa_free, .guard = fa_guard,
				  .reserve = fa_reserve, .ctx = &c };
	void *out = NULL;
	uint64_t len = 0, cap = 0;
	enum ldr_err err;

	err = decomp_image(data, size, FUZZ_LIMIT, 0, &a, &out, &len, &cap);
	if (err == LDR_OK) {
		if (len > cap || cap > FUZZ_LIMIT || c.live != cap)
			abort();
		if (len)
			((volatile uint8_t *)out)[len - 1];
		a.free(a.ctx, out, cap);
	}
	if (c.live != 0 || c.state != 0 || c.in_guard || c.reserved != 0)
		abort();
	if (decomp_detect(data, size) == DECOMP_NONE && err != LDR_E_INVAL)
		abort();
	*ret_calls = c.calls;
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int poisoned;
	unsigned calls, calls2;
	enum ldr_err err;

	if (!poisoned) {
		ASAN_POISON_MEMORY_REGION(fuzz_slot, sizeof(fuzz_slot));
		poisoned = 1;
	}

	err = fuzz_run(data, size, -1, &calls);
	if (err == LDR_E_INVAL || calls == 0 || size % 4 != 0)
		return 0;
	err = fuzz_run(data, size, (long)(size % calls), &calls2);
	if (err != LDR_E_NOMEM)
		abort();
	return 0;
}
