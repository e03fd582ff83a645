/*
 * place.c - where the kernel goes: a uniformly drawn physical slot (the
 * protocol's size and alignment, at least 2 MiB-aligned) in memory that is
 * free now, reserved with AllocatePages(AllocateAddress), and, when the
 * protocol gives a virtual window, an independently drawn virtual base;
 * then the segments are copied there and relocated - with the functions
 * shuffled first when the protocol asks for function-granular KASLR.
 */
#include <string.h>

#include "loader.h"
#include "log.h"
#include "memmap.h"
#include "e820.h"
#include "slot.h"
#include "reloc.h"
#include "tsc.h"

/* a refused slot is excluded and another drawn, this many times at most */
#define PLACE_TRIES 16
/*
 * Nothing is placed below 1 MiB, whatever kaslr.min says: the low MiB is
 * the real-mode world's, and address 0 means "none" to Linux
 * (ramdisk_image) and to the loader itself.
 */
#define PLACE_FLOOR (1 * MIB)
#define PLACE_AVOID_MAX (PLACE_TRIES + 2 + KERNEL_LAYOUT_AVOID_MAX)


static enum ldr_err place_draw(void *ctx, uint64_t n, uint64_t *ret_idx)
{
	return drbg_below(ctx, n, ret_idx);
}

/* AllocatePages(AllocateAddress) of the type at ctx: the map said free;
 * firmware decides */
static int place_reserve(void *ctx, uint64_t base, uint64_t size)
{
	EFI_PHYSICAL_ADDRESS a = base;
	const UINT32 *type = ctx;

	return !EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress,
					    (EFI_MEMORY_TYPE)*type, EFI_SIZE_TO_PAGES(size), &a));
}

static enum ldr_err place_lowest(void *ctx, uint64_t n, uint64_t *ret_idx)
{
	(void)ctx;
	(void)n;
	*ret_idx = 0;
	return LDR_OK;
}

/* a forced placement: the index at ctx, found beforehand */
static enum ldr_err place_fixed(void *ctx, uint64_t n, uint64_t *ret_idx)
{
	const uint64_t *idx = ctx;

	if (*idx >= n)
		return LDR_E_NO_SLOT;
	*ret_idx = *idx;
	return LDR_OK;
}

/* kaslr.phys= / kaslr.virt= as given, for the lines that name it */
static void place_force_text(const struct opt_place *f, char buf[OPT_PLACE_TEXT_MAX])
{
	options_place_text(f, buf, OPT_PLACE_TEXT_MAX);
}

/*
 * The slot kaslr.phys= names among the free ones, or the one line saying
 * why it names none for this kernel; the lines about an address start
 * with pre ("kaslr.phys=", or what fixes the address) and the address as
 * given.  Out: *ret_idx.
 */
