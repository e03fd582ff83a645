/*
 * elf_load.h - validation of an untrusted x86-64 ELF kernel file and the
 * copy of its PT_LOAD segments into a caller-provided buffer.  What the
 * parser learns about relocations (dynamic tables, --emit-relocs sections,
 * an appended Linux table) is recorded here; reloc.h applies it.
 */
#ifndef ELF_LOAD_H
#define ELF_LOAD_H

#include <elf.h>
#include <stdint.h>

#include "ldr.h"

/* PT_LOAD segments kept per image (Linux has 4, the payloads 2-4). */
#define ELF_MAX_SEGMENTS 16

#define ELF_DEFAULT_MAX_IMAGE (1 * GIB)
#define ELF_DEFAULT_MAX_PHDRS 64

/*
 * How the loaded image is laid out in the destination buffer.
 *
 *   ELF_LAYOUT_VADDR: dest + (p_vaddr - vbase).  PIE and ET_EXEC payloads.
 *   ELF_LAYOUT_PADDR: dest + (p_paddr - pbase).  Linux vmlinux: its per-cpu
 *       segment has p_vaddr 0 among higher-half ones, so only the physical
 *       addresses form a compact image (what Linux's own misc.c does).
 *   ELF_LAYOUT_AUTO (limits only): PADDR when an appended Linux relocation
 *       table is found, VADDR otherwise.
 */
enum elf_layout {
	ELF_LAYOUT_AUTO = 0,
	ELF_LAYOUT_VADDR,
	ELF_LAYOUT_PADDR,
};

/* Where an image's relocations come from (at most one source is used). */
enum elf_reloc_kind {
	ELF_RELOC_NONE = 0,     /* ET_EXEC without relocations: fixed address */
	ELF_RELOC_DYNAMIC,      /* ET_DYN: DT_RELA, DT_JMPREL, DT_RELR */
	ELF_RELOC_SECTIONS,     /* ET_EXEC linked with --emit-relocs */
	ELF_RELOC_LINUX,        /* Linux vmlinux: ET_EXEC + Linux's table */
};

struct elf_limits {
	uint64_t max_image_size;   /* loaded span, page-rounded */
	uint16_t max_phdrs;        /* e_phnum above this is refused */
	enum elf_layout layout;
	/*
	 * Linux 6.1's vmlinux.lds.S gives its "init" PT_LOAD FLAGS(7), i.e.
	 * RWX.  When set, a W+X segment is tolerated in a Linux vmlinux
	 * (img->is_linux, see elf_parse()), its pages mapped by the sections
	 * they hold (elf_pages.h); W+X is refused everywhere else.
	 */
	int allow_wx_linux;
	/*
	 * The bytes are a bzImage's payload, so a Linux vmlinux whatever its
	 * tail holds: an ET_EXEC without an appended relocation table (Linux
	 * built without RANDOMIZE_BASE appends none) is then Linux too, with
	 * a fixed virtual address (reloc_kind ELF_RELOC_NONE), and must obey
	 * Linux's link invariant (LDR_E_LINUX_LAYOUT otherwise).
	 */
	int linux_payload;
};

struct elf_segment {
	uint64_t vaddr, paddr, offset, filesz, memsz, align;
	uint32_t flags;            /* PF_R | PF_W | PF_X */
	uint64_t load_off;         /* where it starts in the loaded image */
	unsigned phdr;             /* its index in the program header table */
};

/*
 * A page that a writable and an executable segment share (it would have
 * to be W+X): the first such page, and the two segments by program header
 * index (as `readelf -l` numbers them) and p_vaddr.  Filled when
 * LDR_E_WX_PAGE is returned, so that the error line can name them.
 */
struct elf_wx_clash {
	uint64_t off;              /* load offset of the page */
	unsigned phdr_w, phdr_x;   /* the writable and the executable segment */
	uint64_t vaddr_w, vaddr_x;
};

/*
 * A section of a Linux kernel's writable and executable segment that is
 * writable or executable itself, clipped to the segment: the pages of such
 * a segment take the permissions of the sections on them, not the
 * segment's RWX (elf_pages.h).  At most ELF_WX_SECTIONS_MAX are kept
 * (a 6.1 vmlinux has about 10); sections that are neither (read-only
 * tables) add no permission and are not kept.
 */
#define ELF_WX_SECTIONS_MAX 64

struct elf_wx_section {
	uint64_t load_off;         /* where it starts in the loaded image */
	uint64_t size;             /* bytes, > 0, inside its segment */
	uint32_t flags;            /* PF_W and/or PF_X (from SHF_WRITE, SHF_EXECINSTR) */
	uint32_t shndx;            /* its section header index */
};

