/*
 * handoff.c - the last steps, in order:
 *
 *   1. what the CPU offers (NX, 1 GiB pages, 5-level paging)
 *   2. the hand-off block: GDT and TSS, IDT, stacks, final memory map
 *   3. page tables (efi/paging.c)
 *   4. the protocol's hand-off data (prepare)
 *   5. Boot Loader Interface variables, the serial port
 *   6. ExitBootServices, retried on a stale map key (src/ebs.c), the
 *      protocol finishing its data on every map fetched
 *   7. the secrets and the loader's state wiped (loader_wipe_all), the
 *      jump (efi/cpu.S)
 *
 * Every step before 6 that fails is reported on the console and undone;
 * the loader returns the status to whoever started it.  If every
 * ExitBootServices call is refused, the report goes to the serial port
 * only (UEFI allows nothing but the memory services then), the memory is
 * given back and the status returned: the kernel is never entered with
 * boot services alive.
 *
 * The hand-off block, one allocation of the loader's reclaimable type:
 *
 *   page 0            GDT (+0), GDTR (+0x100), IDTR (+0x110), TSS (+0x200)
 *   page 1            IDT (256 gates)       <- also read-only at LDR_IDT_ALIAS
 *   HO_GUARD_PAGE     guard (unmapped)
 *   HO_STACK_PAGE     the kernel's first stack                HO_STACK_PAGES
 *   HO_IST_GUARD      guard (unmapped)
 *   HO_IST_PAGE       exception stacks: #DF, NMI, #PF, #MC    HO_IST_STACKS
 *
 * and the final EFI memory map in an allocation of its own, sized from the
 * map before anything else is allocated (twice it, and room).
 */
#include "loader.h"
#include "proto.h"
#include "paging.h"
#include "log.h"
#include "tpm.h"
#include "desc.h"
#include "exc.h"
#include "serial.h"
#include "zglue.h"
#include "bli.h"
#include "cpuid.h"
#include "e820.h"

#define HO_GDT_OFF      0x000
#define HO_GDTR_OFF     0x100
#define HO_IDTR_OFF     0x110
#define HO_TSS_OFF      0x200
#define HO_IDT_PAGE     1
#define HO_GUARD_PAGE   2
#define HO_STACK_PAGE   (HO_GUARD_PAGE + 1)
#define HO_STACK_PAGES  16
#define HO_IST_GUARD    (HO_STACK_PAGE + HO_STACK_PAGES)
#define HO_IST_PAGE     (HO_IST_GUARD + 1)
#define HO_IST_STACKS   4
#define HO_PAGES        (HO_IST_PAGE + HO_IST_STACKS)

/* which vectors get which interrupt stack (IST index, 1-based) */
static const struct {
	unsigned vector, ist;
} ho_ist_vectors[HO_IST_STACKS] = {
	{ 8, 1 },  /* #DF */
	{ 2, 2 },  /* NMI */
	{ 14, 3 }, /* #PF: a stack overflow hits the guard page */
	{ 18, 4 }, /* #MC */
};

/* descriptors of room in the final map's buffer, beyond twice the map */
#define HO_MAP_SLACK 64
/* a map larger than this is not believed (64 Ki descriptors of 256 bytes) */
#define HO_MAP_MAX   (16 * MIB)

#define MSR_EFER   0xc0000080
#define EFER_NXE   (1ULL << 11)
#define CR4_LA57   (1ULL << 12)

extern void handoff_jump(uint64_t cr3, const void *gdtr, const void *idtr,
			 uint64_t stack_top, uint64_t entry, uint64_t arg)
	__attribute__((noreturn));
extern void cpu_entry_state(void);

#define PIC1_DATA        0x21
#define PIC2_DATA        0xa1
#define MSR_APIC_BASE    0x1b
#define APIC_BASE_X2APIC (1ULL << 10)
#define APIC_BASE_ENABLE (1ULL << 11)
#define APIC_BASE_ADDR   0x000ffffffffff000ULL
#define APIC_VERSION     0x030
#define APIC_TIMER_INIT  0x380
#define APIC_LVT_MASKED  (1u << 16)
#define CPUID1_EDX_APIC  (1u << 9)

