/*
 * bench.h - what the host benchmark programs share: a monotonic clock,
 * the median of a run of samples, reading a whole file, a bump allocator,
 * and the one output
 * format they all speak, CSV rows "section,item,metric,value" on stdout
 * (test/bench/run.sh collects them; render.awk turns them into tables).
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_MAX_SAMPLES 101

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Seconds of CPU time this thread has used.  What the host benchmarks
 * time with: a thread that is descheduled because other work shares the
 * machine does not accumulate it, so ratios stay meaningful under load.
 */
static inline double bench_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v); 0 for n == 0. */
static inline double bench_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(v[0]), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One CSV row.  Values are formatted by the caller; commas and quotes are
 * kept out of them (they would need CSV quoting) by replacing them.
 */
static inline void bench_row(const char *section, const char *item, const char *metric,
			     const char *fmt, ...)
{
	char val[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	for (char *p = val; *p; p++)
		if (*p == ',' || *p == '"')
			*p = ';';
	printf("%s,%s,%s,%s\n", section, item, metric, val);
}

/* Read a whole file into malloc'd memory; NULL (with a message) on error. */
static inline uint8_t *bench_read_file(const char *path, uint64_t *ret_size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long sz;

	if (!f) {
		fprintf(stderr, "bench: cannot open %s\n", path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "bench: cannot size %s\n", path);
		fclose(f);
		return NULL;
	}
	buf = malloc(sz ? (size_t)sz : 1);
	if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "bench: cannot read %s\n", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*ret_size = (uint64_t)sz;
	return buf;
}

/*
 * A bump allocator over one block the caller allocates and touches before
 * timing (firmware memory never faults; first-touch page faults of the
 * host would only add noise): free is a no-op, used = 0 rewinds, failed
 * records an allocation that did not fit.  Page-aligned blocks.
 */
struct arena {
	uint8_t *base;
	uint64_t size, used;
	int failed;
};

static inline void *arena_alloc(void *ctx, uint64_t size)
{
	struct arena *a = ctx;
	uint64_t start = (a->used + 4095) & ~4095ULL;

	if (start > a->size || a->size - start < size) {
		a->failed = 1;
		return NULL;
	}
	a->used = start + size;
	return a->base + start;
}

static inline void arena_free(void *ctx, void *p, uint64_t size)
{
	(void)ctx;
	(void)p;
	(void)size;
}

/*
 * The options every host benchmark takes, leading its arguments:
 * -n SAMPLES (1..BENCH_MAX_SAMPLES) and -m MIN_MS.  Returns the index of
 * the first other argument, or -1 for an unusable option.
 */
static inline int bench_options(int argc, char **argv, int *samples, double *min_ms)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			*samples = atoi(argv[++i]);
		else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc)
			*min_ms = atof(argv[++i]);
		else
			return -1;
	}
	return *samples < 1 || *samples > BENCH_MAX_SAMPLES ? -1 : i;
}

/* The file name without its directories. */
static inline const char *bench_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

#endif
