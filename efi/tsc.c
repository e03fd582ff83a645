/*
 * tsc.c - reading the TSC and knowing its frequency.  Boot services must
 * still be up the first time tsc_per_us() has to measure.
 */
#include <efi.h>
#include <efilib.h>

#include "cpuid.h"
#include "x86_io.h"
#include "tsc.h"

#define TSC_CPUID1_EDX_TSC (1u << 4)
/* the last resort when neither CPUID nor the PIT gives a frequency: the
 * shortest of this many BS->Stall calls of this long */
#define TSC_MEASURE_RUNS 5
#define TSC_MEASURE_US   1000

/* PIT channel 2 (the speaker's, which firmware leaves alone), counted
 * down in mode 0 from TSC_PIT_START; gated by port 0x61 bit 0, its output
 * (set once the count wraps) in bit 5 */
#define TSC_PIT_HZ    1193182ull
#define TSC_PIT_CH2   0x42
#define TSC_PIT_CMD   0x43
#define TSC_PORT_61   0x61
#define TSC_PIT_START 0xffffu
#define TSC_PIT_COUNT 2387u /* 2 ms */
/* how long a try may take, in TSC ticks (0.1 s at 2.7 GHz) */
#define TSC_PIT_TSC_MAX (1ull << 28)
#define TSC_PIT_TRIES 16
/* a sample's TSC bracket may hold at most 1/TSC_PIT_SLACK of the interval */
#define TSC_PIT_SLACK 64

int tsc_present(void)
{
	return cpuid_max_leaf() >= 1 && (cpuid(1, 0).edx & TSC_CPUID1_EDX_TSC) != 0;
}

uint64_t tsc_read(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* PIT channel 2's count, latched between two TSC reads */
struct tsc_pit_sample {
	uint64_t tsc_lo, tsc_hi;
	uint16_t count;
};

static void tsc_pit_sample(struct tsc_pit_sample *s)
{
	uint8_t lo, hi;

	s->tsc_lo = tsc_read();
	io_outb(TSC_PIT_CMD, 0x80); /* counter latch, channel 2 */
	s->tsc_hi = tsc_read();
	lo = io_inb(TSC_PIT_CH2);
	hi = io_inb(TSC_PIT_CH2);
	s->count = (uint16_t)(lo | hi << 8);
}

/*
 * TSC ticks per second against the PIT, over at least TSC_PIT_COUNT of its
 * periods.  The PIT's count is read, not waited for: each end of the
 * interval is a latched count with a TSC read just before and just after
 * the latch, so a measurement that ran late anywhere (an emulator's thread
 * descheduled on a loaded host, an SMI) still comes out exact; one held up
 * inside a bracket shows it in the bracket's width and gives 0, as does a
 * PIT that does not count (none on this machine).
 */
static uint64_t tsc_pit_hz_once(int *ret_absent)
{
	uint8_t p61 = io_inb(TSC_PORT_61);
	struct tsc_pit_sample a, b;
	uint64_t ticks, width, hz = 0, t0 = tsc_read();
	int late = 0;

	io_outb(TSC_PORT_61, (uint8_t)((p61 & ~0x02) | 0x01)); /* gate on, speaker off */
	io_outb(TSC_PIT_CMD, 0xb0); /* channel 2, low then high byte, mode 0 */
	io_outb(TSC_PIT_CH2, TSC_PIT_START & 0xff);
	io_outb(TSC_PIT_CH2, TSC_PIT_START >> 8);
	do
		tsc_pit_sample(&a);
	while ((a.count == TSC_PIT_START || a.count == 0) &&
	       !(late = a.tsc_hi - t0 > TSC_PIT_TSC_MAX));
	/* a PIT that never started counting is not there */
	*ret_absent = late;
	do
		tsc_pit_sample(&b);
	while (!late && b.count <= a.count && (unsigned)(a.count - b.count) < TSC_PIT_COUNT &&
	       !(io_inb(TSC_PORT_61) & 0x20) && !(late = b.tsc_hi - t0 > TSC_PIT_TSC_MAX));
	/* counted far enough, and the output still low after b: no wrap */
	if (!late && b.count < a.count && (unsigned)(a.count - b.count) >= TSC_PIT_COUNT &&
	    !(io_inb(TSC_PORT_61) & 0x20)) {
		ticks = b.tsc_lo + b.tsc_hi - a.tsc_lo - a.tsc_hi; /* twice the midpoints' distance */
		width = (a.tsc_hi - a.tsc_lo) + (b.tsc_hi - b.tsc_lo);
		if (b.tsc_lo > a.tsc_hi && width * 2 * TSC_PIT_SLACK <= ticks)
			hz = ticks * TSC_PIT_HZ / (2 * (uint64_t)(a.count - b.count));
	}
	io_outb(TSC_PORT_61, p61);
	return hz;
}

uint64_t tsc_hz(void)
{
	static uint64_t hz;
	uint32_t max_leaf;
	uint64_t t0, d, best = 0;
	unsigned i;
	int absent;

	if (hz)
		return hz;
	if (!tsc_present())
		return 0;
	max_leaf = cpuid_max_leaf();
	if (max_leaf >= 0x15) {
		struct cpuid_regs c = cpuid(0x15, 0);

		/* crystal Hz times the TSC/crystal ratio */
		if (c.eax && c.ebx && c.ecx && (hz = (uint64_t)c.ecx * c.ebx / c.eax))
			return hz;
	}
	if (max_leaf >= 0x16) {
		struct cpuid_regs c = cpuid(0x16, 0);

		if (c.eax & 0xffff)
			return hz = (uint64_t)(c.eax & 0xffff) * 1000000;
	}
	for (i = 0, absent = 0; i < TSC_PIT_TRIES && !absent; i++)
		if ((hz = tsc_pit_hz_once(&absent)))
			return hz;
	/* Stall never returns early but may return late (an emulator's
	 * thread descheduled), so the shortest of a few is the closest */
	for (i = 0; i < TSC_MEASURE_RUNS; i++) {
		t0 = tsc_read();
		uefi_call_wrapper(BS->Stall, 1, TSC_MEASURE_US);
		d = tsc_read() - t0;
		if (i == 0 || d < best)
			best = d;
	}
	hz = best * (1000000 / TSC_MEASURE_US);
	if (!hz)
		hz = 1;
	return hz;
}

uint64_t tsc_per_us(void)
{
	uint64_t hz = tsc_hz();

	if (!hz)
		return 0;
	return hz >= 1000000 ? hz / 1000000 : 1;
}
