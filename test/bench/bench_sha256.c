/*
 * bench_sha256.c - SHA-256 of a kernel-sized buffer on the host: the
 * portable code (src/sha256.c) against the x86 SHA extensions
 * (src/sha256_x86.c), measured in the same run.
 *
 *   usage: bench_sha256 [-n SAMPLES] [-m MIN_MS]
 *
 * 16 MiB of pseudo-random bytes (the size of a Debian cloud bzImage), each
 * block function over all of it; thread CPU time, median of SAMPLES, each
 * sample repeated to last MIN_MS.  Reported: MB/s of each and the ratio
 * portable / extensions (how many times less time the loader spends
 * hashing a pinned kernel where the CPU has them).  Without them the row
 * says so.  Output: CSV rows (bench.h), section "sha256".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "sha256.h"

#define BUF_BYTES (16u << 20)

typedef void blocks_fn(uint32_t state[8], const uint8_t *p, size_t nblocks);

#if defined(__x86_64__)
/* sha256_x86_blocks keeps UEFI's calling convention: a plain-ABI front */
static void x86_blocks(uint32_t state[8], const uint8_t *p, size_t nblocks)
{
	sha256_x86_blocks(state, p, nblocks);
}
#endif

/* where each pass's result goes, so that no pass can be left out */
static volatile uint32_t sink;

/* seconds per pass over buf, the median of samples */
static double time_fn(blocks_fn *fn, const uint8_t *buf, int samples, double min_s)
{
	double v[BENCH_MAX_SAMPLES];

	for (int s = 0; s < samples; s++) {
		double t0 = bench_cpu_now(), t;
		int reps = 0;

		do {
			uint32_t st[8] = { 0 };

			fn(st, buf, BUF_BYTES / SHA256_BLOCK_SIZE);
			sink ^= st[0];
			reps++;
			t = bench_cpu_now() - t0;
		} while (t < min_s);
		v[s] = t / reps;
	}
	return bench_median(v, samples);
}

int main(int argc, char **argv)
{
	int samples = 11;
	double min_ms = 50;
	uint8_t *buf;
	uint64_t x = 0x243f6a8885a308d3ull;
	double portable;
	const char *item = "16 MiB";

	if (bench_options(argc, argv, &samples, &min_ms) != argc) {
		fprintf(stderr, "usage: bench_sha256 [-n SAMPLES(1..%d)] [-m MIN_MS]\n",
			BENCH_MAX_SAMPLES);
		return 2;
	}
	buf = malloc(BUF_BYTES);
	if (!buf) {
		bench_row("sha256", item, "result", "error: out of memory");
		return 0;
	}
	for (size_t i = 0; i < BUF_BYTES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 32);
	}
	portable = time_fn(sha256_portable_blocks, buf, samples, min_ms / 1e3);
	bench_row("sha256", item, "portable MB/s", "%.0f", BUF_BYTES / portable / 1e6);
#if defined(__x86_64__)
	if (sha256_x86_usable()) {
		double ext = time_fn(x86_blocks, buf, samples, min_ms / 1e3);

		bench_row("sha256", item, "SHA extensions MB/s", "%.0f", BUF_BYTES / ext / 1e6);
		bench_row("sha256", item, "portable / extensions", "%.2f", portable / ext);
	} else
#endif
	{
		bench_row("sha256", item, "SHA extensions MB/s", "n/a (this CPU has none)");
	}
	free(buf);
	return 0;
}
