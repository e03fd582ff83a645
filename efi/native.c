/*
 * native.c - this loader's own boot protocol (include/kaslr_boot.h,
 * include/PROTOCOL.md): any relocatable ELF64 x86-64 kernel that is not
 * Linux.  The hand-off data lives in one allocation of the loader's
 * reclaimable type:
 *
 *   block + page 0              struct kaslr_boot_info
 *         + NV_CMDLINE_PAGE     command line                  1 page
 *         + NV_MODULE_PAGE      kb_module[]                   1 page
 *         + NV_MODSTR_PAGE      the modules' strings          NV_MODSTR_PAGES
 *
 * The memory map (kb_mem_entry[]) has an allocation of its own, sized for
 * the largest map the final EFI map's buffer can hold; the modules
 * themselves are in pages of their own (efi/module.c).
 */
#include <elf.h>

#include "proto.h"
#include "log.h"
#include "tpm.h"
#include "e820.h"
#include "elfnote.h"
#include "fgkaslr.h"
#include "slot.h"
#include "tsc.h"

#define NV_INFO_PAGE    0
#define NV_CMDLINE_PAGE 1
#define NV_MODULE_PAGE  (NV_CMDLINE_PAGE + 1)
#define NV_MODSTR_PAGE  (NV_MODULE_PAGE + 1)
#define NV_MODSTR_PAGES ((OPT_MODULES_MAX * OPT_MODULE_STRING_MAX + PAGE_SIZE - 1) / PAGE_SIZE)
#define NV_PAGES        (NV_MODSTR_PAGE + NV_MODSTR_PAGES)

_Static_assert(OPT_MODULES_MAX * sizeof(struct kb_module) <= PAGE_SIZE,
	       "the module list fits its page");

/* the canonical upper half of the 48-bit address space */
#define NV_UPPER_HALF 0xffff800000000000ULL

static EFI_PHYSICAL_ADDRESS nv_block;
static EFI_PHYSICAL_ADDRESS nv_mmap;
static UINTN nv_mmap_pages;

/* the kernel's function-granular KASLR request, while L->layout.fgk points here */
static struct kaslr_fgk_request nv_fgk;

static uint8_t *nv_page(unsigned n)
{
	return (uint8_t *)phys_to_ptr(nv_block) + (UINTN)n * PAGE_SIZE;
}

/* Whatever the Linux protocol did not take. */
static int native_probe(struct loader *L)
{
	(void)L;
	return 1;
}

/* One line saying why a kernel that asks for function-granular KASLR
 * cannot have it (fgk_check()'s error and report). */
static EFI_STATUS native_fgk_refuse(const struct loader *L, enum ldr_err err,
				    const struct fgk_report *rep)
{
	const CHAR16 *path = L->kernel_path;
	EFI_STATUS st = log_status_of(err);

	switch (err) {
	case LDR_E_FGK_NOT_SECTIONS:
		return log_ldr(st, err, L"%s asks for function-granular KASLR but is %s", path,
			       L->elf.type == ET_DYN ? L"a PIE (ET_DYN)" :
			       L"an ET_EXEC without --emit-relocs sections");
	case LDR_E_FGK_NO_FUNCTIONS:
		return log_ldr(st, err, L"%s has %d code sections named .text.*", path,
			       (int)rep->functions);
	case LDR_E_FGK_LAYOUT:
		return log_ldr(st, err, L"%s asks for function-granular KASLR (%d function sections)",
			       path, (int)rep->functions);
	case LDR_E_FGK_ROOM:
		return log_ldr(st, err, L"%s: a shuffled order of its %d functions may need %ld bytes, it leaves %ld",
			       path, (int)rep->functions, rep->room_need, rep->room_have);
	case LDR_E_FGK_TABLE:
		if (rep->bad_table >= 0 && (uint32_t)rep->bad_table < nv_fgk.ntables)
			return log_ldr(st, err, L"%s: table '%a'", path,
				       nv_fgk.table[rep->bad_table].name);
		break;
	default:
		break;
	}
	return log_ldr(st, err, L"%s: checking its functions for function-granular KASLR", path);
}

/*
 * The functions note: absent, the kernel is relocated as a whole; present,
 * it is checked now (before any slot is drawn) and a kernel that cannot be
 * shuffled as it asks is refused, with nokaslr too - so nokaslr never lets
 * a build boot that would not boot without it.  nokaslr keeps link order.
 */
static EFI_STATUS native_fgk(struct loader *L)
{
	struct fgk_report rep;
	enum ldr_err err;

	err = elf_note_fgkaslr(&L->elf, &nv_fgk);
	if (err == LDR_E_INVAL)
		return EFI_SUCCESS; /* not asked */
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s", L->kernel_path);
	err = fgk_check(&L->elf, &nv_fgk, &place_fgk_alloc, &rep);
	if (err != LDR_OK)
		return native_fgk_refuse(L, err, &rep);
	if (L->opt.nokaslr) {
		log_info(L"nokaslr: the kernel's %d functions stay in link order", (int)rep.functions);
		return EFI_SUCCESS;
	}
	L->layout.fgk = &nv_fgk;
	log_info(L"kernel asks for function-granular KASLR: %d functions in %ld bytes, room for %ld (any order needs at most %ld), %d sorted table(s)",
		 (int)rep.functions, rep.region_size, rep.room_have, rep.room_need,
		 (int)nv_fgk.ntables);
	return EFI_SUCCESS;
}

