/*
 * linux_reloc.h - the x86-64 Linux relocation table (the output of the
 * kernel's arch/x86/tools/relocs, appended after vmlinux.bin): finding it
 * in the bytes after an ELF image and applying it to the loaded kernel.
 *
 * Layout, low to high addresses, of the words (32-bit little endian) at the
 * very end of the file:
 *
 *   ... ELF | 0 | 64-bit ... | 0 | inverse 32-bit ... | 0 | 32-bit ... | EOF
 *
 * Each non-zero word is the link-time virtual address (sign-extended from
 * 32 bits, so 0xffffffff8xxxxxxx) of a field to adjust by the virtual
 * delta: 32-bit fields get += delta, inverse-32 fields -= delta, 64-bit
 * fields += delta.
 */
#ifndef LINUX_RELOC_H
#define LINUX_RELOC_H

#include <stdint.h>

#include "ldr.h"
#include "elf_load.h"

/*
 * Find the table in file[elf_end, size).  Reading backwards from the end:
 * 32-bit entries up to a zero word, inverse-32 entries up to a zero word,
 * 64-bit entries up to a zero word.  The words must lie inside the tail
 * (a separator missing means we run past elf_end); any bytes between
 * elf_end and the first separator must be zero (alignment padding).
 * Out: *ret (offset and length of the table proper, entry counts).
 * Errors: LDR_E_LINUX_RELOCS (tail shorter than 12 bytes, separator
 * missing, non-zero bytes before the table); LDR_E_INVAL (elf_end > size).
 */
enum ldr_err linux_relocs_find(const uint8_t *file, uint64_t size,
			       uint64_t elf_end, struct elf_linux_relocs *ret);

/*
 * Apply a table located by linux_relocs_find (table, len) to a kernel
 * loaded at dest, whose offset 0 was linked at virtual address link_vbase.
 * A field at link address a lives at dest + (a - link_vbase) and must lie
 * inside [0, dest_size) with all of its bytes.  virt_delta is the new
 * virtual base minus link_vbase (mod 2^64).
 * 32-bit fields must stay representable (zero- or sign-extended),
 * inverse-32 ones as signed 32-bit values.
 * Out: *ret_count = fields adjusted, on success.
 * Errors: LDR_E_LINUX_RELOCS (malformed table), LDR_E_RELOC_TARGET,
 * LDR_E_RELOC_RANGE; dest may be partly relocated on error.
 */
enum ldr_err linux_relocs_apply(const uint8_t *table, uint64_t len,
				void *dest, uint64_t dest_size,
				uint64_t link_vbase, uint64_t virt_delta,
				uint64_t *ret_count);

#endif
