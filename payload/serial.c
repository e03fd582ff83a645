/*
 * payload/serial.c - polled COM1 writer for the test kernel: init, byte,
 * string, hex and decimal.  Freestanding; no state beyond the UART itself.
 */
#include "serial.h"

#define SERIAL_COM1     0x3f8
#define SERIAL_THR      0 /* transmit holding register (DLAB=0) */
#define SERIAL_DLL      0 /* divisor latch low (DLAB=1) */
#define SERIAL_IER      1 /* interrupt enable (DLAB=0) */
#define SERIAL_DLM      1 /* divisor latch high (DLAB=1) */
#define SERIAL_FCR      2
#define SERIAL_LCR      3
#define SERIAL_MCR      4
#define SERIAL_LSR      5
#define SERIAL_LSR_THRE 0x20
#define SERIAL_LCR_DLAB 0x80
#define SERIAL_LCR_8N1  0x03
/* bounded wait: a missing UART must not hang the payload forever */
#define SERIAL_SPIN     1000000

void serial_init(void)
{
	io_outb(SERIAL_COM1 + SERIAL_IER, 0x00);
	io_outb(SERIAL_COM1 + SERIAL_LCR, SERIAL_LCR_DLAB);
	io_outb(SERIAL_COM1 + SERIAL_DLL, 1); /* 115200 / 1 */
	io_outb(SERIAL_COM1 + SERIAL_DLM, 0);
	io_outb(SERIAL_COM1 + SERIAL_LCR, SERIAL_LCR_8N1);
	io_outb(SERIAL_COM1 + SERIAL_FCR, 0xc7); /* enable, clear, 14-byte */
	io_outb(SERIAL_COM1 + SERIAL_MCR, 0x03); /* DTR, RTS; OUT2 off: no IRQ */
}

void serial_putc(char c)
{
	for (int i = 0; i < SERIAL_SPIN; i++) {
		if (io_inb(SERIAL_COM1 + SERIAL_LSR) & SERIAL_LSR_THRE)
			break;
		__asm__ volatile("pause");
	}
	io_outb(SERIAL_COM1 + SERIAL_THR, (uint8_t)c);
}

void serial_puts(const char *s)
{
	while (*s)
		serial_putc(*s++);
}

void serial_put_hex(uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char buf[16];
	int n = 0;

	do {
		buf[n++] = digits[v & 0xf];
		v >>= 4;
	} while (v);
	serial_puts("0x");
	while (n)
		serial_putc(buf[--n]);
}

void serial_put_dec(uint64_t v)
{
	char buf[20];
	int n = 0;

	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		serial_putc(buf[--n]);
}
