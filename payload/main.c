/*
 * payload/main.c - the test kernel's checks.  It verifies, on itself, what
 * the loader promised in include/kaslr_boot.h: placement, relocations,
 * memory map, page permissions, the read-only IDT alias, entropy facts.
 * Prints one line on COM1 and leaves QEMU through isa-debug-exit.
 * Built once per variant: PAYLOAD_VARIANT_PIE, _EXEC, _HIGH, _SMALL, _SHARED or _UPPER, with
 * PAYLOAD_LINK_BASE (lowest p_vaddr) and PAYLOAD_LINK_PHYS (lowest p_paddr).
 */
#include <stddef.h>
#include <stdint.h>

#include "kaslr_boot.h"
#include "cpu.h"
#include "serial.h"
#include "efivars.h"
#include "leftovers.h"
#include "cpustate.h"
#include "sha256.h"
#include "tpmlog.h"

#if defined(PAYLOAD_VARIANT_PIE)
#define PL_VARIANT "pie"
#elif defined(PAYLOAD_VARIANT_EXEC)
#define PL_VARIANT "exec"
#elif defined(PAYLOAD_VARIANT_HIGH)
#define PL_VARIANT "high"
#elif defined(PAYLOAD_VARIANT_SMALL)
#define PL_VARIANT "small"
#elif defined(PAYLOAD_VARIANT_SHARED)
#define PL_VARIANT "shared"
#elif defined(PAYLOAD_VARIANT_UPPER)
#define PL_VARIANT "upper" /* linked in the upper half, below the top 2 GiB */
#else
#error "define PAYLOAD_VARIANT_PIE, _EXEC, _HIGH, _SMALL, _SHARED or _UPPER"
#endif

#define PL_MIB           (1024ULL * 1024)
#define PL_KASLR_ALIGN   (2 * PL_MIB)
#define PL_HIGH_LO       0xffffffff80000000ULL
#define PL_HIGH_HI       0xffffffffffe00000ULL
#define PL_EXIT_PORT     0xf4
#define PL_EXIT_PASS     0x10 /* QEMU exit status 33 */
#define PL_EXIT_FAIL     0x11 /* QEMU exit status 35 */
#define PL_SEL_CODE      0x10
#define PL_SEL_DATA      0x18
#define PL_IDT_LIMIT     (256 * 16 - 1)
#define PL_TMP_VECTORS   32
#define PL_VEC_PF        14
#define PL_EFER_NXE      (1ULL << 11)
#define PL_CR0_WP        (1ULL << 16)
#define PL_RFLAGS_IF     (1ULL << 9)
#define PL_CRASH_WORD    "payload.crash=ud2"
#define PL_STACK_WORD    "payload.crash=stack"
#define PL_SCAN_WORD     "payload.scan=secrets"
/*
 * A planted placement bug, for the placement sweep's own test: with this
 * word, the high variant fails when its image reaches into the top 16 MiB
 * of the virtual window (8 of its 1023 positions), as a kernel that
 * overflows near the top of its window would.
 */
#define PL_BUG_WORD      "payload.bug=top16m"
#define PL_MODULE_WORD   "payload.sha256=" /* in a module's string: its digest */
#define PL_BSS_PROBE     (3 * CPU_PAGE)
#define PL_2G            0x80000000ULL

#define PL_VREAD(x) (*(const volatile __typeof__(x) *)&(x))

/* RIP-relative address of a symbol: its run-time address, whatever the
 * code model, because no relocation is involved. */
#define PL_LEA(sym) ({ uint64_t r_; \
	__asm__("lea " #sym "(%%rip), %0" : "=r"(r_)); r_; })

struct pl_gate {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type; /* 0x8e: present, DPL 0, 64-bit interrupt gate */
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t zero;
};

/* shared with entry.S */
void payload_main(const struct kaslr_boot_info *info, uint64_t entry_rsp);
void payload_crash_site(void) __attribute__((noreturn));
void pl_pf_entry(void);
void payload_unexpected_exception(void);
uint64_t pl_idt_write_probe(uint64_t addr);
struct cpu_idtr pl_loader_idtr;
uint64_t pl_pf_cr2, pl_pf_err, pl_pf_count;

static const struct kaslr_boot_info *pl_info;
static int pl_cmdline_ok;
static struct pl_gate pl_idt[PL_TMP_VECTORS] __attribute__((used, aligned(4096)));
/* must still be zero at entry: the loader zeroes BSS */
static volatile uint8_t pl_bss_probe[PL_BSS_PROBE] __attribute__((used));

/* ------------------------------------------------------ relocated pointers */

/* Objects whose addresses go into two pointer tables (one in .data.rel.ro,
 * one in .data), so the loader must relocate every entry.  Text, rodata,
 * data and bss targets, plus pointers into the middle of arrays. */
#define PL_FUNCS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) \
		    X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define PL_DATAS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) \
		    X(10) X(11)
#define PL_ROS(X)   X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define PL_BSSS(X)  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define PL_INNER(X) X(pl_arr_data, 3) X(pl_arr_data, 7) \
		    X(pl_arr_ro, 5) X(pl_arr_bss, 511)

#define PL_DEF_FN(n) static __attribute__((used, noipa)) \
	uint64_t pl_fn##n(uint64_t x) { return x * (n + 3) + n; }
#define PL_DEF_DATA(n) static volatile uint64_t pl_data##n \
	__attribute__((used)) = 0x5a000 + n;
#define PL_DEF_RO(n) static const uint64_t pl_ro##n \
	__attribute__((used)) = 0xa5000 + n;
