/*
 * mkseeds.c - writes seed inputs for the fuzz targets that the payload
 * builds and the malformed-kernel corpus do not cover: memory maps for
 * fuzz_e820 (in its input format), option texts for fuzz_options,
 * small gzip/zlib/xz/LZ4-legacy/zstd streams (every gzip header flag,
 * stored blocks, small bombs) for fuzz_inflate, kernel recipes for
 * fuzz_fgkaslr, and TPM event logs for fuzz_tcglog and fuzz_pcrlog.
 *
 * usage: mkseeds OUTDIR [FIXTURE.mmap...]
 *        (writes OUTDIR/e820, OUTDIR/options, OUTDIR/inflate,
 *        OUTDIR/fgkaslr, OUTDIR/tcglog, OUTDIR/pcrlog; captured memory maps from
 *        test/fixtures become e820 seeds too)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "decomp_fixture.h"

static const char *out_dir;

static void write_seed(const char *sub, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", out_dir, sub);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(2);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
	f = fopen(path, "wb");
	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* ---------------------------------------------------------------- e820 */

struct md {
	uint32_t type;
	uint64_t phys, pages, attr;
};

#define WB 0xfULL
#define RT (1ULL << 63)
#define MIRROR 0x10000ULL
#define SP 0x40000ULL

/* roughly what OVMF hands a q35 guest with 6 GiB, plus odd entries */
static const struct md ovmf_map[] = {
	{ 7, 0x0, 0x9f, WB },
	{ 0, 0x9f000, 0x61, WB },
	{ 7, 0x100000, 0x700, WB },
	{ 10, 0x800000, 0x8, WB },
	{ 7, 0x808000, 0x8, WB },
	{ 10, 0x810000, 0xf0, WB },
	{ 7, 0x900000, 0x76f00, WB },
	{ 4, 0x77800000, 0x4000, WB },
	{ 3, 0x7b800000, 0x200, WB },
	{ 1, 0x7ba00000, 0x100, WB },
	{ 2, 0x7bb00000, 0x100, WB },
	{ 9, 0x7bc00000, 0x10, WB },
	{ 5, 0x7bd00000, 0x20, WB | RT },
	{ 6, 0x7bd20000, 0x20, WB | RT },
	{ 0, 0x7c000000, 0x4000, WB },
	{ 11, 0xb0000000, 0x10000, RT | 1 },
	{ 11, 0xffc00000, 0x400, RT | 1 },
	{ 7, 0x100000000, 0x100000, WB },
	{ 0x80000001u, 0x200000000, 0x800, WB },
	{ 0x80000002u, 0x200800000, 0x100, WB },
};

static const struct md odd_map[] = {
	{ 7, 0x1000, 0x100, WB },
	{ 4, 0x10000, 0x10, WB },            /* inside the conventional range */
	{ 14, 0x140000000, 0x1000, WB },
	{ 8, 0x150000000, 0x10, WB },
	{ 15, 0x160000000, 0x100, WB },
	{ 7, 0x170000000, 0x100, WB | SP },
	{ 7, 0x180000000, 0x100, WB | MIRROR },
	{ 7, 0x180080000, 0x100, WB },
	{ 0, 0xfffffffffffff000ULL, 1, 0 },  /* the top page */
	{ 7, 0x200000000, 0, WB },           /* no pages */
	{ 7, 0xffffffff00000000ULL, 0x100001, 0 }, /* wraps */
	{ 99, 0x300000000, 0x10, 0 },        /* unknown type */
	{ 7, 0x123, 0x2, WB },               /* not page aligned */
};

/* [desc_size selector][capacity selector] descriptors... (see fuzz_e820.c) */
static void e820_seed(const char *name, uint8_t sel, uint8_t capsel, size_t ds,
		      const struct md *m, size_t n)
{
	size_t len = 2 + n * ds;
	uint8_t *b = calloc(1, len);

	b[0] = sel;
	b[1] = capsel;
	for (size_t i = 0; i < n; i++) {
		uint8_t *d = b + 2 + i * ds;
		uint64_t virt = 0;

		memcpy(d, &m[i].type, 4);
		memcpy(d + 8, &m[i].phys, 8);
		memcpy(d + 16, &virt, 8);
		memcpy(d + 24, &m[i].pages, 8);
		memcpy(d + 32, &m[i].attr, 8);
	}
	write_seed("e820", name, b, len);
	free(b);
}

