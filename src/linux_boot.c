/*
 * linux_boot.c - the Linux/x86-64 64-bit boot protocol for an unmodified
 * vmlinux: detection, slot size, virtual window, and the zero page with its
 * setup_data chain.  Layouts are drawn in include/linux_boot.h.
 *
 * EFI: efi_info (0x1c0) is filled as the kernel's own EFI stub fills it
 * ("EL64", the system table, the final memory map), so the kernel takes
 * over runtime services itself (it calls SetVirtualAddressMap) and finds
 * SMBIOS, ESRT, the memory attributes table through the system table; the
 * e820 table is filled too, from the same map.  screen_info describes the
 * GOP framebuffer as the stub does, so efifb gives a console.
 */
#include <string.h>

#include "linux_boot.h"

static void lb_put8(uint8_t *bp, size_t off, uint8_t v)
{
	bp[off] = v;
}

static void lb_put16(uint8_t *bp, size_t off, uint16_t v)
{
	bp[off] = (uint8_t)v;
	bp[off + 1] = (uint8_t)(v >> 8);
}

static void lb_put32(uint8_t *bp, size_t off, uint32_t v)
{
	lb_put16(bp, off, (uint16_t)v);
	lb_put16(bp, off + 2, (uint16_t)(v >> 16));
}

static void lb_put64(uint8_t *bp, size_t off, uint64_t v)
{
	lb_put32(bp, off, (uint32_t)v);
	lb_put32(bp, off + 4, (uint32_t)(v >> 32));
}

/* A channel mask's size and position (bits set, lowest set bit). */
static void lb_mask(uint32_t mask, uint8_t *ret_size, uint8_t *ret_pos)
{
	uint8_t pos = 0, size = 0;

	if (mask)
		while (!(mask & 1)) {
			mask >>= 1;
			pos++;
		}
	while (mask & 1) {
		mask >>= 1;
		size++;
	}
	*ret_size = size;
	*ret_pos = size ? pos : 0;
}

/*
 * screen_info for a GOP framebuffer: pixel formats 0 (RGB reserved, 8 bits
 * each), 1 (BGR reserved) and 2 (bit masks); 3 (blt only) has no linear
 * framebuffer.  Returns 0 when fb cannot be described.
 */
static int lb_screen_info(uint8_t *bp, const struct kb_framebuffer *fb)
{
	uint32_t masks[4];
	uint8_t sz[4], pos[4], depth = 0;

	if (!fb || !fb->base || !fb->width || !fb->height || fb->width > 0xffff ||
	    fb->height > 0xffff || fb->size > UINT32_MAX)
		return 0;
	switch (fb->format) {
	case 0: /* PixelRedGreenBlueReserved8BitPerColor */
		masks[0] = 0xff; masks[1] = 0xff00; masks[2] = 0xff0000; masks[3] = 0xff000000u;
		break;
	case 1: /* PixelBlueGreenRedReserved8BitPerColor */
		masks[0] = 0xff0000; masks[1] = 0xff00; masks[2] = 0xff; masks[3] = 0xff000000u;
		break;
	case 2: /* PixelBitMask */
		masks[0] = fb->red_mask; masks[1] = fb->green_mask;
		masks[2] = fb->blue_mask; masks[3] = fb->reserved_mask;
		break;
	default:
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		lb_mask(masks[i], &sz[i], &pos[i]);
		if (sz[i] && pos[i] + sz[i] > depth)
			depth = (uint8_t)(pos[i] + sz[i]);
	}
	if (depth == 0 || (uint64_t)fb->pixels_per_scanline * ((depth + 7) / 8) > 0xffff)
		return 0;
	lb_put8(bp, LINUX_SI_ISVGA, LINUX_VIDEO_TYPE_EFI);
	lb_put16(bp, LINUX_SI_LFB_WIDTH, (uint16_t)fb->width);
	lb_put16(bp, LINUX_SI_LFB_HEIGHT, (uint16_t)fb->height);
	lb_put16(bp, LINUX_SI_LFB_DEPTH, depth);
	lb_put32(bp, LINUX_SI_LFB_BASE, (uint32_t)fb->base);
	lb_put32(bp, LINUX_SI_EXT_LFB_BASE, (uint32_t)(fb->base >> 32));
	lb_put32(bp, LINUX_SI_LFB_SIZE, (uint32_t)fb->size);
	lb_put16(bp, LINUX_SI_LFB_LINELENGTH,
		 (uint16_t)(fb->pixels_per_scanline * ((depth + 7) / 8)));
	for (int i = 0; i < 4; i++) {
		lb_put8(bp, LINUX_SI_RED_SIZE + 2 * (size_t)i, sz[i]);
		lb_put8(bp, LINUX_SI_RED_SIZE + 2 * (size_t)i + 1, pos[i]);
	}
	lb_put32(bp, LINUX_SI_CAPABILITIES, LINUX_VIDEO_CAP_SKIP_QUIRKS |
		 (fb->base > UINT32_MAX ? LINUX_VIDEO_CAP_64BIT_BASE : 0));
	return 1;
}

