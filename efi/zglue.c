/*
 * zglue.c - making Debian's libz.a safe inside a UEFI application.
 *
 * libz.a is built with -fstack-protector-strong: inflate() and
 * inflate_table() read the canary from %fs:0x28.  Under OVMF the FS base is
 * 0, so that read would hit physical address 0x28 - protecting nothing, and
 * faulting where firmware unmaps page 0.  Instead of rebuilding zlib, the
 * loader gives the canary a real home: while the loader runs, IA32_FS_BASE
 * points at `zglue_tcb` below, whose word at 0x28 holds a random value from
 * the entropy pool.  A smashed frame then calls __stack_chk_fail() here,
 * which reports and leaves through BS->Exit so firmware gets control back.
 * UEFI firmware on x86-64 does not use FS (PI spec leaves it to the
 * application); the old base is restored on every way out.
 */
#include "zglue.h"
#include "log.h"

#define MSR_FS_BASE 0xc0000100

/* Only the canary word is read; 64 bytes covers %fs:0x28 comfortably. */
static uint64_t zglue_tcb[8] __attribute__((aligned(64)));
static uint64_t zglue_saved_fs;
static int zglue_active;
static EFI_HANDLE zglue_image;

static uint64_t zglue_rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static void zglue_wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
			 "d"((uint32_t)(v >> 32)));
}

void zglue_enter(EFI_HANDLE image, uint64_t canary)
{
	zglue_image = image;
	/* glibc keeps the low byte zero so string overflows stop at it */
	zglue_tcb[0x28 / 8] = canary & ~0xffULL;
	if (!zglue_active) {
		zglue_saved_fs = zglue_rdmsr(MSR_FS_BASE);
		zglue_active = 1;
	}
	zglue_wrmsr(MSR_FS_BASE, (uint64_t)(UINTN)zglue_tcb);
}

void zglue_leave(void)
{
	if (!zglue_active)
		return;
	zglue_wrmsr(MSR_FS_BASE, zglue_saved_fs);
	zglue_active = 0;
}

void __stack_chk_fail(void) __attribute__((noreturn));
void __stack_chk_fail(void)
{
	zglue_leave();
	log_fail(EFI_SECURITY_VIOLATION,
		 L"stack corruption detected while decompressing the kernel; giving control back to firmware");
	uefi_call_wrapper(BS->Exit, 4, zglue_image, EFI_SECURITY_VIOLATION, 0, NULL);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/*
 * malloc/free for zlib's default allocator (referenced by zutil.o though the
 * loader always passes its own), and for anything else in libz.a.
 */
void *malloc(UINTN size);
void free(void *p);
void *calloc(UINTN n, UINTN size);

void *malloc(UINTN size)
{
	return AllocatePool(size);
}

void *calloc(UINTN n, UINTN size)
{
	if (size && n > (UINTN)-1 / size)
		return NULL;
	return AllocateZeroPool(n * size);
}

void free(void *p)
{
	if (p)
		FreePool(p);
}

/* Above this, take whole pages: AllocatePool is not meant for 60 MB kernels. */
#define ZGLUE_PAGES_FROM (1 * MIB)

static void *zglue_alloc_fn(void *ctx, uint64_t size)
{
	EFI_PHYSICAL_ADDRESS a = 0;

	(void)ctx;
	if (size < ZGLUE_PAGES_FROM)
		return AllocatePool(size);
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
	if (size < ZGLUE_PAGES_FROM)
		FreePool(p);
	else
		uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)(UINTN)p,
				  EFI_SIZE_TO_PAGES(size));
}

const struct inflate_alloc zglue_alloc = {
	.alloc = zglue_alloc_fn,
	.free = zglue_free_fn,
	.ctx = NULL,
};
