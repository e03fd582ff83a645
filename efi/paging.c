/*
 * paging.c - the kernel's starting page tables (efi/paging.h): the identity
 * map, firmware runtime memory, the kernel's own mapping and its physical
 * alias, the loader's code, the IDT alias and the guard pages.
 */
#include "paging.h"
#include "log.h"
#include "e820.h"
#include "rtmap.h"
#include "elf_pages.h"

/* loader.lds: the loader's code, [_text, _etext) */
extern char _text[] __attribute__((visibility("hidden")));
extern char _etext[] __attribute__((visibility("hidden")));

/* room for the runtime ranges of a large map plus a MAT */
#define PAGING_RT_MAX 512

static void *paging_page(void *ctx)
{
	struct paging_pool *p = ctx;
	void *page;

	if (p->next == p->end) {
		EFI_PHYSICAL_ADDRESS a = 0;

		if (p->nchunks == PAGING_CHUNKS_MAX ||
		    EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
						(EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM,
						PAGING_CHUNK, &a)))
			return NULL;
		p->chunk[p->nchunks++] = a;
		/* whole: the pages never used hold no stale firmware data */
		SetMem(phys_to_ptr(a), PAGING_CHUNK * PAGE_SIZE, 0);
		p->next = a;
		p->end = a + PAGING_CHUNK * PAGE_SIZE;
	}
	page = phys_to_ptr(p->next);
	p->next += PAGE_SIZE;
	SetMem(page, PAGE_SIZE, 0);
	return page;
}

void paging_release(struct paging_pool *pool)
{
	while (pool->nchunks)
		uefi_call_wrapper(BS->FreePages, 2, pool->chunk[--pool->nchunks], PAGING_CHUNK);
	pool->next = pool->end = 0;
}

/* the Memory Attributes Table, if the firmware publishes one */
static const void *paging_mat(uint64_t *ret_size)
{
	static EFI_GUID mat_guid = { 0xdcfa911d, 0x26eb, 0x469f,
				     { 0xa2, 0x20, 0x38, 0xb7, 0xdc, 0x46, 0x12, 0x20 } };
	const uint8_t *t = NULL;
	uint32_t count, dsize;

	if (EFI_ERROR(LibGetSystemConfigurationTable(&mat_guid, (void **)&t)) || !t)
		return NULL;
	/* its size is in its own header; rtmap checks the rest */
	CopyMem(&count, (void *)(t + 4), 4);
	CopyMem(&dsize, (void *)(t + 8), 4);
	if (dsize > 4096 || count > 65536)
		return NULL;
	*ret_size = RTMAP_MAT_HEADER + (uint64_t)count * dsize;
	return t;
}

/* identity map of RAM and everything below 4 GiB: read-write, no-execute */
static enum ldr_err paging_identity(struct pt *pt, const struct mem_region *e820, size_t n,
				    uint32_t big, uint64_t limit)
{
	enum ldr_err err;
	size_t i;

	err = pt_map_range(pt, 0, 0, 4 * GIB, PT_W | big);
	for (i = 0; err == LDR_OK && i < n; i++) {
		uint64_t lo = ldr_align_down(e820[i].addr, PAGE_SIZE);
		uint64_t hi = ldr_align_up(e820[i].addr + e820[i].size, PAGE_SIZE);

		if (hi <= 4 * GIB || lo >= limit)
			continue;
		if (lo < 4 * GIB)
			lo = 4 * GIB;
		/* past the CPU's physical address width nothing can exist */
		if (hi > limit)
			hi = limit;
		err = pt_map_range(pt, lo, lo, hi - lo, PT_W | big);
	}
	return err;
}

static enum ldr_err paging_runtime(struct pt *pt, const struct efi_mmap *m, uint64_t limit)
{
	static struct rtmap_range r[PAGING_RT_MAX];
	uint64_t mat_size = 0;
	const void *mat = paging_mat(&mat_size);
	size_t n = 0, i;
	int mat_used = 0;
	enum ldr_err err;

	err = rtmap_ranges(m->buf, m->size, m->desc_size, mat, mat_size, r, PAGING_RT_MAX,
			   &n, &mat_used);
	if (err != LDR_OK)
		return err;
	log_info(L"runtime services: %d ranges mapped (%s)", (int)n,
		 mat_used ? L"Memory Attributes Table applied" : L"no Memory Attributes Table");
	for (i = 0; err == LDR_OK && i < n; i++) {
		uint64_t size = r[i].size;

		if (r[i].addr >= limit)
			continue;
		if (size > limit - r[i].addr)
			size = limit - r[i].addr;
		err = pt_map_range(pt, r[i].addr, r[i].addr, size,
				   (r[i].flags & RTMAP_W ? PT_W : 0) |
				   (r[i].flags & RTMAP_X ? PT_X : 0));
	}
	return err;
}

