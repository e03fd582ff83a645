/*
 * payload/cpustate.c - the entry-state checks (payload/cpustate.h): what
 * the CPU looks like when the loader jumps, read before the payload changes
 * any of it.
 */
#include "cpustate.h"
#include "cpu.h"
#include "serial.h"

#define CS_CR0_PE   (1ULL << 0)
#define CS_CR0_MP   (1ULL << 1)
#define CS_CR0_EM   (1ULL << 2)
#define CS_CR0_TS   (1ULL << 3)
#define CS_CR0_NE   (1ULL << 5)
#define CS_CR0_WP   (1ULL << 16)
#define CS_CR0_AM   (1ULL << 18)
#define CS_CR0_PG   (1ULL << 31)
#define CS_CR4_PAE  (1ULL << 5)
#define CS_CR4_MCE  (1ULL << 6)
#define CS_CR4_OSFXSR     (1ULL << 9)
#define CS_CR4_OSXMMEXCPT (1ULL << 10)
#define CS_FCW_INIT   0x037f /* after FNINIT */
#define CS_MXCSR_INIT 0x1f80
#define CS_ONE_AND_A_HALF 0x3ff8000000000000ULL /* 1.5 */
#define CS_TWO_AND_A_QTR  0x4002000000000000ULL /* 2.25 */
#define CS_THREE_75       0x400e000000000000ULL /* 3.75 */

#define CS_PIC1_DATA 0x21
#define CS_PIC2_DATA 0xa1
#define CS_MSR_APIC_BASE 0x1b
#define CS_APIC_X2APIC (1ULL << 10)
#define CS_APIC_ENABLE (1ULL << 11)
#define CS_APIC_ADDR   0x000ffffffffff000ULL
#define CS_LVT_MASKED  (1u << 16)

#define CS_PIT_HZ     1193182ULL
#define CS_PIT_COUNT  23864u /* 20 ms */
#define CS_PIT_START  0xffffu /* the count loaded: 55 ms before it wraps */
#define CS_PIT_TRIES  32
/* a sample's TSC bracket may hold at most 1/CS_PIT_SLACK of the interval */
#define CS_PIT_SLACK  128
#define CS_PORT_61    0x61
#define CS_PIT_CH2    0x42
#define CS_PIT_CMD    0x43
#define CS_SPIN_MAX   (1ULL << 32)

/* filled by pl_fpu_state (entry.S); offsets are fixed there */
struct cs_fpu {
	uint64_t xmm_or[2]; /* +0: XMM0 | XMM1 | ... | XMM15 */
	uint16_t fcw;       /* +16 */
	uint16_t fsw;       /* +18 */
	uint8_t ftw;        /* +20: abridged tag word, 0 = every register empty */
	uint8_t pad[3];
	uint32_t mxcsr;     /* +24 */
	uint32_t pad2;
	uint64_t sum;       /* +32: 1.5 + 2.25 by ADDSD */
};
_Static_assert(sizeof(struct cs_fpu) == 40, "layout shared with entry.S");

void pl_fpu_state(struct cs_fpu *out);

static uint64_t cs_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static void cs_check_fpu(lo_fail_fn fail)
{
	struct cs_fpu f;

	pl_fpu_state(&f);
	if (f.xmm_or[0] || f.xmm_or[1])
		fail("xmm_not_zero", "lo", f.xmm_or[0], "hi", f.xmm_or[1]);
	if (f.fcw != CS_FCW_INIT || f.fsw != 0 || f.ftw != 0)
		fail("x87_not_init", "fcw", f.fcw, "fsw_ftw", (uint64_t)f.fsw << 8 | f.ftw);
	if (f.mxcsr != CS_MXCSR_INIT)
		fail("mxcsr", "got", f.mxcsr, "want", CS_MXCSR_INIT);
	if (f.sum != CS_THREE_75)
		fail("sse_add", "got", f.sum, "want", CS_THREE_75);
}

static void cs_check_cr(lo_fail_fn fail, struct cs_report *ret)
{
	uint64_t cr0 = cpu_read_cr0(), cr4 = cpu_read_cr4();
	uint64_t set0 = CS_CR0_PE | CS_CR0_MP | CS_CR0_NE | CS_CR0_WP | CS_CR0_PG;
	uint64_t want4 = CS_CR4_PAE | CS_CR4_OSFXSR | CS_CR4_OSXMMEXCPT;

	if ((cr0 & set0) != set0 || (cr0 & (CS_CR0_EM | CS_CR0_TS | CS_CR0_AM)))
		fail("cr0", "got", cr0, "want_set", set0);
	if ((cr4 & ~CS_CR4_MCE) != want4)
		fail("cr4", "got", cr4, "want", want4);
	ret->cr4 = cr4;
}

static uint32_t cs_apic_read(uint64_t base, int x2, uint16_t off)
{
	if (x2)
		return (uint32_t)cpu_rdmsr(0x800 + off / 16);
	return *(const volatile uint32_t *)(uintptr_t)(base + off);
}

/* Both PICs masked; the local APIC's timer, LINT0 and error entries (and
 * the optional ones its version register announces) masked. */
