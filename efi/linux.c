/*
 * linux.c - Linux's x86-64 boot protocol as a boot protocol module
 * (efi/proto.h): a bzImage as distributions ship it (its setup header
 * checked and kept, its payload decompressed here), or a bare vmlinux (ELF
 * plus its appended relocation table), is placed in a physical slot and in
 * Linux's own virtual KASLR window, and entered at its physical
 * startup_64 with RSI = boot_params.  A bzImage built without
 * RANDOMIZE_BASE (no relocation table) keeps its virtual address; one
 * built without RELOCATABLE runs only at its pref_address (one warning;
 * under Secure Boot only if the policy allows nokaslr).  initrd= files are concatenated at a
 * random page-aligned address of their own.
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
#include "linux_cmdline.h"
#include "bzimage.h"
#include "elf_pages.h"
#include "file.h"
#include "sha256.h"
#include "zglue.h"
#include "secureboot.h"
#include "espseed.h"
#include "ukiboot.h"

#define LX_BP_PAGE      0
#define LX_CMDLINE_PAGE 1
#define LX_SEED_LEN     32
/* e820 regions Linux can be given: far more than firmware maps hold (OVMF
 * ~100, large servers a few hundred); a larger map is refused cleanly */
#define LX_WORK_REGIONS 4096
#define LX_WORK_PAGES   ((LX_WORK_REGIONS * sizeof(struct mem_region) + PAGE_SIZE - 1) / PAGE_SIZE)
#define LX_SETUP_BYTES  (2 * LINUX_SETUP_HDR_SIZE + LX_SEED_LEN + \
			 (LX_WORK_REGIONS - LINUX_E820_ZEROPAGE_MAX) * LINUX_E820_ENTRY_SIZE + 8)
#define LX_SETUP_PAGE   2
#define LX_SETUP_PAGES  ((LX_SETUP_BYTES + PAGE_SIZE - 1) / PAGE_SIZE)
#define LX_WORK_PAGE    (LX_SETUP_PAGE + LX_SETUP_PAGES)
#define LX_PAGES        (LX_WORK_PAGE + LX_WORK_PAGES)

_Static_assert(LX_SEED_LEN <= sizeof(((struct loader_secrets *)0)->kernel_seed),
	       "the seed is kept with the loader's secrets");

/* an initrd larger than this is refused unread */
#define LX_INITRD_FILE_MAX (2 * GIB)
/* initrd_addr_max of a bare vmlinux, which has no header to say it */
#define LX_INITRD_MAX_DEFAULT 0x7fffffffULL

static EFI_PHYSICAL_ADDRESS lx_block;
static size_t lx_e820_count; /* entries in the work area after finish */

/* what the bzImage's setup header says, kept past the file's release */
static struct {
	int present;
	uint8_t header[LINUX_BP_SETUP_END - LINUX_BP_SETUP_HEADER];
	uint32_t header_len;
	uint32_t initrd_addr_max;
	uint16_t xloadflags;
	uint32_t cmdline_size;
	uint8_t relocatable;
	uint64_t pref_address;
} lx_hdr;

/* the initrds, concatenated */
static EFI_PHYSICAL_ADDRESS lx_initrd;
static uint64_t lx_initrd_size;

static uint8_t *lx_page(unsigned n)
{
	return (uint8_t *)phys_to_ptr(lx_block) + (UINTN)n * PAGE_SIZE;
}

static EFI_STATUS linux_cmdline_placement(struct loader *L);

/*
 * A bzImage (its setup header's marks), or an x86-64 vmlinux: ELF with
 * Linux's appended relocation table.  Anything else is parsed here, once,
 * into L->elf: the load (this protocol's or the next one's) takes it.
 */
static int linux_probe(struct loader *L)
{
	if (bzimage_detect(L->image_buf, L->image_size))
		return 1;
	L->elf_err = elf_parse_diag(L->image_buf, L->image_size, NULL, &L->elf, &L->elf_wx);
	L->elf_probed = 1;
	return L->elf_err == LDR_OK && linux_detect(&L->elf);
}

/*
 * A bzImage: check its setup header, keep what boot_params needs of it,
 * and replace the image with its decompressed payload, vmlinux.bin.
 */
