/*
 * bench_pipeline.c - the loader's load pipeline timed on the host, with the
 * references it is judged against measured in the same run: zlib alone on
 * the same stream and a memcpy of the output size.
 *
 *   usage: bench_pipeline [-n SAMPLES] [-m MIN_MS] NAME=FILE ...
 *
 * Each input (gzip or zlib; an uncompressed ELF skips the inflate step) is
 * timed as:
 *
 *   memcpy      output-size copy from a warm buffer (the floor)
 *   zlib        inflateInit2 + one inflate(Z_FINISH) into a buffer of the
 *               exact output size + inflateEnd (the reference)
 *   zlib-chunk  the same, output handed over INFLATE_CHUNK bytes per call,
 *               as src/inflate.c does (isolates the chunking cost)
 *   wrapper     inflate_image() alone (chunking + buffer growth + checks)
 *   pipeline    inflate_image, elf_parse, elf_load, reloc_apply and the
 *               page tables efi/handoff.c builds (4 GiB identity-mapped
 *               with 2 MiB pages, then each segment at 4 KiB granularity
 *               with its own permissions)
 *
 * Every buffer comes from one arena that is touched before timing starts:
 * in firmware memory is identity-mapped and never faults, so first-touch
 * page faults of the host would only add noise.  A sample runs an
 * operation k times (k chosen so a sample lasts MIN_MS) and the median of
 * SAMPLES samples is reported, operations interleaved within a round.
 * Times are the thread's CPU time (bench_cpu_now()), not wall time, so that
 * other work on the machine does not land in the numbers.
 * Output: CSV rows (see bench.h) for the sections "pipeline" and
 * "pipeline-steps".  A failing step is reported as a row, never as a
 * non-zero exit, except for unusable arguments (exit 2).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bench.h"
#include "elf_load.h"
#include "inflate.h"
#include "kaslr_boot.h"
#include "ldr.h"
#include "pagetable.h"
#include "reloc.h"

/* where the benchmark pretends the kernel was placed (a 2 MiB-aligned slot) */
#define PIPE_PHYS_BASE  (50 * MIB)
/* virtual delta for higher-half kernels: some slot inside the window */
#define PIPE_VIRT_DELTA (74 * MIB)

enum pipe_op { OP_MEMCPY, OP_ZLIB, OP_ZLIB_CHUNK, OP_WRAPPER, OP_PIPELINE, OP_COUNT };

enum pipe_step { ST_INFLATE, ST_PARSE, ST_LOAD, ST_RELOC, ST_PT, ST_COUNT };

static const char *const step_names[ST_COUNT] = {
	"inflate ms", "parse ms", "load ms", "reloc ms", "pagetable ms",
};

static void *arena_page(void *ctx)
{
	void *p = arena_alloc(ctx, PAGE_SIZE);

	if (p)
		memset(p, 0, PAGE_SIZE);
	return p;
}

struct input {
	const char *name;
	const uint8_t *file;
	uint64_t file_size;
	enum inflate_format fmt;
	const uint8_t *elf;        /* decompressed once, warm: memcpy source */
	uint64_t elf_size;
	struct elf_image img;
	uint64_t new_vbase;
	uint64_t relocs;
	unsigned pt_pages;
	struct arena arena;
	double step_t[ST_COUNT];   /* summed over recorded pipeline runs */
};

static int run_zlib(struct input *in, uInt chunk)
{
	uint8_t *out = arena_alloc(&in->arena, in->elf_size);
	uint64_t done = 0;
	z_stream zs;
	int zr;

	if (!out)
		return -1;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, in->fmt == INFLATE_GZIP ? 15 + 16 : 15) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)in->file;
	zs.avail_in = (uInt)in->file_size;
	do {
		uint64_t left = in->elf_size - done;

		zs.next_out = out + done;
		zs.avail_out = (uInt)(chunk && left > chunk ? chunk : left);
		{
			uInt gave = zs.avail_out;

			zr = inflate(&zs, chunk ? Z_NO_FLUSH : Z_FINISH);
			done += gave - zs.avail_out;
		}
	} while (zr == Z_OK || (zr == Z_BUF_ERROR && done < in->elf_size));
	inflateEnd(&zs);
	return zr == Z_STREAM_END && done == in->elf_size ? 0 : -1;
}

static const struct inflate_alloc *input_alloc(struct input *in, struct inflate_alloc *a)
{
	/* zeroed first: optional hooks (guard, progress, ...) stay NULL */
	memset(a, 0, sizeof(*a));
	a->alloc = arena_alloc;
	a->free = arena_free;
	a->ctx = &in->arena;
	return a;
}

static uint32_t seg_pt_flags(uint32_t pf)
{
	return ((pf & 2u) ? PT_W : 0) | ((pf & 1u) ? PT_X : 0); /* PF_W, PF_X */
}