static EFI_STATUS native_load(struct loader *L)
{
	struct kernel_layout *k = &L->layout;
	const struct elf_wx_clash *wx = &L->elf_wx;
	uint64_t lo, hi;
	enum ldr_err err;
	EFI_STATUS st;

	/* parsed once, by the Linux probe (default limits: W+X is tolerated
	 * only in an image with Linux's relocation table, which is refused
	 * below) */
	if (!L->elf_probed) {
		L->elf_err = elf_parse_diag(L->image_buf, L->image_size, NULL, &L->elf, &L->elf_wx);
		L->elf_probed = 1;
	}
	err = L->elf_err;
	if (err == LDR_E_WX_SEGMENT)
		return log_ldr(log_status_of(err), err, L"%s: program header %d (vaddr 0x%lx)",
			       L->kernel_path, (int)wx->phdr_w, wx->vaddr_w);
	if (err == LDR_E_WX_PAGE)
		return log_ldr(log_status_of(err), err,
			       L"%s: program headers %d (writable, vaddr 0x%lx) and %d (executable, vaddr 0x%lx)",
			       L->kernel_path, (int)wx->phdr_w, wx->vaddr_w, (int)wx->phdr_x, wx->vaddr_x);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s is not a loadable kernel", L->kernel_path);
	if (L->elf.reloc_kind == ELF_RELOC_NONE)
		return log_fail(EFI_UNSUPPORTED,
				L"%s carries no relocations, so it cannot be moved: link it with -pie or --emit-relocs",
				L->kernel_path);
	if (L->elf.reloc_kind == ELF_RELOC_LINUX)
		return log_fail(EFI_UNSUPPORTED,
				L"%s has a Linux relocation table but is not a Linux kernel",
				L->kernel_path);

	SetMem(k, sizeof(*k), 0);
	k->size = L->elf.load_size;
	k->align = L->elf.max_align > SLOT_ALIGN ? L->elf.max_align : SLOT_ALIGN;
	if (L->elf.link_vbase >= NV_UPPER_HALF && L->elf.link_vbase < LDR_HIGH_BASE && log_verbose)
		log_warn(L"%s is linked at 0x%lx, in the upper half but below 0x%lx: it runs identity-mapped at its physical address, with no virtual KASLR",
			 L->kernel_path, L->elf.link_vbase, LDR_HIGH_BASE);
	st = native_fgk(L);
	if (EFI_ERROR(st))
		return st;
	if (L->elf.link_vbase < LDR_HIGH_BASE) {
		/* runs at its physical address, so 32-bit absolute relocation
		 * fields (small code model) bound where it may go */
		k->max_end = L->elf.max_vend;
		return EFI_SUCCESS;
	}

	/* higher half: a virtual base of its own, narrowed by a KASLR note */
	k->vwin_lo = LDR_HIGH_BASE;
	k->vwin_hi = LDR_HIGH_END;
	err = elf_note_vwindow(&L->elf, &lo, &hi);
	if (err == LDR_OK) {
		if (lo < LDR_HIGH_BASE || hi > LDR_HIGH_END)
			return log_fail(EFI_LOAD_ERROR,
					L"%s asks for a virtual window outside [0x%lx, 0x%lx)",
					L->kernel_path, LDR_HIGH_BASE, LDR_HIGH_END);
		k->vwin_lo = lo;
		k->vwin_hi = hi;
		log_info(L"kernel narrows the virtual window to [0x%lx, 0x%lx)", lo, hi);
	} else if (err == LDR_E_OPT_VALUE) {
		return log_fail(EFI_LOAD_ERROR, L"%s: its KASLR window note is malformed",
				L->kernel_path);
	}
	return EFI_SUCCESS;
}

/* The placed modules (L->mods, in the order given) and their strings. */
static void native_modules(const struct loader *L, struct kaslr_boot_info *info)
{
	struct kb_module *mod = (struct kb_module *)nv_page(NV_MODULE_PAGE);
	char *str = (char *)nv_page(NV_MODSTR_PAGE);
	uint32_t i;

	for (i = 0; i < L->nmods; i++) {
		const struct opt_module *om = &L->opt.modules[i];

		mod[i].addr = L->mods[i].addr;
		mod[i].size = L->mods[i].size;
		mod[i].string = ptr_to_phys(str);
		mod[i].string_len = om->string_len;
		CopyMem(str, om->string, om->string_len + 1);
		str += om->string_len + 1;
	}
	info->modules = L->nmods ? ptr_to_phys(mod) : 0;
	info->module_count = L->nmods;
	info->module_entry_size = sizeof(*mod);
}