static EFI_STATUS linux_unpack_bzimage(struct loader *L)
{
	struct bzimage bz;
	void *out;
	uint64_t len, cap;
	enum ldr_err err;

	err = bzimage_parse(L->image_buf, L->image_size, L->opt.max_kernel, &bz);
	if (err == LDR_E_DECOMP_TOO_BIG)
		return loader_too_big(L, L->kernel_path);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s is not a bootable bzImage",
			       L->kernel_path);
	if (bz.setup_header_len > sizeof(lx_hdr.header))
		return log_ldr(EFI_LOAD_ERROR, LDR_E_LINUX_SETUP, L"%s", L->kernel_path);
	log_info(L"%s: bzImage, boot protocol %d.%02d, %a payload of %ld bytes", L->kernel_path,
		 bz.version >> 8, bz.version & 0xff, decomp_format_name(bz.format),
		 bz.payload_len);
	err = bzimage_decompress(&bz, L->opt.max_kernel, &zglue_alloc, &out, &len, &cap);
	LOG_MARK(MARK_BZIMAGE);
	if (err == LDR_E_DECOMP_TOO_BIG)
		return loader_too_big(L, L->kernel_path);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s: its payload", L->kernel_path);
	CopyMem(lx_hdr.header, (void *)bz.setup_header, bz.setup_header_len);
	lx_hdr.header_len = bz.setup_header_len;
	lx_hdr.initrd_addr_max = bz.initrd_addr_max;
	lx_hdr.xloadflags = bz.xloadflags;
	lx_hdr.cmdline_size = bz.cmdline_size;
	lx_hdr.relocatable = bz.relocatable;
	lx_hdr.pref_address = bz.pref_address;
	lx_hdr.present = 1;
	/* the bzImage itself is no longer needed once this is released */
	if (L->image_buf != L->file)
		zglue_alloc.free(zglue_alloc.ctx, L->image_buf, L->image_cap);
	L->image_buf = out;
	L->image_size = len;
	L->image_cap = cap;
	log_info(L"%s: %ld bytes of vmlinux.bin", L->kernel_path, len);
	return EFI_SUCCESS;
}

/*
 * verbose: how many of the kernel's pages are writable and executable and
 * why - pages its init segment's code and data share, mapped so as Linux's
 * own early page tables map all of that segment until it frees init
 * memory; every other page keeps W^X.
 */
static void linux_log_wx(struct loader *L)
{
	struct elf_page_range r[ELF_PAGE_RANGES_MAX];
	unsigned n = 0, i;
	uint64_t pages = 0, first = 0;

	if (!log_verbose || elf_page_map(&L->elf, r, ELF_PAGE_RANGES_MAX, &n, NULL) != LDR_OK)
		return;
	for (i = 0; i < n; i++)
		if ((r[i].flags & (PT_W | PT_X)) == (PT_W | PT_X)) {
			first = pages ? first : r[i].off;
			pages += r[i].size / PAGE_SIZE;
		}
	if (pages)
		log_info(L"W^X: %ld kernel pages RWX (first +0x%lx): %s, as Linux maps them; no other",
			 pages, first, L->elf.wx_by_section ? L"init code and data share them"
							    : L"an RWX segment, no section headers");
}

/*
 * A bzImage that is not relocatable runs only at its own address: one
 * warning, or under Secure Boot a refusal unless the policy allows what
 * nokaslr would do (its layout is then public).
 */
static EFI_STATUS linux_fixed(struct loader *L)
{
	struct kernel_layout *k = &L->layout;
	enum ldr_err err;

	if (L->secure && !(L->policy->allow & OPT_BIT(OPT_K_NOKASLR)))
		return log_fail(EFI_SECURITY_VIOLATION,
				L"%s is not relocatable: Secure Boot is on and the policy does not allow nokaslr",
				L->kernel_path);
	err = linux_fixed_base(&L->elf, lx_hdr.pref_address, &k->fixed_phys);
	if (err != LDR_OK)
		return log_ldr(EFI_LOAD_ERROR, err, L"%s", L->kernel_path);
	/* and where it is linked, virtually too, table or not */
	k->vwin_hi = k->vwin_lo + k->size;
	k->phys_fixed_why = "fixed: not relocatable";
	k->virt_fixed_why = "fixed: not relocatable";
	log_warn(L"%s is not relocatable: it loads at its own address, no KASLR",
		 L->kernel_path);
	return EFI_SUCCESS;
}

