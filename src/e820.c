/*
 * e820.c - the raw UEFI memory map (untrusted bytes) turned into a sorted,
 * merged, overlap-free e820 table, and into the list of free memory that
 * kernel slots may come from.  Both come out of one routine, e820_build().
 *
 * Type mapping: the one Linux's x86 EFI stub uses (setup_e820() in
 * drivers/firmware/efi/libstub/x86-stub.c), restated:
 *
 *   EFI type                                  e820 type
 *   ----------------------------------------  --------------------------------
 *   LoaderCode/Data, BootServicesCode/Data,   RAM; SOFT_RESERVED instead when
 *   ConventionalMemory                        the descriptor has EFI_MEMORY_SP
 *   Reserved, RuntimeServicesCode/Data,       RESERVED
 *   MemoryMappedIO, MemoryMappedIOPortSpace,
 *   PalCode
 *   UnusableMemory                            UNUSABLE
 *   ACPIReclaimMemory                         ACPI
 *   ACPIMemoryNVS                             NVS
 *   PersistentMemory                          PMEM
 *   UnacceptedMemory, any unknown number      left out of the table
 *   this loader's OS-loader types             RAM (e820_protocol_from_efi():
 *   (EFI_MT_OSLOADER_KERNEL/_MODULE/_RECLAIM) KERNEL / MODULE /
 *                                             LOADER_RECLAIMABLE, and
 *                                             LoaderCode, which holds the
 *                                             loader's image, also
 *                                             LOADER_RECLAIMABLE)
 *
 * Linux turns UnacceptedMemory into RAM only when it also hands the kernel a
 * bitmap of pages still to be accepted; this loader has no such bitmap, so
 * it does what a Linux built without that support does and leaves the range
 * out, as it does for type numbers it does not know.  (Soft-reserve handling
 * is taken as enabled, Linux's default.)
 *
 * Free list: only ConventionalMemory is free now (Linux's KASLR makes the
 * same choice: boot-services memory is free by the spec but firmware has
 * been seen to crash when it is reused early).  EFI_MEMORY_SP ranges are
 * not free.  If any descriptor at all carries EFI_MEMORY_MORE_RELIABLE, only
 * conventional ranges that carry it are free - the rule of
 * process_efi_entries() in arch/x86/boot/compressed/kaslr.c.  (The libstub
 * allocator efi_random_alloc() applies the rule per slot instead: mirrored
 * slots if there is at least one; here it works on ranges, before the
 * kernel's size is known, so the descriptor rule is the one that fits.)
 * Every other descriptor - any type, known or not - counts as "busy" and
 * removes its bytes from the free list, so a conventional range that some
 * other descriptor also claims is never offered.
 *
 * Rules for each descriptor, in this order:
 *
 *   NumberOfPages == 0, or * 4096 overflows 64 bits       -> dropped
 *   PhysicalStart + size - 1 > 2^64 - 1 (wraps)           -> dropped
 *   reaches into the top page [2^64 - 4 KiB, 2^64)        -> clipped below it
 *   nothing left after clipping                           -> dropped
 *
 *              E820_ADDR_END = 2^64 - 4 KiB          2^64 (wraps to 0)
 *                            |                       |
 *   ...----------------------+------ top page -------+
 *      [=========== A ======]..........               A ends at 2^64: clipped
 *                 [============ B ==================>>>  B wraps: dropped
 *
 * A descriptor whose size field overflows or wraps is corrupt; clamping it
 * would invent memory up to the top of the address space, so it is dropped
 * instead.  Keeping every end at or below E820_ADDR_END means addr + size
 * is always representable, for this file and for every consumer.
 * PhysicalStart need not be page-aligned; it is used as given, except in
 * the protocol's table, which is whole pages (e820_page_round()).
 *
 * Overlaps: each byte gets the type of the most restrictive descriptor that
 * covers it, in this order (lowest wins least):
 *
 *   RAM < LOADER_RECLAIMABLE < KERNEL < MODULE < SOFT_RESERVED < ACPI < NVS < PMEM
 *       < RESERVED < UNUSABLE (< busy)
 *
 * RAM is whatever no one else claims; soft-reserved is RAM set aside for a
 * driver; ACPI-reclaim becomes RAM once the tables are read; NVS and PMEM
 * hold data that must survive; RESERVED is never touched; UNUSABLE is known
 * to be bad.  ("busy" exists only inside the free-list build.)
 *
 *   input    RAM   [0 ..................... 100)
 *            RES          [20 ... 40)
 *            ACPI              [30 ........ 60)
 *   output   RAM   [0 .. 20)
 *            RES          [20 ... 40)
 *            ACPI                   [40 ... 60)
 *            RAM                            [60 .. 100)
 *
 * Then runs of one type that touch are merged and zero sizes never appear.
 * The result is a function of the set of (range, type) pairs only - the
 * type of every byte, encoded as maximal runs - so any order of the same
 * descriptors gives the same bytes.
 *
 * Memory: out[] is the only workspace.  Descriptors are written into it,
 * heap-sorted, then swept once in address order:
 *
 *   out: [ resolved output 0..k ) [ gap ) [ sorted unprocessed i..n ) [ free )
 *
 * When a higher-ranked range lands inside a lower one, the lower range's
 * tail goes back into the unprocessed part at its sorted place; that is
 * the only thing that makes the table grow.
 */