#define PL_DEF_BSS(n) static volatile uint64_t pl_bss##n __attribute__((used));
PL_FUNCS(PL_DEF_FN)
PL_DATAS(PL_DEF_DATA)
PL_ROS(PL_DEF_RO)
PL_BSSS(PL_DEF_BSS)
static uint64_t pl_arr_data[8] __attribute__((used)) = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint64_t pl_arr_ro[8] __attribute__((used)) = { 9, 8, 7, 6, 5, 4, 3, 2 };
static uint64_t pl_arr_bss[512] __attribute__((used));

#define PL_P_FN(n)    (const void *)pl_fn##n,
#define PL_P_DATA(n)  (const void *)&pl_data##n,
#define PL_P_RO(n)    (const void *)&pl_ro##n,
#define PL_P_BSS(n)   (const void *)&pl_bss##n,
#define PL_P_INNER(a, i) (const void *)&a[i],
#define PL_TABLE_INIT { PL_FUNCS(PL_P_FN) PL_DATAS(PL_P_DATA) PL_ROS(PL_P_RO) \
			PL_BSSS(PL_P_BSS) PL_INNER(PL_P_INNER) }

/* Not volatile objects (GCC puts those in .data); read through PL_VREAD so
 * each entry is loaded, never folded into a lea. */
static const void *const pl_table_ro[] __attribute__((used)) = PL_TABLE_INIT;
static const void *pl_table_rw[] __attribute__((used)) = PL_TABLE_INIT;
#define PL_TABLE_N (sizeof(pl_table_ro) / sizeof(pl_table_ro[0]))

/* pl_table_*[] as the code sees them at run time, from RIP-relative lea */
static void pl_table_expected(uint64_t *out)
{
	size_t i = 0;

#define PL_E_FN(n)       out[i++] = PL_LEA(pl_fn##n);
#define PL_E_DATA(n)     out[i++] = PL_LEA(pl_data##n);
#define PL_E_RO(n)       out[i++] = PL_LEA(pl_ro##n);
#define PL_E_BSS(n)      out[i++] = PL_LEA(pl_bss##n);
#define PL_E_INNER(a, n) out[i++] = PL_LEA(a + 8 * n);
	PL_FUNCS(PL_E_FN)
	PL_DATAS(PL_E_DATA)
	PL_ROS(PL_E_RO)
	PL_BSSS(PL_E_BSS)
	PL_INNER(PL_E_INNER)
}

/* ------------------------------------------------------------- reporting */

