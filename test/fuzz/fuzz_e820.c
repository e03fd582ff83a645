/*
 * fuzz_e820.c - libFuzzer target: the UEFI memory map -> e820 conversions
 * (e820_from_efi, e820_protocol_from_efi, e820_free_from_efi) and the
 * runtime mappings (rtmap_ranges, with the map's second half taken as a
 * Memory Attributes Table) over untrusted bytes; abort() when an output
 * breaks what e820.h or rtmap.h promises.
 *
 * Input: [0] selects desc_size (mostly 40/48/56, sometimes odd or too
 * small), [1] selects the output capacity, the rest is the map.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "e820.h"
#include "rtmap.h"

static const uint64_t desc_sizes[16] = {
	48, 48, 48, 48, 40, 40, 56, 56, 64, 80, 41, 44, 47, 52, 0, 8,
};

typedef enum ldr_err (*e820_fn)(const void *, uint64_t, uint64_t, struct mem_region *,
				size_t, size_t *);

static int known_type(uint32_t t, int protocol)
{
	switch (t) {
	case E820_RAM: case E820_RESERVED: case E820_ACPI: case E820_NVS:
	case E820_UNUSABLE: case E820_PMEM: case E820_SOFT_RESERVED:
		return 1;
	case E820_LOADER_RECLAIMABLE: case E820_KERNEL: case E820_MODULE:
		return protocol;
	default:
		return 0;
	}
}

/* sorted, non-overlapping, merged, no zero sizes, below E820_ADDR_END;
 * the protocol's table in whole pages */
static void check_table(const struct mem_region *r, size_t n, int free_list, int protocol)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].size == 0 || r[i].flags != 0)
			abort();
		if (r[i].addr > E820_ADDR_END || E820_ADDR_END - r[i].addr < r[i].size)
			abort();
		if (free_list ? r[i].type != E820_RAM : !known_type(r[i].type, protocol))
			abort();
		/* the protocol's table is whole pages */
		if (protocol && ((r[i].addr | r[i].size) & (EFI_MD_PAGE_SIZE - 1)))
			abort();
		if (i == 0)
			continue;
		if (r[i - 1].addr + r[i - 1].size > r[i].addr)
			abort();
		if (r[i - 1].addr + r[i - 1].size == r[i].addr && r[i - 1].type == r[i].type)
			abort();
	}
}

/* every free byte is RAM in the e820 table (two sorted lists) */
static void check_subset(const struct mem_region *f, size_t nf, const struct mem_region *t,
			 size_t nt)
{
	size_t j = 0;

	for (size_t i = 0; i < nf; i++) {
		uint64_t a = f[i].addr, end = f[i].addr + f[i].size;

		while (a < end) {
			while (j < nt && t[j].addr + t[j].size <= a)
				j++;
			if (j == nt || t[j].addr > a || t[j].type != E820_RAM)
				abort();
			a = t[j].addr + t[j].size < end ? t[j].addr + t[j].size : end;
		}
	}
}

/* Run fn; on success check the table; returns the count or -1 on error. */
static long run(e820_fn fn, const uint8_t *map, uint64_t map_size, uint64_t ds, size_t cap,
		struct mem_region *out, int free_list, int protocol)
{
	int bad_ds = ds < EFI_MD_MIN_SIZE || ds % 8 || map_size % ds;
	size_t need = bad_ds ? 0 : E820_CAP_FOR(map_size / ds), n = (size_t)-1;
	enum ldr_err err = fn(map, map_size, ds, out, cap, &n);

	if (bad_ds) {
		if (err != LDR_E_MMAP_DESC_SIZE || n != (size_t)-1)
			abort();
		return -1;
	}
	if (err == LDR_OK) {
		if (n > cap)
			abort();
		check_table(out, n, free_list, protocol);
		return (long)n;
	}
	/* the only other error allowed: a capacity below E820_CAP_FOR() */
	if (err != LDR_E_MMAP_TOO_BIG || cap >= need || n != (size_t)-1)
		abort();
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t ds, map_size, nd;
	const uint8_t *map;
	uint8_t *copy, *rev;
	struct mem_region *t, *f, *p, *t2;
	size_t cap;
	long nt, nf, nt2;

	if (size < 2)
		return 0;
	ds = desc_sizes[data[0] & 15];
	map = data + 2;
	map_size = size - 2;
	nd = ds ? map_size / ds : 0;
	switch (data[1] & 3) {
	case 0: case 1: cap = E820_CAP_FOR(nd); break;
	case 2: cap = (size_t)nd; break;
	default: cap = (size_t)(data[1] >> 2); break;
	}
	/* exact-size heap copies: ASan sees reads past map_size, writes past cap */
	copy = malloc(map_size ? map_size : 1);
	memcpy(copy, map, map_size);
	t = malloc((cap ? cap : 1) * sizeof(*t));
	f = malloc((cap ? cap : 1) * sizeof(*f));
	p = malloc((cap ? cap : 1) * sizeof(*p));
	t2 = malloc((cap ? cap : 1) * sizeof(*t2));

	nt = run(e820_from_efi, copy, map_size, ds, cap, t, 0, 0);
	nf = run(e820_free_from_efi, copy, map_size, ds, cap, f, 1, 0);
	run(e820_protocol_from_efi, copy, map_size, ds, cap, p, 0, 1);
	if (nt >= 0 && nf >= 0)
		check_subset(f, (size_t)nf, t, (size_t)nt);

	/* runtime mappings: page-aligned, non-wrapping, only W and X */
	{
		uint64_t half = map_size / 2;
		size_t rn = 0;
		int used = 0;
		struct rtmap_range *rr = malloc((cap ? cap : 1) * sizeof(*rr));

		if (rtmap_ranges(copy, half, ds, copy + half, map_size - half, rr, cap, &rn,
				 &used) == LDR_OK) {
			for (size_t i = 0; i < rn; i++)
				if ((rr[i].addr | rr[i].size) & 4095 || rr[i].size == 0 ||
				    rr[i].addr + rr[i].size < rr[i].addr ||
				    (rr[i].flags & ~(uint32_t)(RTMAP_W | RTMAP_X)))
					abort();
		}
		free(rr);
	}

	/* the same descriptors in reverse order give the same table */
	if (nt >= 0 && nd > 1) {
		rev = malloc(map_size);
		for (uint64_t i = 0; i < nd; i++)
			memcpy(rev + i * ds, copy + (nd - 1 - i) * ds, ds);
		nt2 = run(e820_from_efi, rev, map_size, ds, cap, t2, 0, 0);
		if (nt2 != nt || memcmp(t, t2, (size_t)nt * sizeof(*t)) != 0)
			abort();
		nt2 = run(e820_free_from_efi, rev, map_size, ds, cap, t2, 1, 0);
		if (nf >= 0 && (nt2 != nf || memcmp(f, t2, (size_t)nf * sizeof(*f)) != 0))
			abort();
		free(rev);
	}
	free(copy);
	free(t);
	free(f);
	free(p);
	free(t2);
	return 0;
}
