/*
 * loader.h - the state one run of the loader carries from step to step in
 * efi/: options, the kernel's bytes, the entropy, the boot protocol that
 * claimed the kernel, and where the kernel was placed.
 */
#ifndef EFI_LOADER_H
#define EFI_LOADER_H

#include <efi.h>
#include <efilib.h>

#include "elf_load.h"
#include "entropy.h"
#include "options.h"
#include "kaslr_boot.h"
#include "e820.h"
#include "fgkaslr.h"

/*
 * Memory types from the OS-loader range (0x80000000..0xffffffff, UEFI spec
 * 7.2 AllocatePages) mark what this loader leaves behind, so that the final
 * memory map itself says which pages are the kernel's and which are the
 * loader's reclaimable leftovers.
 */
#define LDR_EFI_MT_KERNEL  0x80000001u
#define LDR_EFI_MT_RECLAIM 0x80000002u
#define LDR_EFI_MT_MODULE  0x80000003u

/* a kernel or module file larger than this is refused unread */
#define LDR_FILE_MAX (1 * GIB)

/* The top 2 GiB, where -mcmodel=kernel kernels are linked. */
#define LDR_HIGH_BASE KB_VIRT_WINDOW_START
#define LDR_HIGH_END  KB_VIRT_WINDOW_END /* the last 2 MiB left for fixmaps */

/* The read-only IDT alias: far from the kernel's window (PML4 slot 509). */
#define LDR_IDT_ALIAS 0xfffffe8000000000ULL

#define KERNEL_LAYOUT_AVOID_MAX 8

/*
 * What a boot protocol's load step decides about placement; the generic
 * placement and page-table code act on it without knowing the protocol.
 */
struct kernel_layout {
	uint64_t size;      /* bytes reserved at the physical slot */
	uint64_t align;     /* physical alignment (a power of two >= 2 MiB) */
	uint64_t max_end;   /* the image must end at or below this physical
			       address (0: anywhere) */
	uint64_t vwin_lo;   /* virtual window for loaded offset 0: a base is */
	uint64_t vwin_hi;   /* drawn in [vwin_lo, vwin_hi); both 0: the kernel
			       runs at its physical address */
	uint64_t fixed_phys; /* not 0: the kernel runs only at this physical
				base (not relocatable); nothing is drawn */
	/* not NULL: why the physical (virtual) base is fixed, for the
	 * placement line ("not relocatable"); the virtual one is fixed when
	 * the window holds one position */
	const char *phys_fixed_why;
	const char *virt_fixed_why;
	int enter_phys;     /* jump to phys_base + entry_off, not the virtual entry */
	int phys_alias_x;   /* the kernel's physical alias keeps its execute
			       rights (it starts there); otherwise the alias is
			       never executable and never writable over code */
	/* physical ranges the kernel (and what else the loader places for
	 * it) must stay out of, e.g. Linux's memmap= */
	struct mem_region avoid[KERNEL_LAYOUT_AVOID_MAX];
	size_t navoid;
	/* function-granular KASLR: the kernel's request, already checked with
	 * fgk_check() (the protocol keeps it alive), or NULL.  When set, the
	 * placement shuffles the functions with fgk_apply() instead of
	 * relocating with reloc_apply(). */
	const struct kaslr_fgk_request *fgk;
};

/*
 * Secrets: the entropy pool's output, the placement seed and the generator
 * keyed with it.  Whoever reads them can recompute the placement and the
 * kernel's RNG seed, so they are wiped before the jump and on every way
 * back to firmware.
 */
struct loader_secrets {
	uint8_t seed[32];      /* placement seed (kaslr.seed= or the pool's) */
	uint8_t pool_seed[32]; /* the entropy pool's output */
	uint8_t kernel_seed[32]; /* a seed the kernel gets, until it is copied */
	struct drbg drbg;
};

struct boot_proto;
struct policy;

struct loader {
	EFI_HANDLE image;
	EFI_LOADED_IMAGE *li;
	uint64_t phys_limit; /* 2^MAXPHYADDR: nothing is placed or mapped above */
	struct ldr_options opt;
	const struct boot_proto *proto;
	int secure;              /* Secure Boot in force (efi/secureboot.c) */
	int secure_known;        /* the firmware says either way (SecureBoot exists) */
	const struct policy *policy; /* the embedded policy, never NULL after init */
	/*
	 * ExitBootServices was called and failed for good: firmware may have
	 * stopped part of itself, and UEFI before 2.9 allows no boot service
	 * then but GetMemoryMap and ExitBootServices, so nothing is given back
	 * (the pages stay allocated) and only the serial port speaks.
	 */
	int boot_services_gone;

