/*
 * handoff.c - the last steps: page tables, GDT, IDT and its read-only alias,
 * the handoff structure, ExitBootServices, and the jump.
 *
 * Everything the kernel inherits lives in one allocation of the loader's
 * "reclaimable" memory type, plus the page-table pages:
 *
 *   block + 0x00000  struct kaslr_boot_info   | GDT at +0x800, GDTR/IDTR at +0xf00
 *   block + 0x01000  IDT (256 gates)          <- also mapped read-only at LDR_IDT_ALIAS
 *   block + 0x02000  memory map (kb_mem_entry[])          HO_MMAP_PAGES
 *   ...              command line                          1 page
 *   ...              final EFI memory map                  HO_EFIMAP_PAGES
 *   ...              guard page (left unmapped)            1 page
 *   ...              stack                                 HO_STACK_PAGES
 */
#include "loader.h"
#include "log.h"
#include "memmap.h"
#include "e820.h"
#include "pagetable.h"
#include "desc.h"
#include "exc.h"
#include "serial.h"
#include "zglue.h"
#include "bli.h"
#include "linux.h"

#define HO_INFO_PAGE    0
#define HO_IDT_PAGE     1
#define HO_MMAP_PAGE    2
/* room for E820_CAP_FOR() of a full HO_EFIMAP_PAGES map of 40-byte descriptors */
#define HO_MMAP_PAGES   40
#define HO_CMDLINE_PAGE (HO_MMAP_PAGE + HO_MMAP_PAGES)
#define HO_EFIMAP_PAGE  (HO_CMDLINE_PAGE + 1)
#define HO_EFIMAP_PAGES 16
#define HO_GUARD_PAGE   (HO_EFIMAP_PAGE + HO_EFIMAP_PAGES)
#define HO_STACK_PAGE   (HO_GUARD_PAGE + 1)
#define HO_STACK_PAGES  16
#define HO_PAGES        (HO_STACK_PAGE + HO_STACK_PAGES)

#define HO_GDT_OFF  0x800
#define HO_GDTR_OFF 0xf00
#define HO_IDTR_OFF 0xf10

/* page-table pages come from chunks of this many pages */
#define HO_PT_CHUNK 32

/* enough chunks for the identity map of 16 TiB with 2 MiB pages */
#define HO_PT_CHUNKS_MAX 256

struct ho_pt_pool {
	uint64_t next, end; /* physical */
	unsigned nchunks;   /* kept so that a failed boot gives them back */
	uint64_t chunk[HO_PT_CHUNKS_MAX];
};

struct __attribute__((packed)) ho_dtr {
	uint16_t limit;
	uint64_t base;
};

extern void handoff_jump(uint64_t cr3, const void *gdtr, const void *idtr,
			 uint64_t stack_top, uint64_t entry, uint64_t info)
	__attribute__((noreturn));

static void *ho_pt_page(void *ctx)
{
	struct ho_pt_pool *p = ctx;
	void *page;

	if (p->next == p->end) {
		EFI_PHYSICAL_ADDRESS a = 0;

		if (p->nchunks == HO_PT_CHUNKS_MAX ||
		    EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
						(EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM,
						HO_PT_CHUNK, &a)))
			return NULL;
		p->chunk[p->nchunks++] = a;
		p->next = a;
		p->end = a + HO_PT_CHUNK * PAGE_SIZE;
	}
	page = phys_to_ptr(p->next);
	p->next += PAGE_SIZE;
	SetMem(page, PAGE_SIZE, 0);
	return page;
}

static uint64_t ho_to_phys(void *ctx, void *page)
{
	(void)ctx;
	return ptr_to_phys(page);
}

static void *ho_to_virt(void *ctx, uint64_t phys)
{
	(void)ctx;
	return phys_to_ptr(phys);
}

static uint64_t ho_page(uint8_t *block, unsigned n)
{
	return ptr_to_phys(block + (UINTN)n * PAGE_SIZE);
}

