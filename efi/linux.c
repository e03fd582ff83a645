/*
 * linux.c - Linux mode's firmware side: one allocation below 4 GiB, of the
 * loader's reclaimable type (e820 "usable" to the kernel, which copies the
 * zero page and command line first thing and memblock-reserves setup_data):
 *
 *   block + page 0            boot_params ("zero page")
 *         + page 1            command line (the kernel reads 2048 bytes)
 *                             + 0xc00: RNG seed, wiped once copied
 *         + LX_SETUP_PAGE     setup_data chain      LX_SETUP_PAGES
 *         + LX_WORK_PAGE      e820 workspace        LX_WORK_PAGES
 *                             (struct mem_region[LX_WORK_REGIONS])
 *
 * Below 4 GiB so that cmd_line_ptr needs no ext_cmd_line_ptr and any 64-bit
 * entry path can reach it; the identity map covers all of [0, 4 GiB).
 */
#include <string.h>

#include "linux.h"
#include "log.h"
#include "e820.h"
#include "serial.h"
#include "linux_boot.h"

#define LX_BP_PAGE      0
#define LX_CMDLINE_PAGE 1
#define LX_SEED_OFF     0xc00
#define LX_SEED_LEN     32
#define LX_WORK_REGIONS 4096 /* 3 x 1365 descriptors: the final map's buffer */
#define LX_WORK_PAGES   ((LX_WORK_REGIONS * sizeof(struct mem_region) + PAGE_SIZE - 1) / PAGE_SIZE)
#define LX_SETUP_BYTES  (2 * LINUX_SETUP_HDR_SIZE + LX_SEED_LEN + \
			 (LX_WORK_REGIONS - LINUX_E820_ZEROPAGE_MAX) * LINUX_E820_ENTRY_SIZE + 8)
#define LX_SETUP_PAGE   2
#define LX_SETUP_PAGES  ((LX_SETUP_BYTES + PAGE_SIZE - 1) / PAGE_SIZE)
#define LX_WORK_PAGE    (LX_SETUP_PAGE + LX_SETUP_PAGES)
#define LX_PAGES        (LX_WORK_PAGE + LX_WORK_PAGES)

_Static_assert(LX_SEED_OFF >= LINUX_CMDLINE_BUF, "seed must not overlap the command line");

static uint8_t *lx_page(struct loader *L, unsigned n)
{
	return (uint8_t *)phys_to_ptr(L->linux_block) + (UINTN)n * PAGE_SIZE;
}

EFI_STATUS linux_prepare(struct loader *L)
{
	EFI_PHYSICAL_ADDRESS a = 0xffffffffULL;
	EFI_STATUS st;

	if (L->opt.cmdline_len > LINUX_CMDLINE_MAX)
		return log_fail(EFI_INVALID_PARAMETER,
				L"kernel command line has %d characters; Linux takes at most %d",
				(int)L->opt.cmdline_len, (int)LINUX_CMDLINE_MAX);
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, LX_PAGES, &a);
	if (EFI_ERROR(st))
		return log_efi(st, L"AllocatePages below 4 GiB for Linux's boot_params");
	L->linux_block = a;
	SetMem(lx_page(L, 0), LX_PAGES * PAGE_SIZE, 0);
	CopyMem(lx_page(L, LX_CMDLINE_PAGE), L->opt.cmdline, L->opt.cmdline_len);
	/* from the pool, never the placement seed (kaslr.seed= may be public) */
	entropy_derive(L->pool_seed, "linux setup_data rng seed",
		       lx_page(L, LX_CMDLINE_PAGE) + LX_SEED_OFF);
	log_info(L"linux: physical base 0x%lx, virtual offset 0x%lx from 0x%lx, entry 0x%lx, boot_params 0x%lx",
		 L->phys_base, L->virt_base - L->elf.link_vbase, L->elf.link_vbase, L->entry,
		 L->linux_block);
	return EFI_SUCCESS;
}

void linux_release(struct loader *L)
{
	if (L->linux_block)
		uefi_call_wrapper(BS->FreePages, 2, L->linux_block, LX_PAGES);
	L->linux_block = 0;
}

/* verbose, on COM1: one line per entry, as Linux prints "BIOS-e820:" */
static void lx_print_e820(const struct mem_region *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		serial_puts("kaslr-loader: linux e820: [mem ");
		serial_hex(r[i].addr);
		serial_puts("-");
		serial_hex(r[i].addr + r[i].size - 1);
		serial_puts("] type ");
		serial_dec(r[i].type);
		serial_puts("\n");
	}
}

enum ldr_err linux_finish(struct loader *L, const struct efi_mmap *m, uint64_t acpi_rsdp,
			  uint64_t *ret_bp)
{
	struct mem_region *work = (struct mem_region *)lx_page(L, LX_WORK_PAGE);
	uint8_t *seed = lx_page(L, LX_CMDLINE_PAGE) + LX_SEED_OFF;
	struct linux_boot_args a;
	size_t n = 0;
	enum ldr_err err;

	err = e820_from_efi(m->buf, m->size, m->desc_size, work, LX_WORK_REGIONS, &n);
	if (err != LDR_OK)
		return err;
	memset(&a, 0, sizeof(a));
	a.cmdline = ptr_to_phys(lx_page(L, LX_CMDLINE_PAGE));
	a.cmdline_len = L->opt.cmdline_len;
	a.acpi_rsdp = acpi_rsdp;
	a.kernel_phys = L->phys_base;
	a.kernel_size = L->load_size;
	a.link_phys = L->elf.pbase;
	a.kaslr = !L->opt.nokaslr;
	a.e820 = work;
	a.e820_count = n;
	a.rng_seed = seed;
	a.rng_seed_len = LX_SEED_LEN;
	a.setup = lx_page(L, LX_SETUP_PAGE);
	a.setup_phys = ptr_to_phys(a.setup);
	a.setup_cap = LX_SETUP_PAGES * PAGE_SIZE;
	err = linux_boot_params_fill(lx_page(L, LX_BP_PAGE), &a);
	memset(seed, 0, LX_SEED_LEN); /* the kernel has its copy in setup_data */
	if (err != LDR_OK)
		return err;
	if (log_verbose)
		lx_print_e820(work, n);
	*ret_bp = ptr_to_phys(lx_page(L, LX_BP_PAGE));
	return LDR_OK;
}
