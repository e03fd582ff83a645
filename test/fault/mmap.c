/*
 * mmap.c - GetMemoryMap as the loader sees it under a plan: refused,
 * too small again and again, changing between calls, or re-laid with
 * another descriptor size, another order, overlaps, zero-page and
 * top-of-address-space entries, unknown types and many split entries.
 * Also the snapshots before and after a run, and the check that every
 * AllocateAddress the loader makes lies in memory its map called free.
 */
#include "inject.h"

/* the firmware's raw map, and the lists built from it */
#define FI_RAW_BYTES (256 * 1024)
static UINT8 *fi_raw;
static struct fi_map fi_list, fi_seen;
struct fi_map fi_before, fi_after;
static UINT32 fi_churn_round;

static EFI_STATUS fi_map_alloc(struct fi_map *m)
{
	EFI_PHYSICAL_ADDRESS a = 0;
	EFI_STATUS st;

	st = BS->AllocatePages(AllocateAnyPages, EfiLoaderData,
			       EFI_SIZE_TO_PAGES(FI_DESC_MAX * sizeof(EFI_MEMORY_DESCRIPTOR)), &a);
	if (EFI_ERROR(st))
		return st;
	m->d = (EFI_MEMORY_DESCRIPTOR *)(UINTN)a;
	m->n = 0;
	m->cap = FI_DESC_MAX;
	return EFI_SUCCESS;
}

/* once, before any snapshot: the injector's buffers live through every case */
EFI_STATUS fi_mmap_init(void)
{
	EFI_PHYSICAL_ADDRESS a = 0;
	EFI_STATUS st;

	st = BS->AllocatePages(AllocateAnyPages, EfiLoaderData,
			       EFI_SIZE_TO_PAGES(FI_RAW_BYTES), &a);
	if (EFI_ERROR(st))
		return st;
	fi_raw = (UINT8 *)(UINTN)a;
	st = fi_map_alloc(&fi_list);
	if (!EFI_ERROR(st))
		st = fi_map_alloc(&fi_seen);
	if (!EFI_ERROR(st))
		st = fi_map_alloc(&fi_before);
	if (!EFI_ERROR(st))
		st = fi_map_alloc(&fi_after);
	return st;
}

/* raw bytes of stride dsize -> plain list (entries past cap are dropped) */
static void fi_map_from_raw(struct fi_map *m, const UINT8 *raw, UINTN size, UINTN dsize)
{
	UINTN off;

	m->n = 0;
	if (dsize < sizeof(EFI_MEMORY_DESCRIPTOR))
		return;
	for (off = 0; size - off >= dsize && m->n < m->cap; off += dsize)
		CopyMem(&m->d[m->n++], raw + off, sizeof(EFI_MEMORY_DESCRIPTOR));
}

/* the real map, through the saved (unwrapped) entry */
static EFI_STATUS fi_real_map(UINTN *ret_size, UINTN *ret_key, UINTN *ret_dsize, UINT32 *ret_dver)
{
	UINTN size = FI_RAW_BYTES;
	EFI_STATUS st;

	st = fi_bs.GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)fi_raw, ret_key, ret_dsize, ret_dver);
	if (!EFI_ERROR(st))
		*ret_size = size;
	return st;
}

EFI_STATUS fi_mmap_snapshot(struct fi_map *m)
{
	UINTN size = 0, key, dsize;
	UINT32 dver;
	EFI_STATUS st;

	/* outside a run fi_bs may not be filled yet: use the live table */
	size = FI_RAW_BYTES;
	st = BS->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)fi_raw, &key, &dsize, &dver);
	if (EFI_ERROR(st))
		return st;
	fi_map_from_raw(m, fi_raw, size, dsize);
	return EFI_SUCCESS;
}

/* entries that differ in type, start or pages; *ret_first = index of the first */
UINTN fi_mmap_diff(const struct fi_map *a, const struct fi_map *b, UINTN *ret_first)
{
	UINTN i, n = a->n > b->n ? a->n : b->n, diff = 0;

	*ret_first = 0;
	for (i = 0; i < n; i++) {
		if (i < a->n && i < b->n && a->d[i].Type == b->d[i].Type &&
		    a->d[i].PhysicalStart == b->d[i].PhysicalStart &&
		    a->d[i].NumberOfPages == b->d[i].NumberOfPages)
			continue;
		if (diff++ == 0)
			*ret_first = i;
	}
	return diff;
}

