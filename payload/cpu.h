/*
 * payload/cpu.h - the payload's view of the CPU: control registers, MSRs,
 * IDTR, and a walk of the live page tables (read through the identity
 * map).  Static inline helpers only; used by payload/main.c.
 */
#ifndef PAYLOAD_CPU_H
#define PAYLOAD_CPU_H

#include <stdint.h>

#define CPU_PAGE      4096ULL
#define CPU_MSR_EFER  0xc0000080
#define CPU_CR4_LA57  (1ULL << 12)
#define CPU_PTE_P     (1ULL << 0)
#define CPU_PTE_W     (1ULL << 1)
#define CPU_PTE_PS    (1ULL << 7)
#define CPU_PTE_NX    (1ULL << 63)
#define CPU_PTE_ADDR  0x000ffffffffff000ULL

struct cpu_idtr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

struct cpu_walk {
	uint64_t phys;
	int writable; /* R/W set at every level */
	int nx;       /* XD set at any level */
};

static inline uint64_t cpu_read_cr0(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr0, %0" : "=r"(v));
	return v;
}

static inline uint64_t cpu_read_cr3(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline uint64_t cpu_read_cr4(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline uint64_t cpu_rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

static inline struct cpu_idtr cpu_sidt(void)
{
	struct cpu_idtr r;

	__asm__ volatile("sidt %0" : "=m"(r));
	return r;
}

static inline void cpu_lidt(const struct cpu_idtr *r)
{
	__asm__ volatile("lidt %0" : : "m"(*r) : "memory");
}

/* Translate va through the live page tables (4- or 5-level, 1 GiB, 2 MiB
 * and 4 KiB leaves).  The tables themselves are read through the identity
 * map.  Returns 0 when va is not mapped. */
static inline int cpu_translate(uint64_t va, struct cpu_walk *ret)
{
	int levels = cpu_read_cr4() & CPU_CR4_LA57 ? 5 : 4;
	uint64_t table = cpu_read_cr3() & CPU_PTE_ADDR;
	struct cpu_walk w = { 0, 1, 0 };

	for (int lvl = levels; lvl >= 1; lvl--) {
		unsigned shift = 12 + 9 * (unsigned)(lvl - 1);
		const volatile uint64_t *t = (const volatile uint64_t *)(uintptr_t)table;
		uint64_t e = t[(va >> shift) & 511];

		if (!(e & CPU_PTE_P))
			return 0;
		w.writable &= !!(e & CPU_PTE_W);
		w.nx |= !!(e & CPU_PTE_NX);
		if (lvl == 1 || ((lvl == 2 || lvl == 3) && (e & CPU_PTE_PS))) {
			uint64_t size = 1ULL << shift;

			w.phys = (e & CPU_PTE_ADDR & ~(size - 1)) | (va & (size - 1));
			*ret = w;
			return 1;
		}
		table = e & CPU_PTE_ADDR;
	}
	return 0;
}

/* Every page of [va, va + len) is mapped. */
static inline int cpu_mapped(uint64_t va, uint64_t len)
{
	struct cpu_walk w;
	uint64_t first = va & ~(CPU_PAGE - 1);

	if (len == 0)
		return 1;
	if (va + len - 1 < va)
		return 0;
	for (uint64_t p = first; p <= va + len - 1 && p >= first; p += CPU_PAGE)
		if (!cpu_translate(p, &w))
			return 0;
	return 1;
}

#endif
