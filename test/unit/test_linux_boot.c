/*
 * test_linux_boot.c - host tests for src/linux_boot.c: which images are
 * Linux kernels (a bzImage's payload without a relocation table among
 * them, at a fixed virtual address), their slot size and virtual window,
 * a non-relocatable kernel's fixed base, and the zero page
 * byte by byte (setup header, e820 table, the setup_data chain with an
 * extended e820 node and an RNG seed), plus every refused input.
 */
#include <stdio.h>
#include <string.h>

#include "elf_load.h"
#include "linux_boot.h"
#include "elf_build.h"
#include "test.h"

static struct eb e;
static uint8_t bp[LINUX_BP_SIZE];
static uint8_t setup_mem[8192] __attribute__((aligned(8)));
static struct mem_region map[300];

static uint64_t rd(const uint8_t *p, size_t off, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[off + i] << (8 * i);
	return v;
}

/* Parse the Linux-like image of elf_build.h, optionally tweaked. */
static enum ldr_err parse_linux(void (*tweak)(struct eb *), struct elf_image *img)
{
	static const uint32_t r64[] = { (uint32_t)(EB_V + 0x1100) };

	memset(&e, 0, sizeof(e));
	eb_linux(&e);
	eb_linux_table(&e, r64, 1, NULL, 0, NULL, 0);
	if (tweak)
		tweak(&e);
	eb_write(&e);
	return elf_parse(e.buf, e.size, NULL, img);
}

/* no table (W+X is then refused: the init segment loses X) */
static void tw_no_table(struct eb *x)
{
	x->nlinux = 0;
	x->ph[3].p_flags &= ~(uint32_t)PF_X;
	x->ph[2].p_vaddr = EB_V + 0x2000; /* a compact image by vaddr */
	x->eh.e_entry = EB_V;
}

/* text linked 2 MiB higher than its physical address says */
static void tw_skew(struct eb *x)
{
	x->ph[0].p_vaddr += 2 * MIB;
	x->ph[1].p_vaddr += 2 * MIB;
	x->ph[3].p_vaddr += 2 * MIB;
}

/* physical base not 2 MiB-aligned (virtual follows it) */
static void tw_unaligned(struct eb *x)
{
	for (unsigned i = 0; i < 4; i++) {
		x->ph[i].p_paddr += 0x100000;
		if (x->ph[i].p_vaddr)
			x->ph[i].p_vaddr += 0x100000;
	}
	x->eh.e_entry += 0x100000;
}

TEST(test_detect)
{
	static const struct {
		const char *name;
		void (*tweak)(struct eb *);
		enum ldr_err want_err;
		int want;
	} cases[] = {
		{ "Linux-like vmlinux", NULL, LDR_OK, 1 },
		{ "no appended table", tw_no_table, LDR_OK, 0 },
		/* a table behind an image that is not Linux-shaped is refused */
		{ "virtual != physical + map start", tw_skew, LDR_E_LINUX_RELOCS, 0 },
		{ "base not 2 MiB-aligned", tw_unaligned, LDR_E_LINUX_RELOCS, 0 },
	};
	struct elf_image img;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum ldr_err err = parse_linux(cases[i].tweak, &img);

		CHECK(err == cases[i].want_err, "%s: parse gives %s, want %s", cases[i].name,
		      ldr_strerror(err), ldr_strerror(cases[i].want_err));
		if (err != LDR_OK)
			continue;
		CHECK(linux_detect(&img) == cases[i].want, "%s: detect == %d", cases[i].name,
		      cases[i].want);
	}
	CHECK(linux_detect(NULL) == 0, "NULL is not Linux");
}

TEST(test_link_ok)
{
	CHECK(linux_link_ok(EB_V, EB_P), "Debian's 0xffffffff81000000 at 16 MiB");
	CHECK(linux_link_ok(LINUX_START_KERNEL_MAP, 0), "offset 0");
	CHECK(linux_link_ok(LINUX_START_KERNEL_MAP + 1 * GIB - 2 * MIB, 1 * GIB - 2 * MIB),
	      "last 2 MiB step of the window");
	CHECK(!linux_link_ok(LINUX_START_KERNEL_MAP + 1 * GIB, 1 * GIB), "past the 1 GiB window");
	CHECK(!linux_link_ok(EB_V, EB_P + 2 * MIB), "virtual != physical + map start");
	CHECK(!linux_link_ok(EB_V + 0x1000, EB_P + 0x1000), "not 2 MiB-aligned");
	CHECK(!linux_link_ok(EB_P, EB_P), "identity-linked");
	CHECK(!linux_link_ok(0, 0), "linked at 0");
}

