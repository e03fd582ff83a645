/*
 * linux_boot.h - booting an unmodified x86-64 Linux vmlinux (its ELF image
 * plus the appended relocation table) through the 64-bit boot protocol
 * (Documentation/arch/x86/boot.rst, zero-page.rst): recognising such an
 * image, its physical slot size and virtual KASLR window, and filling the
 * 4096-byte "zero page" (struct boot_params) with the setup_data chain it
 * points to.
 *
 * The zero page, offsets this module writes (all little endian):
 *
 *   0x000 +----------------------------+
 *         | screen_info (GOP -> efifb) |
 *   0x070 | acpi_rsdp_addr      u64    |
 *   0x0c8 | ext_cmd_line_ptr    u32    |  cmd_line_ptr >> 32
 *   0x1c0 | efi_info: "EL64", system   |
 *         |   table, final EFI map     |
 *   0x1e8 | e820_entries        u8     |  <= 128
 *   0x1ec | secure_boot         u8     |  firmware's Secure Boot state
 *   0x1ef | sentinel            u8 = 0 |
 *   0x1f1 | setup_header:              |
 *   0x1f2 |   root_flags        u16    |  1: mount root read-only
 *   0x1fe |   boot_flag 0xaa55  u16    |
 *   0x202 |   header "HdrS"     u32    |
 *   0x206 |   version 0x020f    u16    |
 *   0x210 |   type_of_loader    u8     |  0xff: no assigned id
 *   0x211 |   loadflags         u8     |  LOADED_HIGH | KASLR_FLAG
 *   0x214 |   code32_start      u32    |  0: never the kernel's address
 *   0x228 |   cmd_line_ptr      u32    |
 *   0x230 |   kernel_alignment  u32    |  2 MiB
 *   0x234 |   relocatable_kernel u8    |  1
 *   0x236 |   xloadflags        u16    |  XLF_KERNEL_64 | ABOVE_4G
 *   0x238 |   cmdline_size      u32    |  2047
 *   0x250 |   setup_data        u64    |  -> chain below, or 0
 *   0x258 |   pref_address      u64    |  link-time physical base
 *   0x260 |   init_size         u32    |  bytes reserved for the kernel
 *   0x2d0 | e820_table[128] x 20 bytes |
 *   0xcd0 +----------------------------+ ... 0x1000
 *
 *   setup_data chain (caller's memory, 8-byte aligned nodes):
 *     [next u64 | type u32 | len u32 | data ...] -> [...] -> 0
 *     SETUP_RNG_SEED (9): fresh bytes for the kernel's RNG
 *     SETUP_E820_EXT (1): e820 entries 128.. when the table does not fit
 *
 * Linux publishes the zero page to every user (/sys/kernel/boot_params/data,
 * mode 0444), so nothing written here is, or gives away, where the kernel
 * is: struct linux_boot_args does not even carry the physical base or the
 * virtual offset.  The pointers (command line, setup_data, EFI map) are to
 * the loader's own blocks, which firmware places; the ramdisk's address is
 * a draw of its own; the e820 table lists the kernel's pages as plain RAM.
 */
#ifndef LINUX_BOOT_H
#define LINUX_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "ldr.h"
#include "e820.h"
#include "elf_load.h"
#include "kaslr_boot.h"

/* Kernel layout facts (arch/x86/include/asm/page_64_types.h, Kconfig). */
#define LINUX_START_KERNEL_MAP  0xffffffff80000000ULL /* __START_KERNEL_map */
#define LINUX_KERNEL_IMAGE_SIZE (1 * GIB)             /* with RANDOMIZE_BASE */
#define LINUX_ALIGN             (2 * MIB)             /* CONFIG_PHYSICAL_ALIGN, PMD size */