static EFI_STATUS linux_load(struct loader *L)
{
	struct kernel_layout *k = &L->layout;
	uint64_t lo, hi;
	enum ldr_err err;
	EFI_STATUS st;

	SetMem(&lx_hdr, sizeof(lx_hdr), 0);
	if (!L->elf_probed) {
		/* a bzImage: its payload is the vmlinux (with or without a
		 * relocation table), parsed once here */
		struct elf_limits lim = elf_default_limits();

		st = linux_unpack_bzimage(L);
		if (EFI_ERROR(st))
			return st;
		lim.linux_payload = 1;
		L->elf_err = elf_parse(L->image_buf, L->image_size, &lim, &L->elf);
		L->elf_probed = 1;
	}
	err = L->elf_err;
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s is not a loadable Linux kernel",
			       L->kernel_path);
	if (!linux_detect(&L->elf))
		return log_fail(EFI_LOAD_ERROR,
				L"%s: the bzImage's payload is not an x86-64 vmlinux",
				L->kernel_path);
	if (lx_hdr.present && lx_hdr.cmdline_size && L->opt.cmdline_len > lx_hdr.cmdline_size)
		return log_fail(EFI_INVALID_PARAMETER,
				L"kernel command line has %d characters; this kernel takes at most %d",
				(int)L->opt.cmdline_len, (int)lx_hdr.cmdline_size);
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
	 * segment is RWX by Linux's own linker script (linux_log_wx) */
	k->enter_phys = 1;
	k->phys_alias_x = 1;
	/* a bzImage whose header does not allow above 4 GiB stays below */
	if (lx_hdr.present && !(lx_hdr.xloadflags & LINUX_XLF_ABOVE_4G))
		k->max_end = 4 * GIB;
	if (lx_hdr.present && !lx_hdr.relocatable) {
		st = linux_fixed(L);
		if (EFI_ERROR(st))
			return st;
	} else if (linux_virt_fixed(&L->elf)) {
		k->virt_fixed_why = "fixed: no relocation table";
		log_warn(L"%s has no relocation table (no RANDOMIZE_BASE): only its physical address is random",
			 L->kernel_path);
	}
	linux_log_wx(L);
	return linux_cmdline_placement(L);
}

/*
 * The kernel's command line governs placement as it does when Linux
 * places itself: nokaslr, mem=, memmap= (include/linux_cmdline.h).
 */
static EFI_STATUS linux_cmdline_placement(struct loader *L)
{
	struct kernel_layout *k = &L->layout;
	struct linux_cmdline_facts f;
	enum ldr_err err;

	err = linux_cmdline_scan(L->opt.cmdline, L->opt.cmdline_len, &f);
	if (err != LDR_OK)
		return log_ldr(EFI_INVALID_PARAMETER, err, L"the kernel command line");
	if (f.too_many)
		/* not all of them could be kept out of the kernel's way */
		return log_fail(EFI_INVALID_PARAMETER,
				L"the kernel command line has more than %d memmap= ranges that keep memory out; the loader keeps out at most %d: merge some",
				LINUX_CMDLINE_AVOID_MAX, LINUX_CMDLINE_AVOID_MAX);
	if (f.nokaslr && !L->opt.nokaslr) {
		L->opt.nokaslr = 1;
		L->flags |= KB_FLAG_NOKASLR;
		log_warn(L"nokaslr on the kernel command line: loading at the lowest valid address");
	}
	if (f.mem_limit && (k->max_end == 0 || f.mem_limit < k->max_end))
		k->max_end = f.mem_limit;
	for (size_t i = 0; i < f.navoid && k->navoid < KERNEL_LAYOUT_AVOID_MAX; i++)
		k->avoid[k->navoid++] = f.avoid[i];
	if (f.mem_limit)
		log_info(L"kernel command line: mem= keeps the kernel below 0x%lx", f.mem_limit);
	if (f.navoid)
		log_info(L"kernel command line: %d memmap= ranges kept out", (int)f.navoid);
	log_info(L"Linux vmlinux, link base 0x%lx", L->elf.link_vbase);
	return EFI_SUCCESS;
}

static void linux_free_initrd(void)
{
	if (lx_initrd)
		uefi_call_wrapper(BS->FreePages, 2, lx_initrd, EFI_SIZE_TO_PAGES(lx_initrd_size));
	lx_initrd = 0;
	lx_initrd_size = 0;
}

/*
 * initrd= files: read each (checked against its pin, the same bytes then
 * used), then all of them concatenated in order, as the EFI stub does, at
 * a random page-aligned address below what the kernel's header allows.
 */