static void e820_seeds(void)
{
	size_t no = sizeof(ovmf_map) / sizeof(ovmf_map[0]);
	size_t nd = sizeof(odd_map) / sizeof(odd_map[0]);

	e820_seed("ovmf-48", 0, 0, 48, ovmf_map, no);
	e820_seed("ovmf-40", 4, 0, 40, ovmf_map, no);
	e820_seed("ovmf-56", 6, 0, 56, ovmf_map, no);
	e820_seed("ovmf-48-cap-n", 0, 2, 48, ovmf_map, no);
	e820_seed("odd-48", 0, 0, 48, odd_map, nd);
	e820_seed("odd-48-cap-5", 0, 3 | 5 << 2, 48, odd_map, nd);
	e820_seed("two-48", 0, 0, 48, odd_map, 2);
	e820_seed("one-64", 8, 0, 64, ovmf_map, 1);
	e820_seed("bad-size-41", 10, 0, 41, ovmf_map, 3);
	e820_seed("empty", 0, 0, 48, ovmf_map, 0);
}

/*
 * A captured map from test/fixtures/NAME.mmap (text: "type attribute
 * physical_start number_of_pages" in hex per line, '#' comments), written
 * as a desc_size 48 seed.
 */
static void e820_fixture_seed(const char *path)
{
	struct md m[512];
	size_t n = 0;
	char line[256], name[128];
	const char *base = strrchr(path, '/');
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(2);
	}
	while (n < 512 && fgets(line, sizeof(line), f)) {
		unsigned long long t, a, p, c;

		if (line[0] == '#' || sscanf(line, "%llx %llx %llx %llx", &t, &a, &p, &c) != 4)
			continue;
		m[n++] = (struct md){ (uint32_t)t, p, c, a };
	}
	fclose(f);
	snprintf(name, sizeof(name), "fixture-%s", base ? base + 1 : path);
	e820_seed(name, 0, 0, 48, m, n);
}

/* ---------------------------------------------------------------- options */

static void ucs2_seed(const char *name, const char *s, int terminator)
{
	size_t n = strlen(s) + (terminator ? 1 : 0);
	uint8_t *b = malloc(2 * n + 1);

	for (size_t i = 0; i < n; i++) {
		b[2 * i] = (uint8_t)s[i];
		b[2 * i + 1] = 0;
	}
	write_seed("options", name, b, 2 * n);
	free(b);
}

static void options_seeds(void)
{
	static const char line[] =
		"\\EFI\\BOOT\\BOOTX64.EFI kernel=\\kernel.elf verbose nokaslr=0 "
		"kaslr.min=16M kaslr.max=0x100000000 kaslr.maxsize=64m -- console=ttyS0 quiet";
	static const char keys[] =
		"kaslr.seed=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f "
		"sha256=F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFFe0e1e2e3e4e5e6e7e8e9eaebecedeeef";
	static const char conf[] =
		"# kaslr.conf\r\n"
		"kernel \\EFI\\kaslr\\kernel.elf   # the kernel\r\n"
		"\n"
		"verbose\n"
		"kaslr.min\t0x2000000\n"
		"kaslr.maxsize 1G\n"
		"cmdline console=ttyS0 # kept\n";
	/* a list of kernels, each with its initrds */
	static const char list[] =
		"initrd early.img\n"
		"kernel vmlinuz-20\n"
		"initrd initrd.img-20:sha256=F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFFe0e1e2e3e4e5e6e7e8e9eaebecedeeef\n"
		"kernel vmlinuz-10\n"
		"initrd initrd.img-10\n"
		"module m.bin a string\n";

	write_seed("options", "line", line, sizeof(line) - 1);
	write_seed("options", "list", list, sizeof(list) - 1);
	write_seed("options", "keys", keys, sizeof(keys) - 1);
	write_seed("options", "config", conf, sizeof(conf) - 1);
	write_seed("options", "size-hex", "0x1fffK", 7);
	write_seed("options", "size-dec", "18446744073709551615", 20);
	ucs2_seed("ucs2-line", line, 1);
	ucs2_seed("ucs2-keys", keys, 0);
	ucs2_seed("ucs2-shell", "fs0:\\x.efi\tverbose\r\n-- a", 1);
}