static int fi_largest_free(const struct fi_map *m)
{
	UINTN i;
	int best = -1;

	for (i = 0; i < m->n; i++)
		if (m->d[i].Type == EfiConventionalMemory &&
		    (best < 0 || m->d[i].NumberOfPages > m->d[best].NumberOfPages))
			best = (int)i;
	return best;
}

static void fi_push(struct fi_map *m, UINT32 type, UINT64 start, UINT64 pages)
{
	EFI_MEMORY_DESCRIPTOR *d;

	if (m->n == m->cap)
		return;
	d = &m->d[m->n++];
	SetMem(d, sizeof(*d), 0);
	d->Type = type;
	d->PhysicalStart = start;
	d->NumberOfPages = pages;
	d->Attribute = EFI_MEMORY_WB;
}

static void fi_insert(struct fi_map *m, UINTN at, const EFI_MEMORY_DESCRIPTOR *d)
{
	UINTN i;

	if (m->n == m->cap)
		return;
	for (i = m->n; i > at; i--)
		m->d[i] = m->d[i - 1];
	m->d[at] = *d;
	m->n++;
}

/* free ranges split in halves (largest first) until the map has n entries */
static void fi_split(struct fi_map *m, UINTN target)
{
	while (m->n < target && m->n < m->cap) {
		UINTN i, best = m->n;
		EFI_MEMORY_DESCRIPTOR hi;

		for (i = 0; i < m->n; i++)
			if (m->d[i].Type == EfiConventionalMemory && m->d[i].NumberOfPages >= 2 &&
			    (best == m->n || m->d[i].NumberOfPages > m->d[best].NumberOfPages))
				best = i;
		if (best == m->n)
			return;
		hi = m->d[best];
		hi.NumberOfPages = m->d[best].NumberOfPages / 2;
		m->d[best].NumberOfPages -= hi.NumberOfPages;
		hi.PhysicalStart = m->d[best].PhysicalStart + m->d[best].NumberOfPages * EFI_PAGE_SIZE;
		fi_insert(m, best + 1, &hi);
	}
}

