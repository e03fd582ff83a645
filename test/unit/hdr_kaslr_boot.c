/*
 * hdr_kaslr_boot.c - include/kaslr_boot.h as a kernel includes it: the
 * Makefile compiles this file, with a copy of the header alone on the
 * include path, as freestanding C99 and as C++11, both -pedantic -Werror
 * (`make unit` depends on the objects).  It uses every name a kernel needs.
 */
#include "kaslr_boot.h"

int kb_header_check(const struct kaslr_boot_info *info);

int kb_header_check(const struct kaslr_boot_info *info)
{
	const struct kb_mem_entry *m;
	const struct kb_module *mod;
	static const char note[] = KB_NOTE_NAME;
	uint64_t window = KB_VIRT_WINDOW_END - KB_VIRT_WINDOW_START;
	int n = 0;

	if (info->magic != KB_MAGIC || info->version < 1 || sizeof(note) != 6 ||
	    KB_NOTE_VWINDOW != 1u || window == 0)
		return -1;
	m = (const struct kb_mem_entry *)(uintptr_t)info->mem_map;
	if (info->mem_map_count && (m[0].type == KB_MEM_USABLE || m[0].type == KB_MEM_RESERVED ||
				    m[0].type == KB_MEM_ACPI || m[0].type == KB_MEM_NVS ||
				    m[0].type == KB_MEM_UNUSABLE || m[0].type == KB_MEM_PMEM ||
				    m[0].type == KB_MEM_SOFT_RESERVED ||
				    m[0].type == KB_MEM_LOADER_RECLAIMABLE ||
				    m[0].type == KB_MEM_KERNEL || m[0].type == KB_MEM_MODULE))
		n++;
	if (info->flags & (KB_FLAG_WEAK_ENTROPY | KB_FLAG_FIXED_SEED | KB_FLAG_NOKASLR |
			   KB_FLAG_VIRT_KASLR | KB_FLAG_NO_NX))
		n++;
	if (info->entropy_sources & (KB_RNG_EFI | KB_RNG_RDSEED | KB_RNG_RDRAND | KB_RNG_RDTSC))
		n++;
	if (KB_HAS(info, module_count) && info->module_count) {
		mod = (const struct kb_module *)(uintptr_t)info->modules;
		n += mod[0].string_len > 0;
	}
	if (KB_HAS(info, tsc_hz) && info->tsc_hz)
		n++;
	return n + (info->fb.base != 0);
}