/* ---------------------------------------------------------------- inflate */

static size_t deflate_to(uint8_t *out, size_t cap, const void *in, size_t n, int level,
			 int window_bits)
{
	z_stream zs;
	size_t len;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		exit(2);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		exit(2);
	len = zs.total_out;
	deflateEnd(&zs);
	return len;
}

/* the same input as xz (x86 BCJ + LZMA2, CRC32), LZ4 legacy and zstd */
static void other_seeds(const void *in, size_t n, const char *base)
{
	struct buf b[3] = { fx_xz(in, n, 0, 0), fx_lz4(in, n), fx_zstd(in, n, 3, 1) };
	static const char *const ext[3] = { "xz", "lz4", "zst" };

	for (int i = 0; i < 3; i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s.%s", base, ext[i]);
		write_seed("inflate", name, b[i].p, b[i].len);
		free(b[i].p);
	}
}

static void inflate_seeds(void)
{
	static const char text[] =
		"kaslr-loader fuzz seed: a short text that compresses a little, "
		"a short text that compresses a little, 0123456789abcdef";
	size_t big = 5u << 20, cap = big + 65536, n;
	uint8_t *zeros = calloc(1, big), *out = malloc(cap);
	gz_header h;
	z_stream zs;

	n = deflate_to(out, cap, text, sizeof(text) - 1, 9, 31);
	write_seed("inflate", "text.gz", out, n);
	memcpy(out + n, out, n);
	write_seed("inflate", "two-members.gz", out, 2 * n);
	n = deflate_to(out, cap, text, sizeof(text) - 1, 0, 31);
	write_seed("inflate", "stored.gz", out, n);
	n = deflate_to(out, cap, text, sizeof(text) - 1, 1, 15);
	write_seed("inflate", "text.zlib", out, n);
	n = deflate_to(out, cap, text, 0, 9, 31);
	write_seed("inflate", "empty.gz", out, n);
	n = deflate_to(out, cap, text, 0, 9, 15);
	write_seed("inflate", "empty.zlib", out, n);
	/* just over the fuzz target's 256 KiB limit, and well over it */
	n = deflate_to(out, cap, zeros, (256u << 10) + 1, 9, 31);
	write_seed("inflate", "bomb-256k.gz", out, n);
	n = deflate_to(out, cap, zeros, big, 9, 15);
	write_seed("inflate", "bomb-5m.zlib", out, n);

	/* every optional gzip header field: FEXTRA, FNAME, FCOMMENT, FHCRC */
	memset(&zs, 0, sizeof(zs));
	memset(&h, 0, sizeof(h));
	h.extra = (Bytef *)"XY\2\0ab";
	h.extra_len = 6;
	h.name = (Bytef *)"kernel.elf";
	h.comment = (Bytef *)"seed";
	h.hcrc = 1;
	if (deflateInit2(&zs, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK ||
	    deflateSetHeader(&zs, &h) != Z_OK)
		exit(2);
	zs.next_in = (Bytef *)text;
	zs.avail_in = sizeof(text) - 1;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		exit(2);
	write_seed("inflate", "all-flags.gz", out, zs.total_out);
	deflateEnd(&zs);
	other_seeds(text, sizeof(text) - 1, "text");
	other_seeds(zeros, (256u << 10) + 1, "bomb-256k");
	free(zeros);
	free(out);
}

/* ------------------------------------------------------------ fgkaslr */

/*
 * fuzz_fgkaslr reads any input that is not an ELF file as a recipe (see
 * its header): n, function sizes and alignments, tables, reserve, entry,
 * table ids, relocations, damage.  Seeds: recipes of a few sizes with a
 * large reserve (so that most layouts fit), plenty of relocations, and
 * with and without damage; the bytes in between come from a fixed
 * xorshift stream.
 */
static void fgkaslr_seeds(void)
{
	static const struct { const char *name; uint8_t n, tables, nrel, edits; } r[] = {
		{ "small", 3, 0x22, 16, 0 },
		{ "mid", 20, 0x99, 120, 0 },
		{ "big", 39, 0xff, 255, 0 },
		{ "damaged", 12, 0x55, 60, 3 },
		{ "no-tables", 8, 0x00, 40, 0 },
	};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint8_t b[4096];

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		size_t n = 0;

		b[n++] = (uint8_t)(r[i].n - 2);
		for (unsigned k = 0; k < r[i].n; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[n++] = (uint8_t)x;
			b[n++] = (uint8_t)((x >> 8) % 10);   /* alignment 1..16 mostly */
		}
		b[n++] = r[i].tables;
		b[n++] = 0x00;                       /* reserve: 0x4000 */
		b[n++] = 0x40;
		b[n++] = (uint8_t)(i % 3);           /* entry */
		for (unsigned k = 0; k < r[i].n; k++)
			b[n++] = (uint8_t)k;         /* table ids: distinct */
		b[n++] = r[i].nrel;
		for (unsigned k = 0; k < r[i].nrel && n + 16 < sizeof(b); k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[n++] = (uint8_t)(5 + x % r[i].n);      /* a function's area */
			b[n++] = (uint8_t)((x >> 8) % 5);        /* an applied type */
			b[n++] = (uint8_t)(x >> 16);
			b[n++] = (uint8_t)(x >> 24);
			b[n++] = 0xfc, b[n++] = 0xff;            /* addend -4 */
			b[n++] = (uint8_t)(x >> 32);
			b[n++] = 0;
		}
		b[n++] = r[i].edits;
		for (unsigned k = 0; k < 3 * 16; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[n++] = (uint8_t)x;
		}
		write_seed("fgkaslr", r[i].name, b, n);
	}
}

