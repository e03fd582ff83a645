/*
 * linux_reloc.c - the relocation table Linux's build appends to vmlinux.bin
 * (arch/x86/tools/relocs output): locating it behind the ELF image and
 * applying its three lists with every target bounds-checked.
 *
 * Linux's own consumer (arch/x86/boot/compressed/misc.c) starts at the last
 * 32-bit word of the decompressed output and walks towards lower
 * addresses: first the 32-bit entries until a zero word, then the inverse
 * 32-bit entries until a zero word, then the 64-bit entries until a zero
 * word.  In file order that is
 *
 *   [ELF ...][0][64-bit ...][0][inverse 32-bit ...][0][32-bit ...]<EOF>
 *
 * Entries hold link-time kernel virtual addresses truncated to 32 bits
 * (sign-extending gives 0xffffffff8xxxxxxx).  Fields inside the per-cpu
 * section are listed at their load addresses, so every entry refers to the
 * physically contiguous image laid out from LOAD_PHYSICAL_ADDR.
 */
#include <string.h>

#include "linux_reloc.h"

#define LINUX_RELOC_WORD 4u

static uint32_t lr_word(const uint8_t *p)
{
	return ldr_get32(p);
}

/*
 * Locate the table in file[elf_end, size) into *ret (on success only).
 * Errors: LDR_E_INVAL, LDR_E_LINUX_RELOCS (see linux_reloc.h).
 */
enum ldr_err linux_relocs_find(const uint8_t *file, uint64_t size,
			       uint64_t elf_end, struct elf_linux_relocs *ret)
{
	uint64_t count[3] = { 0, 0, 0 };
	uint64_t pos = size;  /* words are read at [pos - 4, pos) */

	if (!file || elf_end > size)
		return LDR_E_INVAL;
	for (int list = 0; list < 3; list++) {
		for (;;) {
			uint32_t w;

			if (pos - elf_end < LINUX_RELOC_WORD)
				return LDR_E_LINUX_RELOCS;
			pos -= LINUX_RELOC_WORD;
			w = lr_word(file + pos);
			if (w == 0)
				break;
			count[list]++;
		}
	}
	/* What lies between the ELF image and the table may only be padding. */
	for (uint64_t i = elf_end; i < pos; i++)
		if (file[i] != 0)
			return LDR_E_LINUX_RELOCS;
	ret->off = pos;
	ret->len = size - pos;
	ret->n32 = count[0];
	ret->ninv32 = count[1];
	ret->n64 = count[2];
	return LDR_OK;
}

/*
 * Does v + d fit in 32 bits?  The field may hold a zero-extended
 * (R_X86_64_32) or a sign-extended (R_X86_64_32S) value; the table does not
 * say which, so either reading is accepted.  d is a signed delta.
 */
static int lr_fits32(uint32_t v, int64_t d, int allow_zext)
{
	int64_t s, z;

	/* |d| >= 2^33 can never fit; bounding it keeps the sums exact. */
	if (d > (INT64_C(1) << 33) || d < -(INT64_C(1) << 33))
		return 0;
	s = (int64_t)(int32_t)v + d;
	z = (int64_t)v + d;
	if (s >= INT32_MIN && s <= INT32_MAX)
		return 1;
	return allow_zext && z >= 0 && z <= (int64_t)UINT32_MAX;
}

/*
 * Apply table[0, len) to dest; *ret_count on success.  Errors: LDR_E_INVAL,
 * LDR_E_LINUX_RELOCS, LDR_E_RELOC_TARGET, LDR_E_RELOC_RANGE.
 */
enum ldr_err linux_relocs_apply(const uint8_t *table, uint64_t len,
				void *dest, uint64_t dest_size,
				uint64_t link_vbase, uint64_t virt_delta,
				uint64_t *ret_count)
{
	uint8_t *d = dest;
	uint64_t pos = len, n = 0;
	/* Two's complement: the unsigned delta read as a signed one. */
	int64_t sdelta = (int64_t)virt_delta;

	if (!table || !dest)
		return LDR_E_INVAL;
	if (len % LINUX_RELOC_WORD)
		return LDR_E_LINUX_RELOCS;
	for (int list = 0; list < 3; list++) {
		unsigned width = list == 2 ? 8 : 4;

		for (;;) {
			uint32_t w;
			uint64_t off;

			if (pos < LINUX_RELOC_WORD)
				return LDR_E_LINUX_RELOCS;
			pos -= LINUX_RELOC_WORD;
			w = lr_word(table + pos);
			if (w == 0)
				break;
			off = (uint64_t)(int64_t)(int32_t)w - link_vbase;
			if (!ldr_in_bounds(off, width, dest_size))
				return LDR_E_RELOC_TARGET;
			if (list == 2) {
				ldr_put64(d + off, ldr_get64(d + off) + virt_delta);
			} else {
				uint32_t v = ldr_get32(d + off);

				if (list == 0 && !lr_fits32(v, sdelta, 1))
					return LDR_E_RELOC_RANGE;
				/* inverse: the field is signed and moves down */
				if (list == 1 && (sdelta == INT64_MIN ||
						  !lr_fits32(v, -sdelta, 0)))
					return LDR_E_RELOC_RANGE;
				v = list == 0 ? v + (uint32_t)virt_delta
					      : v - (uint32_t)virt_delta;
				ldr_put32(d + off, v);
			}
			n++;
		}
	}
	if (pos != 0)
		return LDR_E_LINUX_RELOCS;
	*ret_count = n;
	return LDR_OK;
}
