/*
 * serial.c - COM1 (0x3f8) 115200 8N1, polled.  OVMF has already programmed
 * the UART for its own console; serial_init() sets the same mode again so
 * that output works even when firmware used another speed or none.
 */
#include "serial.h"
#include "x86_io.h"

#define COM1 0x3f8

void serial_init(void)
{
	io_outb(COM1 + 1, 0x00); /* no interrupts */
	io_outb(COM1 + 3, 0x80); /* DLAB on */
	io_outb(COM1 + 0, 0x01); /* divisor 1: 115200 baud */
	io_outb(COM1 + 1, 0x00);
	io_outb(COM1 + 3, 0x03); /* 8N1, DLAB off */
	io_outb(COM1 + 2, 0xc7); /* FIFO on, cleared */
	io_outb(COM1 + 4, 0x03); /* DTR, RTS */
}

static void serial_putc(char c)
{
	unsigned spin;

	/* bounded: a missing UART must not hang the crash path forever */
	for (spin = 0; spin < 100000 && !(io_inb(COM1 + 5) & 0x20); spin++)
		;
	io_outb(COM1, (uint8_t)c);
}

void serial_puts(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			serial_putc('\r');
		serial_putc(*s);
	}
}

void serial_hex(uint64_t v)
{
	char buf[19];
	int i;

	buf[0] = '0';
	buf[1] = 'x';
	for (i = 0; i < 16; i++)
		buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 0xf];
	buf[18] = 0;
	serial_puts(buf);
}

void serial_dec(uint64_t v)
{
	char buf[21];
	int i = 20;

	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	serial_puts(buf + i);
}