/* ---------------------------------------------------------------- tcglog */

static uint8_t tl_buf[1024];
static size_t tl_len;

static void tl_put(uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		tl_buf[tl_len++] = (uint8_t)(v >> (8 * i));
}

/* a TCG2 log: the Spec ID record (SHA-1, SHA-256), then a tagged record in
 * PCR 9 with both digests and an EV_IPL record in PCR 12 with SHA-256 */
static void tcglog_seeds(void)
{
	tl_len = 0;
	tl_put(0, 4);
	tl_put(3, 4);
	tl_len += 20;
	tl_put(16 + 12 + 4 + 8 + 1, 4);
	memcpy(tl_buf + tl_len, "Spec ID Event03", 16);
	tl_len += 16;
	tl_put(0, 4);
	tl_put(0x00000200, 4);
	tl_put(2, 4);
	tl_put(0x0004, 2);
	tl_put(20, 2);
	tl_put(0x000b, 2);
	tl_put(32, 2);
	tl_put(0, 1);
	write_seed("tcglog", "spec", tl_buf, tl_len);
	tl_put(9, 4);
	tl_put(6, 4);
	tl_put(2, 4);
	tl_put(0x0004, 2);
	memset(tl_buf + tl_len, 0x11, 20);
	tl_len += 20;
	tl_put(0x000b, 2);
	memset(tl_buf + tl_len, 0x22, 32);
	tl_len += 32;
	tl_put(14, 4);
	tl_put(0x4b4c4b52, 4);
	tl_put(6, 4);
	memcpy(tl_buf + tl_len, "\\\0E\0F\0", 6);
	tl_len += 6;
	tl_put(12, 4);
	tl_put(0xd, 4);
	tl_put(1, 4);
	tl_put(0x000b, 2);
	memset(tl_buf + tl_len, 0x33, 32);
	tl_len += 32;
	tl_put(4, 4);
	memcpy(tl_buf + tl_len, "q\0x\0", 4);
	tl_len += 4;
	write_seed("tcglog", "records", tl_buf, tl_len);
}