/* File offsets (already bounds-checked against the file) of dynamic tables. */
struct elf_dyn_info {
	uint64_t rela_off, rela_size;       /* DT_RELA / DT_RELASZ */
	uint64_t jmprel_off, jmprel_size;   /* DT_JMPREL / DT_PLTRELSZ */
	uint64_t relr_off, relr_size;       /* DT_RELR / DT_RELRSZ */
	uint64_t symtab_off, symtab_count;  /* count bounded by its segment */
	uint64_t strtab_off, strtab_size;   /* 0 size when absent */
};

/* Linux relocation table found after the ELF image (see linux_reloc.h). */
struct elf_linux_relocs {
	uint64_t off, len;          /* table bytes inside the file */
	uint64_t n32, ninv32, n64;  /* entries of each kind */
};

struct elf_image {
	const uint8_t *file;
	uint64_t file_size;
	uint16_t type;             /* ET_EXEC or ET_DYN */
	uint64_t entry;            /* e_entry as written */
	uint64_t entry_off;        /* entry's offset in the loaded image */
	enum elf_layout layout;    /* VADDR or PADDR, never AUTO */
	uint64_t vbase, vend;      /* PT_LOAD vaddr extent, 4 KiB-rounded */
	uint64_t pbase, pend;      /* PT_LOAD paddr extent, 4 KiB-rounded */
	uint64_t load_size;        /* bytes of the loaded image (layout span) */
	uint64_t link_vbase;       /* link-time vaddr of loaded offset 0 */
	uint64_t max_align;        /* largest PT_LOAD p_align (at least 1) */
	unsigned nseg;             /* segments, sorted by load_off */
	struct elf_segment seg[ELF_MAX_SEGMENTS];
	int has_wx;                /* a W+X page was tolerated (Linux) */
	/*
	 * A Linux vmlinux: an appended Linux relocation table behind a
	 * Linux-shaped image, or (limits' linux_payload) a bzImage's payload
	 * without one.  W+X pages are tolerated only here, and only where a
	 * writable and an executable section share a page (or, in a file
	 * without section headers, where a segment is W+X).
	 */
	int is_linux;
	int wx_linux;              /* W+X pages tolerated: linux and the limits allow it */
	int wx_by_section;         /* W+X segments mapped by wx_sec[] (the file has sections) */
	unsigned nwx_sec;
	struct elf_wx_section wx_sec[ELF_WX_SECTIONS_MAX];
	enum elf_reloc_kind reloc_kind;
	int has_dynamic;
	struct elf_dyn_info dyn;
	uint64_t shoff;            /* section headers (validated), or 0 */
	uint32_t shnum;            /* e_shnum, or section 0's sh_size (>= 0xff00) */
	unsigned n_rela_sections;  /* SHT_RELA sections that will be applied */
	uint64_t elf_end;          /* end of the last thing the headers describe */
	struct elf_linux_relocs linux_relocs;
	/*
	 * The highest virtual address the loaded image may END at
	 * (new_vbase + load_size <= max_vend), 0 = no limit.  Absolute 32-bit
	 * fields must keep fitting after relocation: with R_X86_64_32S ones
	 * (sign-extended) the image ends by 2 GiB, with R_X86_64_32 ones
	 * (zero-extended) by 4 GiB, lower still by however far a field points
	 * at or past the image end (e.g. `cmp $_end`).  Only fields that are
	 * adjusted count (their symbol moves).  0 with 64-bit or PC-relative
	 * relocations only, without relocations, for PIEs and for Linux.
	 * 0 also for a kernel linked in the top 2 GiB: its 32S fields hold
	 * sign-extended top-2-GiB addresses, which its physical placement
	 * does not change (its virtual window keeps them in range).  So the
	 * limit matters to kernels that run identity-mapped (virtual =
	 * physical): their physical slot must end by max_vend.  It does not
	 * bound how far an image may move down (reloc_apply() checks that).
	 */
	uint64_t max_vend;
};

/* Defaults: 1 GiB image, 64 program headers, AUTO layout, Linux W+X allowed. */
struct elf_limits elf_default_limits(void);

