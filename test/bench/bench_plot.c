/*
 * bench_plot.c - slot choices over many draws on a captured memory map,
 * drawn the way efi/place.c draws them (slot_pick() with drbg_below() on a
 * seeded generator), as a histogram per slot written as SVG, plus a
 * chi-square test of uniformity.
 *
 *   usage: bench_plot [-d DRAWS] FIXTURE.mmap PAYLOAD_ELF OUT.svg
 *
 *   +---------------------------------------------------------------+
 *   | title                                                         |
 *   | y: draws  |||||||||||||||||||||||||||||||||||  -- expected     |
 *   |           ||||||||||||||||||||||||||||||||||| .. +-3 sigma    |
 *   |           +----------------------------------+                |
 *   |             slot index (physical address under it)            |
 *   +---------------------------------------------------------------+
 *
 * Output: CSV rows (bench.h), section "uniformity"; the SVG at OUT.svg.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "e820.h"
#include "elf_load.h"
#include "entropy.h"
#include "ldr.h"
#include "mmap_fixture.h"
#include "slot.h"

#define PLOT_DESC_SIZE 48
#define PLOT_W 960
#define PLOT_H 420
#define PLOT_L 70   /* left margin: y labels */
#define PLOT_R 45   /* right margin: room for the last address label */
#define PLOT_T 50   /* top margin: title */
#define PLOT_B 60   /* bottom margin: x labels */

static enum ldr_err plot_draw(void *ctx, uint64_t n, uint64_t *ret_idx)
{
	return drbg_below(ctx, n, ret_idx);
}

/* Index of base in the sorted slot list, or -1. */
static long slot_index(const uint64_t *bases, uint64_t n, uint64_t base)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (bases[mid] == base)
			return (long)mid;
		if (bases[mid] < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void svg_write(FILE *f, const char *title, const uint64_t *hist, const uint64_t *bases,
		      uint64_t n, double expect)
{
	uint64_t maxc = 0;
	double sigma = sqrt(expect * (1.0 - 1.0 / (double)n)), ytop, pw, ph, bw;

	for (uint64_t i = 0; i < n; i++)
		if (hist[i] > maxc)
			maxc = hist[i];
	ytop = (double)maxc * 1.15;
	if (ytop < expect + 4 * sigma)
		ytop = expect + 4 * sigma;
	pw = PLOT_W - PLOT_L - PLOT_R;
	ph = PLOT_H - PLOT_T - PLOT_B;
	bw = pw / (double)n;

#define Y(v) (PLOT_T + ph - (v) / ytop * ph)
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		PLOT_W, PLOT_H, PLOT_W, PLOT_H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">%s</text>\n", PLOT_L, title);
	/* bars: one per slot */
	fprintf(f, "<g fill=\"#4a7ab5\">\n");
	for (uint64_t i = 0; i < n; i++)
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
			PLOT_L + bw * (double)i, Y((double)hist[i]), bw > 1.5 ? bw * 0.9 : bw,
			(double)hist[i] / ytop * ph);
	fprintf(f, "</g>\n");
	/* expected count and the +-3 sigma band */
	fprintf(f, "<line x1=\"%d\" x2=\"%.0f\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
		   "stroke-width=\"1.5\"/>\n", PLOT_L, PLOT_L + pw, Y(expect), Y(expect));
	for (int s = -1; s <= 1; s += 2)
		fprintf(f, "<line x1=\"%d\" x2=\"%.0f\" y1=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
			   "stroke-dasharray=\"4 3\"/>\n", PLOT_L, PLOT_L + pw,
			Y(expect + s * 3 * sigma), Y(expect + s * 3 * sigma));
	/* axes and y ticks */
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.0f\" stroke=\"black\"/>\n",
		PLOT_L, PLOT_L, PLOT_T, PLOT_T + ph);
	fprintf(f, "<line x1=\"%d\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
		PLOT_L, PLOT_L + pw, PLOT_T + ph, PLOT_T + ph);
	for (int t = 0; t <= 4; t++) {
		double v = ytop * t / 4;

		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
			PLOT_L - 6, Y(v) + 4, v);
	}
	/* x ticks: slot index and its physical address */
	for (int t = 0; t <= 4; t++) {
		uint64_t i = (n - 1) * (uint64_t)t / 4;
		double x = PLOT_L + bw * ((double)i + 0.5);

		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">#%llu</text>\n", x,
			PLOT_T + ph + 16, (unsigned long long)i);
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#555\">"
			   "0x%llx</text>\n", x, PLOT_T + ph + 30, (unsigned long long)bases[i]);
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">slot (2 MiB-aligned "
		   "physical base, increasing address)</text>\n", PLOT_L + pw / 2, PLOT_H - 8);
	fprintf(f, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"end\" fill=\"#d62728\">"
		   "expected %.0f per slot, dashed: +-3 sigma</text>\n", PLOT_L + pw, PLOT_T - 8,
		expect);
	fprintf(f, "<text transform=\"translate(16 %.0f) rotate(-90)\" text-anchor=\"middle\">"
		   "draws</text>\n", PLOT_T + ph / 2);
	fprintf(f, "</svg>\n");
#undef Y
}