TEST(test_size_window)
{
	struct elf_image img;
	uint64_t lo = 1, hi = 2;

	CHECK(parse_linux(NULL, &img) == LDR_OK, "parse");
	CHECK_EQ_U64(img.link_vbase, EB_V, "link base");
	/* image is 0x5000 bytes by physical address: one 2 MiB slot */
	CHECK_EQ_U64(linux_slot_size(&img), 2 * MIB, "slot size rounds to 2 MiB");
	img.load_size = 2 * MIB;
	CHECK_EQ_U64(linux_slot_size(&img), 2 * MIB, "exact 2 MiB stays");
	img.load_size = 2 * MIB + 1;
	CHECK_EQ_U64(linux_slot_size(&img), 4 * MIB, "one byte more: 4 MiB");
	img.load_size = UINT64_MAX - 5;
	CHECK_EQ_U64(linux_slot_size(&img), 0, "absurd size: 0, no wrap");
	img.load_size = 0x5000;

	CHECK(linux_virt_window(&img, 58 * MIB, &lo, &hi) == LDR_OK, "window");
	CHECK_EQ_U64(lo, 0xffffffff81000000ULL, "window starts at the link address");
	CHECK_EQ_U64(hi, 0xffffffffc0000000ULL, "window ends at map start + 1 GiB");
	/* Debian 6.1: 58 MiB -> (1024 - 16 - 58) / 2 + 1 = 476 positions */
	CHECK_EQ_U64((hi - lo - 58 * MIB) / (2 * MIB) + 1, 476, "Debian-sized kernel: 476 slots");
	lo = hi = 7;
	CHECK(linux_virt_window(&img, 1008 * MIB + 1, &lo, &hi) == LDR_E_VIRT_NO_SLOT,
	      "image larger than the window");
	CHECK(lo == 7 && hi == 7, "outputs untouched on error");
	CHECK(linux_virt_window(&img, 1008 * MIB, &lo, &hi) == LDR_OK, "exact fit");
	CHECK(linux_virt_window(&img, 0, &lo, &hi) == LDR_E_INVAL, "size 0");
	CHECK(parse_linux(tw_no_table, &img) == LDR_OK, "parse no-table");
	CHECK(linux_virt_window(&img, 2 * MIB, &lo, &hi) == LDR_E_INVAL, "not Linux");
	CHECK_EQ_U64(linux_slot_size(&img), 0, "not Linux: slot size 0");
}

/* no table, W+X kept: a bzImage's payload built without RANDOMIZE_BASE */
static void tw_payload(struct eb *x)
{
	x->nlinux = 0;
}

/*
 * A bzImage's payload without a relocation table: Linux when the caller
 * says it is a payload (elf_limits.linux_payload), at its link address
 * only; its pref_address checked against its physical base.
 */