/*
 * The kernel at its virtual base, each page with the union of the
 * permissions of the segments on it (src/elf_pages.c), and its physical
 * alias: the identity map already covers those pages read-write; a kernel
 * that does not run there must not find a writable copy of its code nor
 * executable data.
 */
static enum ldr_err paging_kernel(struct pt *pt, const struct loader *L)
{
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	int aliased = L->virt_base != L->phys_base;
	unsigned n = 0, i;
	enum ldr_err err;

	err = elf_page_map(&L->elf, r, ELF_PAGE_RANGES_MAX, &n, NULL);
	for (i = 0; err == LDR_OK && i < n; i++) {
		uint32_t alias = r[i].flags;

		err = pt_map_range(pt, L->virt_base + r[i].off, L->phys_base + r[i].off,
				   r[i].size, r[i].flags);
		if (err != LDR_OK || !aliased)
			continue;
		if (!L->layout.phys_alias_x)
			alias = (r[i].flags & PT_X) ? 0 : r[i].flags;
		err = pt_map_range(pt, L->phys_base + r[i].off, L->phys_base + r[i].off,
				   r[i].size, alias);
	}
	return err;
}

EFI_STATUS paging_build(const struct loader *L, const struct paging_req *req,
			struct paging_pool *pool, struct pt *pt, int *ret_fb_mapped)
{
	struct pt_alloc a = { .page = paging_page, .to_phys = pt_identity_to_phys,
			      .to_virt = pt_identity_to_virt, .ctx = pool };
	struct efi_mmap m;
	struct mem_region *e820 = NULL;
	size_t n = 0;
	uint64_t text, text_end;
	uint32_t big = req->use_1g ? PT_ALLOW_1G : 0;
	enum ldr_err err;
	unsigned i;
	EFI_STATUS st;

	*ret_fb_mapped = 0;
	err = pt_init(pt, &a);
	if (err != LDR_OK)
		return log_ldr(EFI_OUT_OF_RESOURCES, err, L"page tables");
	pt->no_nx = req->no_nx;
	st = mmap_get(&m);
	if (EFI_ERROR(st))
		return log_efi(st, L"GetMemoryMap");
	/* mmap_convert logs its own failure */
	st = mmap_convert(&m, e820_from_efi, &e820, &n);
	if (EFI_ERROR(st)) {
		mmap_free(&m);
		return st;
	}
	err = paging_identity(pt, e820, n, big, req->phys_limit);
	mmap_regions_free(&m, e820);
	if (err != LDR_OK) {
		mmap_free(&m);
		return log_ldr(EFI_OUT_OF_RESOURCES, err, L"identity-mapping RAM");
	}
	err = paging_runtime(pt, &m, req->phys_limit);
	mmap_free(&m);
	if (err != LDR_OK)
		return log_ldr(EFI_OUT_OF_RESOURCES, err, L"mapping firmware runtime memory");
	err = paging_kernel(pt, L);
	if (err != LDR_OK)
		return log_ldr(EFI_LOAD_ERROR, err, L"mapping the kernel");

	/* a GOP framebuffer above 4 GiB (large BARs) is not RAM: map it too */
	if (req->fb_base && req->fb_size && req->fb_base + req->fb_size > req->fb_base &&
	    req->fb_base + req->fb_size <= req->phys_limit) {
		uint64_t lo = ldr_align_down(req->fb_base, PAGE_SIZE);
		uint64_t hi = ldr_align_up(req->fb_base + req->fb_size, PAGE_SIZE);

		*ret_fb_mapped = hi <= 4 * GIB ||
				 pt_map_range(pt, lo, lo, hi - lo, PT_W) == LDR_OK;
	}

	text = ldr_align_down(ptr_to_phys(_text), PAGE_SIZE);
	text_end = ldr_align_up(ptr_to_phys(_etext), PAGE_SIZE);
	err = pt_map_range(pt, text, text, text_end - text, PT_X);
	if (err == LDR_OK)
		err = pt_map_range(pt, LDR_IDT_ALIAS, req->idt_page, PAGE_SIZE, 0);
	for (i = 0; err == LDR_OK && i < req->nguards; i++)
		err = pt_unmap_range(pt, req->guards[i], PAGE_SIZE);
	if (err != LDR_OK)
		return log_ldr(EFI_OUT_OF_RESOURCES, err, L"mapping the loader's pages");
	log_info(L"page tables: %d pages%s%s", (int)pt->pages_used,
		 req->use_1g ? L", 1 GiB leaves" : L"", req->no_nx ? L", no NX" : L"");
	return EFI_SUCCESS;
}