static EFI_STATUS place_forced_phys(const struct efi_mmap *m, const struct mem_region *free_r,
				    size_t nfree, const struct slot_params *sp,
				    const struct opt_place *f, const CHAR16 *pre, uint64_t *ret_idx)
{
	struct mem_region *e820 = NULL;
	size_t ne = 0;
	uint64_t count = slot_count(free_r, nfree, sp), end;
	char t[OPT_PLACE_TEXT_MAX];
	enum slot_why why;
	EFI_STATUS st;

	place_force_text(f, t);
	switch (f->kind) {
	case OPT_PLACE_LOWEST:
	case OPT_PLACE_HIGHEST:
		if (count == 0)
			return log_fail(EFI_OUT_OF_RESOURCES,
					L"kaslr.phys=%a: no slot at all for a %ld-byte kernel in [0x%lx, 0x%lx) (kaslr.min, kaslr.max)",
					t, sp->image_size, sp->min_addr, sp->max_addr);
		*ret_idx = f->kind == OPT_PLACE_LOWEST ? 0 : count - 1;
		return EFI_SUCCESS;
	case OPT_PLACE_ABOVE4G:
		if (slot_first_from(free_r, nfree, sp, 4 * GIB, ret_idx) == LDR_OK)
			return EFI_SUCCESS;
		return log_fail(EFI_NOT_FOUND,
				L"kaslr.phys=above4g: no slot at or above 4 GiB for a %ld-byte kernel (no free RAM there, or kaslr.max or the kernel's own limit 0x%lx is below it)",
				sp->image_size, sp->max_addr);
	default:
		break;
	}
	if (slot_index_of(free_r, nfree, sp, f->value, ret_idx) == LDR_OK)
		return EFI_SUCCESS;
	st = mmap_convert_quiet(m, e820_from_efi, &e820, &ne);
	if (EFI_ERROR(st))
		return log_efi(st, L"kaslr.phys=: reading the memory map");
	why = slot_explain(free_r, nfree, e820, ne, sp, f->value);
	FreePool(e820);
	end = f->value + sp->image_size;
	switch (why) {
	case SLOT_WHY_MISALIGNED:
		return log_fail(EFI_INVALID_PARAMETER,
				L"%s%a: not a usable slot: not a multiple of the kernel's alignment 0x%lx",
				pre, t, sp->align);
	case SLOT_WHY_WINDOW:
		return log_fail(EFI_INVALID_PARAMETER,
				L"%s%a: not a usable slot: a %ld-byte kernel there leaves the window [0x%lx, 0x%lx) (kaslr.min, kaslr.max, the kernel's own limit; 0 = top of RAM)",
				pre, t, sp->image_size, sp->min_addr, sp->max_addr);
	case SLOT_WHY_NOT_RAM:
		return log_fail(EFI_INVALID_PARAMETER,
				L"%s%a: not a usable slot: not all RAM at [0x%lx, 0x%lx)",
				pre, t, f->value, end);
	case SLOT_WHY_AVOIDED:
		return log_fail(EFI_INVALID_PARAMETER,
				L"%s%a: not a usable slot: touches a range kept out (the loader's image, memmap=) at [0x%lx, 0x%lx)",
				pre, t, f->value, end);
	case SLOT_WHY_OK: /* a slot after all: the maps disagree */
	case SLOT_WHY_NOT_FREE:
	default:
		return log_fail(EFI_INVALID_PARAMETER,
				L"%s%a: not a usable slot: overlaps memory firmware or the loader is using at [0x%lx, 0x%lx)",
				pre, t, f->value, end);
	}
}

/*
 * verbose, in a loader built with LDR_LOG_EFI_MAP (test/fixtures/capture.sh
 * builds one): the raw firmware map, one descriptor a line in the fixture
 * format of test/fixtures/ (type attribute physical_start number_of_pages,
 * hex).  Not in every verbose build: a firmware console takes some 20 ms a
 * line under emulation, and the e820 form printed next says what the
 * placement used.
 */
static void place_log_efi_map(const struct efi_mmap *m)
{
#ifdef LDR_LOG_EFI_MAP
	const uint8_t *p = m->buf;
	UINTN off;

	for (off = 0; off + m->desc_size <= m->size; off += m->desc_size) {
		const EFI_MEMORY_DESCRIPTOR *d = (const EFI_MEMORY_DESCRIPTOR *)(p + off);

		log_info(L"efi-mmap: %x %lx %lx %lx", d->Type, d->Attribute,
			 d->PhysicalStart, d->NumberOfPages);
	}
#else
	(void)m;
#endif
}

/* verbose: each region with the slots it holds for this kernel */
static void place_log_regions(const struct mem_region *r, size_t n, const CHAR16 *what,
			      const struct slot_params *sp)
{
	size_t i;

	log_info(L"%s: %d entries", what, (int)n);
	for (i = 0; i < n; i++)
		if (sp)
			log_info(L"  %s [%016lx-%016lx) %a slots=%ld", what, r[i].addr,
				 r[i].addr + r[i].size, e820_type_name(r[i].type),
				 slot_count(&r[i], 1, sp));
		else
			log_info(L"  %s [%016lx-%016lx) %a", what, r[i].addr,
				 r[i].addr + r[i].size, e820_type_name(r[i].type));
}

/* floor(log2(n)) and two decimals of the rest, for "N slots (B bits)" */
static void place_bits(uint64_t n, unsigned *ret_int, unsigned *ret_frac)
{
	unsigned b = 0;
	uint64_t top;

	while (b < 63 && (n >> (b + 1)))
		b++;
	/* linear interpolation of the fraction: good to ~0.09 bit, enough for a log */
	top = 1ULL << b;
	*ret_int = b;
	*ret_frac = n ? (unsigned)(((n - top) * 100) / (top ? top : 1)) : 0;
	if (*ret_frac > 99)
		*ret_frac = 99;
}