/* The page tables of efi/handoff.c for this image; LDR_OK or the error. */
static enum ldr_err build_tables(struct input *in, const struct elf_image *img)
{
	struct pt_alloc a = { .page = arena_page, .to_phys = pt_identity_to_phys,
			      .to_virt = pt_identity_to_virt, .ctx = &in->arena };
	struct pt pt;
	enum ldr_err err;
	uint64_t virt_base = in->new_vbase;

	err = pt_init(&pt, &a);
	if (err == LDR_OK)
		err = pt_map_range(&pt, 0, 0, 4 * GIB, PT_W);
	for (unsigned i = 0; err == LDR_OK && i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];
		uint64_t off = ldr_align_down(s->load_off, PAGE_SIZE);
		uint64_t end = ldr_align_up(s->load_off + s->memsz, PAGE_SIZE);

		err = pt_map_range(&pt, virt_base + off, PIPE_PHYS_BASE + off, end - off,
				   seg_pt_flags(s->flags));
	}
	if (err == LDR_OK)
		in->pt_pages = pt.pages_used;
	return err;
}

/* The whole pipeline once; with record, per-step times added to in->step_t. */
static enum ldr_err run_pipeline(struct input *in, int record)
{
	struct inflate_alloc ia;
	struct reloc_report rep;
	struct elf_image img;
	const uint8_t *elf = in->file;
	uint64_t elf_size = in->file_size, cap;
	uint8_t *dest;
	enum ldr_err err;
	double t[ST_COUNT + 1] = { 0 };

	if (record)
		t[0] = bench_cpu_now();
	if (in->fmt != INFLATE_NONE) {
		void *out;

		err = inflate_image(in->file, in->file_size, INFLATE_DEFAULT_LIMIT,
				    input_alloc(in, &ia), &out, &elf_size, &cap);
		if (err != LDR_OK)
			return err;
		elf = out;
	}
	if (record)
		t[1] = bench_cpu_now();
	{
		struct elf_limits lim = elf_default_limits();

		err = elf_parse(elf, elf_size, &lim, &img);
		if (err != LDR_OK)
			return err;
	}
	if (record)
		t[2] = bench_cpu_now();
	dest = arena_alloc(&in->arena, img.load_size);
	if (!dest)
		return LDR_E_NOMEM;
	err = elf_load(&img, dest, img.load_size);
	if (err != LDR_OK)
		return err;
	if (record)
		t[3] = bench_cpu_now();
	memset(&rep, 0, sizeof(rep));
	err = reloc_apply(&img, dest, img.load_size, in->new_vbase, &rep);
	if (err != LDR_OK)
		return err;
	if (record)
		t[4] = bench_cpu_now();
	err = build_tables(in, &img);
	if (err != LDR_OK)
		return err;
	if (record)
		t[5] = bench_cpu_now();
	if (record) {
		for (int s = 0; s < ST_COUNT; s++)
			in->step_t[s] += t[s + 1] - t[s];
		in->relocs = rep.count;
	}
	return LDR_OK;
}

static int run_op(struct input *in, enum pipe_op op)
{
	struct inflate_alloc ia;
	void *out;
	uint64_t len, cap;

	in->arena.used = 0;
	switch (op) {
	case OP_MEMCPY: {
		uint8_t *dst = arena_alloc(&in->arena, in->elf_size);

		if (!dst)
			return -1;
		memcpy(dst, in->elf, in->elf_size);
		/* keep the copy observable so it cannot be dropped */
		__asm__ volatile("" : : "r"(dst) : "memory");
		return 0;
	}
	case OP_ZLIB:
		return in->fmt == INFLATE_NONE ? -1 : run_zlib(in, 0);
	case OP_ZLIB_CHUNK:
		return in->fmt == INFLATE_NONE ? -1 : run_zlib(in, (uInt)INFLATE_CHUNK);
	case OP_WRAPPER:
		if (in->fmt == INFLATE_NONE)
			return -1;
		return inflate_image(in->file, in->file_size, INFLATE_DEFAULT_LIMIT,
				     input_alloc(in, &ia), &out, &len, &cap) == LDR_OK ? 0 : -1;
	case OP_PIPELINE:
		/* no clock reads inside: they would be counted as pipeline time */
		return run_pipeline(in, 0) == LDR_OK ? 0 : -1;
	default:
		return -1;
	}
}