struct ho_cpu {
	int nx;     /* CPUID 0x80000001 EDX[20]: execute-disable */
	int gb;     /* CPUID 0x80000001 EDX[26]: 1 GiB pages */
	int la57;   /* the firmware runs with 5-level paging */
};

static uint8_t *ho_block;
static EFI_PHYSICAL_ADDRESS ho_block_phys;
static EFI_PHYSICAL_ADDRESS ho_map_phys;
static UINTN ho_map_pages;

/*
 * The buffer ExitBootServices' memory map goes into: no allocation may
 * happen between the last GetMemoryMap and ExitBootServices, so it is
 * sized now, from the map as it is, for what the page tables, the
 * hand-off data and the firmware's own events may still add.
 */
static EFI_STATUS ho_final_map_buffer(struct handoff_env *env)
{
	UINTN size = 0, dsize = 0;
	EFI_STATUS st;

	st = mmap_probe(&size, &dsize);
	if (EFI_ERROR(st) && st != EFI_UNSUPPORTED)
		return log_efi(st, L"GetMemoryMap (its size)");
	if (st == EFI_UNSUPPORTED || dsize < EFI_MD_MIN_SIZE || size > HO_MAP_MAX)
		return log_ldr(EFI_UNSUPPORTED, dsize < EFI_MD_MIN_SIZE ? LDR_E_MMAP_DESC_SIZE
									: LDR_E_MMAP_TOO_BIG,
			       L"the firmware's memory map");
	ho_map_pages = EFI_SIZE_TO_PAGES(2 * size + HO_MAP_SLACK * dsize);
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, ho_map_pages, &ho_map_phys);
	if (EFI_ERROR(st)) {
		ho_map_phys = 0;
		return log_efi(st, L"AllocatePages for the final memory map");
	}
	/* the kernel gets these pages: only the final map in them */
	SetMem(phys_to_ptr(ho_map_phys), ho_map_pages * PAGE_SIZE, 0);
	env->map_cap = ho_map_pages * PAGE_SIZE;
	env->map_desc_size = dsize;
	return EFI_SUCCESS;
}

static uint64_t ho_page(unsigned n)
{
	return ho_block_phys + (uint64_t)n * PAGE_SIZE;
}


/* Ask the CPU, never assume: firmware setup can turn NX (XD) off. */
static void ho_cpu_features(struct ho_cpu *c)
{
	uint64_t cr4;

	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	c->la57 = (cr4 & CR4_LA57) != 0;
	c->nx = c->gb = 0;
	if (cpuid(0x80000000, 0).eax >= 0x80000001) {
		uint32_t edx = cpuid(0x80000001, 0).edx;

		c->nx = (edx >> 20) & 1;
		c->gb = (edx >> 26) & 1;
	}
}

/*
 * The local APIC's local vector table entries masked, by xAPIC register
 * offset (the x2APIC MSR is 0x800 + offset / 16), each with the lowest
 * "max LVT entry" (version register bits 16-23) that has it.  LINT1 (NMI)
 * is left as firmware set it.
 */
static const struct {
	uint16_t off;
	uint8_t min_maxlvt;
} ho_lvts[] = {
	{ 0x320, 0 }, /* timer */
	{ 0x350, 0 }, /* LINT0 */
	{ 0x370, 0 }, /* error */
	{ 0x340, 4 }, /* performance counters */
	{ 0x330, 5 }, /* thermal sensor */
	{ 0x2f0, 6 }, /* corrected machine-check interrupt */
};

static void ho_outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static uint32_t ho_apic_read(uint64_t base, int x2apic, uint16_t off)
{
	if (x2apic)
		return (uint32_t)cpu_rdmsr(0x800 + off / 16);
	return *(volatile uint32_t *)phys_to_ptr(base + off);
}

static void ho_apic_write(uint64_t base, int x2apic, uint16_t off, uint32_t v)
{
	if (x2apic)
		cpu_wrmsr(0x800 + off / 16, v);
	else
		*(volatile uint32_t *)phys_to_ptr(base + off) = v;
}