/*
 * What nothing of the kernel's may touch, into avoid[] (room for
 * KERNEL_LAYOUT_AVOID_MAX + 1) and sp: the loader's own image (already not
 * free, listed to say so) and what the protocol keeps the kernel (and its
 * data) out of.  Returns how many.
 */
static size_t place_avoid(const struct loader *L, struct slot_params *sp,
			  struct mem_region *avoid)
{
	size_t n = 0;

	avoid[n].addr = (uint64_t)(UINTN)L->li->ImageBase;
	avoid[n].size = L->li->ImageSize;
	avoid[n].type = E820_RESERVED;
	avoid[n++].flags = 0;
	for (size_t i = 0; i < L->layout.navoid && i < KERNEL_LAYOUT_AVOID_MAX; i++)
		avoid[n++] = L->layout.avoid[i];
	sp->avoid = avoid;
	sp->navoid = n;
	return n;
}

/*
 * Draw a position for sp->image_size bytes uniformly over the ones memory
 * that is free now offers (sp's alignment and window, clear of the
 * loader's image and the layout's keep-out ranges), and reserve it as
 * `type`; a position firmware refuses is excluded and another drawn.
 * `what` names the thing in the error lines.  Out: *ret_base, *ret_count.
 */
static EFI_STATUS place_in_free(struct loader *L, struct slot_params *sp, UINT32 type,
				const CHAR16 *what, int log_maps, const struct opt_place *force,
				const CHAR16 *force_pre, uint64_t *ret_base, uint64_t *ret_count,
				uint64_t *ret_idx)
{
	struct efi_mmap m;
	struct mem_region *free_r = NULL;
	struct mem_region avoid[PLACE_AVOID_MAX];
	size_t nfree = 0, navoid = 0, navoid0;
	enum ldr_err err;
	EFI_STATUS st;
	uint64_t base = 0, count = 0, fidx = 0;
	slot_draw_fn draw = L->opt.nokaslr ? place_lowest : place_draw;
	void *dctx = &L->sec.drbg;
	unsigned tries = PLACE_TRIES;

	st = mmap_get(&m);
	if (EFI_ERROR(st))
		return log_efi(st, L"GetMemoryMap");
	st = mmap_convert(&m, e820_free_from_efi, &free_r, &nfree);
	if (EFI_ERROR(st))
		goto out;
	navoid = place_avoid(L, sp, avoid);
	/* a map may list memory past the CPU's physical address width */
	if (L->phys_limit && (sp->max_addr == 0 || sp->max_addr > L->phys_limit))
		sp->max_addr = L->phys_limit;
	if (log_maps) {
		struct mem_region *e820;
		size_t ne = 0;

		place_log_efi_map(&m);
		if (!EFI_ERROR(mmap_convert_quiet(&m, e820_from_efi, &e820, &ne))) {
			place_log_regions(e820, ne, L"e820", NULL);
			log_info(L"theoretical positions (all RAM above kaslr.min): %ld",
				 slot_theoretical(e820, ne, sp));
			mmap_regions_free(&m, e820);
		}
		place_log_regions(free_r, nfree, L"free", sp);
	}

	navoid0 = navoid;
	if (force && force->kind != OPT_PLACE_RANDOM) {
		st = place_forced_phys(&m, free_r, nfree, sp, force, force_pre, &fidx);
		if (EFI_ERROR(st))
			goto out;
		/* that slot or none: a refusal is not followed by another */
		draw = place_fixed;
		dctx = &fidx;
		tries = 1;
	}
	err = slot_place(free_r, nfree, sp, avoid, &navoid, PLACE_AVOID_MAX,
			 draw, dctx, place_reserve, &type, tries, &base, &count);
	if (err == LDR_E_SLOT_REFUSED && tries == 1) {
		char t[OPT_PLACE_TEXT_MAX];
		uint64_t at = 0;

		place_force_text(force, t);
		sp->navoid = navoid0;
		(void)slot_at(free_r, nfree, sp, fidx, &at);
		st = log_fail(EFI_OUT_OF_RESOURCES,
			      L"%s%a: not a usable slot: firmware refused it at [0x%lx, 0x%lx)",
			      force_pre, t, at, at + sp->image_size);
		goto out;
	}
	if (err == LDR_E_NO_SLOT) {
		st = log_fail(EFI_OUT_OF_RESOURCES,
			      L"%s: no free range of %ld bytes in [0x%lx, 0x%lx) (kaslr.min, kaslr.max): give the machine more memory or widen the window",
			      what, sp->image_size, sp->min_addr, sp->max_addr);
		goto out;
	}
	if (err == LDR_E_SLOT_REFUSED) {
		st = log_fail(EFI_OUT_OF_RESOURCES,
			      L"%s: firmware refused %d places in a row", what, PLACE_TRIES);
		goto out;
	}
	if (err != LDR_OK) {
		st = log_ldr(EFI_DEVICE_ERROR, err, L"%s: choosing a place", what);
		goto out;
	}
	*ret_base = base;
	*ret_count = count;
	/* its place among the slots of the first draw (refused ones included) */
	sp->navoid = navoid0;
	if (ret_idx && slot_index_of(free_r, nfree, sp, base, ret_idx) != LDR_OK)
		*ret_idx = 0;
	st = EFI_SUCCESS;
out:
	mmap_regions_free(&m, free_r);
	mmap_free(&m);
	return st;
}