static void pl_exit(uint8_t code) __attribute__((noreturn));
static void pl_exit(uint8_t code)
{
	io_outb(PL_EXIT_PORT, code);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* The command line as printable ASCII (anything else as '?'), so the
 * report stays one line. */
static void pl_put_cmdline(void)
{
	serial_puts(" cmdline=");
	if (!pl_cmdline_ok)
		return;
	const char *s = (const char *)(uintptr_t)pl_info->cmdline;
	for (uint32_t i = 0; i < pl_info->cmdline_len; i++)
		serial_putc(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
}

static void pl_kv(const char *key, uint64_t v)
{
	if (!key)
		return;
	serial_putc(' ');
	serial_puts(key);
	serial_putc('=');
	serial_put_hex(v);
}

static void pl_fail(const char *reason, const char *k1, uint64_t v1,
		    const char *k2, uint64_t v2, const char *k3, uint64_t v3)
	__attribute__((noreturn));
static void pl_fail(const char *reason, const char *k1, uint64_t v1,
		    const char *k2, uint64_t v2, const char *k3, uint64_t v3)
{
	serial_puts("payload: FAIL ");
	serial_puts(reason);
	serial_puts(" variant=" PL_VARIANT);
	pl_kv(k1, v1);
	pl_kv(k2, v2);
	pl_kv(k3, v3);
	pl_put_cmdline();
	serial_putc('\n');
	pl_exit(PL_EXIT_FAIL);
}

#define FAIL0(r)                   pl_fail(r, 0, 0, 0, 0, 0, 0)
#define FAIL1(r, a, x)             pl_fail(r, a, x, 0, 0, 0, 0)
#define FAIL2(r, a, x, b, y)       pl_fail(r, a, x, b, y, 0, 0)
#define FAIL3(r, a, x, b, y, c, z) pl_fail(r, a, x, b, y, c, z)

static void pl_need_mapped(const char *what, uint64_t va, uint64_t len)
{
	if (!cpu_mapped(va, len))
		FAIL2(what, "addr", va, "len", len);
}

/* ------------------------------------------------------------ the checks */

static int pl_has_word(const char *s, uint32_t len, const char *word)
{
	uint32_t wl = 0;

	while (word[wl])
		wl++;
	for (uint32_t i = 0; i < len;) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		uint32_t start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		if (i - start != wl)
			continue;
		uint32_t k = 0;
		while (k < wl && s[start + k] == word[k])
			k++;
		if (k == wl)
			return 1;
	}
	return 0;
}

static void pl_check_handoff(const struct kaslr_boot_info *info)
{
	uint64_t a = (uint64_t)(uintptr_t)info;

	pl_need_mapped("handoff_unmapped", a, 16);
	if (info->magic != KB_MAGIC)
		FAIL2("handoff_magic", "got", info->magic, "want", KB_MAGIC);
	if (info->version != KB_VERSION)
		FAIL2("handoff_version", "got", info->version, "want", KB_VERSION);
	if (info->size < sizeof(*info))
		FAIL2("handoff_size", "got", info->size, "want", sizeof(*info));
	pl_need_mapped("handoff_unmapped", a, info->size);
	if (info->cmdline_len != 0 || info->cmdline != 0) {
		pl_need_mapped("cmdline_unmapped", info->cmdline,
			       (uint64_t)info->cmdline_len + 1);
		if (((const char *)(uintptr_t)info->cmdline)[info->cmdline_len])
			FAIL1("cmdline_nul", "len", info->cmdline_len);
	}
	pl_cmdline_ok = 1;
}

static void pl_check_entry_state(const struct kaslr_boot_info *info,
				 uint64_t entry_rsp)
{
	uint16_t cs, ds, es, ss;
	uint64_t rflags;

	__asm__ volatile("mov %%cs, %0; mov %%ds, %1; mov %%es, %2; mov %%ss, %3"
			 : "=r"(cs), "=r"(ds), "=r"(es), "=r"(ss));
	__asm__ volatile("pushfq; popq %0" : "=r"(rflags));
	if (cs != PL_SEL_CODE || ds != PL_SEL_DATA || es != PL_SEL_DATA ||
	    ss != PL_SEL_DATA)
		FAIL3("segments", "cs", cs, "ds", ds, "ss", ss);
	if (rflags & PL_RFLAGS_IF)
		FAIL1("interrupts_on", "rflags", rflags);
	if (entry_rsp != info->stack_top || (entry_rsp & 15) != 8)
		FAIL2("entry_rsp", "got", entry_rsp, "want", info->stack_top);
	if ((cpu_read_cr3() & CPU_PTE_ADDR) != info->pml4)
		FAIL2("pml4", "got", cpu_read_cr3(), "want", info->pml4);
	if (!(cpu_read_cr0() & PL_CR0_WP))
		FAIL1("cr0_wp", "cr0", cpu_read_cr0());
	/* NX in use exactly when the loader did not say the CPU lacks it */
	if (!(cpu_rdmsr(CPU_MSR_EFER) & PL_EFER_NXE) != !!(info->flags & KB_FLAG_NO_NX))
		FAIL2("efer_nxe", "efer", cpu_rdmsr(CPU_MSR_EFER), "flags", info->flags);
}

/* Placement: our run-time image start is the handoff's virt_base, both
 * bases are 2 MiB-aligned, the page tables agree with phys_base, and the
 * offsets and size match what the image itself knows. */
static void pl_check_placement(const struct kaslr_boot_info *info)
{
	uint64_t virt = PL_LEA(payload_image_start);
	uint64_t size = PL_LEA(payload_image_end) - virt;
	struct cpu_walk w = { 0, 0, 0 };

	if (virt != info->virt_base)
		FAIL2("virt_base", "got", virt, "want", info->virt_base);
	if (virt & (PL_KASLR_ALIGN - 1))
		FAIL1("virt_align", "virt", virt);
	if (info->phys_base & (PL_KASLR_ALIGN - 1))
		FAIL1("phys_align", "phys", info->phys_base);
	if (!cpu_translate(virt, &w) || w.phys != info->phys_base)
		FAIL2("phys_walk", "got", w.phys, "want", info->phys_base);
	if (info->link_base != (uint64_t)PAYLOAD_LINK_BASE)
		FAIL2("link_base", "got", info->link_base,
		      "want", (uint64_t)PAYLOAD_LINK_BASE);
	if (info->phys_offset != info->phys_base - (uint64_t)PAYLOAD_LINK_PHYS)
		FAIL2("phys_offset", "got", info->phys_offset,
		      "want", info->phys_base - (uint64_t)PAYLOAD_LINK_PHYS);
	if (info->virt_offset != virt - (uint64_t)PAYLOAD_LINK_BASE)
		FAIL2("virt_offset", "got", info->virt_offset,
		      "want", virt - (uint64_t)PAYLOAD_LINK_BASE);
	if (info->image_size != size)
		FAIL2("image_size", "got", info->image_size, "want", size);
	if (info->phys_slots == 0 || info->virt_slots == 0)
		FAIL2("slots", "phys", info->phys_slots, "virt", info->virt_slots);
	/* nokaslr: one position was possible, so each count is 1 */
	if ((info->flags & (KB_FLAG_NOKASLR | KB_FLAG_FORCED)) == KB_FLAG_NOKASLR &&
	    (info->phys_slots != 1 || info->virt_slots != 1))
		FAIL2("nokaslr_slots", "phys", info->phys_slots, "virt", info->virt_slots);
	/* version 3: which slot this is */
	if (!KB_HAS(info, virt_slot))
		FAIL1("no_slot_index", "size", info->size);
	if (info->phys_slot >= info->phys_slots || info->virt_slot >= info->virt_slots)
		FAIL2("slot_index", "phys", info->phys_slot, "virt", info->virt_slot);
#if defined(PAYLOAD_VARIANT_HIGH)
	if (virt < PL_HIGH_LO || virt > PL_HIGH_HI || PL_HIGH_HI - virt < size)
		FAIL2("virt_window", "virt", virt, "size", size);
	/* the window is one range: the index is the distance from its start,
	 * so virt - index * align is that start, inside the top 2 GiB (the
	 * default window starts at its bottom; a KASLR note may narrow it),
	 * and every position of the window, the last too, fits */
	if (info->flags & (KB_FLAG_VIRT_KASLR | KB_FLAG_FORCED)) {
		uint64_t back = info->virt_slot * PL_KASLR_ALIGN;
		uint64_t start = virt - back;

		if (back > virt - PL_HIGH_LO || start % PL_KASLR_ALIGN ||
		    (info->virt_slots - 1) * PL_KASLR_ALIGN > PL_HIGH_HI - start - size)
			FAIL2("virt_slot", "got", info->virt_slot, "of", info->virt_slots);
	}
	if (pl_has_word((const char *)(uintptr_t)info->cmdline, info->cmdline_len, PL_BUG_WORD) &&
	    virt + size > PL_HIGH_HI - 16 * 1024 * 1024) {
		serial_puts("payload: planted bug hit: image in the top 16 MiB of the window, virt=");
		serial_put_hex(virt);
		serial_putc('\n');
		FAIL1("planted_bug", "virt", virt);
	}
#else
	if (virt != info->phys_base)
		FAIL2("not_identity", "virt", virt, "phys", info->phys_base);
#endif
}

/* The loader copied data and rodata and zeroed BSS; direct and indirect
 * calls reach the right code. */
static void pl_check_images(void)
{
	for (uint64_t i = 0; i < PL_BSS_PROBE; i++)
		if (pl_bss_probe[i])
			FAIL2("bss_not_zero", "off", i, "byte", pl_bss_probe[i]);
#define PL_C_DATA(n) if (pl_data##n != 0x5a000 + n) FAIL1("data_copy", "idx", n);
#define PL_C_RO(n)   if (PL_VREAD(pl_ro##n) != 0xa5000 + n) FAIL1("rodata_copy", "idx", n);
#define PL_C_BSS(n)  if (pl_bss##n != 0) FAIL1("bss_not_zero", "obj", n);
	PL_DATAS(PL_C_DATA)
	PL_ROS(PL_C_RO)
	PL_BSSS(PL_C_BSS)
	if (pl_fn5(2) != 2 * 8 + 5)
		FAIL0("direct_call");
	uint64_t (*volatile fp)(uint64_t) = pl_fn9;
	if (fp(1) != 12 + 9)
		FAIL0("call_through_pointer");
}

static void pl_check_relocs(void)
{
	uint64_t want[PL_TABLE_N];

	pl_table_expected(want);
	for (size_t i = 0; i < PL_TABLE_N; i++) {
		uint64_t ro = (uint64_t)(uintptr_t)PL_VREAD(pl_table_ro[i]);
		uint64_t rw = (uint64_t)(uintptr_t)PL_VREAD(pl_table_rw[i]);

		if (ro != want[i])
			FAIL3("reloc_ro", "idx", i, "got", ro, "want", want[i]);
		if (rw != want[i])
			FAIL3("reloc_rw", "idx", i, "got", rw, "want", want[i]);
	}
}

#if defined(PAYLOAD_VARIANT_SMALL)
/* Absolute 32-bit fields, as -mcmodel=small code has them: `movl $sym`
 * (R_X86_64_32, zero-extended) and `movq $sym` (R_X86_64_32S,
 * sign-extended), one of them one past the image's last byte like a
 * `cmp $_end`.  Each must hold the run-time address, so the image must lie
 * where they can: ending by 2 GiB. */
static void pl_check_abs32(const struct kaslr_boot_info *info)
{
	uint64_t z, s, end;

	__asm__("movl $pl_data0, %k0" : "=r"(z));
	__asm__("movq $pl_arr_ro, %0" : "=r"(s));
	__asm__("movq $payload_image_end, %0" : "=r"(end));
	if (z != PL_LEA(pl_data0))
		FAIL2("abs32", "got", z, "want", PL_LEA(pl_data0));
	if (s != PL_LEA(pl_arr_ro))
		FAIL2("abs32s", "got", s, "want", PL_LEA(pl_arr_ro));
	if (end != PL_LEA(payload_image_end))
		FAIL2("abs32s_end", "got", end, "want", PL_LEA(payload_image_end));
	if (info->virt_base + info->image_size > PL_2G)
		FAIL2("small_above_2g", "virt", info->virt_base, "size", info->image_size);
}
#endif

/* Index of the map entry holding all of [addr, addr + len), or -1. */
static int64_t pl_mmap_find(const struct kb_mem_entry *m, uint32_t n,
			    uint64_t addr, uint64_t len)
{
	for (uint32_t i = 0; i < n; i++) {
		if (addr < m[i].addr)
			continue;
		uint64_t off = addr - m[i].addr;
		if (off <= m[i].size && m[i].size - off >= len)
			return i;
	}
	return -1;
}

static void pl_need_reclaimable(const char *what, const struct kb_mem_entry *m,
				uint32_t n, uint64_t addr, uint64_t len)
{
	int64_t i = pl_mmap_find(m, n, addr, len);

	if (i < 0 || m[i].type != KB_MEM_LOADER_RECLAIMABLE)
		FAIL3(what, "addr", addr, "len", len, "type",
		      i < 0 ? 0 : m[i].type);
}

/* Returns "kernel" or "usable": the type of the entry holding the image. */
static const char *pl_check_mmap(const struct kaslr_boot_info *info)
{
	const struct kb_mem_entry *m =
		(const struct kb_mem_entry *)(uintptr_t)info->mem_map;
	uint32_t n = info->mem_map_count;
	struct cpu_walk w;

	if (info->mem_map_entry_size != sizeof(*m))
		FAIL2("mmap_entry_size", "got", info->mem_map_entry_size,
		      "want", sizeof(*m));
	if (n == 0)
		FAIL0("mmap_empty");
	pl_need_mapped("mmap_unmapped", info->mem_map, (uint64_t)n * sizeof(*m));
	for (uint32_t i = 0; i < n; i++) {
		if (m[i].size == 0)
			FAIL2("mmap_zero_size", "idx", i, "addr", m[i].addr);
		if (m[i].addr + m[i].size < m[i].addr)
			FAIL2("mmap_wraps", "idx", i, "addr", m[i].addr);
		if (i > 0 && m[i].addr < m[i - 1].addr)
			FAIL2("mmap_unsorted", "idx", i, "addr", m[i].addr);
		if (i > 0 && m[i - 1].addr + m[i - 1].size > m[i].addr)
			FAIL2("mmap_overlap", "idx", i, "addr", m[i].addr);
		/* whole pages, as PROTOCOL.md promises */
		if ((m[i].addr | m[i].size) & (CPU_PAGE - 1))
			FAIL3("mmap_not_pages", "idx", i, "addr", m[i].addr, "size", m[i].size);
	}

	int64_t k = pl_mmap_find(m, n, info->phys_base, info->image_size);
	if (k < 0 || (m[k].type != KB_MEM_KERNEL && m[k].type != KB_MEM_USABLE))
		FAIL3("mmap_kernel", "phys", info->phys_base, "size",
		      info->image_size, "type", k < 0 ? 0 : m[k].type);

	pl_need_reclaimable("mmap_handoff", m, n, (uint64_t)(uintptr_t)info,
			    info->size);
	pl_need_reclaimable("mmap_mem_map", m, n, info->mem_map,
			    (uint64_t)n * sizeof(*m));
	if (info->cmdline)
		pl_need_reclaimable("mmap_cmdline", m, n, info->cmdline,
				    (uint64_t)info->cmdline_len + 1);
	pl_need_reclaimable("mmap_pml4", m, n, info->pml4, CPU_PAGE);
	pl_need_reclaimable("mmap_idt", m, n, info->idt_phys, CPU_PAGE);
	if (cpu_translate(info->stack_top, &w))
		pl_need_reclaimable("mmap_stack", m, n, w.phys & ~(CPU_PAGE - 1),
				    CPU_PAGE);
	return m[k].type == KB_MEM_KERNEL ? "kernel" : "usable";
}

/* want_w: 1 writable, 0 read-only, -1 either */
static void pl_need_perm(const char *what, uint64_t va, int want_w, int want_x)
{
	struct cpu_walk w;

	if (!cpu_translate(va, &w))
		FAIL1(what, "unmapped", va);
	/* without NX everything is executable: only write protection is left */
	if (pl_info->flags & KB_FLAG_NO_NX)
		want_x = 1;
	if ((want_w >= 0 && w.writable != want_w) || (!w.nx) != want_x)
		FAIL3(what, "addr", va, "w", (uint64_t)w.writable, "x",
		      (uint64_t)!w.nx);
}

/* 1 when va lies in the page the text and rodata segments share (the
 * shared variant, payload/shared.lds): that page is R+X, the union. */
static int pl_in_shared_page(uint64_t va)
{
#if defined(PAYLOAD_VARIANT_SHARED)
	return (va >> 12) == ((PL_LEA(payload_text_end) - 1) >> 12);
#else
	(void)va;
	return 0;
#endif
}

/* W^X: per-segment permissions on the kernel's own pages (a page shared
 * by two segments has both's), every image page mapped to phys_base +
 * offset and none both writable and executable; the identity map of other
 * RAM not executable; a guard page below the stack. */
static void pl_check_perms(const struct kaslr_boot_info *info)
{
	uint64_t virt = info->virt_base;
	struct cpu_walk w;

#if defined(PAYLOAD_VARIANT_SHARED)
	/* the layout this variant exists for: rodata starts in the text's
	 * last page, which holds the entry point */
	if (!pl_in_shared_page(PL_LEA(payload_rodata_start)) || !pl_in_shared_page(PL_LEA(_start)))
		FAIL2("not_shared", "rodata", PL_LEA(payload_rodata_start), "entry",
		      PL_LEA(_start));
	pl_need_perm("perm_shared_page", PL_LEA(payload_rodata_start), 0, 1);
#endif
	pl_need_perm("perm_text", PL_LEA(pl_fn0), 0, 1);
	pl_need_perm("perm_entry", PL_LEA(_start), 0, 1);
	pl_need_perm("perm_rodata", PL_LEA(pl_ro0), 0, pl_in_shared_page(PL_LEA(pl_ro0)));
	pl_need_perm("perm_rodata", PL_LEA(pl_arr_ro), 0,
		     pl_in_shared_page(PL_LEA(pl_arr_ro)));
	pl_need_perm("perm_data", PL_LEA(pl_data0), 1, 0);
	pl_need_perm("perm_bss", PL_LEA(pl_arr_bss), 1, 0);
	for (uint64_t off = 0; off < info->image_size; off += CPU_PAGE) {
		if (!cpu_translate(virt + off, &w))
			FAIL1("image_unmapped", "addr", virt + off);
		if (w.phys != info->phys_base + off)
			FAIL2("image_phys", "addr", virt + off, "phys", w.phys);
		if (w.writable && !w.nx && !(info->flags & KB_FLAG_NO_NX))
			FAIL1("image_wx", "addr", virt + off);
	}
	pl_need_perm("ident_nx", (uint64_t)(uintptr_t)info & ~(CPU_PAGE - 1), 1, 0);
	pl_need_perm("ident_nx", info->mem_map & ~(CPU_PAGE - 1), 1, 0);
#if defined(PAYLOAD_VARIANT_HIGH)
	/* the identity alias of our own text: neither executable nor a
	 * writable second view of the code */
	pl_need_perm("ident_kernel_text", info->phys_base +
		     (PL_LEA(pl_fn0) - info->virt_base), 0, 0);
	pl_need_perm("ident_kernel_data", info->phys_base +
		     (PL_LEA(pl_data0) - info->virt_base), 1, 0);
#endif
	pl_need_perm("perm_stack", info->stack_top - 8, 1, 0);
	if (info->stack_size < CPU_PAGE || info->stack_top < CPU_PAGE ||
	    info->stack_size > info->stack_top - CPU_PAGE)
		FAIL2("stack_size", "top", info->stack_top, "size", info->stack_size);
	uint64_t low = (info->stack_top - info->stack_size + CPU_PAGE - 1) &
		       ~(CPU_PAGE - 1);
	if (!cpu_mapped(low, CPU_PAGE))
		FAIL1("stack_unmapped", "addr", low);
	if (cpu_translate(low - 1, &w))
		FAIL2("stack_guard", "addr", low - CPU_PAGE, "phys", w.phys);
}

/* [a, a + alen) and [b, b + blen) intersect; no sums, so no wrap. */
static int pl_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return (a >= b && a - b < blen) || (b >= a && b - a < alen);
}

