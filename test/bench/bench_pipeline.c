/*
 * bench_pipeline.c - the loader's load pipeline timed on the host, with the
 * references it is judged against measured in the same run: the bare
 * decompression library alone on the same stream and a memcpy of the
 * output size.
 *
 *   usage: bench_pipeline [-n SAMPLES] [-m MIN_MS] NAME=FILE ...
 *
 * Each input (gzip, zlib, xz, LZ4 legacy or zstd; a bzImage, whose payload
 * bzimage_parse() finds; an uncompressed ELF skips the decompression) is
 * timed as:
 *
 *   memcpy      output-size copy from a warm buffer (the floor)
 *   library     the format's library in one go into a buffer of the exact
 *               output size (the reference): zlib inflate(Z_FINISH), liblzma
 *               lzma_code(LZMA_FINISH), LZ4_decompress_safe per block,
 *               ZSTD_decompressDCtx
 *   lib-chunks  the same library handed DECOMP_CHUNK of output per call, as
 *               the core does (zstd: ZSTD_decompressStream, whose window
 *               buffer the core uses too; LZ4: per block, as before)
 *   wrapper     decomp_image() alone (bzImage: bzimage_parse +
 *               bzimage_decompress): chunking + buffer growth + checks
 *   pipeline    the wrapper, elf_parse, elf_load, reloc_apply and the page
 *               tables efi/handoff.c builds (4 GiB identity-mapped with
 *               2 MiB pages, then each segment at 4 KiB granularity with its
 *               own permissions)
 *
 * Every buffer, the libraries' state included (the references' too), comes
 * from one arena that is touched before timing starts: in firmware memory
 * is identity-mapped and never faults, so first-touch page faults of the
 * host would only add noise.  A sample runs an operation k times (k chosen
 * so a sample lasts MIN_MS) and the median of SAMPLES samples is reported,
 * operations interleaved within a round.  Times are the thread's CPU time
 * (bench_cpu_now()), not wall time, so that other work on the machine does
 * not land in the numbers.
 * Output: CSV rows (see bench.h) for the sections "pipeline" and
 * "pipeline-steps".  A failing step is reported as a row, never as a
 * non-zero exit, except for unusable arguments (exit 2).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <lzma.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDCtx_advanced */
#include <zstd.h>

#include "bench.h"
#include "elf_load.h"
#include "bzimage.h"
#include "kaslr_boot.h"
#include "ldr.h"
#include "pagetable.h"
#include "reloc.h"

/* where the benchmark pretends the kernel was placed (a 2 MiB-aligned slot) */
#define PIPE_PHYS_BASE  (50 * MIB)
/* virtual delta for higher-half kernels: some slot inside the window */
#define PIPE_VIRT_DELTA (74 * MIB)

enum pipe_op { OP_MEMCPY, OP_LIB, OP_LIB_CHUNK, OP_WRAPPER, OP_PIPELINE, OP_COUNT };

enum pipe_step { ST_INFLATE, ST_PARSE, ST_LOAD, ST_RELOC, ST_PT, ST_COUNT };

static const char *const step_names[ST_COUNT] = {
	"decompress ms", "parse ms", "load ms", "reloc ms", "pagetable ms",
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
	int is_bz;                 /* a bzImage: the stream is its payload's */
	const uint8_t *stream;     /* the compressed stream */
	uint64_t stream_len;
	enum decomp_format fmt;
	const uint8_t *elf;        /* decompressed once, warm: memcpy source */
	uint64_t elf_size;
	struct elf_image img;
	uint64_t new_vbase;
	uint64_t relocs;
	unsigned pt_pages;
	struct arena arena;
	double step_t[ST_COUNT];   /* summed over recorded pipeline runs */
};

/* The references' state from the arena too: no first-touch faults there either */
static voidpf arena_zalloc(voidpf opaque, uInt items, uInt size)
{
	return arena_alloc(opaque, (uint64_t)items * size);
}