/* CR4.LA57: five-level paging, which these four-level tables cannot serve */
static int ho_la57(void)
{
	uint64_t cr4;

	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	return (cr4 >> 12) & 1;
}

static uint32_t ho_seg_flags(uint32_t pf)
{
	uint32_t f = 0;

	if (pf & 2) /* PF_W */
		f |= PT_W;
	if (pf & 1) /* PF_X */
		f |= PT_X;
	return f;
}

/*
 * The kernel's page tables:
 *  - identity map of [0, 4 GiB) and of every memory-map range above it,
 *    read-write, no-execute;
 *  - the kernel at its run-time virtual base, 4 KiB pages with each PT_LOAD
 *    segment's own permissions (for identity-run kernels this replaces the
 *    identity map of its range);
 *  - the loader image read-only + executable at its identity address (the
 *    jump and the exception stubs run from it);
 *  - the IDT page once more, read-only, at LDR_IDT_ALIAS;
 *  - the page below the stack left unmapped as a guard.
 */
static EFI_STATUS ho_build_tables(struct loader *L, uint8_t *block, struct pt *pt,
				  struct ho_pt_pool *pool, struct kb_framebuffer *info_fb)
{
	struct pt_alloc a = { .page = ho_pt_page, .to_phys = ho_to_phys,
			      .to_virt = ho_to_virt, .ctx = pool };
	struct efi_mmap m;
	struct mem_region *e820 = NULL;
	size_t n = 0, i;
	uint64_t img, img_size;
	enum ldr_err err;
	EFI_STATUS st;

	err = pt_init(pt, &a);
	if (err != LDR_OK)
		return log_ldr(EFI_OUT_OF_RESOURCES, err, L"page tables");
	st = mmap_get(&m);
	if (EFI_ERROR(st))
		return log_efi(st, L"GetMemoryMap");
	st = mmap_convert(&m, e820_from_efi, &e820, &n);
	if (EFI_ERROR(st))
		goto out;
	err = pt_map_range(pt, 0, 0, 4 * GIB, PT_W);
	for (i = 0; err == LDR_OK && i < n; i++) {
		uint64_t lo = ldr_align_down(e820[i].addr, PAGE_SIZE);
		uint64_t hi = ldr_align_up(e820[i].addr + e820[i].size, PAGE_SIZE);

		if (hi <= 4 * GIB)
			continue;
		if (lo < 4 * GIB)
			lo = 4 * GIB;
		err = pt_map_range(pt, lo, lo, hi - lo, PT_W);
	}
	if (err != LDR_OK) {
		st = log_ldr(EFI_OUT_OF_RESOURCES, err, L"identity-mapping RAM");
		goto out;
	}
	for (i = 0; i < L->elf.nseg; i++) {
		const struct elf_segment *s = &L->elf.seg[i];
		uint64_t off = ldr_align_down(s->load_off, PAGE_SIZE);
		uint64_t end = ldr_align_up(s->load_off + s->memsz, PAGE_SIZE);

		err = pt_map_range(pt, L->virt_base + off, L->phys_base + off, end - off,
				   ho_seg_flags(s->flags));
		/* Linux starts at its physical startup_64: identity too, same
		 * flags (its init segment is RWX by Linux's own linker script) */
		if (err == LDR_OK && L->linux_mode)
			err = pt_map_range(pt, L->phys_base + off, L->phys_base + off,
					   end - off, ho_seg_flags(s->flags));
		if (err != LDR_OK) {
			st = log_ldr(EFI_LOAD_ERROR, err, L"mapping kernel segment %d", (int)i);
			goto out;
		}
	}
	/* a GOP framebuffer above 4 GiB (large BARs) is not RAM: map it too */
	if (info_fb && info_fb->base && info_fb->size &&
	    info_fb->base + info_fb->size > 4 * GIB && info_fb->base + info_fb->size > info_fb->base) {
		uint64_t lo = ldr_align_down(info_fb->base, PAGE_SIZE);
		uint64_t hi = ldr_align_up(info_fb->base + info_fb->size, PAGE_SIZE);

		err = pt_map_range(pt, lo, lo, hi - lo, PT_W);
		if (err != LDR_OK)
			info_fb->base = 0; /* unmappable: the kernel gets no framebuffer */
	}
	img = ldr_align_down((uint64_t)(UINTN)L->li->ImageBase, PAGE_SIZE);
	img_size = ldr_align_up((uint64_t)(UINTN)L->li->ImageBase + L->li->ImageSize,
				PAGE_SIZE) - img;
	err = pt_map_range(pt, img, img, img_size, PT_X);
	if (err == LDR_OK)
		err = pt_map_range(pt, LDR_IDT_ALIAS, ho_page(block, HO_IDT_PAGE), PAGE_SIZE, 0);
	if (err == LDR_OK)
		err = pt_unmap_range(pt, ho_page(block, HO_GUARD_PAGE), PAGE_SIZE);
	if (err != LDR_OK) {
		st = log_ldr(EFI_OUT_OF_RESOURCES, err, L"mapping the loader's pages");
		goto out;
	}
	st = EFI_SUCCESS;
out:
	if (e820)
		FreePool(e820);
	mmap_free(&m);
	return st;
}