static EFI_STATUS native_prepare(struct loader *L, const struct handoff_env *env)
{
	struct kaslr_boot_info *info;
	EFI_STATUS st;
	unsigned v;

	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, NV_PAGES, &nv_block);
	if (EFI_ERROR(st)) {
		nv_block = 0;
		return log_efi(st, L"AllocatePages for the hand-off structure");
	}
	SetMem(nv_page(0), NV_PAGES * PAGE_SIZE, 0);
	/* E820_CAP_FOR the most descriptors the final map can hold */
	nv_mmap_pages = EFI_SIZE_TO_PAGES(E820_CAP_FOR(env->map_cap / env->map_desc_size) *
					  sizeof(struct kb_mem_entry));
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, nv_mmap_pages, &nv_mmap);
	if (EFI_ERROR(st)) {
		nv_mmap = 0;
		return log_efi(st, L"AllocatePages for the hand-off memory map");
	}
	info = (struct kaslr_boot_info *)nv_page(NV_INFO_PAGE);
	info->magic = KB_MAGIC;
	info->version = KB_VERSION;
	info->size = sizeof(*info);
	info->phys_base = L->phys_base;
	info->virt_base = L->virt_base;
	info->link_base = L->elf.link_vbase;
	info->phys_offset = L->phys_base - L->elf.pbase;
	info->virt_offset = L->virt_base - L->elf.link_vbase;
	for (v = 0; v < L->elf.nseg; v++) {
		uint64_t end = L->elf.seg[v].load_off + L->elf.seg[v].memsz;

		if (end > info->image_size)
			info->image_size = end;
	}
	info->phys_slots = L->phys_slots;
	info->virt_slots = L->virt_slots;
	info->phys_slot = L->phys_slot;
	info->virt_slot = L->virt_slot;
	info->entropy_sources = L->sources;
	info->flags = L->flags | env->flags;
	info->cmdline = ptr_to_phys(nv_page(NV_CMDLINE_PAGE));
	info->cmdline_len = L->opt.cmdline_len;
	CopyMem(nv_page(NV_CMDLINE_PAGE), L->opt.cmdline, L->opt.cmdline_len);
	/* the kernel's seed comes from the pool, never from the placement seed */
	entropy_derive(L->sec.pool_seed, "kernel rng_seed", info->rng_seed);
	info->acpi_rsdp = env->acpi_rsdp;
	info->efi_system_table = ptr_to_phys(ST);
	info->fb = env->fb;
	info->idt_alias = env->idt_alias;
	info->idt_phys = env->idt_phys;
	info->stack_size = env->stack_size;
	info->stack_top = env->stack_top;
	info->pml4 = env->cr3;
	info->tsc_hz = tsc_hz();
	native_modules(L, info);
	/* after the last measurement: the kernel gets the TPM event log */
	tpm_install_linux_event_log();
	if (L->flags & KB_FLAG_FGKASLR) {
		info->fgk_functions = L->fgk.functions;
		info->fgk_moved = L->fgk.moved;
		info->fgk_perm_millibits = L->fgk.perm_millibits;
		info->fgk_entropy_millibits = L->fgk.entropy_millibits;
	}
	return EFI_SUCCESS;
}

/* the final EFI map -> the protocol's memory map; no firmware, no printing */
static enum ldr_err native_finish(struct loader *L, const struct handoff_env *env,
				  const struct ebs_map *m, uint64_t *ret_arg)
{
	struct kaslr_boot_info *info = (struct kaslr_boot_info *)nv_page(NV_INFO_PAGE);
	struct mem_region *r = (struct mem_region *)phys_to_ptr(nv_mmap);
	struct kb_mem_entry *e = (struct kb_mem_entry *)r;
	size_t cap = nv_mmap_pages * PAGE_SIZE / sizeof(*r), n = 0, i;
	enum ldr_err err;

	(void)L;
	(void)env;
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
	info->efi_mmap = ptr_to_phys(m->buf);
	info->efi_mmap_size = m->size;
	info->efi_desc_size = m->desc_size;
	info->efi_desc_version = m->desc_version;
	*ret_arg = ptr_to_phys(info);
	return LDR_OK;
}

static void native_release(struct loader *L)
{
	(void)L;
	if (nv_block)
		uefi_call_wrapper(BS->FreePages, 2, nv_block, NV_PAGES);
	nv_block = 0;
	if (nv_mmap)
		uefi_call_wrapper(BS->FreePages, 2, nv_mmap, nv_mmap_pages);
	nv_mmap = 0;
}

const struct boot_proto proto_native = {
	.name = L"native",
	.probe = native_probe,
	.load = native_load,
	.prepare = native_prepare,
	.finish = native_finish,
	.release = native_release,
	.entry_state = 1,
	.modules = 1,
};
