/*
 * linux_cmdline.h - what Linux's own command line says about where the
 * kernel may be placed, read the way the kernel's decompressor reads it
 * (arch/x86/boot/compressed/kaslr.c does this when Linux places itself):
 *
 *   nokaslr            no randomization: the lowest slot, KASLR_FLAG clear
 *   mem=SIZE           memory above SIZE is not used: end below it
 *   memmap=SIZE$ADDR   reserved range: keep out
 *   memmap=SIZE!ADDR   persistent memory: keep out
 *   memmap=SIZE#ADDR   ACPI data: keep out
 *   memmap=SIZE@ADDR   usable range: no constraint here
 *
 * memmap= takes a comma-separated list.  SIZE and ADDR use Linux's
 * memparse syntax (decimal, 0x hex or 0 octal, then K, M, G, T, P or E).
 * Words after "--" belong to init and are not read; "quoted words" count
 * as one.
 */
#ifndef LINUX_CMDLINE_H
#define LINUX_CMDLINE_H

#include <stddef.h>
#include <stdint.h>

#include "ldr.h"
#include "e820.h"

/* Linux's decompressor honours 4 memmap= ranges; so many more here */
#define LINUX_CMDLINE_AVOID_MAX 8

struct linux_cmdline_facts {
	int nokaslr;
	uint64_t mem_limit;    /* mem=: nothing at or above it; 0 = none */
	struct mem_region avoid[LINUX_CMDLINE_AVOID_MAX];
	size_t navoid;
	int too_many;          /* more keep-out ranges than LINUX_CMDLINE_AVOID_MAX */
};

/*
 * Read s[0, len) (need not be NUL-terminated; a NUL ends it).  Malformed
 * mem=/memmap= values are skipped, as Linux skips them.  Ranges that wrap
 * are clipped at the top of the address space.
 * Out: *ret.  Errors: LDR_E_INVAL (s NULL with a length, ret NULL).
 */
enum ldr_err linux_cmdline_scan(const char *s, size_t len, struct linux_cmdline_facts *ret);

#endif
