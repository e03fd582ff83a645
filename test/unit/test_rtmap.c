/*
 * test_rtmap.c - host tests for src/rtmap.c: which memory-map ranges are
 * mapped for runtime services and how, how a Memory Attributes Table
 * refines them, and that a malformed table is ignored as a whole.
 */
#include <string.h>

#include "e820.h"
#include "rtmap.h"
#include "test.h"

#define DSZ 48 /* OVMF's descriptor size: 40 plus padding */

struct desc {
	uint32_t type;
	uint64_t addr, pages, attr;
};

static size_t put(uint8_t *buf, size_t dsize, const struct desc *d, size_t n)
{
	memset(buf, 0, dsize * n);
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = buf + i * dsize;

		memcpy(p + EFI_MD_OFF_TYPE, &d[i].type, 4);
		memcpy(p + EFI_MD_OFF_PHYS, &d[i].addr, 8);
		memcpy(p + EFI_MD_OFF_PAGES, &d[i].pages, 8);
		memcpy(p + EFI_MD_OFF_ATTR, &d[i].attr, 8);
	}
	return dsize * n;
}

static size_t put_mat(uint8_t *buf, uint32_t version, uint32_t dsize, const struct desc *d,
		      size_t n)
{
	uint32_t count = (uint32_t)n, flags = 0;

	memcpy(buf, &version, 4);
	memcpy(buf + 4, &count, 4);
	memcpy(buf + 8, &dsize, 4);
	memcpy(buf + 12, &flags, 4);
	return RTMAP_MAT_HEADER + put(buf + RTMAP_MAT_HEADER, dsize, d, n);
}

static const struct desc mmap[] = {
	{ EFI_MT_CONVENTIONAL, 0x100000, 100, 0xf },
	{ EFI_MT_RUNTIME_CODE, 0x7f000000, 16, EFI_MA_RUNTIME | 0xf },
	{ EFI_MT_RUNTIME_DATA, 0x7f010000, 8, EFI_MA_RUNTIME | 0xf },
	{ EFI_MT_MMIO, 0xffc00000, 1024, EFI_MA_RUNTIME | 1 },
	{ EFI_MT_MMIO, 0xfec00000, 1, 1 },               /* not runtime: skipped */
	{ EFI_MT_BOOT_SERVICES_CODE, 0x7e000000, 4, 0xf },
	{ EFI_MT_RUNTIME_DATA, 0x7f020000, 0, EFI_MA_RUNTIME }, /* empty: skipped */
	{ EFI_MT_RUNTIME_CODE, 0xfffffffffffff000ULL, 2, EFI_MA_RUNTIME }, /* wraps */
};

/* the runtime code image split by the MAT into text (RO) and data (XP) */
static const struct desc mat_entries[] = {
	{ EFI_MT_RUNTIME_CODE, 0x7f000000, 1, EFI_MA_RUNTIME | EFI_MA_XP },
	{ EFI_MT_RUNTIME_CODE, 0x7f001000, 10, EFI_MA_RUNTIME | EFI_MA_RO },
	{ EFI_MT_RUNTIME_DATA, 0x7f00b000, 5, EFI_MA_RUNTIME | EFI_MA_XP },
};

TEST(test_map_only)
{
	uint8_t buf[16 * 64];
	struct rtmap_range r[16];
	size_t len = put(buf, DSZ, mmap, sizeof(mmap) / sizeof(mmap[0])), n = 99;
	int used = 9;

	CHECK_EQ_U64(rtmap_ranges(buf, len, DSZ, NULL, 0, r, 16, &n, &used), LDR_OK, "no MAT");
	CHECK_EQ_U64(n, 3, "three runtime ranges");
	CHECK(!used, "no MAT used");
	CHECK(r[0].addr == 0x7f000000 && r[0].size == 16 * 4096 &&
	      r[0].flags == (RTMAP_W | RTMAP_X), "runtime code RWX without a MAT");
	CHECK(r[1].addr == 0x7f010000 && r[1].flags == RTMAP_W, "runtime data RW NX");
	CHECK(r[2].addr == 0xffc00000 && r[2].size == 4 * MIB && r[2].flags == RTMAP_W,
	      "runtime MMIO RW NX");
}