/*
 * After ExitBootServices, for protocols that promise it: both 8259 PICs
 * masked, the local APIC timer stopped and its LVT entries masked, so a
 * kernel that sets IF before programming them gets no interrupt it did
 * not ask for.  (The APIC stays enabled or not, xAPIC or x2APIC, as
 * firmware left it.)
 */
static void ho_mask_interrupts(void)
{
	uint64_t ab, base;
	unsigned maxlvt, i;
	int x2;

	ho_outb(PIC1_DATA, 0xff);
	ho_outb(PIC2_DATA, 0xff);
	if (!(cpuid(1, 0).edx & CPUID1_EDX_APIC))
		return;
	ab = cpu_rdmsr(MSR_APIC_BASE);
	if (!(ab & APIC_BASE_ENABLE))
		return;
	x2 = (ab & APIC_BASE_X2APIC) != 0;
	base = ab & APIC_BASE_ADDR;
	maxlvt = (ho_apic_read(base, x2, APIC_VERSION) >> 16) & 0xff;
	ho_apic_write(base, x2, APIC_TIMER_INIT, 0);
	for (i = 0; i < sizeof(ho_lvts) / sizeof(ho_lvts[0]); i++)
		if (maxlvt >= ho_lvts[i].min_maxlvt)
			ho_apic_write(base, x2, ho_lvts[i].off,
				      ho_apic_read(base, x2, ho_lvts[i].off) | APIC_LVT_MASKED);
}

/* GDT with a TSS whose IST serves the early-exception gates; the IDT. */
static void ho_descriptors(struct handoff_env *env)
{
	uint64_t *gdt = (uint64_t *)(ho_block + HO_GDT_OFF);
	uint8_t *tss = ho_block + HO_TSS_OFF;
	void *idt = ho_block + HO_IDT_PAGE * PAGE_SIZE;
	uint64_t ist[DESC_IST_MAX] = { 0 };
	unsigned v, i;

	for (i = 0; i < HO_IST_STACKS; i++)
		ist[ho_ist_vectors[i].ist - 1] = ho_page(HO_IST_PAGE + i) + PAGE_SIZE;
	desc_tss_build(tss, ist);
	desc_gdt_build(gdt, ptr_to_phys(tss));
	desc_make_ptr(ho_block + HO_GDTR_OFF, ptr_to_phys(gdt), DESC_GDT_ENTRIES * 8 - 1);
	for (v = 0; v < DESC_IDT_ENTRIES; v++)
		desc_idt_set_gate(idt, v, exc_stub_table[v < 32 ? v : 32], DESC_KERNEL_CS, 0);
	for (i = 0; i < HO_IST_STACKS; i++)
		desc_idt_set_gate(idt, ho_ist_vectors[i].vector,
				  exc_stub_table[ho_ist_vectors[i].vector], DESC_KERNEL_CS,
				  ho_ist_vectors[i].ist);
	desc_make_ptr(ho_block + HO_IDTR_OFF, LDR_IDT_ALIAS, DESC_IDT_SIZE - 1);

	env->idt_alias = LDR_IDT_ALIAS;
	env->idt_phys = ho_page(HO_IDT_PAGE);
	env->stack_size = HO_STACK_PAGES * PAGE_SIZE;
	/* as after a call: 16-byte aligned minus 8 */
	env->stack_top = ho_page(HO_STACK_PAGE) + env->stack_size - 8;
}