static void ho_platform(struct kaslr_boot_info *info)
{
	static EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
	static EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
	EFI_GRAPHICS_OUTPUT_PROTOCOL *gop = NULL;
	UINTN i;

	for (i = 0; i < ST->NumberOfTableEntries; i++)
		if (!CompareGuid(&ST->ConfigurationTable[i].VendorGuid, &acpi20))
			info->acpi_rsdp = (uint64_t)(UINTN)ST->ConfigurationTable[i].VendorTable;
	for (i = 0; !info->acpi_rsdp && i < ST->NumberOfTableEntries; i++)
		if (!CompareGuid(&ST->ConfigurationTable[i].VendorGuid, &acpi10))
			info->acpi_rsdp = (uint64_t)(UINTN)ST->ConfigurationTable[i].VendorTable;
	info->efi_system_table = (uint64_t)(UINTN)ST;

	if (!EFI_ERROR(uefi_call_wrapper(BS->LocateProtocol, 3, &gop_guid, NULL,
					 (void **)&gop)) && gop && gop->Mode && gop->Mode->Info) {
		EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *mi = gop->Mode->Info;

		info->fb.base = gop->Mode->FrameBufferBase;
		info->fb.size = gop->Mode->FrameBufferSize;
		info->fb.width = mi->HorizontalResolution;
		info->fb.height = mi->VerticalResolution;
		info->fb.pixels_per_scanline = mi->PixelsPerScanLine;
		info->fb.format = mi->PixelFormat;
		info->fb.red_mask = mi->PixelInformation.RedMask;
		info->fb.green_mask = mi->PixelInformation.GreenMask;
		info->fb.blue_mask = mi->PixelInformation.BlueMask;
		info->fb.reserved_mask = mi->PixelInformation.ReservedMask;
	}
}

/*
 * After ExitBootServices: the final EFI map -> the protocol's memory map.
 * Pure computation in preallocated space; no firmware, no printing.
 */