/* The 64 hex digits of a word "payload.sha256=<64 digits>" in s[0..len), or NULL. */
static const char *pl_module_expect(const char *s, uint32_t len)
{
	const char *key = PL_MODULE_WORD;
	uint32_t kl = 0;

	while (key[kl])
		kl++;
	for (uint32_t i = 0; i < len;) {
		while (i < len && s[i] == ' ')
			i++;
		uint32_t start = i, k = 0;
		while (i < len && s[i] != ' ')
			i++;
		if (i - start != kl + 64)
			continue;
		while (k < kl && s[start + k] == key[k])
			k++;
		if (k == kl)
			return s + start + kl;
	}
	return NULL;
}

/* The digest in lower-case hex, as sha256sum prints it, equals hex[0..64). */
static int pl_digest_is(const uint8_t d[32], const char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (int b = 0; b < 32; b++)
		if (hex[2 * b] != digits[d[b] >> 4] || hex[2 * b + 1] != digits[d[b] & 15])
			return 0;
	return 1;
}

struct pl_modules {
	uint32_t count, verified;
	uint64_t addr[2]; /* of the first two */
};

/*
 * The modules: listed in loader-reclaimable memory, each page-aligned,
 * mapped, in memory of type KB_MEM_MODULE, overlapping neither the kernel,
 * nor another module, nor anything else handed over; its string
 * NUL-terminated.  A module whose string says "payload.sha256=HEX" (lower
 * case, as sha256sum prints it) must have exactly those bytes: the digest
 * is computed here.
 */