static void fi_mangle(struct fi_map *m)
{
	const struct fi_plan *p = &fi_plan;
	int big = fi_largest_free(m);
	UINTN i, n0;

	if (p->gmm_unknown && big >= 0) {
		/* the upper half of the largest free range becomes a type nobody knows */
		EFI_MEMORY_DESCRIPTOR *b = &m->d[big];
		UINT64 half = b->NumberOfPages / 2;

		b->NumberOfPages -= half;
		fi_push(m, p->gmm_unknown, b->PhysicalStart + b->NumberOfPages * EFI_PAGE_SIZE, half);
	}
	if (p->gmm_overlap == FI_OVL_RESERVED && big >= 0) {
		/* a reserved range over the middle half of the largest free one */
		EFI_MEMORY_DESCRIPTOR *b = &m->d[big];

		fi_push(m, EfiReservedMemoryType,
			b->PhysicalStart + (b->NumberOfPages / 4) * EFI_PAGE_SIZE, b->NumberOfPages / 2);
	}
	if (p->gmm_overlap == FI_OVL_DUP)
		for (i = 0, n0 = m->n; i < n0; i++)
			if (m->d[i].Type == EfiConventionalMemory)
				fi_push(m, EfiConventionalMemory, m->d[i].PhysicalStart,
					m->d[i].NumberOfPages);
	if (p->gmm_overlap == FI_OVL_USED && big >= 0) {
		/* "free" over everything from the largest free range to the end
		 * of the busy memory after it (firmware data, the loader image) */
		UINT64 lo = m->d[big].PhysicalStart, hi = lo;

		for (i = 0; i < m->n; i++)
			if (m->d[i].PhysicalStart >= lo && m->d[i].PhysicalStart < 4ULL << 30 &&
			    m->d[i].Type != EfiReservedMemoryType && m->d[i].Type != EfiMemoryMappedIO &&
			    m->d[i].PhysicalStart + m->d[i].NumberOfPages * EFI_PAGE_SIZE > hi)
				hi = m->d[i].PhysicalStart + m->d[i].NumberOfPages * EFI_PAGE_SIZE;
		fi_push(m, EfiConventionalMemory, lo, (hi - lo) / EFI_PAGE_SIZE);
	}
	if (p->gmm_split)
		fi_split(m, p->gmm_split);
	if (p->gmm_zero) {
		/* zero-page entries: free ones first and last, a reserved one at
		 * the start of the largest free range, one at the top */
		EFI_MEMORY_DESCRIPTOR z;

		SetMem(&z, sizeof(z), 0);
		z.Type = EfiConventionalMemory;
		z.PhysicalStart = 64ULL << 20;
		big = fi_largest_free(m); /* the split moved it */
		if (big >= 0)
			fi_push(m, EfiReservedMemoryType, m->d[big].PhysicalStart, 0);
		fi_insert(m, 0, &z);
		fi_push(m, EfiConventionalMemory, 0, 0);
		fi_push(m, EfiLoaderData, 0xfffffffffffff000ULL, 0);
	}
	if (p->gmm_top) {
		/* memory where no machine has any (gmm.top is a mask of these) */
		if (p->gmm_top & FI_TOP_PAGE) /* free: the last page below 2^64 */
			fi_push(m, EfiConventionalMemory, 0xfffffffffffff000ULL, 1);
		if (p->gmm_top & FI_TOP_WRAP) /* free: a range that wraps past 2^64 */
			fi_push(m, EfiConventionalMemory, 0xffffffffffe00000ULL, 0x400);
		if (p->gmm_top & FI_TOP_OVERFLOW) /* free: pages * 4096 overflows */
			fi_push(m, EfiConventionalMemory, 0x100000000ULL, 0x0010000000000001ULL);
		if (p->gmm_top & FI_TOP_MMIO) /* MMIO ending exactly at 2^64 */
			fi_push(m, EfiMemoryMappedIO, 0xffffffffffe00000ULL, 0x200);
		if (p->gmm_top & FI_TOP_PHYS) /* free: 1 GiB at 2^52, past any physical address width */
			fi_push(m, EfiConventionalMemory, 1ULL << 52, 0x40000);
	}
	if (p->gmm_order == FI_ORDER_REVERSE) {
		for (i = 0; i < m->n / 2; i++) {
			EFI_MEMORY_DESCRIPTOR t = m->d[i];

			m->d[i] = m->d[m->n - 1 - i];
			m->d[m->n - 1 - i] = t;
		}
	} else if (p->gmm_order == FI_ORDER_SHUFFLE && m->n > 1) {
		UINT64 x = 0x9e3779b97f4a7c15ULL;

		for (i = m->n - 1; i > 0; i--) {
			EFI_MEMORY_DESCRIPTOR t;
			UINTN j;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			j = (UINTN)(x % (i + 1));
			t = m->d[i], m->d[i] = m->d[j], m->d[j] = t;
		}
	}
}

/* a few single pages spread over the largest free range, moved every call */
static void fi_churn(void)
{
	UINTN size, key, dsize;
	UINT32 dver, k;
	int big;

	fi_own_free_all();
	if (EFI_ERROR(fi_real_map(&size, &key, &dsize, &dver)))
		return;
	fi_map_from_raw(&fi_list, fi_raw, size, dsize);
	big = fi_largest_free(&fi_list);
	if (big < 0)
		return;
	fi_churn_round++;
	for (k = 0; k < fi_plan.gmm_change; k++) {
		UINT64 step = fi_list.d[big].NumberOfPages / (fi_plan.gmm_change + 1);
		EFI_PHYSICAL_ADDRESS a = fi_list.d[big].PhysicalStart +
			(step * (k + 1) + (fi_churn_round & 7) * 2) * EFI_PAGE_SIZE;

		fi_own_page(AllocateAddress, &a);
	}
}

static int fi_mangling(void)
{
	const struct fi_plan *p = &fi_plan;

	return p->gmm_dsize || p->gmm_split || p->gmm_unknown || p->gmm_zero || p->gmm_top ||
	       p->gmm_order || p->gmm_overlap || p->gmm_version;
}

