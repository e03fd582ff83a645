/*
 * payload/serial.h - the payload's only output: COM1 (0x3f8), polled, 8N1,
 * 115200 baud.  No interrupts, no buffering; every call writes at once.
 */
#ifndef PAYLOAD_SERIAL_H
#define PAYLOAD_SERIAL_H

#include <stdint.h>

/* Program COM1 for 115200 8N1 with FIFOs on and its interrupts off. */
void serial_init(void);

/* Write one byte; waits (bounded) for the transmitter to be ready. */
void serial_putc(char c);

/* Write a NUL-terminated string as is. */
void serial_puts(const char *s);

/* Write v as 0x followed by lower-case hex digits, no leading zeros. */
void serial_put_hex(uint64_t v);

/* Write v in decimal. */
void serial_put_dec(uint64_t v);

/* Port I/O, shared with the checks (isa-debug-exit). */
static inline void serial_outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t serial_inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

#endif