/* ACPI RSDP and the GOP framebuffer, for either protocol to pass on. */
static void ho_platform(struct handoff_env *env)
{
	static EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
	static EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
	EFI_GRAPHICS_OUTPUT_PROTOCOL *gop = NULL;
	UINTN i;

	for (i = 0; i < ST->NumberOfTableEntries; i++)
		if (!CompareGuid(&ST->ConfigurationTable[i].VendorGuid, &acpi20))
			env->acpi_rsdp = ptr_to_phys(ST->ConfigurationTable[i].VendorTable);
	for (i = 0; !env->acpi_rsdp && i < ST->NumberOfTableEntries; i++)
		if (!CompareGuid(&ST->ConfigurationTable[i].VendorGuid, &acpi10))
			env->acpi_rsdp = ptr_to_phys(ST->ConfigurationTable[i].VendorTable);

	if (!EFI_ERROR(uefi_call_wrapper(BS->LocateProtocol, 3, &gop_guid, NULL,
					 (void **)&gop)) && gop && gop->Mode && gop->Mode->Info) {
		EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *mi = gop->Mode->Info;

		env->fb.base = gop->Mode->FrameBufferBase;
		env->fb.size = gop->Mode->FrameBufferSize;
		env->fb.width = mi->HorizontalResolution;
		env->fb.height = mi->VerticalResolution;
		env->fb.pixels_per_scanline = mi->PixelsPerScanLine;
		env->fb.format = mi->PixelFormat;
		env->fb.red_mask = mi->PixelInformation.RedMask;
		env->fb.green_mask = mi->PixelInformation.GreenMask;
		env->fb.blue_mask = mi->PixelInformation.BlueMask;
		env->fb.reserved_mask = mi->PixelInformation.ReservedMask;
	}
}

/* ------------------------------------------------ ExitBootServices */

struct ho_exit_ctx {
	struct loader *L;
	const struct handoff_env *env;
	uint64_t arg;
};

static uint64_t ho_fw_get_map(void *ctx, struct ebs_map *m)
{
	UINTN size = (UINTN)m->cap, key = 0, dsize = 0;
	UINT32 dver = 0;
	EFI_STATUS st;

	(void)ctx;
	st = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, m->buf, &key, &dsize, &dver);
	if (EFI_ERROR(st))
		return st;
	m->size = size;
	m->key = key;
	m->desc_size = dsize;
	m->desc_version = dver;
	return 0;
}

static uint64_t ho_fw_exit(void *ctx, uint64_t key)
{
	struct ho_exit_ctx *x = ctx;

	return uefi_call_wrapper(BS->ExitBootServices, 2, x->L->image, (UINTN)key);
}

static enum ldr_err ho_on_map(void *priv, const struct ebs_map *m)
{
	struct ho_exit_ctx *x = priv;

	return x->L->proto->finish(x->L, x->env, m, &x->arg);
}

/* after a refused ExitBootServices: the serial port is the only voice */
static void ho_report_exit_failure(enum ldr_err err, const struct ebs_result *r)
{
	serial_puts("kaslr-loader: error: ");
	if (err == LDR_E_EBS_REFUSED) {
		serial_puts("ExitBootServices refused ");
		serial_dec(r->tries);
		serial_puts(" fresh memory map keys (last status ");
	} else {
		serial_puts(ldr_strerror(err));
		serial_puts(" (after ");
		serial_dec(r->tries);
		serial_puts(" ExitBootServices calls, status ");
	}
	serial_hex(r->status);
	serial_puts("); the kernel was not started, returning to firmware\n");
}

/* ------------------------------------------------ the hand-off */