#include "e820.h"

/* Internal type for "some descriptor claims these bytes" (free-list build). */
#define E820_BUSY 0xffffffffu

enum e820_mode {
	E820_MODE_TABLE,
	E820_MODE_PROTOCOL,
	E820_MODE_FREE,
	E820_MODE_EXIT,    /* free once boot services exit */
};

static uint64_t e820_get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static enum ldr_err e820_check_map(const void *map, uint64_t map_size, uint64_t desc_size)
{
	if (desc_size < EFI_MD_MIN_SIZE || desc_size % 8 != 0)
		return LDR_E_MMAP_DESC_SIZE;
	/* a partial trailing descriptor means size or stride is wrong */
	if (map_size % desc_size != 0)
		return LDR_E_MMAP_DESC_SIZE;
	if (map_size && !map)
		return LDR_E_INVAL;
	return LDR_OK;
}

/* e820 type for one EFI descriptor (table above); 0 = not in the table. */
uint32_t e820_type_from_efi(uint32_t efi_type, uint64_t attr)
{
	switch (efi_type) {
	case EFI_MT_LOADER_CODE:
	case EFI_MT_LOADER_DATA:
	case EFI_MT_BOOT_SERVICES_CODE:
	case EFI_MT_BOOT_SERVICES_DATA:
	case EFI_MT_CONVENTIONAL:
		return (attr & EFI_MA_SP) ? E820_SOFT_RESERVED : E820_RAM;
	case EFI_MT_RESERVED:
	case EFI_MT_RUNTIME_CODE:
	case EFI_MT_RUNTIME_DATA:
	case EFI_MT_MMIO:
	case EFI_MT_MMIO_PORT:
	case EFI_MT_PAL_CODE:
		return E820_RESERVED;
	case EFI_MT_UNUSABLE:
		return E820_UNUSABLE;
	case EFI_MT_ACPI_RECLAIM:
		return E820_ACPI;
	case EFI_MT_ACPI_NVS:
		return E820_NVS;
	case EFI_MT_PERSISTENT:
		return E820_PMEM;
	case EFI_MT_OSLOADER_KERNEL:
	case EFI_MT_OSLOADER_MODULE:
	case EFI_MT_OSLOADER_RECLAIM:
		return E820_RAM;
	default: /* EFI_MT_UNACCEPTED and unknown: see the file comment */
		return 0;
	}
}

/* Constant short name of an e820 type for log lines; never NULL. */
const char *e820_type_name(uint32_t type)
{
	switch (type) {
	case E820_RAM: return "RAM";
	case E820_RESERVED: return "reserved";
	case E820_ACPI: return "ACPI";
	case E820_NVS: return "NVS";
	case E820_UNUSABLE: return "unusable";
	case E820_PMEM: return "PMEM";
	case E820_SOFT_RESERVED: return "soft-reserved";
	case E820_LOADER_RECLAIMABLE: return "loader-reclaimable";
	case E820_KERNEL: return "kernel";
	case E820_MODULE: return "module";
	default: return "unknown";
	}
}