TEST(test_payload_without_table)
{
	struct elf_limits lim = elf_default_limits();
	struct elf_image img;
	uint64_t lo = 1, hi = 2, base = 7;

	lim.linux_payload = 1;
	memset(&e, 0, sizeof(e));
	eb_linux(&e);
	tw_payload(&e);
	eb_write(&e);
	CHECK_EQ_U64(elf_parse(e.buf, e.size, NULL, &img), LDR_E_WX_SEGMENT,
		     "no table, not said to be a payload: its RWX segment refused");
	CHECK_EQ_U64(elf_parse(e.buf, e.size, &lim, &img), LDR_OK, "as a payload: parses");
	CHECK(linux_detect(&img) && linux_virt_fixed(&img), "Linux, at a fixed virtual address");
	CHECK_EQ_U64(linux_slot_size(&img), 2 * MIB, "its slot size");
	CHECK(linux_virt_window(&img, 4 * MIB, &lo, &hi) == LDR_OK && lo == EB_V &&
	      hi == EB_V + 4 * MIB, "its window: the link address, one position");
	CHECK(linux_virt_window(&img, 1008 * MIB + 1, &lo, &hi) == LDR_E_VIRT_NO_SLOT,
	      "larger than the kernel window: refused, no wrap");
	CHECK(linux_fixed_base(&img, EB_P, &base) == LDR_OK && base == EB_P,
	      "pref_address == physical base: that base");
	base = 7;
	CHECK(linux_fixed_base(&img, EB_P + 2 * MIB, &base) == LDR_E_LINUX_PREF_ADDRESS &&
	      base == 7, "pref_address elsewhere: refused, output untouched");
	CHECK(linux_fixed_base(&img, 0, &base) == LDR_E_LINUX_PREF_ADDRESS, "pref_address 0");
	CHECK(linux_fixed_base(&img, EB_P, NULL) == LDR_E_INVAL, "NULL output");

	/* with a table it is not fixed (and the base check is the same) */
	CHECK(parse_linux(NULL, &img) == LDR_OK && !linux_virt_fixed(&img), "with a table: not fixed");
	CHECK(linux_fixed_base(&img, EB_P, &base) == LDR_OK, "a relocatable image at its pref_address");

	/* a payload that is not Linux-shaped is no vmlinux: refused, not
	 * taken for a kernel of the loader's own protocol */
	memset(&e, 0, sizeof(e));
	eb_linux(&e);
	tw_payload(&e);
	tw_skew(&e);
	eb_write(&e);
	CHECK_EQ_U64(elf_parse(e.buf, e.size, &lim, &img), LDR_E_LINUX_LAYOUT,
		     "a payload linked off Linux's invariant: not a vmlinux");
	/* without a table and not said to be a payload: not Linux */
	CHECK(parse_linux(tw_no_table, &img) == LDR_OK && !linux_detect(&img),
	      "no table, no payload: not Linux");
	CHECK(!linux_virt_fixed(&img), "not Linux: not fixed either");
	CHECK(linux_fixed_base(&img, EB_P, &base) == LDR_E_INVAL, "not Linux: no fixed base");
}

static void make_map(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		map[i].addr = (uint64_t)i * 0x100000;
		map[i].size = 0x80000 + i;
		map[i].type = (i % 3) ? E820_RAM : E820_RESERVED;
		map[i].flags = 0;
	}
}

static struct linux_boot_args base_args(size_t n, int seed)
{
	static const uint8_t rng[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
					 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
					 31, 32 };
	struct linux_boot_args a;

	memset(&a, 0, sizeof(a));
	a.cmdline = 0x7f000000;
	a.cmdline_len = 41;
	a.acpi_rsdp = 0x7fb7e014;
	a.kernel_size = 58 * MIB;
	a.link_phys = 16 * MIB;
	a.kaslr = 1;
	make_map(n);
	a.e820 = map;
	a.e820_count = n;
	a.rng_seed = seed ? rng : NULL;
	a.rng_seed_len = seed ? 32 : 0;
	a.setup = setup_mem;
	a.setup_phys = 0x7e000000;
	a.setup_cap = sizeof(setup_mem);
	return a;
}

