/*
 * kaslr_boot.h - the kaslr-loader boot protocol: the one header a kernel
 * includes, as it is, in freestanding C99 or later or C++11 or later (it
 * needs only <stddef.h> and <stdint.h>).  Fixed-width fields only; no
 * pointers, every address is a uint64_t physical address (identity-mapped
 * at entry) unless it says virtual.  See include/PROTOCOL.md for the entry
 * state and the rules around it.
 */
#ifndef KASLR_BOOT_H
#define KASLR_BOOT_H

#include <stddef.h>
#include <stdint.h>

#define KB_MAGIC   0x544f4f4252534c4bULL /* "KLSRBOOT" little-endian */
#define KB_VERSION 3

/*
 * Kernels linked at or above KB_VIRT_WINDOW_START get a virtual base drawn
 * over the 2 MiB-aligned positions keeping the image inside this window
 * (narrower with a KASLR note, below).
 */
#define KB_VIRT_WINDOW_START 0xffffffff80000000ULL
#define KB_VIRT_WINDOW_END   0xffffffffffe00000ULL

/*
 * The ELF note a kernel carries (in a PT_NOTE segment or an SHT_NOTE
 * section) to narrow that window: name KB_NOTE_NAME (namesz 6, with its
 * NUL), type KB_NOTE_VWINDOW, desc two little-endian uint64_t, start and
 * end, 2 MiB-aligned, inside the default window.
 */
#define KB_NOTE_NAME    "KASLR"
#define KB_NOTE_VWINDOW 1u
/* type 2: the request for function-granular KASLR (PROTOCOL.md, "The note") */
#define KB_NOTE_FUNCTIONS 2u

/*
 * Memory map entry types (kb_mem_entry.type).  1..7 match e820; the rest
 * are this protocol's.  Plain constants, not an enum: 0xefffffff is not an
 * int, which ISO C requires of enumeration constants.
 */
#define KB_MEM_USABLE        1u
#define KB_MEM_RESERVED      2u
#define KB_MEM_ACPI          3u
#define KB_MEM_NVS           4u
#define KB_MEM_UNUSABLE      5u
#define KB_MEM_PMEM          7u
#define KB_MEM_SOFT_RESERVED 0xefffffffu
/* loader's leftovers: page tables, this structure, stacks, IDT, GDT, TSS,
 * exception stubs; free for the kernel once it has its own */
#define KB_MEM_LOADER_RECLAIMABLE 0x10000001u
/* the kernel image itself, BSS included */
#define KB_MEM_KERNEL             0x10000002u
/* the modules (kaslr_boot_info.modules), each in whole pages of its own */
#define KB_MEM_MODULE             0x10000003u

struct kb_mem_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type; /* KB_MEM_* */
	uint32_t reserved;
};

/* entropy_sources bits */
#define KB_RNG_EFI    (1u << 0) /* EFI_RNG_PROTOCOL */
#define KB_RNG_RDSEED (1u << 1)
#define KB_RNG_RDRAND (1u << 2)
#define KB_RNG_RDTSC  (1u << 3)
#define KB_RNG_SEEDFILE (1u << 4) /* \loader\random-seed on the ESP, read and rewritten */
#define KB_RNG_CHAIN  (1u << 5) /* a seed an earlier boot stage (systemd-boot) left */

/* flags bits */
#define KB_FLAG_WEAK_ENTROPY (1u << 0) /* no strong source: RDTSC (and uncredited input) only */
#define KB_FLAG_FIXED_SEED   (1u << 1) /* kaslr.seed= given: placement is reproducible */
#define KB_FLAG_NOKASLR      (1u << 2) /* nokaslr: lowest valid slot */
#define KB_FLAG_VIRT_KASLR   (1u << 3) /* the virtual base was randomized */
#define KB_FLAG_NO_NX        (1u << 4) /* the CPU has no NX: nothing is no-execute */
#define KB_FLAG_FGKASLR      (1u << 5) /* the functions were shuffled: fgk_* fields below */
#define KB_FLAG_FORCED       (1u << 6) /* kaslr.phys= or kaslr.virt=: a slot chosen, not drawn */

/*
 * The loader's early-exception reports keep what they decode RIP with in
 * the loader image's data: this tag, then phys_base, virt_base, link_base,
 * the slot's size, phys_offset and virt_offset (7 x u64).  PROTOCOL.md,
 * "What stays in memory".
 */
#define KB_CRASH_FACTS_MAGIC 0x5354434146434b4cULL /* "LKCFACTS" little-endian */

struct kb_framebuffer {
	uint64_t base;   /* physical; 0 when there is no GOP */
	uint64_t size;
	uint32_t width;
	uint32_t height;
	uint32_t pixels_per_scanline;
	uint32_t format; /* EFI_GRAPHICS_PIXEL_FORMAT */
	uint32_t red_mask, green_mask, blue_mask, reserved_mask;
};