/* ------------------------------------------- a kernel at a fixed address */

/* the free parts of a fixed kernel's range, reserved while it is staged */
#define PLACE_HELD_MAX 8
static struct {
	uint64_t addr, pages;
} place_held[PLACE_HELD_MAX];
static unsigned place_nheld;

/*
 * Does [lo, hi) hold what the loader still runs on after ExitBootServices,
 * in firmware's memory: its stack (64 KiB below RSP), its page-table root,
 * its GDT or IDT?
 */
static int place_live_in(uint64_t lo, uint64_t hi)
{
	struct __attribute__((packed)) {
		uint16_t limit;
		uint64_t base;
	} g, i;
	uint64_t rsp, cr3;

	__asm__ volatile("mov %%rsp, %0; mov %%cr3, %1; sgdt %2; sidt %3"
			 : "=r"(rsp), "=r"(cr3), "=m"(g), "=m"(i));
	cr3 &= ~(uint64_t)(PAGE_SIZE - 1);
	return (rsp < hi + 64 * KIB && rsp + PAGE_SIZE > lo) || (cr3 < hi && cr3 + PAGE_SIZE > lo) ||
	       (g.base < hi && g.base + g.limit >= lo) || (i.base < hi && i.base + i.limit >= lo);
}

/*
 * A kernel that runs only at sp's one slot, where part of the memory is
 * still boot services' (OVMF keeps its DXE firmware volume at 9-21 MiB):
 * the parts free now are reserved, the kernel is laid out in a staging
 * copy elsewhere (L->stage) and moved into place once boot services have
 * exited (place_move).  Returns EFI_SUCCESS with L->stage 0 when the
 * memory is free now (the forced placement, force and pre, reserves it);
 * when it is not free even then, the one line saying why (as force's
 * would, boot services' memory counted free) and an error.
 */
