/*
 * zglue.c - making Debian's libz.a, liblzma.a, liblz4.a and libzstd.a safe
 * inside a UEFI application.
 *
 * The libraries are built with -fstack-protector-strong: their functions
 * read the canary from %fs:0x28.  Under OVMF the FS base is 0, so that read
 * would hit physical address 0x28 - protecting nothing, and faulting where
 * firmware unmaps page 0.  Instead of rebuilding them, the loader gives the
 * canary a real home: while the loader runs, IA32_FS_BASE points at
 * `zglue_tcb` below, whose word at 0x28 holds a random value from the
 * entropy pool.  A smashed frame then calls __stack_chk_fail() here, which
 * reports and leaves through BS->Exit so firmware gets control back.  UEFI
 * firmware on x86-64 does not use FS (PI spec leaves it to the
 * application); the old base is restored on every way out.
 *
 * They are also built for the System V ABI with its 128-byte red zone
 * (zlib's crc32_z keeps a pointer below RSP), while UEFI code runs with
 * interrupts on and firmware's timer handler pushes onto the same stack:
 * an interrupt in the middle of crc32_z clobbered that pointer (seen here:
 * a page fault in crc32_z under OVMF with 2 GiB of guest RAM).  So every
 * call into a library runs at TPL_HIGH_LEVEL (interrupts masked), for a
 * bounded chunk (DECOMP_CHUNK of output, one 8 MiB LZ4 block), and the
 * libraries' state comes from an arena set aside beforehand, because no
 * firmware service may be called at that TPL: a static 64 KiB for zlib,
 * and pages allocated when the core reserves more (an xz dictionary, a
 * zstd window; see decompress.h for the largest).
 */
#include "zglue.h"
#include "cpuid.h"
#include "log.h"

#define MSR_FS_BASE 0xc0000100

/* Only the canary word is read; 64 bytes covers %fs:0x28 comfortably. */
static uint64_t zglue_tcb[8] __attribute__((aligned(64)));
static uint64_t zglue_saved_fs;
static int zglue_active;
static EFI_HANDLE zglue_image;
void (*zglue_abort_hook)(void);
static EFI_TPL zglue_old_tpl;
static int zglue_in_lib; /* inside a library call: allocations come from the arena */


void zglue_enter(EFI_HANDLE image, uint64_t canary)
{
	zglue_image = image;
	/* glibc keeps the low byte zero so string overflows stop at it */
	zglue_tcb[0x28 / 8] = canary & ~0xffULL;
	if (!zglue_active) {
		zglue_saved_fs = cpu_rdmsr(MSR_FS_BASE);
		zglue_active = 1;
	}
	cpu_wrmsr(MSR_FS_BASE, (uint64_t)(UINTN)zglue_tcb);
}

void zglue_wipe(void)
{
	ldr_wipe(zglue_tcb, sizeof(zglue_tcb));
}

void zglue_leave(void)
{
	if (!zglue_active)
		return;
	cpu_wrmsr(MSR_FS_BASE, zglue_saved_fs);
	zglue_active = 0;
}

void __stack_chk_fail(void) __attribute__((noreturn));
void __stack_chk_fail(void)
{
	/* reached from inside a library, at TPL_HIGH_LEVEL: come down first,
	 * or neither ConOut nor Exit may be called */
	if (zglue_in_lib) {
		zglue_in_lib = 0;
		uefi_call_wrapper(BS->RestoreTPL, 1, zglue_old_tpl);
	}
	zglue_leave();
	if (zglue_abort_hook)
		zglue_abort_hook();
	log_fail(EFI_SECURITY_VIOLATION,
		 L"stack corruption detected while decompressing the kernel; giving control back to firmware");
	uefi_call_wrapper(BS->Exit, 4, zglue_image, EFI_SECURITY_VIOLATION, 0, NULL);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/*
 * malloc/free/calloc: the libraries' default allocators (referenced by
 * zutil.o, liblzma's common.o, libzstd's zstd_common.o and its legacy
 * decoders, though the loader always passes its own).  Inside a library
 * call, at TPL_HIGH_LEVEL, no pool may be allocated: they refuse there.
 */
void *malloc(UINTN size);
void free(void *p);
void *calloc(UINTN n, UINTN size);

void *malloc(UINTN size)
{
	return zglue_in_lib ? NULL : AllocatePool(size);
}

void *calloc(UINTN n, UINTN size)
{
	if (zglue_in_lib || (size && n > (UINTN)-1 / size))
		return NULL;
	return AllocateZeroPool(n * size);
}

void free(void *p)
{
	if (p && !zglue_in_lib)
		FreePool(p);
}

/*
 * libzstd's tracing hooks (weak references in zstd_decompress.o): a zero
 * context tells it that tracing is off.  Defined so that no undefined weak
 * symbol, and no GLOB_DAT relocation for it, reaches the image.
 */
unsigned long long ZSTD_trace_decompress_begin(const void *dctx);
void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace);

unsigned long long ZSTD_trace_decompress_begin(const void *dctx)
{
	(void)dctx;
	return 0;
}

void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace)
{
	(void)ctx;
	(void)trace;
}

/*
 * The libraries' state comes from arena regions: a static one of 64 KiB
 * (zlib's state and window; zero-filled .bss, not file bytes) and regions
 * of pages that zglue_reserve_fn() allocates, before a library call, when
 * the core says the library will need more.  Each region is a bump
 * allocator that rewinds when its last allocation is freed (liblzma frees
 * and reallocates its dictionary between blocks) and empties when nothing
 * in it is live.  Page regions are given back when the core says the
 * library has ended (reserve(0)).
 */