static enum ldr_err ho_final_map(struct kaslr_boot_info *info, uint8_t *block,
				 const struct efi_mmap *m)
{
	struct mem_region *r = (struct mem_region *)(block + HO_MMAP_PAGE * PAGE_SIZE);
	struct kb_mem_entry *e = (struct kb_mem_entry *)r;
	size_t cap = HO_MMAP_PAGES * PAGE_SIZE / sizeof(*r), n = 0, i;
	enum ldr_err err;

	_Static_assert(sizeof(struct mem_region) == sizeof(struct kb_mem_entry),
		       "in-place conversion needs equal sizes");
	err = e820_protocol_from_efi(m->buf, m->size, m->desc_size, r, cap, &n);
	if (err != LDR_OK)
		return err;
	for (i = 0; i < n; i++) {
		struct mem_region t = r[i];

		e[i].addr = t.addr;
		e[i].size = t.size;
		e[i].type = t.type;
		e[i].reserved = 0;
	}
	info->mem_map = ptr_to_phys(e);
	info->mem_map_count = (uint32_t)n;
	info->mem_map_entry_size = sizeof(*e);
	return LDR_OK;
}

/*
 * After ExitBootServices there is no caller to return to: the firmware's
 * services are gone.  Say what failed on the serial port and halt.
 */
static void ho_fatal(const char *what, enum ldr_err err) __attribute__((noreturn));
static void ho_fatal(const char *what, enum ldr_err err)
{
	serial_puts("kaslr-loader: fatal after ExitBootServices: ");
	serial_puts(what);
	if (err != LDR_OK) {
		serial_puts(": ");
		serial_puts(ldr_strerror(err));
	}
	serial_puts("; halting\n");
	for (;;)
		__asm__ volatile("cli; hlt");
}

