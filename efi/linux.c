/*
 * linux.c - Linux's x86-64 boot protocol as a boot protocol module
 * (efi/proto.h): an unmodified vmlinux (ELF plus its appended relocation
 * table) is placed in a physical slot and in Linux's own virtual KASLR
 * window, and entered at its physical startup_64 with RSI = boot_params.
 * The protocol's data itself is src/linux_boot.c; here is the firmware
 * side: one allocation below 4 GiB, of the
 * loader's reclaimable type (e820 "usable" to the kernel, which copies the
 * zero page and command line first thing and memblock-reserves setup_data):
 *
 *   block + page 0            boot_params ("zero page")
 *         + page 1            command line (the kernel reads 2048 bytes)
 *         + LX_SETUP_PAGE     setup_data chain      LX_SETUP_PAGES
 *         + LX_WORK_PAGE      e820 workspace        LX_WORK_PAGES
 *                             (struct mem_region[LX_WORK_REGIONS])
 *
 * Below 4 GiB so that cmd_line_ptr needs no ext_cmd_line_ptr and any 64-bit
 * entry path can reach it; the identity map covers all of [0, 4 GiB).
 */
#include <string.h>

#include "proto.h"
#include "log.h"
#include "tpm.h"
#include "serial.h"
#include "e820.h"
#include "linux_boot.h"

#define LX_BP_PAGE      0
#define LX_CMDLINE_PAGE 1
#define LX_SEED_LEN     32
#define LX_WORK_REGIONS 4096 /* 3 x 1365 descriptors: the final map's buffer */
#define LX_WORK_PAGES   ((LX_WORK_REGIONS * sizeof(struct mem_region) + PAGE_SIZE - 1) / PAGE_SIZE)
#define LX_SETUP_BYTES  (2 * LINUX_SETUP_HDR_SIZE + LX_SEED_LEN + \
			 (LX_WORK_REGIONS - LINUX_E820_ZEROPAGE_MAX) * LINUX_E820_ENTRY_SIZE + 8)
#define LX_SETUP_PAGE   2
#define LX_SETUP_PAGES  ((LX_SETUP_BYTES + PAGE_SIZE - 1) / PAGE_SIZE)
#define LX_WORK_PAGE    (LX_SETUP_PAGE + LX_SETUP_PAGES)
#define LX_PAGES        (LX_WORK_PAGE + LX_WORK_PAGES)

_Static_assert(LX_SEED_LEN <= sizeof(((struct loader_secrets *)0)->kernel_seed),
	       "the seed is kept with the loader's secrets");

static EFI_PHYSICAL_ADDRESS lx_block;
static size_t lx_e820_count; /* entries in the work area after finish */

static uint8_t *lx_page(unsigned n)
{
	return (uint8_t *)phys_to_ptr(lx_block) + (UINTN)n * PAGE_SIZE;
}

/* An x86-64 vmlinux: ELF with Linux's appended relocation table. */
static int linux_probe(const struct loader *L)
{
	static struct elf_image img;

	return elf_parse(L->image_buf, L->image_size, NULL, &img) == LDR_OK &&
	       linux_detect(&img);
}

static EFI_STATUS linux_load(struct loader *L)
{
	struct kernel_layout *k = &L->layout;
	uint64_t lo, hi;
	enum ldr_err err;

	err = elf_parse(L->image_buf, L->image_size, NULL, &L->elf);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s is not a loadable Linux kernel",
			       L->kernel_path);
	SetMem(k, sizeof(*k), 0);
	/* through _end (text to BSS and .brk), 2 MiB-rounded: Linux maps
	 * itself with 2 MiB pages */
	k->size = linux_slot_size(&L->elf);
	k->align = LINUX_ALIGN;
	err = linux_virt_window(&L->elf, k->size, &lo, &hi);
	if (err != LDR_OK)
		return log_ldr(EFI_LOAD_ERROR, err, L"%s: Linux's virtual window", L->kernel_path);
	k->vwin_lo = lo;
	k->vwin_hi = hi;
	/* it starts at its physical startup_64, identity-mapped; its init
	 * segment is RWX by Linux's own linker script */
	k->enter_phys = 1;
	k->phys_alias_x = 1;
	log_info(L"Linux vmlinux, link base 0x%lx", L->elf.link_vbase);
	return EFI_SUCCESS;
}

