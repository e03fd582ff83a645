/*
 * loader.h - the state one run of the loader carries from step to step in
 * efi/: options, the kernel's bytes, the entropy, and where it was placed.
 */
#ifndef EFI_LOADER_H
#define EFI_LOADER_H

#include <efi.h>
#include <efilib.h>

#include "elf_load.h"
#include "entropy.h"
#include "options.h"
#include "kaslr_boot.h"

/*
 * Memory types from the OS-loader range (0x80000000..0xffffffff, UEFI spec
 * 7.2 AllocatePages) mark what this loader leaves behind, so that the final
 * memory map itself says which pages are the kernel's and which are the
 * loader's reclaimable leftovers.
 */
#define LDR_EFI_MT_KERNEL  0x80000001u
#define LDR_EFI_MT_RECLAIM 0x80000002u

/* The top 2 GiB, where -mcmodel=kernel kernels are linked. */
#define LDR_HIGH_BASE KB_VIRT_WINDOW_START
#define LDR_HIGH_END  KB_VIRT_WINDOW_END /* the last 2 MiB left for fixmaps */

/* The read-only IDT alias: far from the kernel's window (PML4 slot 509). */
#define LDR_IDT_ALIAS 0xfffffe8000000000ULL

struct loader {
	EFI_HANDLE image;
	EFI_LOADED_IMAGE *li;
	struct ldr_options opt;

	/* the kernel file, then (if compressed) the inflated image */
	void *file;
	UINT64 file_size;
	void *elf_buf;       /* == file when not compressed */
	UINT64 elf_size;
	UINT64 elf_cap;      /* bytes allocated at elf_buf when inflated */
	struct elf_image elf;

	/* entropy */
	uint32_t sources;
	uint32_t flags;      /* KB_FLAG_* */
	uint8_t seed[32];    /* placement seed (kaslr.seed= or the pool's) */
	uint8_t pool_seed[32];
	struct drbg drbg;

	/* placement */
	uint64_t phys_base;
	uint64_t virt_base;  /* run-time address of loaded offset 0 */
	uint64_t load_size;
	uint64_t phys_slots;
	uint64_t virt_slots;
	uint64_t entry;
	uint64_t relocs;

	/* Linux mode (linux_detect(), efi/linux.c): boot_params and friends */
	int linux_mode;
	uint64_t linux_block;
};

/* efi/place.c: choose and reserve the physical and virtual bases. */
EFI_STATUS place_kernel(struct loader *L);

/* efi/handoff.c: page tables, IDT, handoff data, ExitBootServices, jump. */
EFI_STATUS handoff_boot(struct loader *L);

#endif