/* Decompress once, parse, size the arena; 0 or -1 with rows saying why. */
static int input_prepare(struct input *in)
{
	struct arena probe;
	struct inflate_alloc ia;
	struct elf_limits lim = elf_default_limits();
	enum ldr_err err;
	uint64_t arena_size;

	in->fmt = inflate_detect(in->file, in->file_size);
	in->elf = in->file;
	in->elf_size = in->file_size;
	if (in->fmt != INFLATE_NONE) {
		void *out;
		uint64_t cap;

		/* a malloc-backed first pass, only to learn the sizes */
		probe.size = INFLATE_DEFAULT_LIMIT * 2 + 64 * MIB;
		probe.base = malloc(probe.size); /* untouched pages cost nothing */
		probe.used = 0;
		probe.failed = 0;
		if (!probe.base) {
			bench_row("pipeline", in->name, "pipeline ms", "error: no memory");
			return -1;
		}
		memset(&ia, 0, sizeof(ia));
		ia.alloc = arena_alloc;
		ia.free = arena_free;
		ia.ctx = &probe;
		err = inflate_image(in->file, in->file_size, INFLATE_DEFAULT_LIMIT, &ia, &out,
				    &in->elf_size, &cap);
		if (err != LDR_OK) {
			free(probe.base);
			bench_row("pipeline", in->name, "pipeline ms", "error: %s", ldr_strerror(err));
			return -1;
		}
		in->elf = malloc(in->elf_size);
		if (!in->elf) {
			free(probe.base);
			return -1;
		}
		memcpy((void *)in->elf, out, in->elf_size);
		/* everything inflate_image allocated, growth included */
		arena_size = probe.used;
		free(probe.base);
	} else {
		arena_size = in->file_size;
	}
	err = elf_parse(in->elf, in->elf_size, &lim, &in->img);
	if (err != LDR_OK) {
		bench_row("pipeline", in->name, "pipeline ms", "error: %s", ldr_strerror(err));
		return -1;
	}
	if (in->img.link_vbase >= KB_VIRT_WINDOW_START)
		in->new_vbase = in->img.link_vbase + PIPE_VIRT_DELTA;
	else
		in->new_vbase = PIPE_PHYS_BASE;
	/* inflate's buffers + the loaded image + page tables + slack, pre-touched */
	arena_size += in->elf_size + in->img.load_size + 16 * MIB;
	arena_size = ldr_align_up(arena_size, 2 * MIB);
	if (posix_memalign((void **)&in->arena.base, 2 * MIB, arena_size) != 0) {
		bench_row("pipeline", in->name, "pipeline ms", "error: no memory");
		return -1;
	}
	memset(in->arena.base, 0x5a, arena_size);
	in->arena.size = arena_size;
	in->arena.used = 0;
	in->arena.failed = 0;
	err = run_pipeline(in, 1);
	if (err != LDR_OK) {
		bench_row("pipeline", in->name, "pipeline ms", "error: %s", ldr_strerror(err));
		return -1;
	}
	return 0;
}

static void pipe_ms_row(const char *section, const char *item, const char *metric, int have,
			double sec)
{
	if (have)
		bench_row(section, item, metric, "%.3f", sec * 1e3);
	else
		bench_row(section, item, metric, "n/a");
}