/* 1 if any descriptor carries EFI_MEMORY_MORE_RELIABLE; 0 otherwise or for a malformed map. */
int e820_efi_has_mirror(const void *map, uint64_t map_size, uint64_t desc_size)
{
	const uint8_t *p = map;

	if (e820_check_map(map, map_size, desc_size) != LDR_OK)
		return 0;
	for (uint64_t off = 0; off < map_size; off += desc_size)
		if (e820_get_le(p + off + EFI_MD_OFF_ATTR, 8) & EFI_MA_MORE_RELIABLE)
			return 1;
	return 0;
}

/* Overlap rank: the higher rank keeps a byte claimed by two types. */
static unsigned e820_rank(uint32_t type)
{
	switch (type) {
	case E820_RAM: return 0;
	case E820_LOADER_RECLAIMABLE: return 1;
	case E820_KERNEL: return 2;
	case E820_MODULE: return 3;
	case E820_SOFT_RESERVED: return 4;
	case E820_ACPI: return 5;
	case E820_NVS: return 6;
	case E820_PMEM: return 7;
	case E820_RESERVED: return 8;
	case E820_UNUSABLE: return 9;
	default: return 10; /* E820_BUSY */
	}
}

/*
 * The byte range a descriptor covers after the drop/clip rules of the file
 * comment; 0 when nothing is left.
 */
static int e820_desc_range(uint64_t phys, uint64_t pages, uint64_t *ret_addr, uint64_t *ret_size)
{
	uint64_t size;

	if (pages == 0 || pages > UINT64_MAX / EFI_MD_PAGE_SIZE)
		return 0;
	size = pages * EFI_MD_PAGE_SIZE;
	if (size - 1 > UINT64_MAX - phys)
		return 0;
	if (phys >= E820_ADDR_END)
		return 0;
	if (size > E820_ADDR_END - phys)
		size = E820_ADDR_END - phys;
	*ret_addr = phys;
	*ret_size = size;
	return 1;
}

/* The type a descriptor gets in this build; 0 = leave it out. */
static uint32_t e820_classify(enum e820_mode mode, uint32_t efi_type, uint64_t attr, int mirror)
{
	if (mode == E820_MODE_PROTOCOL && efi_type == EFI_MT_OSLOADER_KERNEL)
		return E820_KERNEL;
	if (mode == E820_MODE_PROTOCOL && efi_type == EFI_MT_OSLOADER_MODULE)
		return E820_MODULE;
	/* LoaderCode holds this loader's image: the exception stubs the IDT
	 * points at and the code of the jump, live until the kernel has its
	 * own IDT */
	if (mode == E820_MODE_PROTOCOL && (efi_type == EFI_MT_OSLOADER_RECLAIM ||
					   efi_type == EFI_MT_LOADER_CODE))
		return E820_LOADER_RECLAIMABLE;
	if (mode != E820_MODE_FREE && mode != E820_MODE_EXIT)
		return e820_type_from_efi(efi_type, attr);
	if ((efi_type == EFI_MT_CONVENTIONAL ||
	     (mode == E820_MODE_EXIT && (efi_type == EFI_MT_BOOT_SERVICES_CODE ||
					 efi_type == EFI_MT_BOOT_SERVICES_DATA))) &&
	    !(attr & EFI_MA_SP) && (!mirror || (attr & EFI_MA_MORE_RELIABLE)))
		return E820_RAM;
	return E820_BUSY;
}

/*
 * The protocol's table is whole pages: a range that would be RAM keeps only
 * its whole pages, any other type grows to whole pages.  The range ends at
 * or below E820_ADDR_END, which is page-aligned, so neither way wraps.
 * Returns 0 when nothing is left.
 */
static int e820_page_round(uint32_t type, uint64_t *addr, uint64_t *size)
{
	uint64_t lo = *addr, hi = *addr + *size;

	if (type == E820_RAM) {
		lo = ldr_align_up(lo, EFI_MD_PAGE_SIZE);
		hi = ldr_align_down(hi, EFI_MD_PAGE_SIZE);
		if (hi <= lo)
			return 0;
	} else {
		lo = ldr_align_down(lo, EFI_MD_PAGE_SIZE);
		hi = ldr_align_up(hi, EFI_MD_PAGE_SIZE);
	}
	*addr = lo;
	*size = hi - lo;
	return 1;
}

