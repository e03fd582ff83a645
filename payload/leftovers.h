/*
 * payload/leftovers.h - checks on what the loader left behind besides the
 * kernel: its own image (only its code executable), the TSS and interrupt
 * stacks of its exception gates, and no copy of the entropy behind the
 * kernel's seed.  A failed check reports through the callback and does not
 * return.
 */
#ifndef PAYLOAD_LEFTOVERS_H
#define PAYLOAD_LEFTOVERS_H

#include <stdint.h>

#include "kaslr_boot.h"

typedef void (*lo_fail_fn)(const char *reason, const char *k1, uint64_t v1,
			   const char *k2, uint64_t v2) __attribute__((noreturn));

/*
 * The loader image, found from the IDT's exception stubs (they live in its
 * code) by walking down to its PE header: every page of a section marked
 * executable is executable and read-only, every other page of the image is
 * no-execute (unless the CPU has no NX).  Returns the image's page count.
 */
uint64_t lo_check_loader_image(const struct kaslr_boot_info *info, lo_fail_fn fail);

/*
 * TR holds the GDT's TSS; the gates of #DF, NMI, #PF and #MC name an
 * interrupt stack of it, each mapped writable and no-execute.  Returns how
 * many such gates there are (4).
 */
unsigned lo_check_tss(const struct kaslr_boot_info *info, lo_fail_fn fail);

/*
 * Scan the loader image and every loader-reclaimable range for 32 bytes
 * from which the kernel's rng_seed derives: the pool output the loader
 * must have wiped.  Returns the number of candidate positions tried.
 */
uint64_t lo_scan_secrets(const struct kaslr_boot_info *info, lo_fail_fn fail);

/*
 * Scan the loader's image and every page the final EFI map gives the
 * loader (LoaderCode, LoaderData, its reclaimable type) for an 8-byte word
 * equal to the physical or the virtual base: what the loader must wipe
 * before the jump (its own state, the function-granular core's memory,
 * copies of the memory map).  Words that hold them by design are skipped:
 * the kernel, this structure, the memory maps, the kernel's stack, the
 * modules and the crash-report facts (include/PROTOCOL.md, "What stays in
 * memory").  Returns the number of words compared.
 */
uint64_t lo_scan_layout(const struct kaslr_boot_info *info, lo_fail_fn fail);

#endif