TEST(test_fill_header)
{
	struct linux_boot_args a = base_args(20, 0);

	memset(bp, 0xcc, sizeof(bp));
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill");
	CHECK_EQ_U64(rd(bp, 0x1fe, 2), 0xaa55, "boot_flag");
	CHECK(memcmp(bp + 0x202, "HdrS", 4) == 0, "HdrS magic");
	CHECK_EQ_U64(rd(bp, 0x206, 2), 0x020f, "version 2.15");
	CHECK_EQ_U64(bp[0x210], 0xff, "type_of_loader");
	CHECK_EQ_U64(bp[0x211], 0x03, "loadflags LOADED_HIGH|KASLR_FLAG");
	CHECK_EQ_U64(rd(bp, 0x214, 4), 0, "code32_start 0: never the kernel's address");
	CHECK_EQ_U64(rd(bp, 0x228, 4), 0x7f000000, "cmd_line_ptr");
	CHECK_EQ_U64(rd(bp, 0x0c8, 4), 0, "ext_cmd_line_ptr");
	CHECK_EQ_U64(rd(bp, 0x230, 4), 2 * MIB, "kernel_alignment");
	CHECK_EQ_U64(bp[0x234], 1, "relocatable_kernel");
	CHECK_EQ_U64(rd(bp, 0x236, 2), 3, "xloadflags");
	CHECK_EQ_U64(rd(bp, 0x238, 4), 2047, "cmdline_size");
	CHECK_EQ_U64(rd(bp, 0x250, 8), 0, "no setup_data");
	CHECK_EQ_U64(rd(bp, 0x258, 8), 16 * MIB, "pref_address");
	CHECK_EQ_U64(rd(bp, 0x260, 4), 58 * MIB, "init_size");
	CHECK_EQ_U64(rd(bp, 0x070, 8), 0x7fb7e014, "acpi_rsdp_addr");
	CHECK_EQ_U64(bp[0x1e8], 20, "e820_entries");
	CHECK_EQ_U64(bp[0x1ef], 0, "sentinel clear");
	for (unsigned i = 0; i < 32; i++)
		CHECK_EQ_U64(bp[0x1c0 + i], 0, "no system table: efi_info byte %u zero", i);
	for (unsigned i = 0; i < 0x40; i++)
		CHECK_EQ_U64(bp[i], 0, "no framebuffer: screen_info byte %u zero", i);
	CHECK_EQ_U64(rd(bp, 0x1f2, 2), 1, "root_flags: read-only");
	CHECK_EQ_U64(bp[0x1ec], 0, "secure_boot unset");
	for (size_t i = 0; i < 20; i++) {
		size_t o = 0x2d0 + i * 20;

		CHECK_EQ_U64(rd(bp, o, 8), map[i].addr, "e820[%zu].addr", i);
		CHECK_EQ_U64(rd(bp, o + 8, 8), map[i].size, "e820[%zu].size", i);
		CHECK_EQ_U64(rd(bp, o + 16, 4), map[i].type, "e820[%zu].type", i);
	}
	CHECK_EQ_U64(rd(bp, 0x2d0 + 20 * 20, 8), 0, "after the last entry: zero");

	/* no KASLR flag when not randomized; cmdline above 4 GiB */
	a.kaslr = 0;
	a.cmdline = 0x123456789000ULL;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill high");
	CHECK_EQ_U64(bp[0x211], 0x01, "loadflags without KASLR_FLAG");
	CHECK_EQ_U64(rd(bp, 0x228, 4), 0x56789000, "cmd_line_ptr low half");
	CHECK_EQ_U64(rd(bp, 0x0c8, 4), 0x1234, "ext_cmd_line_ptr high half");
}

/* Walk the chain from the zero page; return the node of type t or NULL. */
static const uint8_t *find_node(uint32_t t, const struct linux_boot_args *a, int *ret_n)
{
	uint64_t p = rd(bp, 0x250, 8);
	const uint8_t *hit = NULL;
	int n = 0;

	while (p && n < 8) {
		const uint8_t *node;

		if (p < a->setup_phys || p - a->setup_phys >= a->setup_cap)
			return NULL;
		node = setup_mem + (p - a->setup_phys);
		if (rd(node, 8, 4) == t)
			hit = node;
		p = rd(node, 0, 8);
		n++;
	}
	*ret_n = n;
	return hit;
}