static void bench_input(struct input *in, int samples, double min_s)
{
	static const char *const op_names[OP_COUNT] = {
		"memcpy ms", "zlib ms", "zlib 1MiB-chunks ms", "inflate_image ms", "pipeline ms",
	};
	double t[OP_COUNT][BENCH_MAX_SAMPLES], st[ST_COUNT][BENCH_MAX_SAMPLES];
	double med[OP_COUNT], lo[OP_COUNT];
	int k[OP_COUNT], have[OP_COUNT], zok;

	/* repetitions per sample: enough to last min_s (at least once) */
	for (int op = 0; op < OP_COUNT; op++) {
		double t0 = bench_cpu_now(), dt;

		/* without compression only the pipeline itself is timed */
		have[op] = (op == OP_PIPELINE || in->fmt != INFLATE_NONE) && run_op(in, op) == 0;
		dt = bench_cpu_now() - t0;
		k[op] = dt > 0 && dt < min_s ? (int)(min_s / dt) + 1 : 1;
	}
	for (int s = 0; s < samples; s++) {
		for (int op = 0; op < OP_COUNT; op++) {
			double t0;

			if (!have[op])
				continue;
			memset(in->step_t, 0, sizeof(in->step_t));
			t0 = bench_cpu_now();
			for (int r = 0; r < k[op]; r++)
				run_op(in, op);
			t[op][s] = (bench_cpu_now() - t0) / k[op];
			if (op != OP_PIPELINE)
				continue;
			/* the per-step split: the same runs again, with clock reads */
			for (int r = 0; r < k[op]; r++) {
				in->arena.used = 0;
				run_pipeline(in, 1);
			}
			for (int j = 0; j < ST_COUNT; j++)
				st[j][s] = in->step_t[j] / k[op];
		}
	}

	for (int op = 0; op < OP_COUNT; op++) {
		med[op] = have[op] ? bench_median(t[op], samples) : 0;
		lo[op] = have[op] ? t[op][0] : 0; /* sorted by bench_median() */
	}
	zok = have[OP_ZLIB] && med[OP_ZLIB] > 0 && lo[OP_ZLIB] > 0;

	bench_row("pipeline", in->name, "compressed bytes", "%llu",
		  (unsigned long long)(in->fmt == INFLATE_NONE ? 0 : in->file_size));
	bench_row("pipeline", in->name, "ELF bytes", "%llu", (unsigned long long)in->elf_size);
	bench_row("pipeline", in->name, "load bytes", "%llu", (unsigned long long)in->img.load_size);
	bench_row("pipeline", in->name, "relocations", "%llu", (unsigned long long)in->relocs);
	pipe_ms_row("pipeline", in->name, op_names[OP_MEMCPY], have[OP_MEMCPY], med[OP_MEMCPY]);
	pipe_ms_row("pipeline", in->name, op_names[OP_ZLIB], have[OP_ZLIB], med[OP_ZLIB]);
	pipe_ms_row("pipeline", in->name, op_names[OP_PIPELINE], have[OP_PIPELINE], med[OP_PIPELINE]);
	if (zok) {
		bench_row("pipeline", in->name, "pipeline/zlib", "%.3f", med[OP_PIPELINE] / med[OP_ZLIB]);
		/* fastest of each: less sensitive to other load on the machine */
		bench_row("pipeline", in->name, "min pipeline/zlib", "%.3f",
			  lo[OP_PIPELINE] / lo[OP_ZLIB]);
		bench_row("pipeline", in->name, "goal <= 1.10", "%s",
			  med[OP_PIPELINE] / med[OP_ZLIB] <= 1.10 ? "met" : "missed");
	} else {
		bench_row("pipeline", in->name, "pipeline/zlib", "n/a");
		bench_row("pipeline", in->name, "min pipeline/zlib", "n/a");
		bench_row("pipeline", in->name, "goal <= 1.10", "n/a");
	}

	for (int j = 0; j < ST_COUNT; j++)
		bench_row("pipeline-steps", in->name, step_names[j], "%.3f",
			  bench_median(st[j], samples) * 1e3);
	bench_row("pipeline-steps", in->name, "PT pages", "%u", in->pt_pages);
	pipe_ms_row("pipeline-steps", in->name, op_names[OP_ZLIB_CHUNK], have[OP_ZLIB_CHUNK],
		    med[OP_ZLIB_CHUNK]);
	pipe_ms_row("pipeline-steps", in->name, op_names[OP_WRAPPER], have[OP_WRAPPER],
		    med[OP_WRAPPER]);
	if (zok) {
		bench_row("pipeline-steps", in->name, "chunks/zlib", "%.3f",
			  med[OP_ZLIB_CHUNK] / med[OP_ZLIB]);
		bench_row("pipeline-steps", in->name, "inflate_image/zlib", "%.3f",
			  med[OP_WRAPPER] / med[OP_ZLIB]);
		bench_row("pipeline-steps", in->name, "zlib MB/s", "%.0f",
			  (double)in->elf_size / med[OP_ZLIB] / 1e6);
	} else {
		bench_row("pipeline-steps", in->name, "chunks/zlib", "n/a");
		bench_row("pipeline-steps", in->name, "inflate_image/zlib", "n/a");
		bench_row("pipeline-steps", in->name, "zlib MB/s", "n/a");
	}
}

int main(int argc, char **argv)
{
	int samples = 11, i;
	double min_ms = 20;

	i = bench_options(argc, argv, &samples, &min_ms);
	if (i < 0 || i == argc) {
		fprintf(stderr, "usage: bench_pipeline [-n SAMPLES(1..%d)] [-m MIN_MS] NAME=FILE ...\n",
			BENCH_MAX_SAMPLES);
		return 2;
	}
	for (; i < argc; i++) {
		struct input in;
		char *eq = strchr(argv[i], '=');
		const char *path = eq ? eq + 1 : argv[i];

		memset(&in, 0, sizeof(in));
		if (eq)
			*eq = '\0';
		in.name = eq ? argv[i] : bench_basename(path);
		in.file = bench_read_file(path, &in.file_size);
		if (!in.file) {
			bench_row("pipeline", in.name, "pipeline ms", "error: cannot read %s", path);
			continue;
		}
		if (input_prepare(&in) == 0)
			bench_input(&in, samples, min_ms / 1e3);
		fflush(stdout);
		if (in.elf != in.file)
			free((void *)in.elf);
		free((void *)in.file);
		free(in.arena.base);
	}
	return 0;
}