EFI_STATUS handoff_boot(struct loader *L)
{
	static struct paging_pool pool;
	struct handoff_env env;
	struct paging_req req;
	struct ho_exit_ctx x;
	struct ebs_firmware fw;
	struct ebs_map m;
	struct ebs_result r;
	struct exc_facts facts;
	struct ho_cpu cpu;
	struct pt pt;
	uint64_t entry;
	int fb_mapped = 0, entry_state;
	enum ldr_err err;
	EFI_STATUS st;

	ho_cpu_features(&cpu);
	if (cpu.la57)
		return log_fail(EFI_UNSUPPORTED, L"firmware runs with 5-level paging, which this loader does not support yet");
	SetMem(&env, sizeof(env), 0);
	if (!cpu.nx) {
		env.flags |= KB_FLAG_NO_NX;
		log_warn(L"the CPU offers no NX (execute-disable; firmware setup may have turned it off): nothing can be mapped no-execute, only write-protected");
	}
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages,
			       (EFI_MEMORY_TYPE)LDR_EFI_MT_RECLAIM, HO_PAGES, &ho_block_phys);
	if (EFI_ERROR(st))
		return log_efi(st, L"AllocatePages for the hand-off block");
	ho_block = phys_to_ptr(ho_block_phys);
	SetMem(ho_block, HO_PAGES * PAGE_SIZE, 0);
	st = ho_final_map_buffer(&env);
	if (EFI_ERROR(st))
		goto fail;
	ho_descriptors(&env);
	ho_platform(&env);

	SetMem(&req, sizeof(req), 0);
	req.idt_page = ho_page(HO_IDT_PAGE);
	req.guards[req.nguards++] = ho_page(HO_GUARD_PAGE);
	req.guards[req.nguards++] = ho_page(HO_IST_GUARD);
	req.fb_base = env.fb.base;
	req.fb_size = env.fb.size;
	req.no_nx = !cpu.nx;
	req.use_1g = cpu.gb;
	req.phys_limit = L->phys_limit;
	st = paging_build(L, &req, &pool, &pt, &fb_mapped);
	if (EFI_ERROR(st))
		goto fail;
	if (!fb_mapped)
		SetMem(&env.fb, sizeof(env.fb), 0); /* the kernel gets no framebuffer */
	env.cr3 = pt.pml4_phys;
	st = L->proto->prepare(L, &env);
	if (EFI_ERROR(st))
		goto fail;
	log_step(L"page tables and hand-off data", MARK_HANDOFF);

	facts.phys_base = L->phys_base;
	facts.virt_base = L->virt_base;
	facts.link_base = L->elf.link_vbase;
	facts.image_size = L->layout.size;
	facts.phys_offset = L->phys_base - L->elf.pbase;
	facts.virt_offset = L->virt_base - L->elf.link_vbase;
	exc_set_facts(&facts);
	ldr_wipe(&facts, sizeof(facts));

	log_info(L"handing off: entry 0x%lx, hand-off block 0x%lx, cr3 0x%lx", L->entry,
		 ho_block_phys, pt.pml4_phys);
	/* last use of boot services before the map is taken: never fatal */
	bli_set_variables(L->image, L->li);
	serial_init();

	x.L = L;
	x.env = &env;
	x.arg = 0;
	fw.get_map = ho_fw_get_map;
	fw.exit = ho_fw_exit;
	fw.ctx = &x;
	SetMem(&m, sizeof(m), 0);
	m.buf = phys_to_ptr(ho_map_phys);
	m.cap = env.map_cap;
	err = ebs_exit(&fw, &m, EBS_MAX_TRIES, ho_on_map, &x, &r);
	if (err != LDR_OK) {
		if (r.tries == 0)
			/* nothing was stopped yet: the console still works */
			st = log_ldr(log_status_of(err), err, L"the final memory map");
		else {
			ho_report_exit_failure(err, &r);
			L->boot_services_gone = 1;
			return log_status_of(err);
		}
		goto fail;
	}

	/* Boot services are gone: from here only the serial port speaks. */
	zglue_leave();
	if (log_verbose && L->proto->after_exit)
		L->proto->after_exit(L);
	/* a kernel fixed where boot services' memory was: into place now */
	place_move(L);
	/* the secrets, then everything the loader knew about the layout */
	entry = L->entry;
	entry_state = L->proto->entry_state;
	loader_wipe_all(L);
	if (cpu.nx)
		cpu_wrmsr(MSR_EFER, cpu_rdmsr(MSR_EFER) | EFER_NXE);
	if (entry_state) {
		ho_mask_interrupts();
		cpu_entry_state();
	}
	LOG_MARK(MARK_JUMP);
	handoff_jump(pt.pml4_phys, ho_block + HO_GDTR_OFF, ho_block + HO_IDTR_OFF,
		     env.stack_top + 8, entry, x.arg);
fail:
	L->proto->release(L); /* gives back only what prepare allocated */
	tpm_remove_linux_event_log();
	paging_release(&pool);
	if (ho_map_phys)
		uefi_call_wrapper(BS->FreePages, 2, ho_map_phys, ho_map_pages);
	ho_map_phys = 0;
	uefi_call_wrapper(BS->FreePages, 2, ho_block_phys, HO_PAGES);
	ho_block = NULL;
	return st;
}