TEST(test_setup_data)
{
	struct linux_boot_args a = base_args(200, 1);
	const uint8_t *ext, *seed;
	int n = 0;

	CHECK_EQ_U64(linux_setup_size(200, 32), 16 + 72 * 20 + 16 + 32, "setup size");
	CHECK_EQ_U64(linux_setup_size(128, 0), 0, "128 entries fit the zero page");
	CHECK_EQ_U64(linux_setup_size(129, 0), 16 + 24, "one extended entry, padded to 8");
	memset(setup_mem, 0xcc, sizeof(setup_mem));
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill 200 entries");
	CHECK_EQ_U64(bp[0x1e8], 128, "zero page holds 128");
	CHECK_EQ_U64(rd(bp, 0x2d0 + 127 * 20, 8), map[127].addr, "entry 127 in the zero page");
	ext = find_node(LINUX_SETUP_E820_EXT, &a, &n);
	seed = find_node(LINUX_SETUP_RNG_SEED, &a, &n);
	CHECK(n == 2, "two nodes in the chain (got %d)", n);
	CHECK(ext != NULL && seed != NULL, "both nodes found");
	if (ext) {
		CHECK_EQ_U64(rd(ext, 12, 4), 72 * 20, "ext len");
		CHECK_EQ_U64(rd(ext, 16, 8), map[128].addr, "ext[0] = entry 128");
		CHECK_EQ_U64(rd(ext, 16 + 71 * 20 + 8, 8), map[199].size, "ext[71] = entry 199");
		CHECK_EQ_U64(rd(ext, 16 + 71 * 20 + 16, 4), map[199].type, "ext[71] type");
		CHECK_EQ_U64(rd(ext, 0, 8), 0, "last node ends the chain");
	}
	if (seed) {
		CHECK_EQ_U64(rd(seed, 12, 4), 32, "seed len");
		CHECK_EQ_U64(seed[16], 1, "seed[0]");
		CHECK_EQ_U64(seed[16 + 31], 32, "seed[31]");
		CHECK(((seed - setup_mem) & 7) == 0, "node 8-aligned");
	}

	/* seed only */
	a = base_args(5, 1);
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill seed only");
	CHECK_EQ_U64(rd(bp, 0x250, 8), a.setup_phys, "setup_data -> first node");
	CHECK(find_node(LINUX_SETUP_RNG_SEED, &a, &n) && n == 1, "one node");
}

TEST(test_refused)
{
	static const struct {
		const char *name;
		int what;
		enum ldr_err want;
	} cases[] = {
		{ "cmdline 2048 chars", 1, LDR_E_OPT_TOO_LONG },
		{ "no e820", 2, LDR_E_INVAL },
		{ "e820 NULL", 3, LDR_E_INVAL },
		{ "setup too small", 4, LDR_E_MMAP_TOO_BIG },
		{ "setup NULL", 5, LDR_E_INVAL },
		{ "setup unaligned", 6, LDR_E_INVAL },
		{ "seed NULL with length", 7, LDR_E_INVAL },
		{ "init_size >= 4 GiB", 8, LDR_E_OVERFLOW },
		{ "cmdline 2047 chars is fine", 9, LDR_OK },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct linux_boot_args a = base_args(200, 1);

		switch (cases[i].what) {
		case 1: a.cmdline_len = 2048; break;
		case 2: a.e820_count = 0; break;
		case 3: a.e820 = NULL; break;
		case 4: a.setup_cap = linux_setup_size(200, 32) - 1; break;
		case 5: a.setup = NULL; break;
		case 6: a.setup = setup_mem + 4; break;
		case 7: a.rng_seed = NULL; break;
		case 8: a.kernel_size = 4 * GIB; break;
		case 9: a.cmdline_len = 2047; break;
		}
		CHECK(linux_boot_params_fill(bp, &a) == cases[i].want, "%s: %s", cases[i].name,
		      ldr_strerror(cases[i].want));
	}
	CHECK(linux_boot_params_fill(NULL, NULL) == LDR_E_INVAL, "NULL");
}

/* efi_info as the EFI stub fills it, and the Secure Boot state */
TEST(test_efi_info)
{
	struct linux_boot_args a = base_args(20, 0);

	a.efi_systab = 0x1234567f018ULL;
	a.efi_memmap = 0x87e440000ULL;
	a.efi_memmap_size = 48 * 117;
	a.efi_desc_size = 48;
	a.efi_desc_version = 1;
	a.secure_boot = LINUX_SB_ENABLED;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill with EFI");
	CHECK(memcmp(bp + 0x1c0, "EL64", 4) == 0, "efi_loader_signature EL64");
	CHECK_EQ_U64(rd(bp, 0x1c4, 4), 0x4567f018, "efi_systab");
	CHECK_EQ_U64(rd(bp, 0x1d8, 4), 0x123, "efi_systab_hi");
	CHECK_EQ_U64(rd(bp, 0x1c8, 4), 48, "efi_memdesc_size");
	CHECK_EQ_U64(rd(bp, 0x1cc, 4), 1, "efi_memdesc_version");
	CHECK_EQ_U64(rd(bp, 0x1d0, 4), 0x7e440000, "efi_memmap");
	CHECK_EQ_U64(rd(bp, 0x1dc, 4), 0x8, "efi_memmap_hi");
	CHECK_EQ_U64(rd(bp, 0x1d4, 4), 48 * 117, "efi_memmap_size");
	CHECK_EQ_U64(bp[0x1ec], 3, "secure_boot: efi_secureboot_mode_enabled");

	/* a system table without a map is a caller's mistake */
	a.efi_memmap_size = 0;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_E_INVAL, "systab without a map");
}