/* one packed e820 entry (20 bytes) */
static void lb_put_e820(uint8_t *p, const struct mem_region *r)
{
	lb_put64(p, 0, r->addr);
	lb_put64(p, 8, r->size);
	lb_put32(p, 16, r->type);
}

int linux_link_ok(uint64_t link_vbase, uint64_t pbase)
{
	uint64_t off;

	if (link_vbase < LINUX_START_KERNEL_MAP)
		return 0;
	off = link_vbase - LINUX_START_KERNEL_MAP;
	return off == pbase && off < LINUX_KERNEL_IMAGE_SIZE && off % LINUX_ALIGN == 0;
}

int linux_detect(const struct elf_image *img)
{
	if (!img || !img->is_linux || img->layout != ELF_LAYOUT_PADDR ||
	    (img->reloc_kind != ELF_RELOC_LINUX && img->reloc_kind != ELF_RELOC_NONE))
		return 0;
	return linux_link_ok(img->link_vbase, img->pbase);
}

int linux_virt_fixed(const struct elf_image *img)
{
	return linux_detect(img) && img->reloc_kind == ELF_RELOC_NONE;
}

enum ldr_err linux_fixed_base(const struct elf_image *img, uint64_t pref_address,
			      uint64_t *ret_base)
{
	if (!linux_detect(img) || !ret_base)
		return LDR_E_INVAL;
	/* the header's word against the program headers' (LOAD_PHYSICAL_ADDR
	 * both): a kernel linked for one address and declared at another
	 * would run with wrong page tables */
	if (pref_address != img->pbase)
		return LDR_E_LINUX_PREF_ADDRESS;
	*ret_base = pref_address;
	return LDR_OK;
}

uint64_t linux_slot_size(const struct elf_image *img)
{
	if (!linux_detect(img) || img->load_size == 0 ||
	    img->load_size > UINT64_MAX - LINUX_ALIGN)
		return 0;
	return ldr_align_up(img->load_size, LINUX_ALIGN);
}

enum ldr_err linux_virt_window(const struct elf_image *img, uint64_t image_size,
			       uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t lo, hi;

	if (!linux_detect(img) || image_size == 0)
		return LDR_E_INVAL;
	/*
	 * Linux's decompressor draws the virtual offset from the map start in
	 * [LOAD_PHYSICAL_ADDR, KERNEL_IMAGE_SIZE - image size], 2 MiB steps;
	 * LOAD_PHYSICAL_ADDR is the link-time physical base, so the window's
	 * bottom is the link address itself (offset 0 is always a choice).
	 */
	lo = img->link_vbase;
	hi = LINUX_START_KERNEL_MAP + LINUX_KERNEL_IMAGE_SIZE;
	if (image_size > hi - lo)
		return LDR_E_VIRT_NO_SLOT;
	/* no relocation table: where it is linked, nowhere else */
	if (linux_virt_fixed(img))
		hi = lo + image_size;
	*ret_lo = lo;
	*ret_hi = hi;
	return LDR_OK;
}

uint64_t linux_setup_size(size_t e820_count, uint32_t rng_seed_len)
{
	uint64_t n = 0;

	if (e820_count > LINUX_E820_ZEROPAGE_MAX)
		n += LINUX_SETUP_HDR_SIZE + ldr_align_up(
			(uint64_t)(e820_count - LINUX_E820_ZEROPAGE_MAX) * LINUX_E820_ENTRY_SIZE, 8);
	if (rng_seed_len)
		n += LINUX_SETUP_HDR_SIZE + ldr_align_up(rng_seed_len, 8);
	return n;
}

