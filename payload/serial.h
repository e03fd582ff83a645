/*
 * payload/serial.h - the payload's only output: COM1 (0x3f8), polled, 8N1,
 * 115200 baud.  No interrupts, no buffering; every call writes at once.
 */
#ifndef PAYLOAD_SERIAL_H
#define PAYLOAD_SERIAL_H

#include <stdint.h>

#include "x86_io.h" /* io_outb, io_inb: also the checks' (isa-debug-exit, PIT) */

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


#endif