#define ZGLUE_ARENA   (64 * KIB)
#define ZGLUE_REGIONS 4
struct zglue_region {
	uint8_t *base;
	UINTN size, used;
	unsigned live;
	UINTN last;              /* offset of the newest allocation */
};
static uint8_t zglue_arena[ZGLUE_ARENA] __attribute__((aligned(16)));
static struct zglue_region zglue_regions[ZGLUE_REGIONS] = {
	{ zglue_arena, ZGLUE_ARENA, 0, 0, 0 },
};

static void *zglue_region_alloc(struct zglue_region *r, UINTN need)
{
	if (!r->base || r->size - r->used < need)
		return NULL;
	r->last = r->used;
	r->used += need;
	r->live++;
	return r->base + r->last;
}

static int zglue_region_free(struct zglue_region *r, uint8_t *p)
{
	if (!r->base || p < r->base || p >= r->base + r->size)
		return 0;
	if (r->live && --r->live == 0)
		r->used = 0;
	else if (p == r->base + r->last)
		r->used = r->last;
	return 1;
}

static void *zglue_alloc_fn(void *ctx, uint64_t size)
{
	EFI_PHYSICAL_ADDRESS a = 0;

	(void)ctx;
	if (zglue_in_lib) {
		void *p = NULL;

		if (size > (UINTN)-1 - 15)
			return NULL;
		for (unsigned i = 0; i < ZGLUE_REGIONS && !p; i++)
			p = zglue_region_alloc(&zglue_regions[i], (UINTN)ldr_align_up(size, 16));
		return p;
	}
	if (EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
					EfiLoaderData, EFI_SIZE_TO_PAGES(size), &a)))
		return NULL;
	return (void *)(UINTN)a;
}

static void zglue_free_fn(void *ctx, void *p, uint64_t size)
{
	(void)ctx;
	if (!p)
		return;
	for (unsigned i = 0; i < ZGLUE_REGIONS; i++)
		if (zglue_region_free(&zglue_regions[i], p))
			return;
	uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)(UINTN)p,
			  EFI_SIZE_TO_PAGES(size));
}

/* Give back the page regions nothing lives in any more. */
static void zglue_release_regions(void)
{
	for (unsigned i = 1; i < ZGLUE_REGIONS; i++) {
		struct zglue_region *r = &zglue_regions[i];

		if (!r->base || r->live)
			continue;
		uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)(UINTN)r->base,
				  EFI_SIZE_TO_PAGES(r->size));
		SetMem(r, sizeof(*r), 0);
	}
}

/*
 * Outside the guard: make room for `bytes` of library state in all (the
 * core's running total), or with 0 give the page regions back.  A new
 * region is as large as the whole total, so that the largest allocation
 * (the dictionary or window) fits in one piece whatever is already used.
 */
static int zglue_reserve_fn(void *ctx, uint64_t bytes)
{
	EFI_PHYSICAL_ADDRESS a = 0;
	uint64_t have = 0;
	UINTN size;

	(void)ctx;
	if (bytes == 0) {
		zglue_release_regions();
		return 1;
	}
	for (unsigned i = 0; i < ZGLUE_REGIONS; i++)
		if (zglue_regions[i].size - zglue_regions[i].used > have)
			have = zglue_regions[i].size - zglue_regions[i].used;
	if (have >= bytes)
		return 1;
	for (unsigned i = 1; i < ZGLUE_REGIONS; i++) {
		struct zglue_region *r = &zglue_regions[i];

		if (r->base)
			continue;
		size = (UINTN)ldr_align_up(bytes, PAGE_SIZE);
		if (EFI_ERROR(uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
						EfiLoaderData, EFI_SIZE_TO_PAGES(size), &a)))
			return 0;
		r->base = (uint8_t *)(UINTN)a;
		r->size = size;
		r->used = 0;
		r->live = 0;
		log_info(L"decompressor state: %ld KiB set aside", (UINT64)size / KIB);
		return 1;
	}
	return 0;
}

static void zglue_guard_fn(void *ctx, int enter)
{
	(void)ctx;
	if (enter) {
		zglue_old_tpl = uefi_call_wrapper(BS->RaiseTPL, 1, TPL_HIGH_LEVEL);
		zglue_in_lib = 1;
	} else {
		zglue_in_lib = 0;
		uefi_call_wrapper(BS->RestoreTPL, 1, zglue_old_tpl);
	}
}

/* verbose: a line at every tenth of a compressed kernel larger than 8 MiB */
static void zglue_progress_fn(void *ctx, uint64_t done, uint64_t total)
{
	static uint64_t prev_done, prev_tenth;
	uint64_t tenth = done * 10 / total;

	(void)ctx;
	if (done < prev_done) /* a new stream */
		prev_tenth = 0;
	prev_done = done;
	if (!log_verbose || total <= 8 * MIB || tenth == prev_tenth)
		return;
	prev_tenth = tenth;
	log_info(L"decompressing: %ld%%", tenth * 10);
}

const struct decomp_alloc zglue_alloc = {
	.alloc = zglue_alloc_fn,
	.free = zglue_free_fn,
	.guard = zglue_guard_fn,
	.reserve = zglue_reserve_fn,
	.progress = zglue_progress_fn,
	.ctx = NULL,
};