/* screen_info from each GOP pixel format */
TEST(test_screen_info)
{
	struct linux_boot_args a = base_args(20, 0);
	struct kb_framebuffer fb = {
		.base = 0x80000000, .size = 1280 * 800 * 4, .width = 1280, .height = 800,
		.pixels_per_scanline = 1344, .format = 1,
	};
	static const struct {
		uint32_t format, r, g, b, x;
		unsigned depth, rs, rp, gs, gp, bs, bp_, xs, xp;
	} fmts[] = {
		{ 0, 0, 0, 0, 0, 32, 8, 0, 8, 8, 8, 16, 8, 24 },   /* RGBx */
		{ 1, 0, 0, 0, 0, 32, 8, 16, 8, 8, 8, 0, 8, 24 },   /* BGRx */
		{ 2, 0xf800, 0x07e0, 0x001f, 0, 16, 5, 11, 6, 5, 5, 0, 0, 0 }, /* RGB565 */
		{ 2, 0x3ff00000, 0xffc00, 0x3ff, 0xc0000000u, 32, 10, 20, 10, 10, 10, 0, 2, 30 },
	};

	a.fb = &fb;
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		fb.format = fmts[i].format;
		fb.red_mask = fmts[i].r;
		fb.green_mask = fmts[i].g;
		fb.blue_mask = fmts[i].b;
		fb.reserved_mask = fmts[i].x;
		CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill fb %zu", i);
		CHECK_EQ_U64(bp[0x0f], 0x70, "%zu: VIDEO_TYPE_EFI", i);
		CHECK_EQ_U64(rd(bp, 0x12, 2), 1280, "%zu: lfb_width", i);
		CHECK_EQ_U64(rd(bp, 0x14, 2), 800, "%zu: lfb_height", i);
		CHECK_EQ_U64(rd(bp, 0x16, 2), fmts[i].depth, "%zu: lfb_depth", i);
		CHECK_EQ_U64(rd(bp, 0x18, 4), 0x80000000, "%zu: lfb_base", i);
		CHECK_EQ_U64(rd(bp, 0x1c, 4), 1280 * 800 * 4, "%zu: lfb_size", i);
		CHECK_EQ_U64(rd(bp, 0x24, 2), 1344 * fmts[i].depth / 8, "%zu: lfb_linelength", i);
		CHECK(bp[0x26] == fmts[i].rs && bp[0x27] == fmts[i].rp && bp[0x28] == fmts[i].gs &&
		      bp[0x29] == fmts[i].gp && bp[0x2a] == fmts[i].bs && bp[0x2b] == fmts[i].bp_ &&
		      bp[0x2c] == fmts[i].xs && bp[0x2d] == fmts[i].xp, "%zu: channel sizes/positions", i);
		CHECK_EQ_U64(rd(bp, 0x36, 4), 1, "%zu: capabilities, 32-bit base", i);
		CHECK_EQ_U64(rd(bp, 0x3a, 4), 0, "%zu: ext_lfb_base", i);
	}

	/* a framebuffer above 4 GiB (large BARs) */
	fb.format = 0;
	fb.base = 0x38000000000ULL;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill fb high");
	CHECK_EQ_U64(rd(bp, 0x18, 4), 0, "lfb_base low half");
	CHECK_EQ_U64(rd(bp, 0x3a, 4), 0x380, "ext_lfb_base high half");
	CHECK_EQ_U64(rd(bp, 0x36, 4), 3, "capabilities: 64-bit base");

	/* blt-only (no linear framebuffer), and nonsense: no screen_info */
	fb.format = 3;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill blt-only");
	CHECK_EQ_U64(bp[0x0f], 0, "blt-only: no VIDEO_TYPE_EFI");
	fb.format = 2;
	fb.red_mask = fb.green_mask = fb.blue_mask = fb.reserved_mask = 0;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK && bp[0x0f] == 0, "all-zero masks");
	fb.format = 0;
	fb.width = 70000;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK && bp[0x0f] == 0, "width beyond u16");
}