/* A file the loader placed for the kernel (module= / module). */
struct kb_module {
	uint64_t addr;       /* physical, 4 KiB-aligned, chosen at random */
	uint64_t size;       /* the file's size in bytes */
	uint64_t string;     /* physical address of its NUL-terminated ASCII string */
	uint32_t string_len; /* excluding the NUL; 0 when none was given */
	uint32_t reserved;
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

	/* version 2 */
	uint64_t modules;           /* kb_module[module_count] in the order given; 0 if none */
	uint32_t module_count;
	uint32_t module_entry_size; /* sizeof(struct kb_module) */
	uint64_t tsc_hz;            /* TSC ticks per second, as the loader found; 0 if unknown */
	/*
	 * Also version 2, function-granular KASLR (PROTOCOL.md): what the
	 * loader did with a kernel that asked for it.  All zero unless flags
	 * has KB_FLAG_FGKASLR.
	 */
	uint32_t fgk_functions;          /* function sections shuffled */
	uint32_t fgk_moved;              /* of them, how many left their link address */
	uint64_t fgk_perm_millibits;     /* floor(1000 * log2(fgk_functions!)) */
	uint64_t fgk_entropy_millibits;  /* min(fgk_perm_millibits, 256000): the
					    256-bit seed caps what the order can hold */
	/* version 3: which of the phys_slots / virt_slots positions this is,
	 * counted from 0 in increasing address order */
	uint64_t phys_slot;
	uint64_t virt_slot;
};

/*
 * Is `field` of *info there: does it end at or below info->size?  A field
 * past size is absent (an older loader); see PROTOCOL.md, "Compatibility".
 */
#define KB_HAS(info, field)                                           \
	(offsetof(struct kaslr_boot_info, field) +                    \
		 sizeof(((const struct kaslr_boot_info *)0)->field) <= \
	 (info)->size)

/*
 * The layout is an ABI: fields are only ever appended (see PROTOCOL.md,
 * "Compatibility"), so every offset is pinned here, in C11, C++11, and in
 * C99 through a negative array size.
 */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define KB_ASSERT(cond, what) static_assert(cond, what)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KB_ASSERT(cond, what) _Static_assert(cond, what)
#else
#define KB_ASSERT_JOIN2(a, b) a##b
#define KB_ASSERT_JOIN(a, b) KB_ASSERT_JOIN2(a, b)
#define KB_ASSERT(cond, what) \
	typedef char KB_ASSERT_JOIN(kb_assert_line_, __LINE__)[(cond) ? 1 : -1]
#endif

