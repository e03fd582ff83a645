/*
 * desc.h - x86-64 descriptor tables the loader hands to the kernel: a GDT in
 * the Linux boot-protocol layout and 64-bit interrupt gates for the IDT,
 * plus the 10-byte pseudo-descriptor LGDT/LIDT take.  Pure data building.
 *
 * GDT layout (selector = index * 8, RPL 0):
 *
 *   0x00  null
 *   0x08  null (unused; Linux's boot GDT keeps this slot free too)
 *   0x10  DESC_KERNEL_CS  64-bit code: L=1 D=0 G=1 P=1 DPL0, execute/read
 *   0x18  DESC_KERNEL_DS  data: D/B=1 G=1 P=1 DPL0, read/write
 *   0x20  DESC_TSS_SEL    64-bit TSS (16 bytes: two slots), type 9
 *
 * The TSS serves only its interrupt stack table: the early-exception gates
 * of #DF, NMI, #PF and #MC switch to stacks of their own, so that a fault
 * on an overflowed kernel stack is reported instead of becoming a triple
 * fault.  64-bit TSS (104 bytes, little-endian):
 *
 *   0x04  RSP0..RSP2 (unused here: no ring change)
 *   0x24  IST1..IST7 (8 bytes each; 0 = none)
 *   0x66  I/O map base = 104: no I/O permission bitmap
 *
 * Both segments have base 0 and limit 0xfffff (4 GiB with G=1; ignored in
 * 64-bit mode) and the accessed bit pre-set, so the CPU never writes the
 * GDT when a selector is loaded (the GDT may then live in read-only memory).
 *
 * A 64-bit interrupt gate (16 bytes, little-endian):
 *
 *   byte  0..1   offset 15..0        byte  6..7   offset 31..16
 *   byte  2..3   code selector       byte  8..11  offset 63..32
 *   byte  4      IST index (bits 2..0, 0 = no stack switch)
 *   byte  5      P | DPL << 5 | type (0xE = interrupt gate) = 0x8E
 *   byte 12..15  reserved, zero
 */
#ifndef DESC_H
#define DESC_H

#include <stdint.h>

#include "ldr.h"

#define DESC_GDT_ENTRIES 6
#define DESC_NULL_SEL    0x00
#define DESC_KERNEL_CS   0x10
#define DESC_KERNEL_DS   0x18
#define DESC_TSS_SEL     0x20

#define DESC_TSS_SIZE    104
#define DESC_TSS_IST_OFF 0x24
#define DESC_TSS_IOMAP   0x66

/* The raw descriptors desc_gdt_build() writes. */
#define DESC_GDT_CODE64  0x00af9b000000ffffULL
#define DESC_GDT_DATA    0x00cf93000000ffffULL

#define DESC_IDT_ENTRIES   256
#define DESC_IDT_GATE_SIZE 16
#define DESC_IDT_SIZE      (DESC_IDT_ENTRIES * DESC_IDT_GATE_SIZE) /* 4 KiB */
#define DESC_IST_MAX       7
#define DESC_GATE_INTR     0x8e /* P=1, DPL0, 64-bit interrupt gate */

/* Size of the operand of LGDT/LIDT in 64-bit mode: limit16, base64. */
#define DESC_PTR_SIZE 10

/*
 * Fill gdt with the layout above (null, null, 64-bit code, data, TSS); the
 * TSS descriptor points at tss_base (DESC_TSS_SIZE bytes, available type;
 * LTR marks it busy in the GDT, which must then be writable).
 */
void desc_gdt_build(uint64_t gdt[DESC_GDT_ENTRIES], uint64_t tss_base);

/*
 * Fill the DESC_TSS_SIZE bytes at tss: zero, then IST1..IST7 from ist[0..6]
 * (stack tops, 0 = unused) and the I/O map base past the end.
 */
void desc_tss_build(uint8_t tss[DESC_TSS_SIZE], const uint64_t ist[DESC_IST_MAX]);

/*
 * Write a 64-bit interrupt gate (type 0xE, present, DPL0) for vector into
 * idt (DESC_IDT_ENTRIES gates of 16 bytes; no alignment needed), pointing at
 * handler through code selector cs, using stack ist (0 = none, 1..7).
 * Errors: LDR_E_INVAL (vector >= 256 or ist > 7; idt unchanged).
 */
enum ldr_err desc_idt_set_gate(void *idt, unsigned vector, uint64_t handler,
			       uint16_t cs, unsigned ist);

/*
 * Write the LGDT/LIDT operand for a table at base: ret_ptr[0..1] = limit
 * (table size in bytes minus one), ret_ptr[2..9] = base, little-endian.
 */
void desc_make_ptr(uint8_t ret_ptr[DESC_PTR_SIZE], uint64_t base, uint16_t limit);

#endif