static EFI_STATUS place_stage(struct loader *L, struct slot_params *sp,
			      const struct opt_place *force, const CHAR16 *pre, uint64_t *ret_base)
{
	struct mem_region avoid[KERNEL_LAYOUT_AVOID_MAX + 1], *fr = NULL, *xr = NULL;
	uint64_t base = sp->min_addr, end = sp->max_addr;
	EFI_PHYSICAL_ADDRESS a;
	size_t nf = 0, nx = 0;
	struct efi_mmap m;
	EFI_STATUS st;

	st = mmap_get(&m);
	if (EFI_ERROR(st))
		return log_efi(st, L"GetMemoryMap");
	place_avoid(L, sp, avoid);
	st = mmap_convert(&m, e820_free_from_efi, &fr, &nf);
	if (!EFI_ERROR(st))
		st = mmap_convert(&m, e820_exit_free_from_efi, &xr, &nx);
	if (EFI_ERROR(st) || slot_count(fr, nf, sp))
		goto out;
	if (!slot_count(xr, nx, sp)) {
		/* not even then: why, boot services' memory counted free */
		st = place_forced_phys(&m, xr, nx, sp, force, pre, &L->phys_slot);
		st = EFI_ERROR(st) ? st : EFI_LOAD_ERROR;
		goto out;
	}
	if (place_live_in(base, end)) {
		st = log_fail(EFI_OUT_OF_RESOURCES,
			      L"this kernel is not relocatable: firmware's stack or tables lie at its address 0x%lx",
			      base);
		goto out;
	}
	for (size_t i = 0; i < nf && !EFI_ERROR(st); i++) {
		uint64_t lo = fr[i].addr > base ? fr[i].addr : base;
		uint64_t hi = fr[i].addr + fr[i].size < end ? fr[i].addr + fr[i].size : end;

		if (lo >= hi)
			continue;
		a = lo;
		st = place_nheld == PLACE_HELD_MAX ? EFI_OUT_OF_RESOURCES :
		     uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress,
				       (EFI_MEMORY_TYPE)LDR_EFI_MT_KERNEL, EFI_SIZE_TO_PAGES(hi - lo), &a);
		if (!EFI_ERROR(st)) {
			place_held[place_nheld].addr = lo;
			place_held[place_nheld++].pages = EFI_SIZE_TO_PAGES(hi - lo);
		}
	}
	a = 0;
	if (!EFI_ERROR(st))
		st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
				       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM,
				       EFI_SIZE_TO_PAGES(sp->image_size), &a);
	if (EFI_ERROR(st)) {
		log_efi(st, L"reserving a fixed kernel's memory");
		goto out;
	}
	L->stage = a;
	*ret_base = base;
	log_info(L"fixed kernel staged at 0x%lx, moved after ExitBootServices", a);
out:
	mmap_regions_free(&m, xr);
	mmap_regions_free(&m, fr);
	mmap_free(&m);
	return st;
}

void place_move(const struct loader *L)
{
	if (L->stage)
		memcpy(phys_to_ptr(L->phys_base), phys_to_ptr(L->stage), L->layout.size);
}

static EFI_STATUS place_physical(struct loader *L)
{
	struct slot_params sp;
	struct opt_place fixed;
	const struct opt_place *force = &L->opt.phys;
	const CHAR16 *pre = L"kaslr.phys=";
	uint64_t base = 0, count = 0;
	unsigned bi, bf;
	EFI_STATUS st;

	SetMem(&sp, sizeof(sp), 0);
	sp.image_size = L->layout.size;
	sp.align = L->layout.align;
	sp.min_addr = L->opt.min_addr > PLACE_FLOOR ? L->opt.min_addr : PLACE_FLOOR;
	sp.max_addr = L->opt.max_addr;
	/* what the kernel's own relocations (32-bit absolute fields) or its
	 * command line (mem=) allow */
	if (L->layout.max_end && (sp.max_addr == 0 || sp.max_addr > L->layout.max_end)) {
		sp.max_addr = L->layout.max_end;
		log_info(L"the kernel must end by 0x%lx", sp.max_addr);
	}
	if (L->layout.fixed_phys) {
		/* its own address or none: the window is that one slot, which
		 * kaslr.phys=lowest or highest name too; otherwise forced there,
		 * so that one line says why it is not usable */
		sp.min_addr = L->layout.fixed_phys;
		sp.max_addr = L->layout.fixed_phys + sp.image_size;
		if (force->kind == OPT_PLACE_RANDOM) {
			SetMem(&fixed, sizeof(fixed), 0);
			fixed.kind = OPT_PLACE_AT;
			fixed.value = L->layout.fixed_phys;
			force = &fixed;
			pre = L"this kernel is not relocatable: its address ";
		}
		if (force->kind != OPT_PLACE_ABOVE4G &&
		    (force->kind != OPT_PLACE_AT || force->value == L->layout.fixed_phys)) {
			st = place_stage(L, &sp, force, pre, &base);
			if (EFI_ERROR(st))
				return st;
			count = L->stage ? 1 : 0;
		}
	}
	if (!L->stage)
		st = place_in_free(L, &sp, LDR_EFI_MT_KERNEL, L"the kernel", log_verbose, force, pre,
				   &base, &count, &L->phys_slot);
	if (EFI_ERROR(st))
		return st;
	place_bits(count, &bi, &bf);
	log_info(L"physical slots: %ld (%d.%02d bits)", count, bi, bf);
	if (L->layout.fixed_phys) {
		/* its own address, the only one: neither drawn nor chosen */
		L->phys_slots = 1;
		L->phys_slot = 0;
	} else if (L->opt.phys.kind != OPT_PLACE_RANDOM) {
		/* chosen, not drawn: every slot counted, the one told */
		L->flags |= KB_FLAG_FORCED;
		L->phys_slots = count;
	} else {
		/* nokaslr: one position was possible, the lowest (0 bits) */
		L->phys_slots = L->opt.nokaslr ? 1 : count;
	}
	L->phys_base = base;
	return EFI_SUCCESS;
}