/* Append one setup_data node of len bytes at *off; returns its data. */
static uint8_t *lb_node(const struct linux_boot_args *a, uint64_t *off, uint64_t *prev_next,
			uint8_t *bp, uint32_t type, uint32_t len)
{
	uint8_t *node = (uint8_t *)a->setup + *off;
	uint64_t phys = a->setup_phys + *off;

	memset(node, 0, LINUX_SETUP_HDR_SIZE + ldr_align_up(len, 8));
	lb_put32(node, 8, type);
	lb_put32(node, 12, len);
	/* link it: from the zero page's setup_data field, or the previous node */
	if (*prev_next == UINT64_MAX)
		lb_put64(bp, LINUX_BP_SETUP_DATA, phys);
	else
		lb_put64((uint8_t *)a->setup, (size_t)*prev_next, phys);
	*prev_next = *off;
	*off += LINUX_SETUP_HDR_SIZE + ldr_align_up(len, 8);
	return node + LINUX_SETUP_HDR_SIZE;
}

enum ldr_err linux_boot_params_fill(void *bp_v, const struct linux_boot_args *a)
{
	uint8_t *bp = bp_v;
	uint64_t need, off = 0, prev = UINT64_MAX;
	size_t i, nz;
	uint8_t loadflags;

	if (!bp || !a || !a->e820 || a->e820_count == 0)
		return LDR_E_INVAL;
	if (a->rng_seed_len && !a->rng_seed)
		return LDR_E_INVAL;
	if (a->cmdline_len > LINUX_CMDLINE_MAX)
		return LDR_E_OPT_TOO_LONG;
	if (a->kernel_size > UINT32_MAX || (a->efi_systab && a->efi_memmap_size == 0))
		return a->kernel_size > UINT32_MAX ? LDR_E_OVERFLOW : LDR_E_INVAL;
	/* the extended table's length is a u32 */
	if (a->e820_count > LINUX_E820_ZEROPAGE_MAX &&
	    (uint64_t)(a->e820_count - LINUX_E820_ZEROPAGE_MAX) >
		    (UINT32_MAX - 8) / LINUX_E820_ENTRY_SIZE)
		return LDR_E_MMAP_TOO_BIG;
	need = linux_setup_size(a->e820_count, a->rng_seed_len);
	if (need) {
		if (!a->setup || ((uintptr_t)a->setup & 7) || (a->setup_phys & 7))
			return LDR_E_INVAL;
		if (need > a->setup_cap)
			return LDR_E_MMAP_TOO_BIG;
	}

	if (a->setup_header &&
	    (a->setup_header_len == 0 ||
	     a->setup_header_len > LINUX_BP_SETUP_END - LINUX_BP_SETUP_HEADER))
		return LDR_E_LINUX_SETUP;

	/* a zeroed page; the sentinel (0x1ef) stays 0: nothing here is stale */
	memset(bp, 0, LINUX_BP_SIZE);

