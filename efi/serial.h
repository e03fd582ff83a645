/*
 * serial.h - polled COM1 output: the only voice left after ExitBootServices
 * (the exception reports use it).  Plain port I/O, no firmware.
 */
#ifndef EFI_SERIAL_H
#define EFI_SERIAL_H

#include <stdint.h>

void serial_init(void);
void serial_puts(const char *s);
void serial_hex(uint64_t v);
void serial_dec(uint64_t v);

#endif