/* a bzImage's own setup header is copied; the loader's fields and the
 * initrd are written over it */
TEST(test_setup_header_and_ramdisk)
{
	struct linux_boot_args a = base_args(20, 0);
	uint8_t hdr[0x290 - 0x1f1];

	for (size_t i = 0; i < sizeof(hdr); i++)
		hdr[i] = (uint8_t)(0x40 + i);
	/* a few fields as a real 6.1 header has them */
	hdr[0x1f2 - 0x1f1] = 1, hdr[0x1f3 - 0x1f1] = 0;             /* root_flags */
	hdr[0x206 - 0x1f1] = 0x0f, hdr[0x207 - 0x1f1] = 0x02;       /* version 2.15 */
	hdr[0x211 - 0x1f1] = 0x01;                                  /* loadflags */
	hdr[0x216 - 0x1f1] = 0x10, hdr[0x217 - 0x1f1] = 0;          /* code32_start 0x100000 */
	hdr[0x214 - 0x1f1] = 0, hdr[0x215 - 0x1f1] = 0;
	a.setup_header = hdr;
	a.setup_header_len = 0x26c - 0x1f1;
	a.ramdisk = 0x1234567000ULL;
	a.ramdisk_size = 0x2345000;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill with a header");
	CHECK_EQ_U64(rd(bp, 0x1f2, 2), 1, "root_flags from the kernel's header");
	CHECK_EQ_U64(rd(bp, 0x206, 2), 0x020f, "version from the header");
	CHECK_EQ_U64(rd(bp, 0x230, 4), rd(hdr, 0x230 - 0x1f1, 4), "kernel_alignment kept as read");
	CHECK_EQ_U64(rd(bp, 0x260, 4), rd(hdr, 0x260 - 0x1f1, 4), "init_size kept as read");
	CHECK_EQ_U64(bp[0x210], 0xff, "type_of_loader written");
	CHECK_EQ_U64(bp[0x211], 0x03, "loadflags written");
	CHECK_EQ_U64(rd(bp, 0x228, 4), 0x7f000000, "cmd_line_ptr written");
	CHECK_EQ_U64(rd(bp, 0x218, 4), 0x34567000, "ramdisk_image");
	CHECK_EQ_U64(rd(bp, 0x0c0, 4), 0x12, "ext_ramdisk_image");
	CHECK_EQ_U64(rd(bp, 0x21c, 4), 0x2345000, "ramdisk_size");
	CHECK_EQ_U64(rd(bp, 0x0c4, 4), 0, "ext_ramdisk_size");
	CHECK_EQ_U64(bp[0x26c], 0, "nothing copied past the header's length");
	/* the header's own code32_start (0x100000 in every bzImage) is not
	 * passed on either: the zero page is readable by every user */
	CHECK_EQ_U64(rd(bp, 0x214, 4), 0, "code32_start 0, not the header's");
	/* no initrd: the header's ramdisk fields (garbage here) are cleared */
	a.ramdisk = 0;
	a.ramdisk_size = 0;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_OK, "fill without an initrd");
	CHECK_EQ_U64(rd(bp, 0x218, 4), 0, "no initrd: ramdisk_image 0, not the file's");
	CHECK_EQ_U64(rd(bp, 0x21c, 4), 0, "no initrd: ramdisk_size 0, not the file's");

	a.setup_header_len = 0x290 - 0x1f1 + 1;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_E_LINUX_SETUP, "header longer than its room");
	a.setup_header_len = 0;
	CHECK(linux_boot_params_fill(bp, &a) == LDR_E_LINUX_SETUP, "empty header");
}