	/* the kernel file, then (if compressed) the decompressed image */
	CHAR16 kernel_path[OPT_PATH_MAX]; /* on the loader's volume, for messages */
	void *file;
	UINT64 file_size;
	void *image_buf;     /* == file when not compressed */
	UINT64 image_size;
	UINT64 image_cap;    /* bytes allocated at image_buf when decompressed */
	struct elf_image elf;
	/* the one parse of image_buf (elf_parse_diag, default limits), made by
	 * the first probe that needs it and used by the protocol's load:
	 * elf_probed set, elf_err its result (LDR_OK: elf holds the image),
	 * elf_wx its W+X diagnostic */
	int elf_probed;
	enum ldr_err elf_err;
	struct elf_wx_clash elf_wx;
	struct kernel_layout layout;

	/* entropy */
	uint32_t sources;    /* KB_RNG_* */
	uint32_t flags;      /* KB_FLAG_* */
	struct loader_secrets sec;

	/* the modules, placed (kb_module's addr and size; strings in opt) */
	struct {
		uint64_t addr, size;
	} mods[OPT_MODULES_MAX];
	uint32_t nmods;

	/* placement */
	uint64_t phys_base;
	uint64_t stage;      /* not 0: the kernel is laid out here and moved to
				phys_base after ExitBootServices (place_move) */
	uint64_t virt_base;  /* run-time address of loaded offset 0 */
	uint64_t phys_slots;
	uint64_t virt_slots;
	uint64_t phys_slot;  /* the chosen slot's index among them */
	uint64_t virt_slot;
	uint64_t entry;
	uint64_t relocs;
	struct fgk_report fgk; /* what the shuffle did (functions 0: none) */

	/* shim's SHIM_LOCK protocol when shim started the loader, else NULL
	 * (efi/secureboot.c; efi/shim.h) */
	const struct shim_lock *shim;
};

/* efi/place.c: choose and reserve the physical and virtual bases, copy and
 * relocate the kernel there.  Logs its own failure. */
EFI_STATUS place_kernel(struct loader *L);

/*
 * Memory for the function-granular KASLR core (fgkaslr.h), from firmware
 * pool; the core gives back all of it before each call returns.
 */
extern const struct fgk_alloc place_fgk_alloc;

/* Give back the kernel's pages (a boot that failed after place_kernel). */
void place_release(struct loader *L);

/*
 * After ExitBootServices: a kernel staged elsewhere (L->stage, a fixed
 * address part of which was boot services' memory) moved into place.  No
 * firmware call.
 */
void place_move(const struct loader *L);

/*
 * A 4 KiB-aligned range of size bytes for data the kernel gets (a module,
 * an initrd), drawn uniformly (the lowest with nokaslr) over the free
 * memory in the kaslr.min/kaslr.max window, ending by max_end when it is
 * not 0 and by the layout's max_end, clear of its keep-out ranges, and
 * reserved as mem_type (AllocatePages(AllocateAddress) of whole pages; the
 * caller frees them).  It never overlaps anything allocated before: the
 * kernel, earlier blobs, the loader.  Logs its failure naming `what`.
 * Out: *ret_addr, only on success; *ret_count (may be NULL) the positions
 * there were.
 */
EFI_STATUS place_blob(struct loader *L, uint64_t size, uint64_t max_end, UINT32 mem_type,
		      const CHAR16 *what, uint64_t *ret_addr, uint64_t *ret_count);

/* efi/module.c: read, check and place every module= file; logs.  Their
 * pages are given back by modules_release (a boot that failed). */
EFI_STATUS modules_load(struct loader *L);
void modules_release(struct loader *L);

/* efi/handoff.c: page tables, descriptors, the protocol's hand-off data,
 * ExitBootServices, jump.  Returns only on failure. */
EFI_STATUS handoff_boot(struct loader *L);

/* Wipe L->sec and every other secret copy the loader keeps. */
void loader_wipe_secrets(struct loader *L);

/*
 * Just before the jump: the secrets, then all of *L - the physical and
 * virtual bases, the entry, the modules' places, the shuffle's report, the
 * options - none of which the kernel needs from the loader's memory (it
 * gets what it is owed in its hand-off data).  Nothing may read L after.
 */
void loader_wipe_all(struct loader *L);

/* the one line for a kernel (PATH) that decompresses to more than kaslr.maxsize= */
EFI_STATUS loader_too_big(const struct loader *L, const CHAR16 *path);

#endif