static void cs_check_interrupts(lo_fail_fn fail, struct cs_report *ret)
{
	static const struct {
		uint16_t off;
		uint8_t min_maxlvt;
	} lvts[] = { { 0x320, 0 }, { 0x350, 0 }, { 0x370, 0 },
		     { 0x340, 4 }, { 0x330, 5 }, { 0x2f0, 6 } };
	uint8_t m1 = io_inb(CS_PIC1_DATA), m2 = io_inb(CS_PIC2_DATA);
	uint64_t ab = cpu_rdmsr(CS_MSR_APIC_BASE), base = ab & CS_APIC_ADDR;
	int x2 = (ab & CS_APIC_X2APIC) != 0;
	unsigned maxlvt;

	if (m1 != 0xff || m2 != 0xff)
		fail("pic_unmasked", "master", m1, "slave", m2);
	ret->lvt_masked = 0;
	if (!(ab & CS_APIC_ENABLE))
		return;
	if (!x2 && !cpu_mapped(base, CPU_PAGE))
		fail("lapic_unmapped", "base", base, 0, 0);
	maxlvt = (cs_apic_read(base, x2, 0x30) >> 16) & 0xff;
	for (unsigned i = 0; i < sizeof(lvts) / sizeof(lvts[0]); i++) {
		uint32_t v;

		if (maxlvt < lvts[i].min_maxlvt)
			continue;
		v = cs_apic_read(base, x2, lvts[i].off);
		if (!(v & CS_LVT_MASKED))
			fail("lvt_unmasked", "reg", lvts[i].off, "value", v);
		ret->lvt_masked++;
	}
}

/* entry.S: the OR of every GPR but RDI, RSI and RSP as the kernel found them */
extern uint64_t pl_entry_gprs;

void cs_check(const struct kaslr_boot_info *info, lo_fail_fn fail, struct cs_report *ret)
{
	(void)info;
	if (pl_entry_gprs)
		fail("gprs_not_zero", "or", pl_entry_gprs, 0, 0);
	cs_check_fpu(fail);
	cs_check_cr(fail, ret);
	cs_check_interrupts(fail, ret);
}

/* PIT channel 2's count, latched between two TSC reads */
struct cs_pit_sample {
	uint64_t tsc_lo, tsc_hi;
	uint16_t count;
};

static void cs_pit_sample(struct cs_pit_sample *s)
{
	uint8_t lo, hi;

	s->tsc_lo = cs_rdtsc();
	io_outb(CS_PIT_CMD, 0x80); /* counter latch, channel 2 */
	s->tsc_hi = cs_rdtsc();
	lo = io_inb(CS_PIT_CH2);
	hi = io_inb(CS_PIT_CH2);
	s->count = (uint16_t)(lo | hi << 8);
}

/*
 * TSC ticks per second against PIT channel 2 (mode 0 from CS_PIT_START,
 * gated by port 0x61 bit 0, its output - set at terminal count - in bit 5),
 * over at least CS_PIT_COUNT periods.  The PIT's count is read, not waited
 * for: each end of the interval is a latched count with a TSC read just
 * before and just after the latch, so a measurement that ran late anywhere
 * (an emulator's thread descheduled on a loaded host) is still exact; one
 * that was interrupted inside a bracket shows it in the bracket's width
 * and is rejected (0).
 */
static uint64_t cs_pit_tsc_hz_once(lo_fail_fn fail)
{
	uint8_t p61 = io_inb(CS_PORT_61);
	struct cs_pit_sample a, b;
	uint64_t spins = 0, ticks, width, hz = 0;

	io_outb(CS_PORT_61, (uint8_t)((p61 & ~0x02) | 0x01)); /* gate on, speaker off */
	io_outb(CS_PIT_CMD, 0xb0); /* channel 2, low then high byte, mode 0 */
	io_outb(CS_PIT_CH2, CS_PIT_START & 0xff);
	io_outb(CS_PIT_CH2, CS_PIT_START >> 8);
	/* the first sample once the counter is seen counting */
	do {
		cs_pit_sample(&a);
		if (++spins == CS_SPIN_MAX)
			fail("pit_stuck", "spins", spins, 0, 0);
	} while (a.count == CS_PIT_START || a.count == 0);
	do {
		cs_pit_sample(&b);
		if (++spins == CS_SPIN_MAX)
			fail("pit_stuck", "spins", spins, 0, 0);
	} while (b.count <= a.count && (unsigned)(a.count - b.count) < CS_PIT_COUNT &&
		 !(io_inb(CS_PORT_61) & 0x20));
	/* the output still low after b: the count did not wrap */
	if (b.count < a.count && !(io_inb(CS_PORT_61) & 0x20)) {
		ticks = b.tsc_lo + b.tsc_hi - a.tsc_lo - a.tsc_hi; /* twice the midpoints' distance */
		width = (a.tsc_hi - a.tsc_lo) + (b.tsc_hi - b.tsc_lo);
		if (width * 2 * CS_PIT_SLACK <= ticks)
			hz = ticks * CS_PIT_HZ / (2 * (uint64_t)(a.count - b.count));
	}
	io_outb(CS_PORT_61, p61);
	return hz;
}

/* The first measurement whose brackets are narrow; 0 if none was. */
static uint64_t cs_pit_tsc_hz(lo_fail_fn fail)
{
	uint64_t hz = 0;

	for (unsigned i = 0; i < CS_PIT_TRIES && !hz; i++)
		hz = cs_pit_tsc_hz_once(fail);
	return hz;
}

void cs_check_tsc(const struct kaslr_boot_info *info, lo_fail_fn fail, struct cs_report *ret)
{
	uint64_t hz;

	if (!KB_HAS(info, tsc_hz) || info->tsc_hz == 0)
		fail("tsc_hz_missing", "size", info->size, 0, 0);
	hz = cs_pit_tsc_hz(fail);
	if (!hz)
		fail("pit_unsteady", "tries", CS_PIT_TRIES, 0, 0);
	ret->pit_hz = hz;
	/* two independent measurements under emulation: within a factor of
	 * two catches a wrong unit or scale, not jitter */
	if (info->tsc_hz > 2 * hz || hz > 2 * info->tsc_hz)
		fail("tsc_hz", "loader", info->tsc_hz, "pit", hz);
}