EFI_STATUS place_blob(struct loader *L, uint64_t size, uint64_t max_end, UINT32 mem_type,
		      const CHAR16 *what, uint64_t *ret_addr, uint64_t *ret_count)
{
	struct slot_params sp;
	uint64_t end = L->opt.max_addr, count = 0;

	if (size == 0 || size > UINT64_MAX - (PAGE_SIZE - 1))
		return log_fail(EFI_INVALID_PARAMETER, L"%s: cannot place %ld bytes", what, size);
	if (L->layout.max_end && (end == 0 || L->layout.max_end < end))
		end = L->layout.max_end;
	if (max_end && (end == 0 || max_end < end))
		end = max_end;
	SetMem(&sp, sizeof(sp), 0);
	sp.image_size = ldr_align_up(size, PAGE_SIZE);
	sp.align = PAGE_SIZE;
	sp.min_addr = L->opt.min_addr > PLACE_FLOOR ? L->opt.min_addr : PLACE_FLOOR;
	sp.max_addr = end;
	return place_in_free(L, &sp, mem_type, what, 0, NULL, NULL, ret_addr,
			     ret_count ? ret_count : &count, NULL);
}

/*
 * A virtual base drawn over every 2 MiB-aligned position that keeps the
 * image inside the protocol's window, which is one region for the slot
 * core.  Without a window the kernel runs at its physical address.
 */
static EFI_STATUS place_virtual(struct loader *L)
{
	const struct opt_place *f = &L->opt.virt;
	struct mem_region win;
	struct slot_params sp;
	uint64_t base, count, idx = 0;
	char t[OPT_PLACE_TEXT_MAX];
	enum ldr_err err;

	place_force_text(f, t);
	if (L->layout.vwin_hi <= L->layout.vwin_lo) {
		/* lowest and highest are the one position there is */
		if (f->kind == OPT_PLACE_AT)
			return log_fail(EFI_INVALID_PARAMETER,
					L"kaslr.virt=%a: not a usable slot: this kernel runs at its physical address (no virtual window)",
					t);
		if (f->kind != OPT_PLACE_RANDOM)
			L->flags |= KB_FLAG_FORCED;
		L->virt_base = L->phys_base;
		L->virt_slots = 1;
		L->virt_slot = 0;
		return EFI_SUCCESS;
	}
	win.addr = L->layout.vwin_lo;
	win.size = L->layout.vwin_hi - L->layout.vwin_lo;
	win.type = E820_RAM;
	win.flags = 0;
	SetMem(&sp, sizeof(sp), 0);
	sp.image_size = L->layout.size;
	sp.align = SLOT_ALIGN;
	sp.min_addr = win.addr;
	count = slot_count(&win, 1, &sp);
	if (f->kind != OPT_PLACE_RANDOM && count) {
		if (f->kind == OPT_PLACE_HIGHEST)
			idx = count - 1;
		if (f->kind == OPT_PLACE_AT &&
		    slot_index_of(&win, 1, &sp, L->elf.link_vbase + f->value, &idx) != LDR_OK)
			return log_fail(EFI_INVALID_PARAMETER,
					(f->value & (SLOT_ALIGN - 1))
						? L"kaslr.virt=%a: not a usable slot: not a multiple of 2 MiB"
						: L"kaslr.virt=%a: not a usable slot: this kernel's virtual window is [0x%lx, 0x%lx) for its first byte, link base 0x%lx",
					t, L->layout.vwin_lo, L->layout.vwin_hi - L->layout.size,
					L->elf.link_vbase);
		err = slot_pick(&win, 1, &sp, place_fixed, &idx, &base, &count);
	} else {
		err = slot_pick(&win, 1, &sp, L->opt.nokaslr ? place_lowest : place_draw,
				&L->sec.drbg, &base, &count);
		if (err == LDR_OK && slot_index_of(&win, 1, &sp, base, &idx) != LDR_OK)
			idx = 0;
	}
	if (err != LDR_OK)
		return log_ldr(EFI_LOAD_ERROR, err, L"virtual window for a %ld-byte kernel",
			       L->layout.size);
	L->virt_base = base;
	L->virt_slot = idx;
	if (f->kind != OPT_PLACE_RANDOM) {
		L->flags |= KB_FLAG_FORCED;
		L->virt_slots = count;
	} else {
		L->virt_slots = L->opt.nokaslr ? 1 : count;
		if (!L->opt.nokaslr)
			L->flags |= KB_FLAG_VIRT_KASLR;
	}
	log_info(L"virtual slots: %ld", count);
	return EFI_SUCCESS;
}