/* one SHA-256-only record: pcr, type, a digest of fill bytes, data */
static void tl_record(uint32_t pcr, uint32_t type, uint8_t fill, const void *d, uint32_t n)
{
	tl_put(pcr, 4);
	tl_put(type, 4);
	tl_put(1, 4);
	tl_put(0x000b, 2);
	memset(tl_buf + tl_len, fill, 32);
	tl_len += 32;
	tl_put(n, 4);
	memcpy(tl_buf + tl_len, d, n);
	tl_len += n;
}

/* a boot through the loader as kaslr-pcr reads it (fuzz_pcrlog): the
 * firmware's separator and action, the loader's image record with a
 * device path (an ACPI node, a file path, the end), its policy and
 * settings records, the command line, the kernel, ExitBootServices */
static void pcrlog_seeds(void)
{
	static const char file[] = "\\EFI\\BOOT\\BOOTX64.EFI";
	uint8_t img[160] = { 0 }, tag[16] = { 0 };
	uint32_t n = 32, fl = (uint32_t)(4 + 2 * (sizeof(file)));

	tl_len = 0;
	tl_put(0, 4);
	tl_put(3, 4);
	tl_len += 20;
	tl_put(16 + 12 + 4 + 1, 4);
	memcpy(tl_buf + tl_len, "Spec ID Event03", 16);
	tl_len += 16;
	tl_put(0, 4);
	tl_put(0x00000200, 4);
	tl_put(1, 4);
	tl_put(0x000b, 2);
	tl_put(32, 2);
	tl_put(0, 1);
	tl_record(4, 4, 0x01, "\0\0\0\0", 4);
	tl_record(4, 0x80000007, 0x02, "Calling EFI Application from Boot Option", 40);
	memcpy(img + n, (uint8_t[]){ 2, 1, 12, 0, 0xd0, 0x41, 3, 0x0a, 0, 0, 0, 0 }, 12);
	n += 12;
	img[n] = 4;
	img[n + 1] = 4;
	img[n + 2] = (uint8_t)fl;
	for (size_t i = 0; i < sizeof(file); i++)
		img[n + 4 + 2 * i] = (uint8_t)file[i];
	n += fl;
	memcpy(img + n, (uint8_t[]){ 0x7f, 0xff, 4, 0 }, 4);
	n += 4;
	img[24] = (uint8_t)(n - 32);
	tl_record(4, 0x80000003, 0x03, img, n);
	memcpy(tag, (uint8_t[]){ 0x43, 0x50, 0x4c, 0x4b, 2, 0, 0, 0, 'p', 0 }, 10);
	tl_record(5, 6, 0x04, tag, 10);
	memcpy(tag, (uint8_t[]){ 0x54, 0x53, 0x4c, 0x4b, 2, 0, 0, 0, 's', 0 }, 10);
	tl_record(5, 6, 0x05, tag, 10);
	tl_record(12, 0xd, 0x06, "q\0u\0", 4);
	memcpy(tag, (uint8_t[]){ 0x52, 0x4b, 0x4c, 0x4b, 2, 0, 0, 0, 'k', 0 }, 10);
	tl_record(9, 6, 0x07, tag, 10);
	tl_record(5, 0x80000007, 0x08, "Exit Boot Services Invocation", 29);
	write_seed("pcrlog", "boot", tl_buf, tl_len);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s OUTDIR [FIXTURE.mmap...]\n", argv[0]);
		return 2;
	}
	out_dir = argv[1];
	if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
		perror(out_dir);
		return 2;
	}
	e820_seeds();
	for (int i = 2; i < argc; i++)
		e820_fixture_seed(argv[i]);
	options_seeds();
	inflate_seeds();
	fgkaslr_seeds();
	tcglog_seeds();
	pcrlog_seeds();
	return 0;
}
