/*
 * rtmap.c - the mappings of firmware runtime memory (include/rtmap.h),
 * from the memory map and the Memory Attributes Table, both untrusted.
 */
#include <string.h>

#include "e820.h"
#include "rtmap.h"

static uint64_t rtmap_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rtmap_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A descriptor's range, page-aligned and not wrapping; 0 if unusable. */
static int rtmap_desc_range(const uint8_t *d, uint64_t *ret_addr, uint64_t *ret_size)
{
	uint64_t addr = rtmap_u64(d + EFI_MD_OFF_PHYS);
	uint64_t pages = rtmap_u64(d + EFI_MD_OFF_PAGES);

	if (pages == 0 || (addr & (EFI_MD_PAGE_SIZE - 1)) || addr > E820_ADDR_END ||
	    pages > (E820_ADDR_END - addr) / EFI_MD_PAGE_SIZE)
		return 0;
	*ret_addr = addr;
	*ret_size = pages * EFI_MD_PAGE_SIZE;
	return 1;
}

static enum ldr_err rtmap_push(struct rtmap_range *out, size_t cap, size_t *n,
			       uint64_t addr, uint64_t size, uint32_t flags)
{
	if (*n == cap)
		return LDR_E_MMAP_TOO_BIG;
	out[*n].addr = addr;
	out[*n].size = size;
	out[(*n)++].flags = flags;
	return LDR_OK;
}

/* Is the MAT well formed: header, version 1 or 2, descriptors inside it? */
static int rtmap_mat_ok(const uint8_t *mat, uint64_t mat_size, uint32_t *ret_count,
			uint32_t *ret_dsize)
{
	uint32_t version, count, dsize;

	if (!mat || mat_size < RTMAP_MAT_HEADER)
		return 0;
	version = rtmap_u32(mat);
	count = rtmap_u32(mat + 4);
	dsize = rtmap_u32(mat + 8);
	if (version < 1 || version > 2 || dsize < EFI_MD_MIN_SIZE)
		return 0;
	if ((uint64_t)count * dsize > mat_size - RTMAP_MAT_HEADER)
		return 0;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t a, s;

		if (!rtmap_desc_range(mat + RTMAP_MAT_HEADER + (uint64_t)i * dsize, &a, &s))
			return 0;
	}
	*ret_count = count;
	*ret_dsize = dsize;
	return 1;
}

enum ldr_err rtmap_ranges(const void *map, uint64_t map_size, uint64_t desc_size,
			  const void *mat, uint64_t mat_size, struct rtmap_range *out,
			  size_t cap, size_t *ret_n, int *ret_mat_used)
{
	const uint8_t *m = map, *t = mat;
	uint32_t count = 0, dsize = 0;
	size_t n = 0;
	int used;
	enum ldr_err err;

	if ((!map && map_size) || (!out && cap) || !ret_n || !ret_mat_used)
		return LDR_E_INVAL;
	if (desc_size < EFI_MD_MIN_SIZE)
		return LDR_E_MMAP_DESC_SIZE;
	for (uint64_t off = 0; map_size - off >= desc_size; off += desc_size) {
		const uint8_t *d = m + off;
		uint32_t type = rtmap_u32(d + EFI_MD_OFF_TYPE);
		uint64_t attr = rtmap_u64(d + EFI_MD_OFF_ATTR), addr = 0, size = 0;
		uint32_t flags;

		if (type == EFI_MT_RUNTIME_CODE)
			flags = RTMAP_W | RTMAP_X;
		else if (type == EFI_MT_RUNTIME_DATA ||
			 (type == EFI_MT_MMIO && (attr & EFI_MA_RUNTIME)))
			flags = RTMAP_W;
		else
			continue;
		if (!rtmap_desc_range(d, &addr, &size))
			continue;
		err = rtmap_push(out, cap, &n, addr, size, flags);
		if (err != LDR_OK)
			return err;
	}
	used = rtmap_mat_ok(t, mat_size, &count, &dsize);
	for (uint32_t i = 0; used && i < count; i++) {
		const uint8_t *d = t + RTMAP_MAT_HEADER + (uint64_t)i * dsize;
		uint64_t attr = rtmap_u64(d + EFI_MD_OFF_ATTR), addr = 0, size = 0;
		uint32_t flags = 0;

		if (!(attr & EFI_MA_RO))
			flags |= RTMAP_W;
		if (!(attr & EFI_MA_XP))
			flags |= RTMAP_X;
		/* rtmap_mat_ok checked every entry; tested anyway, as above, so
		 * that addr and size are never used unset (gcc -O2 warns) */
		if (!rtmap_desc_range(d, &addr, &size))
			continue;
		err = rtmap_push(out, cap, &n, addr, size, flags);
		if (err != LDR_OK)
			return err;
	}
	*ret_n = n;
	*ret_mat_used = used;
	return LDR_OK;
}