void place_release(struct loader *L)
{
	if (L->phys_base && !L->stage)
		uefi_call_wrapper(BS->FreePages, 2, L->phys_base,
				  EFI_SIZE_TO_PAGES(L->layout.size));
	for (; place_nheld; place_nheld--)
		uefi_call_wrapper(BS->FreePages, 2, place_held[place_nheld - 1].addr,
				  place_held[place_nheld - 1].pages);
	if (L->stage)
		uefi_call_wrapper(BS->FreePages, 2, L->stage, EFI_SIZE_TO_PAGES(L->layout.size));
	L->stage = 0;
	L->phys_base = 0;
}

/* ------------------------------------------- function-granular KASLR */

/* pool bytes the core holds now and at most (verbose reports the peak) */
static struct {
	uint64_t live, peak;
} place_fgk_mem;

static void *place_fgk_pool_alloc(void *ctx, uint64_t size)
{
	void *p = NULL;

	(void)ctx;
	if (size > (UINTN)-1 ||
	    EFI_ERROR(uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, (UINTN)size, &p)))
		return NULL;
	place_fgk_mem.live += size;
	if (place_fgk_mem.live > place_fgk_mem.peak)
		place_fgk_mem.peak = place_fgk_mem.live;
	return p;
}

static void place_fgk_pool_free(void *ctx, void *p, uint64_t size)
{
	(void)ctx;
	place_fgk_mem.live -= size;
	uefi_call_wrapper(BS->FreePool, 1, p);
}

const struct fgk_alloc place_fgk_alloc = {
	.alloc = place_fgk_pool_alloc,
	.free = place_fgk_pool_free,
	.ctx = NULL,
};

/* n / 1000 with three decimals, for millibits */
#define PLACE_MILLI(n) (uint64_t)((n) / 1000), (unsigned)((n) % 1000)

/* verbose: what the shuffle did and what it cost */
static void place_log_fgk(const struct fgk_report *f, uint64_t us)
{
	log_info(L"function-granular KASLR: %d of %d functions moved, %d table(s) of %ld entries re-sorted, %ld us, %ld KiB of pool at most",
		 f->moved, f->functions, f->tables, f->table_entries, us,
		 (place_fgk_mem.peak + KIB - 1) / KIB);
	if (f->entropy_millibits < f->perm_millibits)
		log_info(L"function order: %ld.%03d bits of entropy (log2(%d!) = %ld.%03d, capped by the %d-bit seed)",
			 PLACE_MILLI(f->entropy_millibits), f->functions,
			 PLACE_MILLI(f->perm_millibits), FGK_SEED_BITS);
	else
		log_info(L"function order: %ld.%03d bits of entropy (log2(%d!))",
			 PLACE_MILLI(f->entropy_millibits), f->functions);
}

/*
 * The loaded image relocated for L->virt_base: with the functions shuffled
 * (fgk_apply(), drawing from the placement's generator) when the layout
 * carries a request, else reloc_apply().  Sets L->relocs, L->fgk and the
 * entry's loaded offset; logs its own failure.
 */
