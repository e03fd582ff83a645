/*
 * tsc.c - reading the TSC and knowing its frequency.  Boot services must
 * still be up the first time tsc_per_us() has to measure.
 */
#include <efi.h>
#include <efilib.h>

#include "cpuid.h"
#include "tsc.h"

#define TSC_CPUID1_EDX_TSC (1u << 4)
/* the measurement when CPUID states no frequency: the shortest of this
 * many BS->Stall calls of this long */
#define TSC_MEASURE_RUNS 5
#define TSC_MEASURE_US   1000

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

uint64_t tsc_hz(void)
{
	static uint64_t hz;
	uint32_t max_leaf;
	uint64_t t0, d, best = 0;
	unsigned i;

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
