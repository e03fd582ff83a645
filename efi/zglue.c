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
 *
 * libz.a is also built for the System V ABI with its 128-byte red zone
 * (crc32_z keeps a pointer below RSP), while UEFI code runs with
 * interrupts on and firmware's timer handler pushes onto the same stack:
 * an interrupt in the middle of crc32_z clobbered that pointer (seen here:
 * a page fault in crc32_z under OVMF with 2 GiB of guest RAM).  So every call
 * into zlib runs at TPL_HIGH_LEVEL (interrupts masked), for at most
 * INFLATE_CHUNK of output at a time, and zlib's own state comes from an
 * arena allocated beforehand, because no firmware service may be called at
 * that TPL.
 */
#include "zglue.h"
#include "log.h"

#define MSR_FS_BASE 0xc0000100

/* Only the canary word is read; 64 bytes covers %fs:0x28 comfortably. */
static uint64_t zglue_tcb[8] __attribute__((aligned(64)));
static uint64_t zglue_saved_fs;
static int zglue_active;
static EFI_HANDLE zglue_image;
static EFI_TPL zglue_old_tpl;
static int zglue_in_zlib; /* inside the guard: allocations come from the arena */

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

void zglue_wipe(void)
{
	ldr_wipe(zglue_tcb, sizeof(zglue_tcb));
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
	/* reached from inside zlib, at TPL_HIGH_LEVEL: come down first, or
	 * neither ConOut nor Exit may be called */
	if (zglue_in_zlib) {
		zglue_in_zlib = 0;
		uefi_call_wrapper(BS->RestoreTPL, 1, zglue_old_tpl);
	}
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

/*
 * zlib's state (about 7 KiB) and window (32 KiB) come from this arena: a
 * bump allocator, emptied when nothing in it is live.  Static so that it
 * exists before any zlib call; it is zero-filled .bss, not file bytes.
 */
#define ZGLUE_ARENA (64 * KIB)
static uint8_t zglue_arena[ZGLUE_ARENA] __attribute__((aligned(16)));
static UINTN zglue_arena_used;
static unsigned zglue_arena_live;


static void *zglue_alloc_fn(void *ctx, uint64_t size)
{
	EFI_PHYSICAL_ADDRESS a = 0;
	UINTN need = (UINTN)ldr_align_up(size, 16);

	(void)ctx;
	if (zglue_in_zlib) {
		if (size > ZGLUE_ARENA || ZGLUE_ARENA - zglue_arena_used < need)
			return NULL;
		zglue_arena_used += need;
		zglue_arena_live++;
		return zglue_arena + zglue_arena_used - need;
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
	if ((uint8_t *)p >= zglue_arena && (uint8_t *)p < zglue_arena + ZGLUE_ARENA) {
		if (zglue_arena_live && --zglue_arena_live == 0)
			zglue_arena_used = 0;
		return;
	}
	uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)(UINTN)p,
			  EFI_SIZE_TO_PAGES(size));
}

static void zglue_guard_fn(void *ctx, int enter)
{
	(void)ctx;
	if (enter) {
		zglue_old_tpl = uefi_call_wrapper(BS->RaiseTPL, 1, TPL_HIGH_LEVEL);
		zglue_in_zlib = 1;
	} else {
		zglue_in_zlib = 0;
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
	log_info(L"inflating: %ld%%", tenth * 10);
}

const struct inflate_alloc zglue_alloc = {
	.alloc = zglue_alloc_fn,
	.free = zglue_free_fn,
	.guard = zglue_guard_fn,
	.progress = zglue_progress_fn,
	.ctx = NULL,
};