static void arena_zfree(voidpf opaque, voidpf p)
{
	(void)opaque;
	(void)p;
}

static void *arena_lzalloc(void *opaque, size_t nmemb, size_t size)
{
	return arena_alloc(opaque, (uint64_t)nmemb * size);
}

static void arena_lzfree(void *opaque, void *p)
{
	(void)opaque;
	(void)p;
}

static void *arena_zsalloc(void *opaque, size_t size)
{
	return arena_alloc(opaque, size);
}

static int run_zlib(struct input *in, uint8_t *out, uInt chunk)
{
	uint64_t done = 0;
	z_stream zs;
	int zr;

	memset(&zs, 0, sizeof(zs));
	zs.zalloc = arena_zalloc;
	zs.zfree = arena_zfree;
	zs.opaque = &in->arena;
	if (inflateInit2(&zs, in->fmt == DECOMP_GZIP ? 15 + 16 : 15) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)in->stream;
	zs.avail_in = (uInt)in->stream_len;
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

static int run_xz(struct input *in, uint8_t *out, size_t chunk)
{
	lzma_allocator al = { arena_lzalloc, arena_lzfree, &in->arena };
	lzma_stream st = LZMA_STREAM_INIT;
	uint64_t done = 0;
	lzma_ret lr;

	st.allocator = &al;
	if (lzma_stream_decoder(&st, UINT64_MAX, 0) != LZMA_OK)
		return -1;
	st.next_in = in->stream;
	st.avail_in = in->stream_len;
	do {
		uint64_t left = in->elf_size - done;

		st.next_out = out + done;
		st.avail_out = chunk && left > chunk ? chunk : left;
		{
			size_t gave = st.avail_out;

			lr = lzma_code(&st, LZMA_FINISH);
			done += gave - st.avail_out;
		}
	} while (lr == LZMA_OK);
	lzma_end(&st);
	return lr == LZMA_STREAM_END && done == in->elf_size ? 0 : -1;
}

/* LZ4 legacy: the magic, then [le32 size][block] to the end */
static int run_lz4(struct input *in, uint8_t *out)
{
	uint64_t pos = 4, done = 0;

	while (pos + 4 <= in->stream_len) {
		uint32_t n = ldr_le32(in->stream + pos);
		int got;

		if (n > in->stream_len - pos - 4)
			return -1;
		got = LZ4_decompress_safe((const char *)in->stream + pos + 4, (char *)out + done,
					  (int)n, (int)(in->elf_size - done > DECOMP_LZ4_BLOCK
							? DECOMP_LZ4_BLOCK : in->elf_size - done));
		if (got < 0)
			return -1;
		done += (uint64_t)got;
		pos += 4 + (uint64_t)n;
	}
	return pos == in->stream_len && done == in->elf_size ? 0 : -1;
}

static int run_zstd(struct input *in, uint8_t *out, size_t chunk)
{
	ZSTD_customMem mem = { arena_zsalloc, arena_lzfree, &in->arena };
	ZSTD_DCtx *d = ZSTD_createDCtx_advanced(mem);
	uint64_t done = 0;
	size_t r;

	if (!d)
		return -1;
	if (!chunk) {
		r = ZSTD_decompressDCtx(d, out, in->elf_size, in->stream, in->stream_len);
		done = ZSTD_isError(r) ? 0 : r;
	} else {
		ZSTD_inBuffer src = { in->stream, in->stream_len, 0 };

		do {
			uint64_t left = in->elf_size - done;
			ZSTD_outBuffer dst = { out + done, left > chunk ? chunk : left, 0 };

			r = ZSTD_decompressStream(d, &dst, &src);
			done += dst.pos;
		} while (!ZSTD_isError(r) && r != 0);
	}
	ZSTD_freeDCtx(d);
	return !ZSTD_isError(r) && done == in->elf_size ? 0 : -1;
}

/* The bare library on the stream, whole (chunk 0) or DECOMP_CHUNK per call */
static int run_lib(struct input *in, uint64_t chunk)
{
	uint8_t *out = arena_alloc(&in->arena, in->elf_size);

	if (!out)
		return -1;
	switch (in->fmt) {
	case DECOMP_GZIP:
	case DECOMP_ZLIB: return run_zlib(in, out, (uInt)chunk);
	case DECOMP_XZ: return run_xz(in, out, (size_t)chunk);
	case DECOMP_LZ4: return run_lz4(in, out);
	case DECOMP_ZSTD: return run_zstd(in, out, (size_t)chunk);
	default: return -1;
	}
}

/* decomp_image, or for a bzImage the parser and bzimage_decompress */
static enum ldr_err run_wrapper(struct input *in, const struct decomp_alloc *a, void **out,
				uint64_t *len, uint64_t *cap)
{
	struct bzimage bz;
	enum ldr_err err;

	if (!in->is_bz)
		return decomp_image(in->stream, in->stream_len, DECOMP_DEFAULT_LIMIT, 0, a, out,
				    len, cap);
	err = bzimage_parse(in->file, in->file_size, DECOMP_DEFAULT_LIMIT, &bz);
	if (err != LDR_OK)
		return err;
	return bzimage_decompress(&bz, DECOMP_DEFAULT_LIMIT, a, out, len, cap);
}

static const struct decomp_alloc *input_alloc(struct input *in, struct decomp_alloc *a)
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
	struct decomp_alloc ia;
	struct reloc_report rep;
	struct elf_image img;
	const uint8_t *elf = in->file;
	uint64_t elf_size = in->file_size, cap;
	uint8_t *dest;
	enum ldr_err err;
	double t[ST_COUNT + 1] = { 0 };

	if (record)
		t[0] = bench_cpu_now();
	if (in->fmt != DECOMP_NONE) {
		void *out;

		err = run_wrapper(in, input_alloc(in, &ia), &out, &elf_size, &cap);
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
	struct decomp_alloc ia;
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
	case OP_LIB:
		return in->fmt == DECOMP_NONE ? -1 : run_lib(in, 0);
	case OP_LIB_CHUNK:
		return in->fmt == DECOMP_NONE ? -1 : run_lib(in, DECOMP_CHUNK);
	case OP_WRAPPER:
		if (in->fmt == DECOMP_NONE)
			return -1;
		return run_wrapper(in, input_alloc(in, &ia), &out, &len, &cap) == LDR_OK ? 0 : -1;
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
	struct decomp_alloc ia;
	struct elf_limits lim = elf_default_limits();
	enum ldr_err err;
	uint64_t arena_size;

	in->stream = in->file;
	in->stream_len = in->file_size;
	if (bzimage_detect(in->file, in->file_size)) {
		struct bzimage bz;

		err = bzimage_parse(in->file, in->file_size, DECOMP_DEFAULT_LIMIT, &bz);
		if (err != LDR_OK) {
			bench_row("pipeline", in->name, "pipeline ms", "error: %s", ldr_strerror(err));
			return -1;
		}
		in->is_bz = 1;
		in->stream = bz.stream;
		in->stream_len = bz.stream_len;
	}
	in->fmt = decomp_detect(in->stream, in->stream_len);
	in->elf = in->file;
	in->elf_size = in->file_size;
	if (in->fmt != DECOMP_NONE) {
		void *out;
		uint64_t cap;

		/* a malloc-backed first pass, only to learn the sizes */
		probe.size = DECOMP_DEFAULT_LIMIT * 2 + 64 * MIB;
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
		err = run_wrapper(in, &ia, &out, &in->elf_size, &cap);
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
		/* everything the wrapper allocated, growth and state included */
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
	/* the wrapper's buffers + the loaded image + page tables + slack,
	 * pre-touched; the references need no more than the wrapper */
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
		"memcpy ms", "library ms", "library 1MiB-chunks ms", "decomp_image ms", "pipeline ms",
	};
	double t[OP_COUNT][BENCH_MAX_SAMPLES], st[ST_COUNT][BENCH_MAX_SAMPLES];
	double med[OP_COUNT], lo[OP_COUNT];
	int k[OP_COUNT], have[OP_COUNT], zok;

	/* repetitions per sample: enough to last min_s (at least once) */
	for (int op = 0; op < OP_COUNT; op++) {
		double t0 = bench_cpu_now(), dt;

		/* without compression only the pipeline itself is timed */
		have[op] = (op == OP_PIPELINE || in->fmt != DECOMP_NONE) && run_op(in, op) == 0;
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
	zok = have[OP_LIB] && med[OP_LIB] > 0 && lo[OP_LIB] > 0;

	bench_row("pipeline", in->name, "format", "%s%s", decomp_format_name(in->fmt),
		  in->is_bz ? " (bzImage)" : "");
	bench_row("pipeline", in->name, "compressed bytes", "%llu",
		  (unsigned long long)(in->fmt == DECOMP_NONE ? 0 : in->stream_len));
	bench_row("pipeline", in->name, "ELF bytes", "%llu", (unsigned long long)in->elf_size);
	bench_row("pipeline", in->name, "load bytes", "%llu", (unsigned long long)in->img.load_size);
	bench_row("pipeline", in->name, "relocations", "%llu", (unsigned long long)in->relocs);
	pipe_ms_row("pipeline", in->name, op_names[OP_MEMCPY], have[OP_MEMCPY], med[OP_MEMCPY]);
	pipe_ms_row("pipeline", in->name, op_names[OP_LIB], have[OP_LIB], med[OP_LIB]);
	pipe_ms_row("pipeline", in->name, op_names[OP_WRAPPER], have[OP_WRAPPER], med[OP_WRAPPER]);
	pipe_ms_row("pipeline", in->name, op_names[OP_PIPELINE], have[OP_PIPELINE], med[OP_PIPELINE]);
	if (zok && have[OP_WRAPPER]) {
		/* the goal is on decompression through the core against the
		 * bare library; the whole pipeline is reported beside it */
		bench_row("pipeline", in->name, "decomp_image/library", "%.3f",
			  med[OP_WRAPPER] / med[OP_LIB]);
		/* fastest of each: less sensitive to other load on the machine */
		bench_row("pipeline", in->name, "min decomp_image/library", "%.3f",
			  lo[OP_WRAPPER] / lo[OP_LIB]);
		bench_row("pipeline", in->name, "goal <= 1.10", "%s",
			  med[OP_WRAPPER] / med[OP_LIB] <= 1.10 ? "met" : "missed");
		bench_row("pipeline", in->name, "pipeline/library", "%.3f",
			  med[OP_PIPELINE] / med[OP_LIB]);
	} else {
		bench_row("pipeline", in->name, "decomp_image/library", "n/a");
		bench_row("pipeline", in->name, "min decomp_image/library", "n/a");
		bench_row("pipeline", in->name, "goal <= 1.10", "n/a");
		bench_row("pipeline", in->name, "pipeline/library", "n/a");
	}

	for (int j = 0; j < ST_COUNT; j++)
		bench_row("pipeline-steps", in->name, step_names[j], "%.3f",
			  bench_median(st[j], samples) * 1e3);
	bench_row("pipeline-steps", in->name, "PT pages", "%u", in->pt_pages);
	pipe_ms_row("pipeline-steps", in->name, op_names[OP_LIB_CHUNK], have[OP_LIB_CHUNK],
		    med[OP_LIB_CHUNK]);
	if (zok && have[OP_LIB_CHUNK]) {
		bench_row("pipeline-steps", in->name, "chunks/library", "%.3f",
			  med[OP_LIB_CHUNK] / med[OP_LIB]);
		bench_row("pipeline-steps", in->name, "library MB/s", "%.0f",
			  (double)in->elf_size / med[OP_LIB] / 1e6);
	} else {
		bench_row("pipeline-steps", in->name, "chunks/library", "n/a");
		bench_row("pipeline-steps", in->name, "library MB/s", "n/a");
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