static EFI_STATUS place_relocate(struct loader *L, void *dest, uint64_t *ret_entry_off)
{
	const struct kaslr_fgk_request *req = L->layout.fgk;
	struct reloc_report rep;
	uint64_t t0 = log_verbose ? tsc_read() : 0, us;
	enum ldr_err err;

	SetMem(&L->fgk, sizeof(L->fgk), 0);
	SetMem(&rep, sizeof(rep), 0);
	if (req) {
		place_fgk_mem.live = place_fgk_mem.peak = 0;
		err = fgk_apply(&L->elf, req, dest, L->layout.size, L->virt_base, place_draw,
				&L->sec.drbg, &place_fgk_alloc, &L->fgk);
		rep = L->fgk.reloc;
	} else {
		err = reloc_apply(&L->elf, dest, L->layout.size, L->virt_base, &rep);
	}
	if (err == LDR_E_RELOC_TYPE)
		return log_fail(EFI_UNSUPPORTED, L"kernel has relocation type %d, which this loader does not apply; rebuild it as PIE or with -mcmodel=kernel --emit-relocs",
				rep.bad_type);
	if (err != LDR_OK && req && L->fgk.bad_table >= 0 && (uint32_t)L->fgk.bad_table < req->ntables)
		return log_ldr(log_status_of(err), err,
			       L"re-sorting the kernel's table '%a' for its shuffled functions",
			       req->table[L->fgk.bad_table].name);
	if (err != LDR_OK && req)
		return log_ldr(log_status_of(err), err,
			       L"shuffling the kernel's functions and relocating it (after %ld relocations)",
			       rep.count);
	if (err != LDR_OK)
		return log_ldr(EFI_LOAD_ERROR, err, L"relocating the kernel (after %ld relocations)",
			       rep.count);
	us = log_verbose ? (tsc_read() - t0) / tsc_per_us() : 0;
	L->relocs = rep.count;
	*ret_entry_off = L->elf.entry_off;
	if (req) {
		L->flags |= KB_FLAG_FGKASLR;
		*ret_entry_off = L->fgk.entry_off;
		place_log_fgk(&L->fgk, us);
	}
	log_info(L"kernel at phys 0x%lx virt 0x%lx, %ld relocations applied in %ld us",
		 L->phys_base, L->virt_base, rep.count, us);
	return EFI_SUCCESS;
}

EFI_STATUS place_kernel(struct loader *L)
{
	uint64_t entry_off = 0;
	void *dest;
	enum ldr_err err;
	EFI_STATUS st;

	if (L->opt.phys.kind != OPT_PLACE_RANDOM || L->opt.virt.kind != OPT_PLACE_RANDOM)
		log_warn(L"kaslr.phys=/kaslr.virt= given: the kernel goes where they say, not at random");
	st = place_physical(L);
	if (EFI_ERROR(st))
		return st;
	st = place_virtual(L);
	if (EFI_ERROR(st))
		goto fail;
	{
		char pt[OPT_PLACE_TEXT_MAX], vt[OPT_PLACE_TEXT_MAX];

		const char *pw = L->layout.phys_fixed_why, *vw = L->layout.virt_fixed_why;

		place_force_text(&L->opt.phys, pt);
		place_force_text(&L->opt.virt, vt);
		/* one line a test harness can read (kaslr-sweep does); in
		 * brackets how each base was chosen: "kaslr.phys=random" (drawn,
		 * or the lowest with nokaslr), "kaslr.phys=lowest" (forced), or
		 * "fixed: <why>" when the kernel allows one address only */
		log_info(L"placement: phys 0x%lx slot %ld of %ld (%a%a), virt 0x%lx offset 0x%lx slot %ld of %ld (%a%a)",
			 L->phys_base, L->phys_slot, L->phys_slots, pw ? "" : "kaslr.phys=",
			 pw ? pw : pt, L->virt_base, L->virt_base - L->elf.link_vbase, L->virt_slot,
			 L->virt_slots, vw ? "" : "kaslr.virt=", vw ? vw : vt);
	}
	dest = phys_to_ptr(L->stage ? L->stage : L->phys_base);
	err = elf_load(&L->elf, dest, L->layout.size);
	if (err != LDR_OK) {
		st = log_ldr(EFI_LOAD_ERROR, err, L"copying the kernel's segments");
		goto fail;
	}
	st = place_relocate(L, dest, &entry_off);
	if (EFI_ERROR(st))
		goto fail;
	L->entry = (L->layout.enter_phys ? L->phys_base : L->virt_base) + entry_off;
	return EFI_SUCCESS;
fail:
	place_release(L);
	return st;
}