TEST(test_with_mat)
{
	uint8_t buf[16 * 64], mat[16 + 8 * 64];
	struct rtmap_range r[16];
	size_t len = put(buf, DSZ, mmap, sizeof(mmap) / sizeof(mmap[0])), n = 0;
	size_t mlen = put_mat(mat, 1, DSZ, mat_entries, 3);
	int used = 0;

	CHECK_EQ_U64(rtmap_ranges(buf, len, DSZ, mat, mlen, r, 16, &n, &used), LDR_OK, "MAT");
	CHECK(used && n == 6, "map ranges then MAT entries: %zu", n);
	CHECK(r[3].addr == 0x7f000000 && r[3].flags == RTMAP_W, "header page: RW NX");
	CHECK(r[4].addr == 0x7f001000 && r[4].size == 10 * 4096 && r[4].flags == RTMAP_X,
	      "text: read-execute");
	CHECK(r[5].addr == 0x7f00b000 && r[5].flags == RTMAP_W, "data: RW NX");

	/* version 2 and a larger descriptor size are fine too */
	mlen = put_mat(mat, 2, 64, mat_entries, 3);
	CHECK_EQ_U64(rtmap_ranges(buf, len, DSZ, mat, mlen, r, 16, &n, &used), LDR_OK, "v2");
	CHECK(used && n == 6 && r[4].flags == RTMAP_X, "v2, 64-byte descriptors");
}

/* any flaw in the MAT: it is ignored whole, the map's ranges stand */
TEST(test_bad_mat)
{
	uint8_t buf[16 * 64], mat[16 + 8 * 64];
	struct rtmap_range r[16];
	size_t len = put(buf, DSZ, mmap, sizeof(mmap) / sizeof(mmap[0])), n = 0, mlen;
	struct desc bad[3];
	int used = 1;

	mlen = put_mat(mat, 1, DSZ, mat_entries, 3);
	CHECK(rtmap_ranges(buf, len, DSZ, mat, mlen - 1, r, 16, &n, &used) == LDR_OK && !used &&
	      n == 3, "entries past the table's bytes");
	CHECK(rtmap_ranges(buf, len, DSZ, mat, 15, r, 16, &n, &used) == LDR_OK && !used,
	      "shorter than its header");
	mlen = put_mat(mat, 3, DSZ, mat_entries, 3);
	CHECK(rtmap_ranges(buf, len, DSZ, mat, mlen, r, 16, &n, &used) == LDR_OK && !used,
	      "unknown version");
	mlen = put_mat(mat, 1, 32, mat_entries, 3);
	CHECK(rtmap_ranges(buf, len, DSZ, mat, mlen, r, 16, &n, &used) == LDR_OK && !used,
	      "descriptor size below 40");
	/* a count that would overflow 32-bit arithmetic */
	mlen = put_mat(mat, 1, DSZ, mat_entries, 3);
	memcpy(mat + 4, &(uint32_t){ 0x80000000u }, 4);
	CHECK(rtmap_ranges(buf, len, DSZ, mat, mlen, r, 16, &n, &used) == LDR_OK && !used,
	      "huge count");
	memcpy(bad, mat_entries, sizeof(bad));
	bad[1].addr = 0x7f001800; /* unaligned */
	mlen = put_mat(mat, 1, DSZ, bad, 3);
	CHECK(rtmap_ranges(buf, len, DSZ, mat, mlen, r, 16, &n, &used) == LDR_OK && !used,
	      "unaligned entry");
	memcpy(bad, mat_entries, sizeof(bad));
	bad[2].addr = 0xffffffffffff0000ULL;
	bad[2].pages = 32;
	mlen = put_mat(mat, 1, DSZ, bad, 3);
	CHECK(rtmap_ranges(buf, len, DSZ, mat, mlen, r, 16, &n, &used) == LDR_OK && !used,
	      "wrapping entry");
	CHECK(n == 3 && r[0].flags == (RTMAP_W | RTMAP_X), "the map's ranges stand");
}

TEST(test_refused)
{
	uint8_t buf[16 * 64];
	struct rtmap_range r[2];
	size_t len = put(buf, DSZ, mmap, sizeof(mmap) / sizeof(mmap[0])), n = 77;
	int used = 0;

	CHECK(rtmap_ranges(buf, len, 32, NULL, 0, r, 2, &n, &used) == LDR_E_MMAP_DESC_SIZE,
	      "descriptor size");
	CHECK(rtmap_ranges(buf, len, DSZ, NULL, 0, r, 2, &n, &used) == LDR_E_MMAP_TOO_BIG,
	      "more ranges than room");
	CHECK_EQ_U64(n, 77, "no count written on failure");
	CHECK(rtmap_ranges(NULL, 48, DSZ, NULL, 0, r, 2, &n, &used) == LDR_E_INVAL, "NULL map");
	CHECK(rtmap_ranges(buf, 0, DSZ, NULL, 0, r, 2, &n, &used) == LDR_OK && n == 0,
	      "empty map");
	/* a trailing partial descriptor is not read */
	CHECK(rtmap_ranges(buf, 2 * DSZ - 1, DSZ, NULL, 0, r, 2, &n, &used) == LDR_OK && n == 0,
	      "partial descriptor ignored");
}
