/*
 * cpuid.h - the CPUID instruction, for the efi/ files that ask the CPU what
 * it has (rng.c: RDRAND/RDSEED; tsc.c: the TSC and its frequency;
 * handoff.c: NX, 1 GiB pages), and RDMSR/WRMSR (zglue.c: the FS base;
 * handoff.c: EFER, the local APIC).
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

static inline uint64_t cpu_rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpu_wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint32_t cpuid_max_leaf(void)
{
	return cpuid(0, 0).eax;
}

/*
 * The physical address width (MAXPHYADDR, CPUID 0x80000008 EAX[7:0]; 36
 * bits when the CPU does not say), capped at the 52 bits page tables
 * hold.  Memory a firmware map lists beyond it cannot exist.
 */
static inline uint64_t cpuid_phys_limit(void)
{
	unsigned bits = 36;

	if (cpuid(0x80000000, 0).eax >= 0x80000008) {
		bits = cpuid(0x80000008, 0).eax & 0xff;
		if (bits < 32)
			bits = 36;
		if (bits > 52)
			bits = 52;
	}
	return 1ULL << bits;
}

#endif