EFI_STATUS EFIAPI fi_GetMemoryMap(UINTN *size, EFI_MEMORY_DESCRIPTOR *buf, UINTN *key,
				  UINTN *dsize, UINT32 *dver)
{
	UINTN rsize, rkey, rdsize, need, stride, i;
	UINT32 rdver, n;
	EFI_STATUS st;

	if (!fi_from_loader(__builtin_return_address(0)))
		return fi_bs.GetMemoryMap(size, buf, key, dsize, dver);
	n = ++fi_cnt.gmm;
	fi_trace("GetMemoryMap", n, *size, __builtin_return_address(0));
	if (fi_plan.gmm_fail == n) {
		fi_cnt.faults++;
		return EFI_DEVICE_ERROR;
	}
	if (fi_plan.gmm_change)
		fi_churn();
	if (!fi_mangling()) {
		st = fi_bs.GetMemoryMap(size, buf, key, dsize, dver);
		if (!EFI_ERROR(st))
			fi_map_from_raw(&fi_seen, (const UINT8 *)buf, *size, *dsize);
		need = *size;
		stride = *dsize;
	} else {
		st = fi_real_map(&rsize, &rkey, &rdsize, &rdver);
		if (EFI_ERROR(st))
			return st;
		fi_map_from_raw(&fi_list, fi_raw, rsize, rdsize);
		fi_mangle(&fi_list);
		stride = fi_plan.gmm_dsize ? fi_plan.gmm_dsize : rdsize;
		need = fi_list.n * stride;
		*dsize = stride;
		if (*size < need || !buf) {
			*size = need;
			st = EFI_BUFFER_TOO_SMALL;
		} else {
			UINT8 *out = (UINT8 *)buf;

			/* padding bytes carry garbage, as they may on real firmware */
			SetMem(out, need, 0xa5);
			for (i = 0; i < fi_list.n; i++)
				CopyMem(out + i * stride, &fi_list.d[i],
					stride < sizeof(EFI_MEMORY_DESCRIPTOR) ? stride
									 : sizeof(EFI_MEMORY_DESCRIPTOR));
			*size = need;
			*key = rkey;
			*dver = fi_plan.gmm_version ? fi_plan.gmm_version : rdver;
			fi_seen.n = 0;
			for (i = 0; i < fi_list.n && i < fi_seen.cap; i++)
				fi_seen.d[fi_seen.n++] = fi_list.d[i];
			st = EFI_SUCCESS;
		}
		if (fi_plan.gmm_dsize < sizeof(EFI_MEMORY_DESCRIPTOR) && fi_plan.gmm_dsize)
			fi_seen.n = 0; /* nothing readable was handed out */
	}
	if (fi_plan.gmm_small && n <= fi_plan.gmm_small &&
	    (st == EFI_SUCCESS || st == EFI_BUFFER_TOO_SMALL)) {
		/* "it grew while you were allocating": more than the caller's slack */
		*size = need + (UINTN)n * (fi_plan.gmm_grow ? fi_plan.gmm_grow : 80) * stride;
		*dsize = stride;
		fi_cnt.faults++;
		return EFI_BUFFER_TOO_SMALL;
	}
	return st;
}

/*
 * 1 if [base, base + pages) is covered by free descriptors of the map the
 * loader saw last and touched by no other descriptor (so a loader that
 * reads the map right never asks for it); 1 as well when it saw none.
 */
int fi_mmap_allowed(UINT64 base, UINT64 pages)
{
	UINT64 end = base + pages * EFI_PAGE_SIZE, pos = base;
	UINTN i;

	if (!fi_seen.n)
		return 1;
	for (i = 0; i < fi_seen.n; i++) {
		const EFI_MEMORY_DESCRIPTOR *d = &fi_seen.d[i];
		UINT64 s = d->PhysicalStart, e = s + d->NumberOfPages * EFI_PAGE_SIZE;

		if (d->Type != EfiConventionalMemory && d->NumberOfPages && s < end && e > base &&
		    e > s)
			return 0;
	}
	while (pos < end) {
		UINT64 next = pos;

		for (i = 0; i < fi_seen.n; i++) {
			const EFI_MEMORY_DESCRIPTOR *d = &fi_seen.d[i];
			UINT64 s = d->PhysicalStart, e = s + d->NumberOfPages * EFI_PAGE_SIZE;

			if (d->Type == EfiConventionalMemory && e > s && s <= pos && e > pos && e > next)
				next = e;
		}
		if (next == pos)
			return 0;
		pos = next;
	}
	return 1;
}

void fi_mmap_reset(void)
{
	fi_seen.n = 0;
	fi_churn_round = 0;
}