EFI_STATUS handoff_boot(struct loader *L)
{
	EFI_PHYSICAL_ADDRESS blk = 0;
	uint8_t *block;
	struct kaslr_boot_info *info;
	static struct ho_pt_pool pool;
	struct pt pt;
	struct efi_mmap m;
	struct exc_facts facts;
	struct ho_dtr *gdtr, *idtr;
	uint64_t *gdt;
	enum ldr_err err;
	EFI_STATUS st;
	unsigned v;
	int tries;

	if (ho_la57())
		return log_fail(EFI_UNSUPPORTED, L"firmware runs with 5-level paging, which this loader does not support yet");
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, HO_PAGES, &blk);
	if (EFI_ERROR(st))
		return log_efi(st, L"AllocatePages for the handoff data");
	block = phys_to_ptr(blk);
	SetMem(block, HO_PAGES * PAGE_SIZE, 0);
	info = (struct kaslr_boot_info *)block;

	info->magic = KB_MAGIC;
	info->version = KB_VERSION;
	info->size = sizeof(*info);
	info->phys_base = L->phys_base;
	info->virt_base = L->virt_base;
	info->link_base = L->elf.link_vbase;
	info->phys_offset = L->phys_base - L->elf.pbase;
	info->virt_offset = L->virt_base - L->elf.link_vbase;
	info->image_size = 0;
	for (v = 0; v < L->elf.nseg; v++) {
		uint64_t end = L->elf.seg[v].load_off + L->elf.seg[v].memsz;

		if (end > info->image_size)
			info->image_size = end;
	}
	info->phys_slots = L->phys_slots;
	info->virt_slots = L->virt_slots;
	info->entropy_sources = L->sources;
	info->flags = L->flags;
	info->cmdline = ho_page(block, HO_CMDLINE_PAGE);
	info->cmdline_len = L->opt.cmdline_len;
	CopyMem(phys_to_ptr(info->cmdline), L->opt.cmdline, L->opt.cmdline_len);
	/* the kernel's seed comes from the pool, never from the placement seed */
	entropy_derive(L->pool_seed, "kernel rng_seed", info->rng_seed);
	ho_platform(info);
	info->idt_alias = LDR_IDT_ALIAS;
	info->idt_phys = ho_page(block, HO_IDT_PAGE);
	info->stack_size = HO_STACK_PAGES * PAGE_SIZE;
	info->stack_top = ho_page(block, HO_STACK_PAGE) + info->stack_size - 8;

	gdt = (uint64_t *)(block + HO_GDT_OFF);
	desc_gdt_build(gdt);
	gdtr = (struct ho_dtr *)(block + HO_GDTR_OFF);
	gdtr->limit = DESC_GDT_ENTRIES * 8 - 1;
	gdtr->base = ptr_to_phys(gdt);
	for (v = 0; v < 256; v++)
		desc_idt_set_gate(phys_to_ptr(info->idt_phys), v,
				  exc_stub_table[v < 32 ? v : 32], DESC_KERNEL_CS, 0);
	idtr = (struct ho_dtr *)(block + HO_IDTR_OFF);
	idtr->limit = 256 * 16 - 1;
	idtr->base = LDR_IDT_ALIAS;

	st = ho_build_tables(L, block, &pt, &pool, &info->fb);
	if (EFI_ERROR(st))
		goto fail;
	info->pml4 = pt.pml4_phys;
	if (L->linux_mode) {
		st = linux_prepare(L);
		if (EFI_ERROR(st))
			goto fail;
	}
	log_step(L"page tables and handoff data");

	facts.phys_base = L->phys_base;
	facts.virt_base = L->virt_base;
	facts.link_base = L->elf.link_vbase;
	facts.image_size = L->load_size;
	facts.phys_offset = info->phys_offset;
	facts.virt_offset = info->virt_offset;
	exc_set_facts(&facts);

	log_info(L"handing off: entry 0x%lx, handoff 0x%lx, cr3 0x%lx", L->entry, blk,
		 pt.pml4_phys);
	/* last use of boot services before the map is taken: never fatal */
	bli_set_variables(L->image, L->li);
	serial_init();

	/* The map key goes stale whenever firmware allocates (e.g. a timer
	 * event): fetch the map again, without allocating, and retry. */
	mmap_init_static(&m, block + HO_EFIMAP_PAGE * PAGE_SIZE, HO_EFIMAP_PAGES * PAGE_SIZE);
	st = mmap_refresh(&m);
	if (EFI_ERROR(st)) {
		log_efi(st, L"GetMemoryMap (final)");
		goto fail;
	}
	for (tries = 0; tries < 4; tries++) {
		st = uefi_call_wrapper(BS->ExitBootServices, 2, L->image, m.key);
		if (!EFI_ERROR(st))
			break;
		/*
		 * UEFI 7.4: after a failed ExitBootServices firmware may have
		 * stopped some services; only GetMemoryMap and ExitBootServices
		 * may be called.  There is no safe way back to the caller now.
		 */
		st = mmap_refresh(&m);
		if (EFI_ERROR(st))
			ho_fatal("GetMemoryMap after a failed ExitBootServices", LDR_OK);
	}
	if (EFI_ERROR(st))
		ho_fatal("ExitBootServices refused four fresh map keys", LDR_OK);

	/* Boot services are gone: from here only the serial port speaks. */
	zglue_leave();
	info->efi_mmap = ptr_to_phys(m.buf);
	info->efi_mmap_size = m.size;
	info->efi_desc_size = m.desc_size;
	info->efi_desc_version = m.desc_version;
	err = ho_final_map(info, block, &m);
	if (err != LDR_OK)
		ho_fatal("final memory map", err);
	if (L->linux_mode) {
		uint64_t bp = 0;

		/* Linux protocol: RSI (and RDI) = boot_params */
		err = linux_finish(L, &m, info->acpi_rsdp, &bp);
		if (err != LDR_OK)
			ho_fatal("Linux boot_params", err);
		handoff_jump(pt.pml4_phys, gdtr, idtr, info->stack_top + 8, L->entry, bp);
	}
	handoff_jump(pt.pml4_phys, gdtr, idtr, info->stack_top + 8, L->entry,
		     ptr_to_phys(info));
fail:
	linux_release(L);
	while (pool.nchunks)
		uefi_call_wrapper(BS->FreePages, 2, pool.chunk[--pool.nchunks], HO_PT_CHUNK);
	uefi_call_wrapper(BS->FreePages, 2, blk, HO_PAGES);
	return st;
}
