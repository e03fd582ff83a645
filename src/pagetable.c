/*
 * pagetable.c - builds x86-64 4-level page tables in pages from a caller's
 * allocator: map (replacing what was there), unmap and look up ranges,
 * splitting 1 GiB / 2 MiB leaves when a smaller range cuts into them.
 * See include/pagetable.h for the walk diagram.
 */
#include <string.h>

#include "pagetable.h"

#define PT_TOP_LEVEL 3 /* 3 = PML4, 2 = PDPT, 1 = PD, 0 = PT */

/* What a walk does at the leaves. */
struct pt_op {
	int unmap;
	int allow_1g;
	uint64_t leaf_bits; /* P/RW/NX/G of a 4 KiB leaf; PS added for large ones */
};

/* Bytes one entry of a table at level covers: 4 KiB, 2 MiB, 1 GiB, 512 GiB. */
static uint64_t pt_entry_span(int level)
{
	return PT_PAGE_4K << (9 * level);
}

static unsigned pt_index(uint64_t virt, int level)
{
	return (unsigned)(virt >> (12 + 9 * level)) & (PT_ENTRIES - 1);
}

static uint64_t pt_leaf_addr_mask(int level)
{
	if (level == 2)
		return PT_ADDR_MASK_1G;
	if (level == 1)
		return PT_ADDR_MASK_2M;
	return PT_ADDR_MASK;
}

/* Bits 63..47 all equal: the address is in one of the two canonical halves. */
static int pt_canonical(uint64_t v)
{
	uint64_t top = v >> 47;

	return top == 0 || top == 0x1ffff;
}

static uint64_t *pt_table(const struct pt *pt, uint64_t phys)
{
	return pt->alloc.to_virt(pt->alloc.ctx, phys);
}

static enum ldr_err pt_new_table(struct pt *pt, uint64_t *ret_phys)
{
	void *page = pt->alloc.page(pt->alloc.ctx);
	uint64_t phys;

	if (!page)
		return LDR_E_NOMEM;
	phys = pt->alloc.to_phys(pt->alloc.ctx, page);
	if ((phys & (PT_PAGE_4K - 1)) || phys >= PT_PHYS_LIMIT)
		return LDR_E_PT_ALIGN;
	/* The contract says zeroed; a stale entry here would map garbage. */
	memset(page, 0, PT_PAGE_4K);
	pt->pages_used++;
	*ret_phys = phys;
	return LDR_OK;
}

/*
 * Replace the large leaf *entry (level 2: 1 GiB, level 1: 2 MiB) by a table of
 * 512 leaves one level down that map the same range with the same attributes.
 * In a 4 KiB PTE, bit 7 is PAT rather than PS, so the large leaf's PAT bit
 * (bit 12) moves there.
 */
static enum ldr_err pt_split(struct pt *pt, uint64_t *entry, int level)
{
	uint64_t e = *entry;
	uint64_t base = e & pt_leaf_addr_mask(level);
	uint64_t attrs = (e & ~PT_ADDR_MASK) | (e & PT_PAT_LARGE);
	uint64_t child_span = pt_entry_span(level - 1);
	uint64_t table_phys;
	uint64_t *t;
	enum ldr_err err;

	err = pt_new_table(pt, &table_phys);
	if (err != LDR_OK)
		return err;
	if (level - 1 == 0) {
		attrs &= ~(PT_PS | PT_PAT_LARGE);
		if (e & PT_PAT_LARGE)
			attrs |= PT_PAT_4K;
	}
	t = pt_table(pt, table_phys);
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		t[i] = (base + i * child_span) | attrs;
	*entry = table_phys | PT_PRESENT | PT_RW;
	return LDR_OK;
}

/*
 * The entry e of a table at level is about to be overwritten: if it points
 * to a table, that table and every table below it are wiped.  Nothing
 * reaches them any more, and the memory is the kernel's after the hand-off:
 * left as they were they would say what was mapped where.  (The pages are
 * not reused: the allocator only hands out.)
 */
static void pt_drop(struct pt *pt, uint64_t e, int level)
{
	uint64_t *t;

	if (level == 0 || !(e & PT_PRESENT) || (level < PT_TOP_LEVEL && (e & PT_PS)))
		return;
	t = pt_table(pt, e & PT_ADDR_MASK);
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		pt_drop(pt, t[i], level - 1);
	memset(t, 0, PT_PAGE_4K);
}

/*
 * Apply op to [virt, virt + size) inside the table at table_phys (of the
 * given level), with phys the target of virt.  size is a non-zero multiple
 * of 4 KiB and the range does not wrap; virt may reach the last page of
 * the address space, so virt + chunk is allowed to wrap to 0 at the end.
 */
static enum ldr_err pt_walk(struct pt *pt, uint64_t table_phys, int level,
			    uint64_t virt, uint64_t phys, uint64_t size,
			    const struct pt_op *op)
{
	uint64_t span = pt_entry_span(level);
	enum ldr_err err;

	while (size) {
		uint64_t *t = pt_table(pt, table_phys);
		uint64_t *e = &t[pt_index(virt, level)];
		uint64_t room = span - (virt & (span - 1));
		uint64_t chunk = size < room ? size : room;
		int whole = chunk == span; /* implies virt is span-aligned */
		int leaf_ok = level == 0 || level == 1 ||
			      (level == 2 && op->allow_1g);

		if (op->unmap && whole) {
			pt_drop(pt, *e, level);
			*e = 0;
		} else if (op->unmap && !(*e & PT_PRESENT)) {
			/* nothing mapped here */
		} else if (!op->unmap && whole && leaf_ok &&
			   !(phys & (span - 1))) {
			pt_drop(pt, *e, level);
			*e = phys | op->leaf_bits | (level ? PT_PS : 0);
		} else {
			if (!(*e & PT_PRESENT)) {
				uint64_t child;

				err = pt_new_table(pt, &child);
				if (err != LDR_OK)
					return err;
				*e = child | PT_PRESENT | PT_RW;
			} else if (level > 0 && level < PT_TOP_LEVEL &&
				   (*e & PT_PS)) {
				err = pt_split(pt, e, level);
				if (err != LDR_OK)
					return err;
			}
			err = pt_walk(pt, *e & PT_ADDR_MASK, level - 1, virt,
				      phys, chunk, op);
			if (err != LDR_OK)
				return err;
		}
		virt += chunk;
		phys += chunk;
		size -= chunk;
	}
	return LDR_OK;
}