/* The zero page. */
#define LINUX_BP_SIZE           (4 * KIB)
#define LINUX_BP_ACPI_RSDP      0x070
#define LINUX_BP_EXT_CMDLINE    0x0c8
#define LINUX_BP_EFI_INFO       0x1c0
#define LINUX_BP_E820_ENTRIES   0x1e8
#define LINUX_BP_SECURE_BOOT    0x1ec
#define LINUX_BP_ROOT_FLAGS     0x1f2
#define LINUX_BP_SENTINEL       0x1ef
#define LINUX_BP_BOOT_FLAG      0x1fe
#define LINUX_BP_HEADER         0x202
#define LINUX_BP_VERSION        0x206
#define LINUX_BP_SETUP_HEADER   0x1f1 /* the kernel's own header starts here */
#define LINUX_BP_SETUP_END      0x290 /* ... and boot_params keeps it up to here */
#define LINUX_BP_RAMDISK_IMAGE  0x218
#define LINUX_BP_RAMDISK_SIZE   0x21c
#define LINUX_BP_EXT_RAMDISK_IMAGE 0x0c0
#define LINUX_BP_EXT_RAMDISK_SIZE  0x0c4
#define LINUX_BP_TYPE_OF_LOADER 0x210
#define LINUX_BP_LOADFLAGS      0x211
#define LINUX_BP_CODE32_START   0x214
#define LINUX_BP_CMD_LINE_PTR   0x228
#define LINUX_BP_KERNEL_ALIGN   0x230
#define LINUX_BP_RELOCATABLE    0x234
#define LINUX_BP_XLOADFLAGS     0x236
#define LINUX_BP_CMDLINE_SIZE   0x238
#define LINUX_BP_SETUP_DATA     0x250
#define LINUX_BP_PREF_ADDRESS   0x258
#define LINUX_BP_INIT_SIZE      0x260
#define LINUX_BP_E820_TABLE     0x2d0

#define LINUX_BOOT_FLAG         0xaa55
#define LINUX_HDRS_MAGIC        0x53726448u /* "HdrS" */
#define LINUX_PROTOCOL_VERSION  0x020f      /* 2.15, what 6.1 reports */
#define LINUX_LOADER_UNDEFINED  0xff
#define LINUX_LOADED_HIGH       (1u << 0)
#define LINUX_KASLR_FLAG        (1u << 1)
#define LINUX_XLF_KERNEL_64     (1u << 0)
#define LINUX_XLF_ABOVE_4G      (1u << 1)

/* The kernel copies COMMAND_LINE_SIZE (2048) bytes from cmd_line_ptr. */
#define LINUX_CMDLINE_BUF       2048
#define LINUX_CMDLINE_MAX       (LINUX_CMDLINE_BUF - 1)

#define LINUX_E820_ZEROPAGE_MAX 128
#define LINUX_E820_ENTRY_SIZE   20 /* packed u64 addr, u64 size, u32 type */

/* efi_info (struct efi_info), from the zero page's 0x1c0 */
#define LINUX_EFI_SIGNATURE     0x1c0 /* "EL64" on a 64-bit firmware */
#define LINUX_EFI_SYSTAB        0x1c4
#define LINUX_EFI_DESC_SIZE     0x1c8
#define LINUX_EFI_DESC_VERSION  0x1cc
#define LINUX_EFI_MEMMAP        0x1d0
#define LINUX_EFI_MEMMAP_SIZE   0x1d4
#define LINUX_EFI_SYSTAB_HI     0x1d8
#define LINUX_EFI_MEMMAP_HI     0x1dc
#define LINUX_EFI_EL64          0x34364c45u /* "EL64" little-endian */

/* screen_info (struct screen_info), from 0x000: an EFI framebuffer */
#define LINUX_SI_ISVGA          0x0f /* VIDEO_TYPE_EFI */
#define LINUX_SI_LFB_WIDTH      0x12
#define LINUX_SI_LFB_HEIGHT     0x14
#define LINUX_SI_LFB_DEPTH      0x16
#define LINUX_SI_LFB_BASE       0x18
#define LINUX_SI_LFB_SIZE       0x1c
#define LINUX_SI_LFB_LINELENGTH 0x24
#define LINUX_SI_RED_SIZE       0x26 /* then red_pos, green size/pos, blue
					size/pos, reserved size/pos: 8 bytes */