static uint64_t e820_end(const struct mem_region *r)
{
	return r->addr + r->size; /* <= E820_ADDR_END by construction */
}

/*
 * Sort order: address up, then rank down, then size down.  Rank is one-to-one
 * with type and flags are always 0, so this is a total order on contents and
 * an unstable sort still gives one result.
 */
static int e820_before(const struct mem_region *a, const struct mem_region *b)
{
	unsigned ra, rb;

	if (a->addr != b->addr)
		return a->addr < b->addr;
	ra = e820_rank(a->type);
	rb = e820_rank(b->type);
	if (ra != rb)
		return ra > rb;
	return a->size > b->size;
}

static void e820_swap(struct mem_region *a, struct mem_region *b)
{
	struct mem_region t = *a;

	*a = *b;
	*b = t;
}

static void e820_sift_down(struct mem_region *a, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1, big = root;

		if (child < n && e820_before(&a[big], &a[child]))
			big = child;
		if (child + 1 < n && e820_before(&a[big], &a[child + 1]))
			big = child + 1;
		if (big == root)
			return;
		e820_swap(&a[root], &a[big]);
		root = big;
	}
}

/* Heap sort into e820_before() order: O(n log n), no extra memory. */
static void e820_sort(struct mem_region *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		e820_sift_down(a, i, n);
	for (size_t end = n; end-- > 1;) {
		e820_swap(&a[0], &a[end]);
		e820_sift_down(a, 0, end);
	}
}

/* Append r to the output a[0..*k), merging it into a touching same-type run. */
static void e820_emit(struct mem_region *a, size_t *k, const struct mem_region *r)
{
	if (*k > 0 && a[*k - 1].type == r->type && e820_end(&a[*k - 1]) == r->addr) {
		a[*k - 1].size += r->size;
		return;
	}
	a[(*k)++] = *r;
}

/*
 * Sweep the sorted a[0..*pn) into the resolved form described in the file
 * comment.  Invariants at the top of the loop:
 *   - a[0..k) is final-form output, sorted, ending at or before the address
 *     of every entry still to come;
 *   - a[i..n) is sorted by e820_before(); k <= i.
 * Errors: LDR_E_MMAP_TOO_BIG when a split needs a slot beyond cap.
 */
static enum ldr_err e820_resolve(struct mem_region *a, size_t *pn, size_t cap)
{
	size_t n = *pn, k = 0, i = 0;

	while (i < n) {
		struct mem_region e = a[i], tail;
		struct mem_region *r;
		uint64_t r_end, e_end;
		size_t j;

		if (k == 0 || e.addr >= e820_end(&a[k - 1])) {
			e820_emit(a, &k, &e);
			i++;
			continue;
		}
		/* e starts inside the last output r (and not before it) */
		r = &a[k - 1];
		r_end = e820_end(r);
		e_end = e820_end(&e);
		if (r->type == e.type) {
			if (e_end > r_end)
				r->size = e_end - r->addr;
			i++;
			continue;
		}
		if (e820_rank(r->type) > e820_rank(e.type)) {
			if (e_end <= r_end) { /* e is hidden entirely */
				i++;
				continue;
			}
			/* e's part beyond r goes back into the stream, in slot i */
			e.addr = r_end;
			e.size = e_end - r_end;
			a[i] = e;
			for (j = i; j + 1 < n && e820_before(&a[j + 1], &a[j]); j++)
				e820_swap(&a[j], &a[j + 1]);
			continue;
		}
		/* e outranks r: r keeps what lies before e and after it */
		tail.addr = e_end;
		tail.size = e_end < r_end ? r_end - e_end : 0;
		tail.type = r->type;
		tail.flags = 0;
		r->size = e.addr - r->addr;
		if (r->size == 0)
			k--;
		e820_emit(a, &k, &e);
		i++;
		if (tail.size == 0)
			continue;
		if (k < i) {
			/* slot i-1 is free: the stream grows downwards */
			j = --i;
		} else {
			if (n == cap)
				return LDR_E_MMAP_TOO_BIG;
			j = n++;
		}
		a[j] = tail;
		/* bubble into place within a[i..n) */
		while (j > i && e820_before(&a[j], &a[j - 1])) {
			e820_swap(&a[j], &a[j - 1]);
			j--;
		}
		while (j + 1 < n && e820_before(&a[j + 1], &a[j])) {
			e820_swap(&a[j], &a[j + 1]);
			j++;
		}
	}
	*pn = k;
	return LDR_OK;
}