/* The virtual-range checks shared by map and unmap, in documented order. */
static enum ldr_err pt_check_virt(uint64_t virt, uint64_t size)
{
	uint64_t last;

	if (size == 0)
		return LDR_E_INVAL;
	if ((virt | size) & (PT_PAGE_4K - 1))
		return LDR_E_PT_ALIGN;
	if (virt > UINT64_MAX - (size - 1))
		return LDR_E_OVERFLOW;
	last = virt + (size - 1);
	if (!pt_canonical(virt) || !pt_canonical(last) ||
	    (virt >> 63) != (last >> 63))
		return LDR_E_INVAL;
	return LDR_OK;
}

uint64_t pt_identity_to_phys(void *ctx, void *page)
{
	(void)ctx;
	return ptr_to_phys(page);
}

void *pt_identity_to_virt(void *ctx, uint64_t phys)
{
	(void)ctx;
	return phys_to_ptr(phys);
}

enum ldr_err pt_init(struct pt *pt, const struct pt_alloc *a)
{
	struct pt tmp;
	enum ldr_err err;

	if (!pt || !a || !a->page || !a->to_phys || !a->to_virt)
		return LDR_E_INVAL;
	tmp.alloc = *a;
	tmp.pages_used = 0;
	tmp.no_nx = 0;
	err = pt_new_table(&tmp, &tmp.pml4_phys);
	if (err != LDR_OK)
		return err;
	*pt = tmp;
	return LDR_OK;
}

enum ldr_err pt_map_range(struct pt *pt, uint64_t virt, uint64_t phys,
			  uint64_t size, uint32_t flags)
{
	struct pt_op op;
	enum ldr_err err;

	if (flags & ~(PT_W | PT_X | PT_GLOBAL | PT_ALLOW_1G))
		return LDR_E_INVAL;
	if (size == 0)
		return LDR_E_INVAL;
	if (phys & (PT_PAGE_4K - 1))
		return LDR_E_PT_ALIGN;
	err = pt_check_virt(virt, size);
	if (err != LDR_OK)
		return err;
	if (phys > UINT64_MAX - (size - 1))
		return LDR_E_OVERFLOW;
	if (phys + (size - 1) >= PT_PHYS_LIMIT)
		return LDR_E_INVAL;

	op.unmap = 0;
	op.allow_1g = (flags & PT_ALLOW_1G) != 0;
	op.leaf_bits = PT_PRESENT;
	if (flags & PT_W)
		op.leaf_bits |= PT_RW;
	/* without EFER.NXE bit 63 is reserved: setting it would fault */
	if (!(flags & PT_X) && !pt->no_nx)
		op.leaf_bits |= PT_NX;
	if (flags & PT_GLOBAL)
		op.leaf_bits |= PT_GLOBAL_BIT;
	return pt_walk(pt, pt->pml4_phys, PT_TOP_LEVEL, virt, phys, size, &op);
}

enum ldr_err pt_unmap_range(struct pt *pt, uint64_t virt, uint64_t size)
{
	struct pt_op op = { .unmap = 1, .allow_1g = 0, .leaf_bits = 0 };
	enum ldr_err err;

	err = pt_check_virt(virt, size);
	if (err != LDR_OK)
		return err;
	return pt_walk(pt, pt->pml4_phys, PT_TOP_LEVEL, virt, 0, size, &op);
}

enum ldr_err pt_lookup(const struct pt *pt, uint64_t virt, uint64_t *ret_phys,
		       uint32_t *ret_flags, uint64_t *ret_page_size)
{
	uint64_t table = pt->pml4_phys;
	int writable = 1, executable = 1;

	if (!pt_canonical(virt))
		return LDR_E_INVAL;
	for (int level = PT_TOP_LEVEL; level >= 0; level--) {
		uint64_t e = pt_table(pt, table)[pt_index(virt, level)];

		if (!(e & PT_PRESENT))
			return LDR_E_PT_UNMAPPED;
		/* Effective rights are the AND over all levels (SDM 4.6). */
		if (!(e & PT_RW))
			writable = 0;
		if (e & PT_NX)
			executable = 0;
		if (level == 0 || (level < PT_TOP_LEVEL && (e & PT_PS))) {
			uint64_t span = pt_entry_span(level);
			uint32_t flags = 0;

			if (writable)
				flags |= PT_W;
			if (executable)
				flags |= PT_X;
			if (e & PT_GLOBAL_BIT)
				flags |= PT_GLOBAL;
			if (ret_phys)
				*ret_phys = (e & pt_leaf_addr_mask(level)) |
					    (virt & (span - 1));
			if (ret_flags)
				*ret_flags = flags;
			if (ret_page_size)
				*ret_page_size = span;
			return LDR_OK;
		}
		table = e & PT_ADDR_MASK;
	}
	return LDR_E_PT_UNMAPPED; /* not reached: level 0 always returns */
}