static EFI_STATUS linux_prepare(struct loader *L, const struct handoff_env *env)
{
	EFI_PHYSICAL_ADDRESS a = 0xffffffffULL;
	EFI_STATUS st;

	(void)env;
	if (L->opt.cmdline_len > LINUX_CMDLINE_MAX)
		return log_fail(EFI_INVALID_PARAMETER,
				L"kernel command line has %d characters; Linux takes at most %d",
				(int)L->opt.cmdline_len, (int)LINUX_CMDLINE_MAX);
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, LX_PAGES, &a);
	if (EFI_ERROR(st))
		return log_efi(st, L"AllocatePages below 4 GiB for Linux's boot_params");
	lx_block = a;
	SetMem(lx_page(0), LX_PAGES * PAGE_SIZE, 0);
	CopyMem(lx_page(LX_CMDLINE_PAGE), L->opt.cmdline, L->opt.cmdline_len);
	/* from the pool, never the placement seed (kaslr.seed= may be public);
	 * kept with the secrets, which are wiped before the jump */
	entropy_derive(L->sec.pool_seed, "linux setup_data rng seed", L->sec.kernel_seed);
	/* after the last measurement: the kernel gets the TPM event log */
	tpm_install_linux_event_log();
	log_info(L"linux: physical base 0x%lx, virtual offset 0x%lx from 0x%lx, entry 0x%lx, boot_params 0x%lx",
		 L->phys_base, L->virt_base - L->elf.link_vbase, L->elf.link_vbase, L->entry,
		 lx_block);
	return EFI_SUCCESS;
}

static void linux_release(struct loader *L)
{
	(void)L;
	if (lx_block)
		uefi_call_wrapper(BS->FreePages, 2, lx_block, LX_PAGES);
	lx_block = 0;
}

/* verbose, on COM1: one line per e820 entry, as Linux prints "BIOS-e820:" */
static void linux_after_exit(const struct loader *L)
{
	const struct mem_region *r = (const struct mem_region *)lx_page(LX_WORK_PAGE);
	size_t i;

	(void)L;
	for (i = 0; i < lx_e820_count; i++) {
		serial_puts("kaslr-loader: linux e820: [mem ");
		serial_hex(r[i].addr);
		serial_puts("-");
		serial_hex(r[i].addr + r[i].size - 1);
		serial_puts("] type ");
		serial_dec(r[i].type);
		serial_puts("\n");
	}
}

/*
 * On a memory map fetched for ExitBootServices: the e820 table into the
 * zero page, then the setup_data chain.  Pure computation; runs again if
 * ExitBootServices refuses the map.
 */
static enum ldr_err linux_finish(struct loader *L, const struct handoff_env *env,
				 const struct ebs_map *m, uint64_t *ret_bp)
{
	struct mem_region *work = (struct mem_region *)lx_page(LX_WORK_PAGE);
	struct linux_boot_args a;
	size_t n = 0;
	enum ldr_err err;

	err = e820_from_efi(m->buf, m->size, m->desc_size, work, LX_WORK_REGIONS, &n);
	if (err != LDR_OK)
		return err;
	memset(&a, 0, sizeof(a));
	a.cmdline = ptr_to_phys(lx_page(LX_CMDLINE_PAGE));
	a.cmdline_len = L->opt.cmdline_len;
	a.acpi_rsdp = env->acpi_rsdp;
	a.kernel_phys = L->phys_base;
	a.kernel_size = L->layout.size;
	a.link_phys = L->elf.pbase;
	a.kaslr = !L->opt.nokaslr;
	a.e820 = work;
	a.e820_count = n;
	a.rng_seed = L->sec.kernel_seed;
	a.rng_seed_len = LX_SEED_LEN;
	a.setup = lx_page(LX_SETUP_PAGE);
	a.setup_phys = ptr_to_phys(a.setup);
	a.setup_cap = LX_SETUP_PAGES * PAGE_SIZE;
	err = linux_boot_params_fill(lx_page(LX_BP_PAGE), &a);
	if (err != LDR_OK)
		return err;
	lx_e820_count = n;
	*ret_bp = ptr_to_phys(lx_page(LX_BP_PAGE));
	return LDR_OK;
}

const struct boot_proto proto_linux = {
	.name = L"Linux",
	.probe = linux_probe,
	.load = linux_load,
	.prepare = linux_prepare,
	.finish = linux_finish,
	.release = linux_release,
	.after_exit = linux_after_exit,
};
