/*
 * test_uniform.c - slot selection end to end on the captured OVMF maps
 * (test/fixtures/ovmf-q35-*.mmap): free list -> slot count -> drbg_below ->
 * slot_at, as efi/place.c does.  Every pick is valid, and the picks are
 * uniform over the slots by a chi-square test over 10^6 draws (p > 0.01).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "mmap_fixture.h"
#include "entropy.h"
#include "slot.h"
#include "kaslr_boot.h"

#define DRAWS 1000000

/* chi-square critical value at p = 0.01 (Wilson-Hilferty; z(0.99) = 2.326) */
static double chi2_crit_001(double df)
{
	double t = 2.0 / (9.0 * df);

	return df * pow(1.0 - t + 2.326348 * sqrt(t), 3);
}

static int in_free(const struct mem_region *r, size_t n, uint64_t base, uint64_t size)
{
	for (size_t i = 0; i < n; i++)
		if (base >= r[i].addr && base - r[i].addr <= r[i].size &&
		    r[i].size - (base - r[i].addr) >= size)
			return 1;
	return 0;
}

static void check_map(const char *path, uint64_t image_size)
{
	struct mmap_buf m;
	struct mem_region *fr;
	size_t nfr = 0, cap;
	struct slot_params sp;
	struct mem_region avoid = { 0x20000000, 0x1000, 2, 0 }; /* 512 MiB: a stand-in loader page */
	char err[256];
	uint64_t n, *hits, bad = 0;
	struct drbg d;
	uint8_t seed[32];
	double chi = 0, crit;

	mmap_init(&m, 48); /* OVMF's descriptor size */
	CHECK(mmap_load_fixture(path, &m, err, sizeof(err)) > 0, "%s", err);
	cap = E820_CAP_FOR(mmap_count(&m)) + 1;
	fr = calloc(cap, sizeof(*fr));
	CHECK(e820_free_from_efi(m.buf, m.size, m.desc_size, fr, cap, &nfr) == LDR_OK,
	      "%s: free list", path);
	memset(&sp, 0, sizeof(sp));
	sp.image_size = image_size;
	sp.align = SLOT_ALIGN;
	sp.min_addr = SLOT_DEFAULT_MIN;
	sp.avoid = &avoid;
	sp.navoid = 1;
	n = slot_count(fr, nfr, &sp);
	CHECK(n > 1, "%s: %llu slots", path, (unsigned long long)n);
	if (n < 2)
		goto out;
	hits = calloc(n, sizeof(*hits));
	memset(seed, 0x5a, sizeof(seed));
	seed[0] = (uint8_t)n;
	drbg_init(&d, seed);
	for (unsigned i = 0; i < DRAWS; i++) {
		uint64_t idx, base;

		if (drbg_below(&d, n, &idx) != LDR_OK || idx >= n) {
			bad++;
			continue;
		}
		hits[idx]++;
		/* the slot itself is checked on a sample: slot_at is O(regions) */
		if (i % 97 == 0) {
			if (slot_at(fr, nfr, &sp, idx, &base) != LDR_OK || base % SLOT_ALIGN ||
			    base < SLOT_DEFAULT_MIN || !in_free(fr, nfr, base, image_size) ||
			    (base < avoid.addr + avoid.size && avoid.addr < base + image_size))
				bad++;
		}
	}
	CHECK(bad == 0, "%s: %llu invalid draws or slots", path, (unsigned long long)bad);
	for (uint64_t i = 0; i < n; i++) {
		double e = (double)DRAWS / (double)n, o = (double)hits[i];

		chi += (o - e) * (o - e) / e;
	}
	crit = chi2_crit_001((double)(n - 1));
	CHECK(chi < crit, "%s: chi-square %.1f >= %.1f (df %llu)", path, chi, crit,
	      (unsigned long long)(n - 1));
	printf("uniform: %s image %llu MiB: %llu slots, chi-square %.1f < %.1f\n", path,
	       (unsigned long long)(image_size / MIB), (unsigned long long)n, chi, crit);
	free(hits);
out:
	free(fr);
	mmap_free_buf(&m);
}

/* virtual positions in the higher-half window for a few image sizes */
TEST(test_virtual_window)
{
	struct mem_region win = { KB_VIRT_WINDOW_START,
				  KB_VIRT_WINDOW_END - KB_VIRT_WINDOW_START, 1, 0 };
	static const struct { uint64_t size, want; } t[] = {
		{ 45 * KIB, 1023 }, { 2 * MIB, 1023 }, { 2 * MIB + 1, 1022 },
		{ 58 * MIB, 995 }, { 2046 * MIB, 1 }, { 2048 * MIB, 0 },
	};
	struct slot_params sp;

	memset(&sp, 0, sizeof(sp));
	sp.align = SLOT_ALIGN;
	sp.min_addr = KB_VIRT_WINDOW_START;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		sp.image_size = t[i].size;
		CHECK_EQ_U64(slot_count(&win, 1, &sp), t[i].want, "virtual slots for %llu bytes",
			     (unsigned long long)t[i].size);
	}
	printf("uniform: virtual slots: payload-size 1023, 58 MiB %llu\n",
	       (unsigned long long)(sp.image_size = 58 * MIB, slot_count(&win, 1, &sp)));
}

/* every captured OVMF map, for a 2 MiB and a 16 MiB kernel */
TEST(test_captured_maps)
{
	char *names[MMAP_FIXTURE_MAX_FILES];
	int nf = mmap_list_fixtures(names), i, ovmf = 0;

	for (i = 0; i < nf; i++) {
		if (!strstr(names[i], "ovmf-"))
			continue;
		ovmf++;
		check_map(names[i], 2 * MIB);
		check_map(names[i], 16 * MIB);
	}
	/* the captured maps are part of the tree: their absence is a failure */
	CHECK(ovmf >= 4, "only %d captured OVMF maps under test/fixtures", ovmf);
	for (i = 0; i < nf; i++)
		free(names[i]);
}