#define LINUX_SI_CAPABILITIES   0x36
#define LINUX_SI_EXT_LFB_BASE   0x3a
#define LINUX_VIDEO_TYPE_EFI    0x70
#define LINUX_VIDEO_CAP_SKIP_QUIRKS 0x1u
#define LINUX_VIDEO_CAP_64BIT_BASE  0x2u

/* boot_params.secure_boot (the EFI stub's enum efi_secureboot_mode) */
#define LINUX_SB_UNSET          0
#define LINUX_SB_UNKNOWN        1
#define LINUX_SB_DISABLED       2
#define LINUX_SB_ENABLED        3

#define LINUX_SETUP_HDR_SIZE    16
#define LINUX_SETUP_E820_EXT    1
#define LINUX_SETUP_RNG_SEED    9

/*
 * x86-64 Linux's link invariant, virtual = physical + __START_KERNEL_map,
 * for an image whose loaded offset 0 is linked at virtual link_vbase and
 * physical pbase: link_vbase - 0xffffffff80000000 == pbase, a 2 MiB
 * multiple inside the 1 GiB kernel window (Debian: 0xffffffff81000000 and
 * 16 MiB).  elf_parse() accepts an appended Linux table only behind an
 * image that obeys it.  Returns 1 or 0.
 */
int linux_link_ok(uint64_t link_vbase, uint64_t pbase);

/*
 * Is img an x86-64 Linux vmlinux?  The rule: elf_parse() found it Linux
 * (img->is_linux: it took the bytes after the ELF image for Linux's
 * relocation table, ELF_RELOC_LINUX; or it parsed a bzImage's payload,
 * limits' linux_payload, which may have none: ELF_RELOC_NONE), laid it
 * out by physical address, and the image obeys linux_link_ok().  Returns
 * 1 or 0.
 */
int linux_detect(const struct elf_image *img);

/*
 * Does a linux_detect()-ed image stay at its link-time virtual address?
 * 1 when it has no relocation table (built without RANDOMIZE_BASE: Linux
 * then moves only physically, as x86-64 kernels can without relocating
 * anything), 0 when it has one (or is not Linux).
 */
int linux_virt_fixed(const struct elf_image *img);

/*
 * The physical base of a bzImage that is not relocatable
 * (relocatable_kernel 0: built without RELOCATABLE): it runs only where it
 * is linked, at its header's pref_address (LOAD_PHYSICAL_ADDR), which
 * must be the vmlinux's link-time physical base (img->pbase, checked by
 * linux_link_ok(): 2 MiB-aligned, inside the first GiB).  Out: *ret_base.
 * Errors: LDR_E_INVAL (img not linux_detect()-ed, ret_base NULL),
 * LDR_E_LINUX_PREF_ADDRESS (pref_address is another address).
 */
enum ldr_err linux_fixed_base(const struct elf_image *img, uint64_t pref_address,
			      uint64_t *ret_base);

/*
 * Bytes to reserve at the physical slot: the image through _end (text to
 * BSS and .brk, which hold the kernel's early page tables and early
 * allocations: the kernel proper needs nothing past _end before it reads
 * the memory map), rounded up to 2 MiB because the kernel maps itself with
 * 2 MiB pages.  0 for an image that is not linux_detect()-ed.
 */
uint64_t linux_slot_size(const struct elf_image *img);