static EFI_STATUS linux_load_initrds(struct loader *L)
{
	void *buf[OPT_INITRD_MAX] = { 0 };
	UINT64 size[OPT_INITRD_MAX] = { 0 };
	CHAR16 path[OPT_PATH_MAX];
	struct file_failure ff;
	uint64_t total = 0, max_end, count = 0, off = 0;
	unsigned i, n = L->opt.ninitrd;
	EFI_STATUS st = EFI_SUCCESS;
	const void *uki_buf;
	uint64_t uki_len;

	/* a unified kernel image's initrd comes first (efi/uki.c) */
	uki_initrd(&uki_buf, &uki_len);
	total = uki_len;

	for (i = 0; i < n && !EFI_ERROR(st); i++) {
		const struct opt_file *f = &L->opt.initrd[i];

		st = file_path_of_option(L->li, f->path, path, OPT_PATH_MAX);
		if (EFI_ERROR(st)) {
			log_efi(st, L"initrd path too long");
			break;
		}
		st = file_read(L->li->DeviceHandle, path, LX_INITRD_FILE_MAX, &buf[i], &size[i], &ff);
		if (EFI_ERROR(st)) {
			file_report(st, L"initrd", path, &ff);
			break;
		}
		/* pinned (by the policy, or by its own :sha256=), and measured */
		st = policy_check_file(L, POLICY_INITRD, path, buf[i], size[i],
				       f->have_sha256 ? f->sha256 : NULL);
		if (!EFI_ERROR(st) && !ldr_add_ok(total, size[i], &total))
			st = log_fail(EFI_BAD_BUFFER_SIZE, L"the initrds add up to more than 2^64 bytes");
	}
	if (!EFI_ERROR(st) && total) {
		/* below initrd_addr_max, unless the kernel takes one anywhere */
		if (!lx_hdr.present)
			max_end = LX_INITRD_MAX_DEFAULT + 1;
		else if (lx_hdr.xloadflags & LINUX_XLF_ABOVE_4G)
			max_end = 0;
		else
			max_end = (uint64_t)lx_hdr.initrd_addr_max + 1;
		st = place_blob(L, total, max_end, LDR_EFI_MT_RECLAIM, L"initrd", &lx_initrd, &count);
	}
	if (!EFI_ERROR(st) && total) {
		lx_initrd_size = total;
		CopyMem(phys_to_ptr(lx_initrd), (void *)uki_buf, uki_len);
		off = uki_len;
		for (i = 0; i < n; i++) {
			CopyMem((uint8_t *)phys_to_ptr(lx_initrd) + off, buf[i], size[i]);
			off += size[i];
		}
		log_info(L"initrd: %d files%s, %ld bytes at 0x%lx (%ld positions)", (int)n,
			 uki_len ? L" after the image's own" : L"", total, lx_initrd, count);
	}
	for (i = 0; i < n; i++)
		file_free(buf[i], size[i]);
	return st;
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
	st = linux_load_initrds(L);
	if (EFI_ERROR(st))
		return st;
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, LX_PAGES, &a);
	if (EFI_ERROR(st)) {
		linux_free_initrd();
		return log_efi(st, L"AllocatePages below 4 GiB for Linux's boot_params");
	}
	lx_block = a;
	SetMem(lx_page(0), LX_PAGES * PAGE_SIZE, 0);
	CopyMem(lx_page(LX_CMDLINE_PAGE), L->opt.cmdline, L->opt.cmdline_len);
	/* Linux credits the seeds it is given: only from a strong pool.  From
	 * the pool, never the placement seed (kaslr.seed= may be public); kept
	 * with the secrets, which are wiped before the jump */
	if (seed_strong(L->sources))
		entropy_derive(L->sec.pool_seed, "linux setup_data rng seed", L->sec.kernel_seed);
	seed_table_install(L);
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
	seed_table_remove();
	linux_free_initrd();
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
	a.kernel_size = L->layout.size;
	a.link_phys = L->elf.pbase;
	a.kaslr = !L->opt.nokaslr && !L->layout.fixed_phys;
	a.e820 = work;
	a.e820_count = n;
	if (seed_strong(L->sources)) {
		a.rng_seed = L->sec.kernel_seed;
		a.rng_seed_len = LX_SEED_LEN;
	}
	a.setup = lx_page(LX_SETUP_PAGE);
	a.setup_phys = ptr_to_phys(a.setup);
	a.setup_cap = LX_SETUP_PAGES * PAGE_SIZE;
	/* EFI hand-over as the kernel's EFI stub gives it: runtime services,
	 * efivarfs, SMBIOS and ESRT through the system table; the map stays
	 * in the hand-off block, which the kernel reserves early */
	if (m->size > UINT32_MAX)
		return LDR_E_OVERFLOW;
	a.efi_systab = ptr_to_phys(ST);
	a.efi_memmap = ptr_to_phys(m->buf);
	a.efi_memmap_size = (uint32_t)m->size;
	a.efi_desc_size = (uint32_t)m->desc_size;
	a.efi_desc_version = m->desc_version;
	a.fb = env->fb.base ? &env->fb : NULL;
	/* as the EFI stub says it, so that lockdown follows Secure Boot */
	a.secure_boot = !L->secure_known ? LINUX_SB_UNKNOWN :
			L->secure ? LINUX_SB_ENABLED : LINUX_SB_DISABLED;
	if (lx_hdr.present) {
		a.setup_header = lx_hdr.header;
		a.setup_header_len = lx_hdr.header_len;
	}
	a.ramdisk = lx_initrd;
	a.ramdisk_size = lx_initrd_size;
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
