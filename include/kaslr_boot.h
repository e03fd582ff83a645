/*
 * kaslr_boot.h - the kaslr-loader boot protocol: the one header a kernel
 * includes.  Fixed-width fields only; no pointers, every address is a
 * uint64_t physical address (identity-mapped at entry) unless it says virtual.
 * See include/PROTOCOL.md for the entry state and the rules around it.
 */
#ifndef KASLR_BOOT_H
#define KASLR_BOOT_H

#include <stdint.h>

#define KB_MAGIC   0x544f4f4252534c4bULL /* "KLSRBOOT" little-endian */
#define KB_VERSION 1

/*
 * Kernels linked at or above KB_VIRT_WINDOW_START get a virtual base drawn
 * over the 2 MiB-aligned positions keeping the image inside this window
 * (narrower with a KASLR note: see include/elfnote.h).
 */
#define KB_VIRT_WINDOW_START 0xffffffff80000000ULL
#define KB_VIRT_WINDOW_END   0xffffffffffe00000ULL

/* Memory map entry types.  1..7 match e820; the rest are this protocol's. */
enum kb_mem_type {
	KB_MEM_USABLE = 1,
	KB_MEM_RESERVED = 2,
	KB_MEM_ACPI = 3,
	KB_MEM_NVS = 4,
	KB_MEM_UNUSABLE = 5,
	KB_MEM_PMEM = 7,
	KB_MEM_SOFT_RESERVED = 0xefffffff,
	/* loader's leftovers: page tables, this structure, stack, IDT, GDT,
	 * exception stubs; free for the kernel once it has its own */
	KB_MEM_LOADER_RECLAIMABLE = 0x10000001,
	/* the kernel image itself, BSS included */
	KB_MEM_KERNEL = 0x10000002,
};

struct kb_mem_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type; /* enum kb_mem_type */
	uint32_t reserved;
};

/* entropy_sources bits */
#define KB_RNG_EFI    (1u << 0) /* EFI_RNG_PROTOCOL */
#define KB_RNG_RDSEED (1u << 1)
#define KB_RNG_RDRAND (1u << 2)
#define KB_RNG_RDTSC  (1u << 3)

/* flags bits */
#define KB_FLAG_WEAK_ENTROPY (1u << 0) /* only RDTSC contributed */
#define KB_FLAG_FIXED_SEED   (1u << 1) /* kaslr.seed= given: placement is reproducible */
#define KB_FLAG_NOKASLR      (1u << 2) /* nokaslr: lowest valid slot */
#define KB_FLAG_VIRT_KASLR   (1u << 3) /* the virtual base was randomized */
#define KB_FLAG_NO_NX        (1u << 4) /* the CPU has no NX: nothing is no-execute */

struct kb_framebuffer {
	uint64_t base;   /* physical; 0 when there is no GOP */
	uint64_t size;
	uint32_t width;
	uint32_t height;
	uint32_t pixels_per_scanline;
	uint32_t format; /* EFI_GRAPHICS_PIXEL_FORMAT */
	uint32_t red_mask, green_mask, blue_mask, reserved_mask;
};

struct kaslr_boot_info {
	uint64_t magic;   /* KB_MAGIC */
	uint32_t version; /* KB_VERSION */
	uint32_t size;    /* sizeof(struct kaslr_boot_info) as the loader built it */

	/* KASLR facts */
	uint64_t phys_base;   /* physical address of the lowest PT_LOAD segment */
	uint64_t virt_base;   /* virtual address of the same byte at run time */
	uint64_t link_base;   /* its address at link time (lowest p_vaddr) */
	uint64_t phys_offset; /* phys_base - link physical base (two's complement) */
	uint64_t virt_offset; /* virt_base - link_base (two's complement) */
	uint64_t image_size;  /* bytes from phys_base to the end of the last segment's BSS */
	uint64_t phys_slots;  /* how many physical positions were possible */
	uint64_t virt_slots;  /* how many virtual positions were possible (1 if none chosen) */
	uint32_t entropy_sources; /* KB_RNG_* bits that contributed */
	uint32_t flags;           /* KB_FLAG_* */

	/* memory map: kb_mem_entry[mem_map_count], sorted, non-overlapping */
	uint64_t mem_map;
	uint32_t mem_map_count;
	uint32_t mem_map_entry_size; /* sizeof(struct kb_mem_entry) */

	/* kernel command line: NUL-terminated ASCII; cmdline_len excludes the NUL */
	uint64_t cmdline;
	uint32_t cmdline_len;
	uint32_t reserved0;

	/* fresh randomness for the kernel; never the placement seed */
	uint8_t rng_seed[32];

	/* platform */
	uint64_t acpi_rsdp;        /* 0 if firmware gave none */
	uint64_t efi_system_table; /* for runtime services */
	uint64_t efi_mmap;         /* final EFI memory map, as GetMemoryMap returned it */
	uint64_t efi_mmap_size;
	uint64_t efi_desc_size;
	uint32_t efi_desc_version;
	uint32_t reserved1;
	struct kb_framebuffer fb;

	/* machine state the loader left */
	uint64_t idt_alias;  /* virtual address loaded into IDTR (read-only) */
	uint64_t idt_phys;   /* physical page behind it */
	uint64_t stack_top;  /* RSP at entry (16-byte aligned minus 8, as after a call) */
	uint64_t stack_size;
	uint64_t pml4;       /* CR3 at entry */
};

#endif