/*
 * The virtual window for loaded offset 0 of a Linux image of image_size
 * bytes: [link_vbase, __START_KERNEL_map + 1 GiB), i.e. Linux's own KASLR
 * range (offsets from the map start of at least the link-time physical
 * base, image inside KERNEL_IMAGE_SIZE); for an image that stays at its
 * link address (linux_virt_fixed()) [link_vbase, link_vbase + image_size),
 * the one position.  Out: *ret_lo, *ret_hi.
 * Errors: LDR_E_INVAL (not a Linux image, image_size 0),
 * LDR_E_VIRT_NO_SLOT (the image does not fit in the window).
 */
enum ldr_err linux_virt_window(const struct elf_image *img, uint64_t image_size,
			       uint64_t *ret_lo, uint64_t *ret_hi);

/* What linux_boot_params_fill() puts into the zero page. */
struct linux_boot_args {
	uint64_t cmdline;            /* physical address, NUL-terminated, readable
					for LINUX_CMDLINE_BUF bytes */
	uint32_t cmdline_len;        /* without the NUL; <= LINUX_CMDLINE_MAX */
	uint64_t acpi_rsdp;          /* 0 if the firmware gave none */
	uint64_t kernel_size;        /* bytes reserved for it (init_size) */
	uint64_t link_phys;          /* img->pbase, for pref_address */
	int kaslr;                   /* the addresses were randomized: KASLR_FLAG */
	const struct mem_region *e820; /* e820_from_efi() output, sorted */
	size_t e820_count;
	const uint8_t *rng_seed;     /* NULL: no SETUP_RNG_SEED node */
	uint32_t rng_seed_len;
	void *setup;                 /* memory for the setup_data chain, 8-aligned */
	uint64_t setup_phys;         /* its physical address */
	uint64_t setup_cap;          /* its size in bytes */
	/* EFI hand-over as the EFI stub gives it (efi_info), so the kernel has
	 * runtime services, efivarfs, SMBIOS, ESRT: 0 efi_systab = none */
	uint64_t efi_systab;         /* EFI_SYSTEM_TABLE, physical */
	uint64_t efi_memmap;         /* the final map, as ExitBootServices took it */
	uint32_t efi_memmap_size;
	uint32_t efi_desc_size;
	uint32_t efi_desc_version;
	uint8_t secure_boot;         /* LINUX_SB_* */
	const struct kb_framebuffer *fb; /* GOP framebuffer for screen_info, or NULL */
	/* the kernel's own setup header (bzImage bytes from 0x1f1), copied
	 * into the zero page first; NULL for a bare vmlinux, whose header is
	 * made up as protocol 2.15 */
	const uint8_t *setup_header;
	uint32_t setup_header_len;
	uint64_t ramdisk;            /* the initrd: physical address and size; */
	uint64_t ramdisk_size;       /* 0 size = none */
};

/*
 * Bytes of setup_data linux_boot_params_fill() needs for e820_count
 * entries and an rng seed of rng_seed_len bytes (0 = none).
 */
uint64_t linux_setup_size(size_t e820_count, uint32_t rng_seed_len);

/*
 * Fill the LINUX_BP_SIZE bytes at bp (zeroed here first) and the setup_data
 * chain in a->setup.  Pure computation, no allocation: safe after
 * ExitBootServices.
 * Errors: LDR_E_INVAL (bp or a NULL, e820 NULL with a count, e820_count 0,
 * setup NULL or unaligned with nodes to write, rng_seed NULL with a length),
 * LDR_E_OPT_TOO_LONG (cmdline_len > LINUX_CMDLINE_MAX),
 * LDR_E_MMAP_TOO_BIG (the chain does not fit in setup_cap, or the extended
 * e820 length overflows its 32-bit field), LDR_E_OVERFLOW (a size field
 * does not fit: kernel_size >= 4 GiB, an EFI memory map of 4 GiB or more),
 * LDR_E_LINUX_SETUP (a setup header longer than boot_params holds).
 * A framebuffer whose pixel format has no linear layout (GOP's
 * PixelBltOnly) gives no screen_info.
 */
enum ldr_err linux_boot_params_fill(void *bp, const struct linux_boot_args *a);

#endif