static void pl_check_modules(const struct kaslr_boot_info *info, struct pl_modules *ret)
{
	const struct kb_mem_entry *m = (const struct kb_mem_entry *)(uintptr_t)info->mem_map;
	const struct kb_module *mod = (const struct kb_module *)(uintptr_t)info->modules;
	uint32_t n = info->mem_map_count;
	const struct {
		uint64_t a, len;
	} handed[] = {
		{ info->phys_base, info->image_size },
		{ (uint64_t)(uintptr_t)info, info->size },
		{ info->mem_map, (uint64_t)n * sizeof(*m) },
		{ info->cmdline, (uint64_t)info->cmdline_len + 1 },
		{ info->modules, (uint64_t)info->module_count * sizeof(*mod) },
		{ info->pml4, CPU_PAGE },
		{ info->idt_phys, CPU_PAGE },
		{ info->stack_top - info->stack_size, info->stack_size },
		{ info->efi_mmap, info->efi_mmap_size },
	};

	ret->count = ret->verified = 0;
	ret->addr[0] = ret->addr[1] = 0;
	if (!KB_HAS(info, module_entry_size))
		FAIL1("modules_absent", "size", info->size);
	ret->count = info->module_count;
	if (ret->count == 0) {
		if (info->modules)
			FAIL1("modules_without_count", "modules", info->modules);
		return;
	}
	if (info->module_entry_size != sizeof(*mod))
		FAIL2("module_entry_size", "got", info->module_entry_size, "want", sizeof(*mod));
	pl_need_mapped("modules_unmapped", info->modules, handed[4].len);
	pl_need_reclaimable("mmap_modules", m, n, info->modules, handed[4].len);
	for (uint32_t i = 0; i < ret->count; i++) {
		uint64_t a = mod[i].addr, sz = mod[i].size, pages;
		const char *want;
		uint8_t got[32];
		int64_t k;

		if ((a & (CPU_PAGE - 1)) || sz == 0 || sz > ~a - CPU_PAGE)
			FAIL3("module_range", "idx", i, "addr", a, "size", sz);
		pages = (sz + CPU_PAGE - 1) & ~(CPU_PAGE - 1);
		pl_need_mapped("module_unmapped", a, sz);
		k = pl_mmap_find(m, n, a, pages);
		if (k < 0 || m[k].type != KB_MEM_MODULE)
			FAIL3("mmap_module", "idx", i, "addr", a, "type", k < 0 ? 0 : m[k].type);
		pl_need_mapped("module_string_unmapped", mod[i].string,
			       (uint64_t)mod[i].string_len + 1);
		pl_need_reclaimable("mmap_module_string", m, n, mod[i].string,
				    (uint64_t)mod[i].string_len + 1);
		const char *str = (const char *)(uintptr_t)mod[i].string;
		if (str[mod[i].string_len])
			FAIL2("module_string_nul", "idx", i, "len", mod[i].string_len);
		for (uint32_t h = 0; h < sizeof(handed) / sizeof(handed[0]); h++)
			if (handed[h].len && pl_overlap(a, pages, handed[h].a, handed[h].len))
				FAIL3("module_overlap", "idx", i, "addr", a, "with", h);
		for (uint32_t j = 0; j < i; j++)
			if (pl_overlap(a, pages, mod[j].addr, mod[j].size))
				FAIL3("modules_overlap", "idx", i, "addr", a, "other", mod[j].addr);
		want = pl_module_expect(str, mod[i].string_len);
		if (want) {
			sha256((const void *)(uintptr_t)a, sz, got);
			if (!pl_digest_is(got, want))
				FAIL3("module_sha256", "idx", i, "addr", a, "size", sz);
			ret->verified++;
		}
		if (i < 2)
			ret->addr[i] = a;
	}
}

