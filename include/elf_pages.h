/*
 * elf_pages.h - the page-granular mapping of a loaded ELF image: which
 * 4 KiB pages of [0, load_size) its PT_LOAD segments touch and with which
 * permissions, as ranges the page-table builder maps one call each.
 *
 * Segments need not start or end on page boundaries; a page they share
 * gets every permission any of them needs (a page cannot have two):
 *
 *   load offset  0x0000        0x1000        0x2000        0x3000
 *                |  text R-X   |  text  | ro |  rodata R   |  (gap)  ...
 *                +-------------+--------+----+-------------+
 *   ranges:      [0x0000, 0x2000) X           [0x2000, 0x3000) -
 *
 * A writable segment and an executable one sharing a page would make it
 * W+X: elf_parse() refuses such an image (LDR_E_WX_PAGE, naming both
 * segments) - this loader's own kernels can link properly.
 *
 * A Linux vmlinux (img->wx_linux) is mapped as Linux's own early boot maps
 * it, W+X only where Linux's layout leaves no choice.  Its init segment is
 * RWX by Linux's linker script (.init.text, .init.data, ..., .bss, .brk);
 * its pages do not get the segment's RWX but the union of the permissions
 * of the sections on them (img->wx_sec[]; SHF_WRITE -> PT_W, SHF_EXECINSTR
 * -> PT_X), so only a page that an executable and a writable section share
 * is W+X - where the linker happened to put, say, .altinstr_replacement
 * (code), .apicdrivers (data) and .exit.text (code) in one page:
 *
 *   init segment RWX    | .init.text AX | .init.data WA |.altinstr_repl AX|.apicdrv WA|
 *   pages:              [  X ...        ][  W ...       ][  X   ][   W+X (shared)    ]
 *
 * A page of that segment no section touches (padding) is read-only.  Only
 * a Linux file without section headers falls back to the segment's RWX.
 */
#ifndef ELF_PAGES_H
#define ELF_PAGES_H

#include <stdint.h>

#include "ldr.h"
#include "elf_load.h"
#include "pagetable.h"

/*
 * Ranges elf_page_map() can produce: permissions change only where a
 * segment's or a kept section's first page starts or its last page ends,
 * at most 2 per segment and per section.
 */
#define ELF_PAGE_RANGES_MAX (2 * (ELF_MAX_SEGMENTS + ELF_WX_SECTIONS_MAX))

/* One run of pages with the same permissions. */
struct elf_page_range {
	uint64_t off;      /* load offset (from loaded offset 0), 4 KiB-aligned */
	uint64_t size;     /* bytes: a non-zero multiple of 4 KiB */
	uint32_t flags;    /* PT_W and/or PT_X (pagetable.h); readable always */
};

/*
 * The page-granular mapping of img (as elf_parse() describes it: segments
 * sorted by load_off, not overlapping, inside [0, img->load_size); wx_sec[]
 * each inside a W+X segment).
 *
 * Out: *ret_n, on success only (on error ranges[] may be partly written);
 * ranges[0, *ret_n):
 *   - sorted by off, not overlapping, each inside [0, img->load_size);
 *   - together exactly the pages that at least one segment's
 *     [load_off, load_off + memsz) touches (BSS included).  Pages no
 *     segment touches - the gaps between segments - are in no range: the
 *     caller leaves them unmapped (or as its other mappings had them);
 *   - a page's flags are the union over every segment touching it:
 *     PF_W -> PT_W, PF_X -> PT_X; read access is implied (no flag).  A
 *     W+X segment of an image with wx_by_section set adds no flag itself:
 *     its part of the union is that of the wx_sec[] entries touching the
 *     page (none: read-only);
 *   - maximal: two consecutive ranges are either not adjacent (a gap
 *     between them) or differ in flags.
 * The loader maps range r with
 *   pt_map_range(pt, virt_base + r.off, phys_base + r.off, r.size, r.flags)
 * (and, for Linux, the identity alias phys_base + r.off the same way).
 * cap >= ELF_PAGE_RANGES_MAX always suffices.  Pure computation on img, no
 * allocation, no firmware, the file not read: safe after ExitBootServices
 * and once the file's bytes are gone.
 *
 * W+X: a range has both PT_W and PT_X only when img->wx_linux.  Otherwise a
 * page that would need both is LDR_E_WX_PAGE, and *clash (when clash is
 * not NULL) names the first such page and a writable and an executable
 * segment touching it.  elf_parse() refuses such images, so for an image
 * it accepted this never happens.
 *
 * Errors: LDR_E_INVAL (img, ranges or ret_n NULL; img->nseg above
 * ELF_MAX_SEGMENTS or img->nwx_sec above ELF_WX_SECTIONS_MAX; more ranges
 * than cap); LDR_E_WX_PAGE.
 */
enum ldr_err elf_page_map(const struct elf_image *img, struct elf_page_range *ranges,
			  unsigned cap, unsigned *ret_n, struct elf_wx_clash *clash);

#endif