/*
 * Validate size bytes at file (never trusted) and describe the image.
 * lim may be NULL for the defaults.  The image keeps pointers into file.
 *
 * Relocation source: ET_DYN uses PT_DYNAMIC (bytes after it are ignored).
 * ET_EXEC uses its --emit-relocs sections when it has any (bytes after the
 * image are then ignored); otherwise the bytes after the last thing the
 * ELF describes decide: none, or all zero (padding): ELF_RELOC_NONE;
 * Linux's table with at least one entry behind an image that obeys
 * linux_link_ok() (linux_boot.h): ELF_RELOC_LINUX, laid out by physical
 * address, W+X tolerated if lim allows; anything else: LDR_E_LINUX_RELOCS.
 * With lim->linux_payload an ET_EXEC without a table is Linux as well
 * (img->is_linux, ELF_RELOC_NONE).  A Linux image's W+X segments are mapped
 * by their sections: img->wx_sec[] (LDR_E_WX_SECTIONS when they are more
 * than ELF_WX_SECTIONS_MAX).
 *
 * Out: *ret_img on success.
 * Errors: LDR_E_EMPTY_FILE, LDR_E_BAD_MAGIC, LDR_E_TRUNCATED, LDR_E_BAD_CLASS,
 * LDR_E_BAD_DATA, LDR_E_BAD_VERSION, LDR_E_BAD_MACHINE, LDR_E_BAD_TYPE,
 * LDR_E_BAD_EHSIZE, LDR_E_BAD_PHENTSIZE, LDR_E_TOO_MANY_PHDRS,
 * LDR_E_PHDRS_OUTSIDE, LDR_E_BAD_SHENTSIZE, LDR_E_SHDRS_OUTSIDE,
 * LDR_E_NO_LOAD, LDR_E_SEG_OUTSIDE, LDR_E_SEG_FILESZ, LDR_E_SEG_ALIGN,
 * LDR_E_SEG_WRAP, LDR_E_SEG_OVERLAP, LDR_E_IMAGE_TOO_BIG,
 * LDR_E_ENTRY_OUTSIDE, LDR_E_WX_SEGMENT, LDR_E_WX_PAGE (a writable and an
 * executable segment share a page, see elf_pages.h), LDR_E_INTERP, LDR_E_DYN_OUTSIDE,
 * LDR_E_DYN_BAD, LDR_E_DYN_NEEDED, LDR_E_DYN_TEXTREL, LDR_E_RELA_OUTSIDE,
 * LDR_E_RELA_ENTSIZE, LDR_E_RELR_BAD, LDR_E_RELOC_SYMBOL,
 * LDR_E_NOT_RELOCATABLE (ET_DYN without PT_DYNAMIC), LDR_E_LINUX_RELOCS,
 * LDR_E_LINUX_LAYOUT, LDR_E_WX_SECTIONS.
 */
enum ldr_err elf_parse(const void *file, uint64_t size,
		       const struct elf_limits *lim, struct elf_image *ret_img);

/*
 * elf_parse() that also says which segments clash when it returns
 * LDR_E_WX_PAGE: *wx_clash (a diagnostic, written only with that error;
 * may be NULL) for an error line such as "segments 0 (vaddr 0x1000000)
 * and 1 (vaddr 0x1003200) share a page".  With LDR_E_WX_SEGMENT it names
 * the W+X segment (phdr_w == phdr_x, off 0).
 */
enum ldr_err elf_parse_diag(const void *file, uint64_t size,
			    const struct elf_limits *lim, struct elf_image *ret_img,
			    struct elf_wx_clash *wx_clash);

/*
 * Section header i of an image elf_parse() accepted (i < img->shnum: the
 * table was validated there), copied out (the file need not be aligned).
 */
void elf_shdr(const struct elf_image *img, uint32_t i, Elf64_Shdr *sh);

/*
 * Copy every segment of img to dest + seg.load_off and zero the rest of
 * [dest, dest + img->load_size) (BSS and the gaps between segments).
 * Errors: LDR_E_INVAL when dest is NULL or dest_size < img->load_size.
 */
enum ldr_err elf_load(const struct elf_image *img, void *dest,
		      uint64_t dest_size);

/*
 * Translate the virtual range [vaddr, vaddr + size) to a file offset; it
 * must lie entirely inside the file-backed bytes of one PT_LOAD.
 * Returns 1 and sets *ret_off on success, 0 otherwise.
 */
int elf_vaddr_to_file(const struct elf_image *img, uint64_t vaddr,
		      uint64_t size, uint64_t *ret_off);

/* Index into img->seg of the PT_LOAD whose file-backed bytes hold all of
 * [vaddr, vaddr + size), or -1. */
int elf_seg_of(const struct elf_image *img, uint64_t vaddr, uint64_t size);

#endif