/* SIDT shows the read-only alias, nowhere near the kernel; a store to it
 * faults, caught by a temporary IDT whose #PF handler checks CR2; then
 * the loader's IDT is back.  Returns 1 (idt_ro) or fails. */
static int pl_check_idt(const struct kaslr_boot_info *info)
{
	struct cpu_idtr r = cpu_sidt();
	uint64_t alias = info->idt_alias;
	struct cpu_walk w;
	uint16_t cs;

	if (r.base != alias)
		FAIL2("idt_base", "got", r.base, "want", alias);
	if (r.limit != PL_IDT_LIMIT)
		FAIL2("idt_limit", "got", r.limit, "want", PL_IDT_LIMIT);
	if (pl_overlap(alias, CPU_PAGE, info->virt_base, info->image_size) ||
	    pl_overlap(alias, CPU_PAGE, info->phys_base, info->image_size) ||
	    pl_overlap(info->idt_phys, CPU_PAGE, info->phys_base, info->image_size))
		FAIL2("idt_in_kernel", "alias", alias, "phys", info->idt_phys);
	if (!cpu_translate(alias, &w))
		FAIL1("idt_unmapped", "alias", alias);
	if (w.writable)
		FAIL1("idt_writable", "alias", alias);
	if (w.phys != info->idt_phys)
		FAIL2("idt_phys", "got", w.phys, "want", info->idt_phys);

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	for (unsigned v = 0; v < PL_TMP_VECTORS; v++) {
		uint64_t h = v == PL_VEC_PF ? PL_LEA(pl_pf_entry) :
			     PL_LEA(payload_unexpected_exception);
		pl_idt[v] = (struct pl_gate){
			.off_lo = (uint16_t)h, .sel = cs, .ist = 0, .type = 0x8e,
			.off_mid = (uint16_t)(h >> 16), .off_hi = (uint32_t)(h >> 32),
		};
	}
	struct cpu_idtr mine = { sizeof(pl_idt) - 1, PL_LEA(pl_idt) };
	pl_loader_idtr = r;
	pl_pf_count = 0;
	pl_pf_cr2 = 0;
	cpu_lidt(&mine);
	uint64_t faulted = pl_idt_write_probe(alias);
	cpu_lidt(&pl_loader_idtr);

	struct cpu_idtr back = cpu_sidt();
	if (back.base != r.base || back.limit != r.limit)
		FAIL2("idt_restore", "base", back.base, "limit", back.limit);
	if (!faulted || pl_pf_count != 1)
		FAIL2("idt_write_allowed", "alias", alias, "faults", pl_pf_count);
	if (pl_pf_cr2 != alias)
		FAIL2("idt_cr2", "got", pl_pf_cr2, "want", alias);
	if ((pl_pf_err & 3) != 3) /* present + write */
		FAIL1("idt_pf_err", "err", pl_pf_err);
	return 1;
}