/*
 * The shared routine behind e820_from_efi() and e820_free_from_efi(): one
 * entry per kept descriptor into out, sort, resolve, and (free list) drop
 * the busy runs.  Inputs, outputs and errors as those two functions.
 */
static enum ldr_err e820_build(const void *map, uint64_t map_size, uint64_t desc_size,
			       enum e820_mode mode, struct mem_region *out,
			       size_t out_cap, size_t *ret_count)
{
	const uint8_t *p = map;
	enum ldr_err err;
	size_t n = 0, k = 0;
	int mirror = 0;

	err = e820_check_map(map, map_size, desc_size);
	if (err != LDR_OK)
		return err;
	if (!out && out_cap)
		return LDR_E_INVAL;
	if (mode == E820_MODE_FREE || mode == E820_MODE_EXIT)
		mirror = e820_efi_has_mirror(map, map_size, desc_size);

	for (uint64_t off = 0; off < map_size; off += desc_size) {
		const uint8_t *d = p + off;
		uint32_t efi_type = (uint32_t)e820_get_le(d + EFI_MD_OFF_TYPE, 4);
		uint64_t attr = e820_get_le(d + EFI_MD_OFF_ATTR, 8);
		uint64_t addr, size;
		uint32_t type;

		type = e820_classify(mode, efi_type, attr, mirror);
		if (!type)
			continue;
		if (!e820_desc_range(e820_get_le(d + EFI_MD_OFF_PHYS, 8),
				     e820_get_le(d + EFI_MD_OFF_PAGES, 8), &addr, &size))
			continue;
		if (mode == E820_MODE_PROTOCOL && !e820_page_round(type, &addr, &size))
			continue;
		if (n == out_cap)
			return LDR_E_MMAP_TOO_BIG;
		out[n].addr = addr;
		out[n].size = size;
		out[n].type = type;
		out[n].flags = 0;
		n++;
	}

	e820_sort(out, n);
	err = e820_resolve(out, &n, out_cap);
	if (err != LDR_OK)
		return err;

	if (mode == E820_MODE_FREE || mode == E820_MODE_EXIT) {
		/* two free runs never touch: a busy run or a hole lay between */
		for (size_t i = 0; i < n; i++)
			if (out[i].type != E820_BUSY)
				out[k++] = out[i];
		n = k;
	}
	*ret_count = n;
	return LDR_OK;
}

/*
 * The e820 table of a raw map into out[0..*ret_count).
 * Errors: LDR_E_MMAP_DESC_SIZE, LDR_E_MMAP_TOO_BIG, LDR_E_INVAL (see e820.h).
 */
enum ldr_err e820_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
			   struct mem_region *out, size_t out_cap, size_t *ret_count)
{
	return e820_build(map, map_size, desc_size, E820_MODE_TABLE, out, out_cap, ret_count);
}

/* The protocol's table (loader types kept apart); errors as e820_from_efi(). */
enum ldr_err e820_protocol_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
				    struct mem_region *out, size_t out_cap, size_t *ret_count)
{
	return e820_build(map, map_size, desc_size, E820_MODE_PROTOCOL, out, out_cap, ret_count);
}

/*
 * The free list (conventional, not SP, mirrored if any mirror) into
 * out[0..*ret_count).  Errors as e820_from_efi().
 */
enum ldr_err e820_free_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
				struct mem_region *out, size_t out_cap, size_t *ret_count)
{
	return e820_build(map, map_size, desc_size, E820_MODE_FREE, out, out_cap, ret_count);
}

/* The free list once boot services have exited; errors as e820_from_efi(). */
enum ldr_err e820_exit_free_from_efi(const void *map, uint64_t map_size, uint64_t desc_size,
				     struct mem_region *out, size_t out_cap, size_t *ret_count)
{
	return e820_build(map, map_size, desc_size, E820_MODE_EXIT, out, out_cap, ret_count);
}