KB_ASSERT(offsetof(struct kb_mem_entry, addr) == 0, "addr");
KB_ASSERT(offsetof(struct kb_mem_entry, size) == 8, "size");
KB_ASSERT(offsetof(struct kb_mem_entry, type) == 16, "type");
KB_ASSERT(offsetof(struct kb_mem_entry, reserved) == 20, "reserved");
KB_ASSERT(offsetof(struct kb_framebuffer, base) == 0, "base");
KB_ASSERT(offsetof(struct kb_framebuffer, size) == 8, "size");
KB_ASSERT(offsetof(struct kb_framebuffer, width) == 16, "width");
KB_ASSERT(offsetof(struct kb_framebuffer, height) == 20, "height");
KB_ASSERT(offsetof(struct kb_framebuffer, pixels_per_scanline) == 24, "pixels_per_scanline");
KB_ASSERT(offsetof(struct kb_framebuffer, format) == 28, "format");
KB_ASSERT(offsetof(struct kb_framebuffer, red_mask) == 32, "red_mask");
KB_ASSERT(offsetof(struct kb_framebuffer, green_mask) == 36, "green_mask");
KB_ASSERT(offsetof(struct kb_framebuffer, blue_mask) == 40, "blue_mask");
KB_ASSERT(offsetof(struct kb_framebuffer, reserved_mask) == 44, "reserved_mask");
KB_ASSERT(offsetof(struct kaslr_boot_info, magic) == 0, "magic");
KB_ASSERT(offsetof(struct kaslr_boot_info, version) == 8, "version");
KB_ASSERT(offsetof(struct kaslr_boot_info, size) == 12, "size");
KB_ASSERT(offsetof(struct kaslr_boot_info, phys_base) == 16, "phys_base");
KB_ASSERT(offsetof(struct kaslr_boot_info, virt_base) == 24, "virt_base");
KB_ASSERT(offsetof(struct kaslr_boot_info, link_base) == 32, "link_base");
KB_ASSERT(offsetof(struct kaslr_boot_info, phys_offset) == 40, "phys_offset");
KB_ASSERT(offsetof(struct kaslr_boot_info, virt_offset) == 48, "virt_offset");
KB_ASSERT(offsetof(struct kaslr_boot_info, image_size) == 56, "image_size");
KB_ASSERT(offsetof(struct kaslr_boot_info, phys_slots) == 64, "phys_slots");
KB_ASSERT(offsetof(struct kaslr_boot_info, virt_slots) == 72, "virt_slots");
KB_ASSERT(offsetof(struct kaslr_boot_info, entropy_sources) == 80, "entropy_sources");
KB_ASSERT(offsetof(struct kaslr_boot_info, flags) == 84, "flags");
KB_ASSERT(offsetof(struct kaslr_boot_info, mem_map) == 88, "mem_map");
KB_ASSERT(offsetof(struct kaslr_boot_info, mem_map_count) == 96, "mem_map_count");
KB_ASSERT(offsetof(struct kaslr_boot_info, mem_map_entry_size) == 100, "mem_map_entry_size");
KB_ASSERT(offsetof(struct kaslr_boot_info, cmdline) == 104, "cmdline");
KB_ASSERT(offsetof(struct kaslr_boot_info, cmdline_len) == 112, "cmdline_len");
KB_ASSERT(offsetof(struct kaslr_boot_info, reserved0) == 116, "reserved0");
KB_ASSERT(offsetof(struct kaslr_boot_info, rng_seed) == 120, "rng_seed");
KB_ASSERT(offsetof(struct kaslr_boot_info, acpi_rsdp) == 152, "acpi_rsdp");
KB_ASSERT(offsetof(struct kaslr_boot_info, efi_system_table) == 160, "efi_system_table");
KB_ASSERT(offsetof(struct kaslr_boot_info, efi_mmap) == 168, "efi_mmap");
KB_ASSERT(offsetof(struct kaslr_boot_info, efi_mmap_size) == 176, "efi_mmap_size");
KB_ASSERT(offsetof(struct kaslr_boot_info, efi_desc_size) == 184, "efi_desc_size");
KB_ASSERT(offsetof(struct kaslr_boot_info, efi_desc_version) == 192, "efi_desc_version");
KB_ASSERT(offsetof(struct kaslr_boot_info, reserved1) == 196, "reserved1");
KB_ASSERT(offsetof(struct kaslr_boot_info, fb) == 200, "fb");
KB_ASSERT(offsetof(struct kaslr_boot_info, idt_alias) == 248, "idt_alias");
KB_ASSERT(offsetof(struct kaslr_boot_info, idt_phys) == 256, "idt_phys");
KB_ASSERT(offsetof(struct kaslr_boot_info, stack_top) == 264, "stack_top");
KB_ASSERT(offsetof(struct kaslr_boot_info, stack_size) == 272, "stack_size");
KB_ASSERT(offsetof(struct kaslr_boot_info, pml4) == 280, "pml4");
KB_ASSERT(offsetof(struct kaslr_boot_info, modules) == 288, "modules");
KB_ASSERT(offsetof(struct kaslr_boot_info, module_count) == 296, "module_count");
KB_ASSERT(offsetof(struct kaslr_boot_info, module_entry_size) == 300, "module_entry_size");
KB_ASSERT(offsetof(struct kaslr_boot_info, tsc_hz) == 304, "tsc_hz");
KB_ASSERT(offsetof(struct kb_module, addr) == 0, "addr");
KB_ASSERT(offsetof(struct kb_module, size) == 8, "size");
KB_ASSERT(offsetof(struct kb_module, string) == 16, "string");
KB_ASSERT(offsetof(struct kb_module, string_len) == 24, "string_len");
KB_ASSERT(offsetof(struct kb_module, reserved) == 28, "reserved");
KB_ASSERT(sizeof(struct kb_mem_entry) == 24, "kb_mem_entry size");
KB_ASSERT(sizeof(struct kb_framebuffer) == 48, "kb_framebuffer size");
KB_ASSERT(sizeof(struct kb_module) == 32, "kb_module size");
KB_ASSERT(offsetof(struct kaslr_boot_info, fgk_functions) == 312, "fgk_functions");
KB_ASSERT(offsetof(struct kaslr_boot_info, fgk_moved) == 316, "fgk_moved");
KB_ASSERT(offsetof(struct kaslr_boot_info, fgk_perm_millibits) == 320, "fgk_perm_millibits");
KB_ASSERT(offsetof(struct kaslr_boot_info, fgk_entropy_millibits) == 328, "fgk_entropy_millibits");
KB_ASSERT(offsetof(struct kaslr_boot_info, phys_slot) == 336, "phys_slot");
KB_ASSERT(offsetof(struct kaslr_boot_info, virt_slot) == 344, "virt_slot");
/* version 1 ended at pml4: 288 bytes; version 2 at fgk_entropy_millibits: 336 */
KB_ASSERT(sizeof(struct kaslr_boot_info) == 352, "kaslr_boot_info size, version 3");

#endif