static const char *pl_check_entropy(const struct kaslr_boot_info *info)
{
	uint32_t src = info->entropy_sources;
	uint32_t strong = KB_RNG_EFI | KB_RNG_RDRAND | KB_RNG_RDSEED | KB_RNG_SEEDFILE |
			  KB_RNG_CHAIN;
	uint32_t known = strong | KB_RNG_RDTSC;
	uint8_t any = 0;

	if (src == 0 || (src & ~known))
		FAIL1("entropy_sources", "sources", src);
	if (!!(info->flags & KB_FLAG_WEAK_ENTROPY) != !(src & strong))
		FAIL2("weak_flag", "sources", src, "flags", info->flags);
	for (int i = 0; i < 32; i++)
		any |= info->rng_seed[i];
	if (!any)
		FAIL0("rng_seed_zero");
	if (info->acpi_rsdp == 0)
		FAIL0("rsdp_missing");
	pl_need_mapped("rsdp_unmapped", info->acpi_rsdp, 8);
	const char *sig = (const char *)(uintptr_t)info->acpi_rsdp;
	const char *want = "RSD PTR ";
	for (int i = 0; i < 8; i++)
		if (sig[i] != want[i])
			FAIL1("rsdp_signature", "rsdp", info->acpi_rsdp);
	if (src & KB_RNG_EFI)
		return "efi";
	if (src & (KB_RNG_RDRAND | KB_RNG_RDSEED))
		return "rdrand";
	if (src & KB_RNG_SEEDFILE)
		return "seedfile";
	if (src & KB_RNG_CHAIN)
		return "chain";
	return "rdtsc";
}

static void pl_lo_fail(const char *reason, const char *k1, uint64_t v1, const char *k2,
		       uint64_t v2) __attribute__((noreturn));
static void pl_lo_fail(const char *reason, const char *k1, uint64_t v1, const char *k2,
		       uint64_t v2)
{
	pl_fail(reason, k1, v1, k2, v2, 0, 0);
}

/* Recurse with small frames until a push lands in the guard page below the
 * stack, so RSP itself is in the guard: the #PF cannot be delivered on
 * this stack, and the loader's #PF gate must switch to one of its own.
 * (Page-sized frames would jump over the guard page.) */
