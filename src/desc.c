/*
 * desc.c - builds the GDT and IDT gates the kernel is entered with
 * (layout in include/desc.h).  Bytes are stored explicitly little-endian,
 * so the tables can sit at any alignment and never rely on struct packing.
 */
#include "desc.h"

/*
 * Segment descriptor fields (SDM vol. 3, 3.4.5):
 *   limit 15..0 | base 23..0 | access | limit 19..16 | flags | base 31..24
 * access = P | DPL | S | type; flags nibble = G | D/B | L | AVL.
 */
#define DESC_ACC_ACCESSED 0x01
#define DESC_ACC_RW       0x02 /* code: readable; data: writable */
#define DESC_ACC_CODE     0x08
#define DESC_ACC_S        0x10 /* code/data, not system */
#define DESC_ACC_P        0x80
#define DESC_FLAG_L       0x2
#define DESC_FLAG_DB      0x4
#define DESC_FLAG_G       0x8

static uint64_t desc_segment(uint32_t base, uint32_t limit, uint8_t access,
			     uint8_t flags)
{
	return (uint64_t)(limit & 0xffff) |
	       (uint64_t)(base & 0xffffff) << 16 |
	       (uint64_t)access << 40 |
	       (uint64_t)((limit >> 16) & 0xf) << 48 |
	       (uint64_t)(flags & 0xf) << 52 |
	       (uint64_t)(base >> 24) << 56;
}

static void desc_put(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* access byte of an available 64-bit TSS: P=1, DPL0, S=0, type 9 */
#define DESC_ACC_TSS64 0x89

void desc_gdt_build(uint64_t gdt[DESC_GDT_ENTRIES], uint64_t tss_base)
{
	const uint8_t code = DESC_ACC_P | DESC_ACC_S | DESC_ACC_CODE |
			     DESC_ACC_RW | DESC_ACC_ACCESSED;
	const uint8_t data = DESC_ACC_P | DESC_ACC_S | DESC_ACC_RW |
			     DESC_ACC_ACCESSED;

	gdt[DESC_NULL_SEL / 8] = 0;
	gdt[1] = 0;
	/* L=1 requires D=0 (SDM 3.4.5: D=1 with L=1 is reserved) */
	gdt[DESC_KERNEL_CS / 8] = desc_segment(0, 0xfffff, code,
					       DESC_FLAG_G | DESC_FLAG_L);
	gdt[DESC_KERNEL_DS / 8] = desc_segment(0, 0xfffff, data,
					       DESC_FLAG_G | DESC_FLAG_DB);
	/* a system descriptor in long mode: 16 bytes, base bits 63..32 in
	 * the second slot (SDM 8.2.3) */
	gdt[DESC_TSS_SEL / 8] = desc_segment((uint32_t)tss_base, DESC_TSS_SIZE - 1,
					     DESC_ACC_TSS64, 0);
	gdt[DESC_TSS_SEL / 8 + 1] = tss_base >> 32;
}

void desc_tss_build(uint8_t tss[DESC_TSS_SIZE], const uint64_t ist[DESC_IST_MAX])
{
	for (unsigned i = 0; i < DESC_TSS_SIZE; i++)
		tss[i] = 0;
	for (unsigned i = 0; i < DESC_IST_MAX; i++)
		desc_put(tss + DESC_TSS_IST_OFF + 8 * i, ist[i], 8);
	desc_put(tss + DESC_TSS_IOMAP, DESC_TSS_SIZE, 2);
}

enum ldr_err desc_idt_set_gate(void *idt, unsigned vector, uint64_t handler,
			       uint16_t cs, unsigned ist)
{
	uint8_t *g;

	if (vector >= DESC_IDT_ENTRIES || ist > DESC_IST_MAX)
		return LDR_E_INVAL;
	g = (uint8_t *)idt + (size_t)vector * DESC_IDT_GATE_SIZE;
	desc_put(g + 0, handler & 0xffff, 2);
	desc_put(g + 2, cs, 2);
	g[4] = (uint8_t)ist;
	g[5] = DESC_GATE_INTR;
	desc_put(g + 6, (handler >> 16) & 0xffff, 2);
	desc_put(g + 8, handler >> 32, 4);
	desc_put(g + 12, 0, 4);
	return LDR_OK;
}

void desc_make_ptr(uint8_t ret_ptr[DESC_PTR_SIZE], uint64_t base, uint16_t limit)
{
	desc_put(ret_ptr, limit, 2);
	desc_put(ret_ptr + 2, base, 8);
}