	if (a->setup_header) {
		/* the kernel's own header: its version, xloadflags, alignment,
		 * init_size, root_flags, as it states them (boot.rst: the
		 * loader copies it, then writes the fields that are its own) */
		memcpy(bp + LINUX_BP_SETUP_HEADER, a->setup_header, a->setup_header_len);
	} else {
		/* a bare vmlinux: the header a protocol 2.15 kernel would have */
		lb_put16(bp, LINUX_BP_BOOT_FLAG, LINUX_BOOT_FLAG);
		lb_put32(bp, LINUX_BP_HEADER, LINUX_HDRS_MAGIC);
		lb_put16(bp, LINUX_BP_VERSION, LINUX_PROTOCOL_VERSION);
		lb_put32(bp, LINUX_BP_KERNEL_ALIGN, (uint32_t)LINUX_ALIGN);
		lb_put8(bp, LINUX_BP_RELOCATABLE, 1);
		lb_put16(bp, LINUX_BP_XLOADFLAGS, LINUX_XLF_KERNEL_64 | LINUX_XLF_ABOVE_4G);
		lb_put32(bp, LINUX_BP_CMDLINE_SIZE, LINUX_CMDLINE_MAX);
		lb_put64(bp, LINUX_BP_PREF_ADDRESS, a->link_phys);
		lb_put32(bp, LINUX_BP_INIT_SIZE, (uint32_t)a->kernel_size);
		/* mount root read-only, as the kernel's own header says */
		lb_put16(bp, LINUX_BP_ROOT_FLAGS, 1);
	}
	lb_put8(bp, LINUX_BP_TYPE_OF_LOADER, LINUX_LOADER_UNDEFINED);
	/*
	 * LOADED_HIGH: the protected-mode kernel is above 1 MiB.  KASLR_FLAG is
	 * how Linux's own decompressor tells the kernel proper that it was
	 * randomized: it enables memory-region randomization and the
	 * "Kernel Offset" panic report.  CAN_USE_HEAP concerns the real-mode
	 * setup code, which this entry path never runs: left clear.
	 */
	loadflags = LINUX_LOADED_HIGH;
	if (a->kaslr)
		loadflags |= LINUX_KASLR_FLAG;
	lb_put8(bp, LINUX_BP_LOADFLAGS, loadflags);
	/*
	 * code32_start is the 32-bit entry's address, which this 64-bit entry
	 * never reads, and Linux publishes the zero page to every user
	 * (/sys/kernel/boot_params/data, mode 0444): it stays 0, whatever the
	 * kernel's header said, as the EFI stub leaves it.  No field here
	 * says where the kernel is, physically or virtually.
	 */
	lb_put32(bp, LINUX_BP_CODE32_START, 0);
	lb_put32(bp, LINUX_BP_CMD_LINE_PTR, (uint32_t)a->cmdline);
	lb_put32(bp, LINUX_BP_EXT_CMDLINE, (uint32_t)(a->cmdline >> 32));
	/* always the loader's: a header's own ramdisk fields are not an initrd */
	lb_put32(bp, LINUX_BP_RAMDISK_IMAGE, a->ramdisk_size ? (uint32_t)a->ramdisk : 0);
	lb_put32(bp, LINUX_BP_EXT_RAMDISK_IMAGE, a->ramdisk_size ? (uint32_t)(a->ramdisk >> 32) : 0);
	lb_put32(bp, LINUX_BP_RAMDISK_SIZE, (uint32_t)a->ramdisk_size);
	lb_put32(bp, LINUX_BP_EXT_RAMDISK_SIZE, (uint32_t)(a->ramdisk_size >> 32));
	lb_put64(bp, LINUX_BP_ACPI_RSDP, a->acpi_rsdp);
	lb_put8(bp, LINUX_BP_SECURE_BOOT, a->secure_boot);
	if (a->efi_systab) {
		lb_put32(bp, LINUX_EFI_SIGNATURE, LINUX_EFI_EL64);
		lb_put32(bp, LINUX_EFI_SYSTAB, (uint32_t)a->efi_systab);
		lb_put32(bp, LINUX_EFI_SYSTAB_HI, (uint32_t)(a->efi_systab >> 32));
		lb_put32(bp, LINUX_EFI_DESC_SIZE, a->efi_desc_size);
		lb_put32(bp, LINUX_EFI_DESC_VERSION, a->efi_desc_version);
		lb_put32(bp, LINUX_EFI_MEMMAP, (uint32_t)a->efi_memmap);
		lb_put32(bp, LINUX_EFI_MEMMAP_HI, (uint32_t)(a->efi_memmap >> 32));
		lb_put32(bp, LINUX_EFI_MEMMAP_SIZE, a->efi_memmap_size);
	}
	lb_screen_info(bp, a->fb);

	nz = a->e820_count < LINUX_E820_ZEROPAGE_MAX ? a->e820_count : LINUX_E820_ZEROPAGE_MAX;
	for (i = 0; i < nz; i++)
		lb_put_e820(bp + LINUX_BP_E820_TABLE + i * LINUX_E820_ENTRY_SIZE, &a->e820[i]);
	lb_put8(bp, LINUX_BP_E820_ENTRIES, (uint8_t)nz);

	if (a->rng_seed_len) {
		uint8_t *d = lb_node(a, &off, &prev, bp, LINUX_SETUP_RNG_SEED, a->rng_seed_len);

		memcpy(d, a->rng_seed, a->rng_seed_len);
	}
	if (a->e820_count > nz) {
		uint32_t len = (uint32_t)((a->e820_count - nz) * LINUX_E820_ENTRY_SIZE);
		uint8_t *d = lb_node(a, &off, &prev, bp, LINUX_SETUP_E820_EXT, len);

		for (i = nz; i < a->e820_count; i++)
			lb_put_e820(d + (i - nz) * LINUX_E820_ENTRY_SIZE, &a->e820[i]);
	}
	return LDR_OK;
}
