/*
 * x86_io.h - x86 port I/O, one byte at a time: the loader's serial console
 * and PIT (efi/) and the test kernel's (payload/) share it.  Not for src/,
 * which also builds and runs on the host.
 */
#ifndef X86_IO_H
#define X86_IO_H

#include <stdint.h>

static inline void io_outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t io_inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

#endif
