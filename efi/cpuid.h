/*
 * cpuid.h - the CPUID instruction, for the efi/ files that ask the CPU what
 * it has (rng.c: RDRAND/RDSEED; tsc.c: the TSC and its frequency).
 */
#ifndef EFI_CPUID_H
#define EFI_CPUID_H

#include <stdint.h>

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

static inline uint32_t cpuid_max_leaf(void)
{
	return cpuid(0, 0).eax;
}

#endif