#define PL_OVERFLOW_FRAME 48
static uint64_t pl_overflow_stack(uint64_t depth)
{
	volatile uint8_t frame[PL_OVERFLOW_FRAME];

	frame[0] = (uint8_t)depth;
	frame[PL_OVERFLOW_FRAME - 1] = (uint8_t)depth;
	/* bounded only by the stack itself (1 GiB of frames never fit) */
	if (depth < (1ULL << 18))
		depth = pl_overflow_stack(depth + 1);
	return depth + frame[0] + frame[PL_OVERFLOW_FRAME - 1];
}

/*
 * payload_main: called by _start with the loader's handoff (RDI) and the
 * RSP it found at entry.  Runs every check; prints `payload: PASS …` or
 * `payload: FAIL <reason> …` and exits QEMU (33 pass, 35 fail).
 */
void payload_main(const struct kaslr_boot_info *info, uint64_t entry_rsp)
{
	serial_init();
	pl_check_images(); /* first: nothing has written BSS yet */
	pl_info = info;
	pl_check_handoff(info);

	if (pl_has_word((const char *)(uintptr_t)info->cmdline,
			info->cmdline_len, PL_CRASH_WORD)) {
		serial_puts("payload: CRASHING ud2\n");
		payload_crash_site();
	}
	if (pl_has_word((const char *)(uintptr_t)info->cmdline,
			info->cmdline_len, PL_STACK_WORD)) {
		uint64_t low = (info->stack_top - info->stack_size + CPU_PAGE - 1) &
			       ~(CPU_PAGE - 1);

		serial_puts("payload: CRASHING stack guard=");
		serial_put_hex(low - CPU_PAGE);
		serial_putc('\n');
		pl_overflow_stack(0);
		FAIL0("stack_overflow_survived");
	}

	pl_check_entry_state(info, entry_rsp);
	struct cs_report cs;
	cs_check(info, pl_lo_fail, &cs);
	pl_check_placement(info);
	pl_check_relocs();
#if defined(PAYLOAD_VARIANT_SMALL)
	pl_check_abs32(info);
#endif
	const char *kmem = pl_check_mmap(info);
	struct pl_modules mods;
	pl_check_modules(info, &mods);
	pl_check_perms(info);
	int idt_ro = pl_check_idt(info);
	const char *rng = pl_check_entropy(info);
	uint64_t loader_pages = lo_check_loader_image(info, pl_lo_fail);
	unsigned ist = lo_check_tss(info, pl_lo_fail);
	uint64_t scanned = 0, layout_words = 0;
	if (pl_has_word((const char *)(uintptr_t)info->cmdline, info->cmdline_len,
			PL_SCAN_WORD)) {
		scanned = lo_scan_secrets(info, pl_lo_fail);
		layout_words = lo_scan_layout(info, pl_lo_fail);
	}
	/* runtime services through the loader's tables, unchanged */
	int bli = efivars_bli_count(info);
	cs_check_tsc(info, pl_lo_fail, &cs);
	/* the loader's measurements, from the TPM event log it handed over */
	int tpm = tpmlog_report(info);

	serial_puts("payload: PASS variant=" PL_VARIANT " phys=");
	serial_put_hex(info->phys_base);
	serial_puts(" virt=");
	serial_put_hex(info->virt_base);
	serial_puts(" offset=");
	serial_put_hex(info->phys_base - (uint64_t)PAYLOAD_LINK_PHYS);
	serial_puts(" voffset=");
	serial_put_hex(info->virt_base - (uint64_t)PAYLOAD_LINK_BASE);
	serial_puts(" slots=");
	serial_put_dec(info->phys_slots);
	serial_puts(" vslots=");
	serial_put_dec(info->virt_slots);
	serial_puts(" pslot=");
	serial_put_dec(info->phys_slot);
	serial_puts(" vslot=");
	serial_put_dec(info->virt_slot);
	serial_puts(" rng=");
	serial_puts(rng);
	serial_puts(" sources=");
	serial_put_hex(info->entropy_sources);
	serial_puts(" flags=");
	serial_put_hex(info->flags);
	serial_puts(info->flags & KB_FLAG_WEAK_ENTROPY ? " weak=1" : " weak=0");
	serial_puts(idt_ro ? " idt_ro=1" : " idt_ro=0");
	serial_puts(" kmem=");
	serial_puts(kmem);
	serial_puts(" ptrs=");
	serial_put_dec(2 * PL_TABLE_N);
	serial_puts(" bli=");
	serial_put_dec((uint64_t)bli);
	serial_puts(" loader_pages=");
	serial_put_dec(loader_pages);
	serial_puts(" ist=");
	serial_put_dec(ist);
	serial_puts(" nx=");
	serial_puts(info->flags & KB_FLAG_NO_NX ? "0" : "1");
	serial_puts(" scanned=");
	serial_put_dec(scanned);
	serial_puts(" layout_words=");
	serial_put_dec(layout_words);
	serial_puts(" cr4=");
	serial_put_hex(cs.cr4);
	serial_puts(" lvt_masked=");
	serial_put_dec(cs.lvt_masked);
	serial_puts(" tsc_khz=");
	serial_put_dec(info->tsc_hz / 1000);
	serial_puts(" pit_khz=");
	serial_put_dec(cs.pit_hz / 1000);
	serial_puts(" modules=");
	serial_put_dec(mods.count);
	serial_puts(" verified=");
	serial_put_dec(mods.verified);
	serial_puts(" mod0=");
	serial_put_hex(mods.addr[0]);
	serial_puts(" mod1=");
	serial_put_hex(mods.addr[1]);
	serial_puts(" tpmlog=");
	serial_put_dec(tpm < 0 ? 0 : (uint64_t)tpm);
	pl_put_cmdline();
	serial_putc('\n');
	pl_exit(PL_EXIT_PASS);
}