int main(int argc, char **argv)
{
	struct mmap_buf m;
	struct mem_region *freel;
	struct slot_params sp;
	struct elf_image img;
	struct drbg d;
	uint8_t seed[ENTROPY_SEED_SIZE];
	uint64_t *hist, *bases, n, draws = 1000000, minc = UINT64_MAX, maxc = 0, fsize;
	size_t nfree = 0, cap;
	char err[256], title[256], item[128];
	const char *fixture, *elf, *out, *name;
	uint8_t *buf;
	double chi2 = 0, expect, t0, dt;
	long nd;
	int i = 1;
	FILE *f;

	if (argc > 2 && strcmp(argv[1], "-d") == 0) {
		draws = strtoull(argv[2], NULL, 0);
		i = 3;
	}
	if (argc - i != 3 || draws == 0) {
		fprintf(stderr, "usage: bench_plot [-d DRAWS] FIXTURE.mmap PAYLOAD_ELF OUT.svg\n");
		return 2;
	}
	fixture = argv[i];
	elf = argv[i + 1];
	out = argv[i + 2];
	name = bench_basename(fixture);

	buf = bench_read_file(elf, &fsize);
	if (!buf || elf_parse(buf, fsize, NULL, &img) != LDR_OK) {
		bench_row("uniformity", name, "slots", "error: cannot parse %s", elf);
		return 0;
	}
	free(buf);
	mmap_init(&m, PLOT_DESC_SIZE);
	nd = mmap_load_fixture(fixture, &m, err, sizeof(err));
	cap = nd > 0 ? E820_CAP_FOR((size_t)nd) : 1;
	freel = calloc(cap, sizeof(*freel));
	if (nd <= 0 || !freel ||
	    e820_free_from_efi(m.buf, m.size, m.desc_size, freel, cap, &nfree) != LDR_OK) {
		bench_row("uniformity", name, "slots", "error: cannot use %s", fixture);
		return 0;
	}
	memset(&sp, 0, sizeof(sp));
	sp.image_size = img.load_size;
	sp.align = SLOT_ALIGN;
	sp.min_addr = SLOT_DEFAULT_MIN;
	n = slot_count(freel, nfree, &sp);
	hist = calloc(n ? n : 1, sizeof(*hist));
	bases = calloc(n ? n : 1, sizeof(*bases));
	if (n == 0 || !hist || !bases) {
		bench_row("uniformity", name, "slots", "error: no slots");
		return 0;
	}
	for (uint64_t k = 0; k < n; k++)
		if (slot_at(freel, nfree, &sp, k, &bases[k]) != LDR_OK) {
			bench_row("uniformity", name, "slots", "error: slot_at");
			return 0;
		}

	/* a fixed seed: the plot is reproducible; its uniformity is the point */
	memset(seed, 0, sizeof(seed));
	memcpy(seed, "kaslr-loader bench plot", 23);
	drbg_init(&d, seed);
	t0 = bench_now();
	for (uint64_t k = 0; k < draws; k++) {
		uint64_t base, cnt;
		long idx;

		if (slot_pick(freel, nfree, &sp, plot_draw, &d, &base, &cnt) != LDR_OK ||
		    (idx = slot_index(bases, n, base)) < 0) {
			bench_row("uniformity", name, "slots", "error: slot_pick");
			return 0;
		}
		hist[idx]++;
	}
	dt = bench_now() - t0;
	expect = (double)draws / (double)n;
	for (uint64_t k = 0; k < n; k++) {
		double dv = (double)hist[k] - expect;

		chi2 += dv * dv / expect;
		if (hist[k] < minc)
			minc = hist[k];
		if (hist[k] > maxc)
			maxc = hist[k];
	}

	snprintf(title, sizeof(title), "%llu slot_pick() draws on %s, %llu-byte image: %llu slots",
		 (unsigned long long)draws, name, (unsigned long long)img.load_size,
		 (unsigned long long)n);
	f = fopen(out, "w");
	if (f) {
		svg_write(f, title, hist, bases, n, expect);
		fclose(f);
	}
	snprintf(item, sizeof(item), "%s / payload", name);
	bench_row("uniformity", item, "draws", "%llu", (unsigned long long)draws);
	bench_row("uniformity", item, "slots", "%llu", (unsigned long long)n);
	bench_row("uniformity", item, "expected/slot", "%.1f", expect);
	bench_row("uniformity", item, "min", "%llu", (unsigned long long)minc);
	bench_row("uniformity", item, "max", "%llu", (unsigned long long)maxc);
	bench_row("uniformity", item, "chi2", "%.1f", chi2);
	bench_row("uniformity", item, "df", "%llu", (unsigned long long)(n - 1));
	/* chi2 with df degrees of freedom is about normal(df, 2 df) for large df */
	bench_row("uniformity", item, "z", "%.2f", (chi2 - (double)(n - 1)) / sqrt(2.0 * (double)(n - 1)));
	bench_row("uniformity", item, "us/draw", "%.3f", dt / (double)draws * 1e6);
	bench_row("uniformity", item, "plot", "%s", f ? bench_basename(out) : "error: cannot write");
	free(hist);
	free(bases);
	free(freel);
	mmap_free_buf(&m);
	return 0;
}
