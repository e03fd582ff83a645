/*
 * tsc.c - reading the TSC and knowing its frequency.  Boot services must
 * still be up the first time tsc_per_us() has to measure.
 */
#include <efi.h>
#include <efilib.h>

#include "cpuid.h"
#include "tsc.h"

#define TSC_CPUID1_EDX_TSC (1u << 4)

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

uint64_t tsc_per_us(void)
{
	static uint64_t per_us;
	uint32_t max_leaf;
	uint64_t t0, d;

	if (per_us)
		return per_us;
	if (!tsc_present())
		return 0;
	max_leaf = cpuid_max_leaf();
	if (max_leaf >= 0x15) {
		struct cpuid_regs c = cpuid(0x15, 0);

		if (c.eax && c.ebx && c.ecx) {
			d = (uint64_t)c.ecx * c.ebx / c.eax / 1000000;
			if (d)
				return per_us = d;
		}
	}
	if (max_leaf >= 0x16) {
		struct cpuid_regs c = cpuid(0x16, 0);

		if (c.eax & 0xffff)
			return per_us = c.eax & 0xffff;
	}
	t0 = tsc_read();
	uefi_call_wrapper(BS->Stall, 1, 1000);
	d = (tsc_read() - t0) / 1000;
	return per_us = d ? d : 1;
}
