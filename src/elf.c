/*
 * elf.c - validation of an untrusted x86-64 ELF kernel (headers, program
 * headers, section headers, dynamic section, where its relocations are)
 * and the copy of its PT_LOAD segments into a destination buffer.
 * Every field is read with memcpy and checked before it is used.
 */
#include <elf.h>
#include <string.h>

#include "elf_load.h"
#include "elf_pages.h"
#include "linux_boot.h"
#include "linux_reloc.h"
#include "reloc.h"

#ifndef DT_RELRSZ
#define DT_RELRSZ 35
#endif
#ifndef DT_RELR
#define DT_RELR 36
#endif
#ifndef DT_RELRENT
#define DT_RELRENT 37
#endif

/* The default limits (see elf_load.h): 1 GiB, 64 phdrs, AUTO, Linux W+X. */
struct elf_limits elf_default_limits(void)
{
	struct elf_limits lim = {
		.max_image_size = ELF_DEFAULT_MAX_IMAGE,
		.max_phdrs = ELF_DEFAULT_MAX_PHDRS,
		.layout = ELF_LAYOUT_AUTO,
		.allow_wx_linux = 1,
	};
	return lim;
}

/* Identification and the fixed-size header fields. */
static enum ldr_err elf_check_header(const uint8_t *f, uint64_t size,
				     Elf64_Ehdr *eh)
{
	uint64_t n = size < SELFMAG ? size : SELFMAG;

	if (size == 0)
		return LDR_E_EMPTY_FILE;
	/*
	 * A short file that is not even an ELF prefix says "bad magic".
	 * (A loop, not memcmp: libefi provides only memcpy and memset.)
	 */
	for (uint64_t i = 0; i < n; i++)
		if (f[i] != (uint8_t)ELFMAG[i])
			return LDR_E_BAD_MAGIC;
	if (size < sizeof(*eh))
		return LDR_E_TRUNCATED;
	memcpy(eh, f, sizeof(*eh));
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return LDR_E_BAD_CLASS;
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return LDR_E_BAD_DATA;
	if (eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
		return LDR_E_BAD_VERSION;
	if (eh->e_machine != EM_X86_64)
		return LDR_E_BAD_MACHINE;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return LDR_E_BAD_TYPE;
	if (eh->e_ehsize != sizeof(Elf64_Ehdr))
		return LDR_E_BAD_EHSIZE;
	return LDR_OK;
}

/* Checks shared by both address spaces: no wrap, room to page-round. */
static int elf_range_ok(uint64_t addr, uint64_t len)
{
	return addr <= UINT64_MAX - len && addr + len <= UINT64_MAX - (PAGE_SIZE - 1);
}

static enum ldr_err elf_check_load(const Elf64_Phdr *ph, uint64_t size)
{
	if (ph->p_filesz > ph->p_memsz)
		return LDR_E_SEG_FILESZ;
	if (ph->p_align > 1) {
		if (ph->p_align & (ph->p_align - 1))
			return LDR_E_SEG_ALIGN;
		/* ELF gABI: p_vaddr and p_offset agree modulo p_align. */
		if ((ph->p_offset ^ ph->p_vaddr) & (ph->p_align - 1))
			return LDR_E_SEG_ALIGN;
	}
	if (ph->p_filesz && !ldr_in_bounds(ph->p_offset, ph->p_filesz, size))
		return LDR_E_SEG_OUTSIDE;
	if (!elf_range_ok(ph->p_vaddr, ph->p_memsz) ||
	    !elf_range_ok(ph->p_paddr, ph->p_memsz))
		return LDR_E_SEG_WRAP;
	return LDR_OK;
}

/* Insertion sort by vaddr (by_paddr == 0) or paddr; n is tiny. */
static void elf_sort_segments(struct elf_segment *s, unsigned n, int by_paddr)
{
	for (unsigned i = 1; i < n; i++) {
		struct elf_segment cur = s[i];
		uint64_t key = by_paddr ? cur.paddr : cur.vaddr;
		unsigned j = i;

		while (j > 0 && (by_paddr ? s[j - 1].paddr : s[j - 1].vaddr) > key) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = cur;
	}
}

static int elf_sorted_overlap(const struct elf_segment *s, unsigned n, int by_paddr)
{
	for (unsigned i = 1; i < n; i++) {
		uint64_t prev = by_paddr ? s[i - 1].paddr : s[i - 1].vaddr;
		uint64_t cur = by_paddr ? s[i].paddr : s[i].vaddr;

		/* prev + memsz cannot wrap: elf_range_ok() held. */
		if (prev + s[i - 1].memsz > cur)
			return 1;
	}
	return 0;
}

/*
 * Walk the program headers: record PT_LOADs (non-empty ones), refuse
 * PT_INTERP, remember the single PT_DYNAMIC, note the first W+X segment
 * (*ret_wx: its program header index + 1, or 0) and the end of the file
 * bytes the segments describe.
 */
static enum ldr_err elf_read_phdrs(const uint8_t *f, uint64_t size,
				   const Elf64_Ehdr *eh, struct elf_image *img,
				   Elf64_Phdr *dyn, int *ret_wx)
{
	int wx = 0;

	img->nseg = 0;
	img->has_dynamic = 0;
	img->max_align = 1;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		enum ldr_err err;

		/* In bounds: the whole table was checked by the caller. */
		memcpy(&ph, f + eh->e_phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
		if (ph.p_filesz) {
			if (!ldr_in_bounds(ph.p_offset, ph.p_filesz, size))
				return LDR_E_SEG_OUTSIDE;
			if (ph.p_offset + ph.p_filesz > img->elf_end)
				img->elf_end = ph.p_offset + ph.p_filesz;
		}
		if (ph.p_type == PT_INTERP)
			return LDR_E_INTERP;
		if (ph.p_type == PT_DYNAMIC) {
			if (img->has_dynamic)
				return LDR_E_DYN_BAD;
			img->has_dynamic = 1;
			*dyn = ph;
			continue;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		err = elf_check_load(&ph, size);
		if (err != LDR_OK)
			return err;
		if (ph.p_memsz == 0)
			continue;
		if (img->nseg == ELF_MAX_SEGMENTS)
			return LDR_E_TOO_MANY_PHDRS;
		/* the first W+X segment, as its program header index + 1 */
		if ((ph.p_flags & (PF_W | PF_X)) == (PF_W | PF_X) && !wx)
			wx = (int)i + 1;
		if (ph.p_align > img->max_align)
			img->max_align = ph.p_align;
		img->seg[img->nseg++] = (struct elf_segment){
			.vaddr = ph.p_vaddr, .paddr = ph.p_paddr,
			.offset = ph.p_offset, .filesz = ph.p_filesz,
			.memsz = ph.p_memsz, .align = ph.p_align,
			.flags = ph.p_flags, .phdr = i,
		};
	}
	if (img->nseg == 0)
		return LDR_E_NO_LOAD;
	elf_sort_segments(img->seg, img->nseg, 0);
	if (elf_sorted_overlap(img->seg, img->nseg, 0))
		return LDR_E_SEG_OVERLAP;
	*ret_wx = wx;
	return LDR_OK;
}

void elf_shdr(const struct elf_image *img, uint32_t i, Elf64_Shdr *sh)
{
	memcpy(sh, img->file + img->shoff + (uint64_t)i * sizeof(*sh), sizeof(*sh));
}

/*
 * Validate the section header table's place and extend elf_end over every
 * section with file bytes.  e_shnum == 0 with e_shoff == 0 means "no
 * sections"; with e_shoff != 0 the count is section 0's sh_size (the gABI's
 * extended numbering, which a kernel with one section per function needs:
 * 40,000 functions and their relocation sections pass 0xff00).  A section
 * whose bytes would lie outside the file pushes elf_end to the end of the
 * file, so no trailing Linux table can be mistaken inside it; such a
 * section is only refused if it is one we use (relocations, symbols).
 */
static enum ldr_err elf_read_shdrs(const Elf64_Ehdr *eh, struct elf_image *img)
{
	uint64_t tbl, count = eh->e_shnum;

	img->shoff = 0;
	img->shnum = 0;
	if (eh->e_shnum == 0 && eh->e_shoff == 0)
		return LDR_OK;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return LDR_E_BAD_SHENTSIZE;
	if (count == 0) {
		Elf64_Shdr sh0;

		if (!ldr_in_bounds(eh->e_shoff, sizeof(sh0), img->file_size))
			return LDR_E_SHDRS_OUTSIDE;
		memcpy(&sh0, img->file + eh->e_shoff, sizeof(sh0));
		count = sh0.sh_size;
		if (count == 0)
			return LDR_OK;
		/* the count must fit the file before it is multiplied */
		if (count < SHN_LORESERVE || count > img->file_size / sizeof(Elf64_Shdr))
			return LDR_E_SHDRS_OUTSIDE;
	}
	tbl = count * sizeof(Elf64_Shdr);
	if (!ldr_in_bounds(eh->e_shoff, tbl, img->file_size))
		return LDR_E_SHDRS_OUTSIDE;
	img->shoff = eh->e_shoff;
	img->shnum = (uint32_t)count;
	if (eh->e_shoff + tbl > img->elf_end)
		img->elf_end = eh->e_shoff + tbl;
	for (unsigned i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh;

		elf_shdr(img, i, &sh);
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL || sh.sh_size == 0)
			continue;
		if (!ldr_in_bounds(sh.sh_offset, sh.sh_size, img->file_size))
			img->elf_end = img->file_size;
		else if (sh.sh_offset + sh.sh_size > img->elf_end)
			img->elf_end = sh.sh_offset + sh.sh_size;
	}
	return LDR_OK;
}

/*
 * Place the segments (img->layout already decided): sort them by the
 * layout's address, refuse overlaps there, compute each load_off, the
 * image size and the link-time vaddr of loaded offset 0.
 *
 *   VADDR:  dest[0] <-> vbase                  link_vbase = vbase
 *   PADDR:  dest[0] <-> pbase                  link_vbase = vaddr of the
 *           lowest-paddr segment minus its distance from pbase, i.e. Linux's
 *           __START_KERNEL_map + LOAD_PHYSICAL_ADDR (0xffffffff81000000).
 */
static enum ldr_err elf_place(struct elf_image *img, const struct elf_limits *lim)
{
	uint64_t lo = UINT64_MAX, hi = 0, plo = UINT64_MAX, phi = 0;
	int by_paddr = img->layout == ELF_LAYOUT_PADDR;

	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		if (s->vaddr < lo)
			lo = s->vaddr;
		if (s->vaddr + s->memsz > hi)
			hi = s->vaddr + s->memsz;
		if (s->paddr < plo)
			plo = s->paddr;
		if (s->paddr + s->memsz > phi)
			phi = s->paddr + s->memsz;
	}
	img->vbase = ldr_align_down(lo, PAGE_SIZE);
	img->vend = ldr_align_up(hi, PAGE_SIZE);
	img->pbase = ldr_align_down(plo, PAGE_SIZE);
	img->pend = ldr_align_up(phi, PAGE_SIZE);
	if (by_paddr) {
		elf_sort_segments(img->seg, img->nseg, 1);
		if (elf_sorted_overlap(img->seg, img->nseg, 1))
			return LDR_E_SEG_OVERLAP;
		img->load_size = img->pend - img->pbase;
		img->link_vbase = img->seg[0].vaddr - (img->seg[0].paddr - img->pbase);
	} else {
		img->load_size = img->vend - img->vbase;
		img->link_vbase = img->vbase;
	}
	if (img->load_size > lim->max_image_size)
		return LDR_E_IMAGE_TOO_BIG;
	for (unsigned i = 0; i < img->nseg; i++) {
		struct elf_segment *s = &img->seg[i];

		s->load_off = by_paddr ? s->paddr - img->pbase : s->vaddr - img->vbase;
	}
	return LDR_OK;
}

/*
 * The entry must lie in the file bytes of an executable segment.  In the
 * PADDR layout e_entry is physical (Linux: phys_startup_64 = 0x1000000);
 * a virtual entry is accepted there too.
 */
static enum ldr_err elf_check_entry(struct elf_image *img)
{
	/* pass 0 matches p_paddr (PADDR layout only), pass 1 p_vaddr */
	for (int pass = img->layout == ELF_LAYOUT_PADDR ? 0 : 1; pass < 2; pass++) {
		for (unsigned i = 0; i < img->nseg; i++) {
			const struct elf_segment *s = &img->seg[i];
			uint64_t a = pass == 0 ? s->paddr : s->vaddr;

			if (!(s->flags & PF_X) || img->entry < a ||
			    img->entry - a >= s->filesz)
				continue;
			img->entry_off = s->load_off + (img->entry - a);
			return LDR_OK;
		}
	}
	return LDR_E_ENTRY_OUTSIDE;
}

/* Index of the PT_LOAD whose file bytes hold [vaddr, vaddr + size), or -1. */
int elf_seg_of(const struct elf_image *img, uint64_t vaddr, uint64_t size)
{
	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		if (vaddr >= s->vaddr && ldr_in_bounds(vaddr - s->vaddr, size, s->filesz))
			return (int)i;
	}
	return -1;
}

/* [vaddr, vaddr + size) -> file offset inside one PT_LOAD's file bytes; 0 if not. */
int elf_vaddr_to_file(const struct elf_image *img, uint64_t vaddr,
		      uint64_t size, uint64_t *ret_off)
{
	int i = elf_seg_of(img, vaddr, size);

	if (i < 0)
		return 0;
	*ret_off = img->seg[i].offset + (vaddr - img->seg[i].vaddr);
	return 1;
}

/* Values of the dynamic tags we look at; have[] says which were present. */
enum elf_dyn_slot {
	DS_RELA, DS_RELASZ, DS_RELAENT, DS_JMPREL, DS_PLTRELSZ, DS_PLTREL,
	DS_RELR, DS_RELRSZ, DS_RELRENT, DS_SYMTAB, DS_SYMENT, DS_STRTAB,
	DS_STRSZ, DS_COUNT
};

static int elf_dyn_slot_of(int64_t tag)
{
	switch (tag) {
	case DT_RELA: return DS_RELA;
	case DT_RELASZ: return DS_RELASZ;
	case DT_RELAENT: return DS_RELAENT;
	case DT_JMPREL: return DS_JMPREL;
	case DT_PLTRELSZ: return DS_PLTRELSZ;
	case DT_PLTREL: return DS_PLTREL;
	case DT_RELR: return DS_RELR;
	case DT_RELRSZ: return DS_RELRSZ;
	case DT_RELRENT: return DS_RELRENT;
	case DT_SYMTAB: return DS_SYMTAB;
	case DT_SYMENT: return DS_SYMENT;
	case DT_STRTAB: return DS_STRTAB;
	case DT_STRSZ: return DS_STRSZ;
	default: return -1;
	}
}

/* A table named by address + size tags: both or neither, inside the file. */
static enum ldr_err elf_dyn_table(const struct elf_image *img, const int *have,
				  const uint64_t *val, int addr, int sz,
				  uint64_t *ret_off, uint64_t *ret_size)
{
	uint64_t off;

	if (!have[sz] || val[sz] == 0) {
		*ret_off = 0;
		*ret_size = 0;
		return LDR_OK;
	}
	if (!have[addr])
		return LDR_E_DYN_BAD;
	if (!elf_vaddr_to_file(img, val[addr], val[sz], &off))
		return LDR_E_RELA_OUTSIDE;
	*ret_off = off;
	*ret_size = val[sz];
	return LDR_OK;
}

/*
 * Read PT_DYNAMIC from the file bytes of a PT_LOAD: refuse DT_NEEDED,
 * DT_TEXTREL / DF_TEXTREL and DT_REL tables (x86-64 uses RELA only), and
 * record where RELA, JMPREL, RELR, SYMTAB and STRTAB lie in the file.
 * DT_SYMTAB has no size; its entry count is bounded by the end of the
 * file bytes of the segment that holds it.
 */
static enum ldr_err elf_read_dynamic(struct elf_image *img, const Elf64_Phdr *dp)
{
	struct elf_dyn_info *d = &img->dyn;
	uint64_t val[DS_COUNT] = { 0 };
	int have[DS_COUNT] = { 0 };
	enum ldr_err err;
	int found = 0;

	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		if (dp->p_offset >= s->offset &&
		    ldr_in_bounds(dp->p_offset - s->offset, dp->p_filesz, s->filesz))
			found = 1;
	}
	if (!found || dp->p_filesz == 0)
		return LDR_E_DYN_OUTSIDE;
	for (uint64_t o = 0; dp->p_filesz - o >= sizeof(Elf64_Dyn); o += sizeof(Elf64_Dyn)) {
		Elf64_Dyn e;
		int slot;

		memcpy(&e, img->file + dp->p_offset + o, sizeof(e));
		if (e.d_tag == DT_NULL)
			break;
		if (e.d_tag == DT_NEEDED)
			return LDR_E_DYN_NEEDED;
		if (e.d_tag == DT_TEXTREL ||
		    (e.d_tag == DT_FLAGS && (e.d_un.d_val & DF_TEXTREL)))
			return LDR_E_DYN_TEXTREL;
		if ((e.d_tag == DT_RELSZ && e.d_un.d_val) ||
		    (e.d_tag == DT_PLTREL && e.d_un.d_val != DT_RELA))
			return LDR_E_DYN_BAD;
		slot = elf_dyn_slot_of(e.d_tag);
		if (slot >= 0) {
			have[slot] = 1;
			val[slot] = e.d_un.d_val;
		}
	}

	memset(d, 0, sizeof(*d));
	err = elf_dyn_table(img, have, val, DS_RELA, DS_RELASZ, &d->rela_off, &d->rela_size);
	if (err != LDR_OK)
		return err;
	if (d->rela_size && (!have[DS_RELAENT] || val[DS_RELAENT] != sizeof(Elf64_Rela) ||
			     d->rela_size % sizeof(Elf64_Rela)))
		return LDR_E_RELA_ENTSIZE;
	err = elf_dyn_table(img, have, val, DS_JMPREL, DS_PLTRELSZ, &d->jmprel_off, &d->jmprel_size);
	if (err != LDR_OK)
		return err;
	if (d->jmprel_size && (!have[DS_PLTREL] || d->jmprel_size % sizeof(Elf64_Rela)))
		return d->jmprel_size % sizeof(Elf64_Rela) ? LDR_E_RELA_ENTSIZE : LDR_E_DYN_BAD;
	err = elf_dyn_table(img, have, val, DS_RELR, DS_RELRSZ, &d->relr_off, &d->relr_size);
	if (err != LDR_OK)
		return err;
	if (d->relr_size && (!have[DS_RELRENT] || val[DS_RELRENT] != sizeof(uint64_t) ||
			     d->relr_size % sizeof(uint64_t)))
		return LDR_E_RELR_BAD;
	if (have[DS_SYMTAB]) {
		int s = elf_seg_of(img, val[DS_SYMTAB], 0);

		if (have[DS_SYMENT] && val[DS_SYMENT] != sizeof(Elf64_Sym))
			return LDR_E_RELOC_SYMBOL;
		if (s < 0)
			return LDR_E_DYN_OUTSIDE;
		d->symtab_off = img->seg[s].offset + (val[DS_SYMTAB] - img->seg[s].vaddr);
		d->symtab_count = (img->seg[s].filesz - (val[DS_SYMTAB] - img->seg[s].vaddr)) /
				  sizeof(Elf64_Sym);
	}
	if (have[DS_STRTAB] && have[DS_STRSZ] &&
	    !elf_vaddr_to_file(img, val[DS_STRTAB], val[DS_STRSZ], &d->strtab_off))
		return LDR_E_DYN_OUTSIDE;
	if (have[DS_STRTAB] && have[DS_STRSZ])
		d->strtab_size = val[DS_STRSZ];
	return LDR_OK;
}

/*
 * ET_EXEC --emit-relocs: check every non-allocated SHT_RELA section that
 * relocates an SHF_ALLOC section (allocated SHT_RELA sections are dynamic
 * relocations, not --emit-relocs output, and are ignored; relocations of
 * debug sections are ignored too).
 */
static enum ldr_err elf_check_rela_sections(struct elf_image *img)
{
	img->n_rela_sections = 0;
	for (unsigned i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh, tgt, sym;

		elf_shdr(img, i, &sh);
		if ((sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    (sh.sh_flags & SHF_ALLOC))
			continue;
		if (sh.sh_info == 0 || sh.sh_info >= img->shnum)
			return LDR_E_SHDRS_OUTSIDE;
		elf_shdr(img, sh.sh_info, &tgt);
		if (!(tgt.sh_flags & SHF_ALLOC))
			continue;
		/* SHT_REL has 16-byte entries without addends: not x86-64's. */
		if (sh.sh_type == SHT_REL || sh.sh_entsize != sizeof(Elf64_Rela) ||
		    sh.sh_size % sizeof(Elf64_Rela))
			return LDR_E_RELA_ENTSIZE;
		if (!ldr_in_bounds(sh.sh_offset, sh.sh_size, img->file_size))
			return LDR_E_RELA_OUTSIDE;
		if (sh.sh_link == 0 || sh.sh_link >= img->shnum)
			return LDR_E_RELOC_SYMBOL;
		elf_shdr(img, sh.sh_link, &sym);
		if (sym.sh_type != SHT_SYMTAB || sym.sh_entsize != sizeof(Elf64_Sym) ||
		    !ldr_in_bounds(sym.sh_offset, sym.sh_size, img->file_size))
			return LDR_E_RELOC_SYMBOL;
		img->n_rela_sections++;
	}
	return LDR_OK;
}

/* Are all n bytes at p zero?  (A loop: libefi has no memcmp.) */
static int elf_all_zero(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * Where an ET_EXEC's relocations come from, decided from the ELF itself:
 *
 *   1. --emit-relocs sections that relocate allocated sections: they are
 *      used, and bytes after the image do not matter (they cannot leave
 *      the kernel unrelocated).
 *   2. Otherwise the bytes after elf_end, the end of the last thing the
 *      ELF header, program headers, segments, section headers or sections
 *      describe.  All zero: padding (e.g. to a sector multiple), nothing
 *      to apply - "no relocations".  Anything else must be Linux's
 *      appended table (vmlinux.bin is a stripped ELF with the table
 *      concatenated by the kernel's build) with at least one entry; the
 *      image must also obey Linux's link invariant, which elf_parse()
 *      checks once the image is laid out by physical address.  Bytes that
 *      are neither refuse the file: ignoring them could mean running an
 *      unrelocated kernel, and taking them for a table would tolerate W+X.
 *   3. No tail: ELF_RELOC_NONE, a kernel that can only run where linked.
 */
static enum ldr_err elf_exec_relocs(struct elf_image *img)
{
	const struct elf_linux_relocs *lr = &img->linux_relocs;
	enum ldr_err err;

	err = elf_check_rela_sections(img);
	if (err != LDR_OK)
		return err;
	if (img->n_rela_sections) {
		img->reloc_kind = ELF_RELOC_SECTIONS;
		return LDR_OK;
	}
	if (elf_all_zero(img->file + img->elf_end, img->file_size - img->elf_end))
		return LDR_OK;
	err = linux_relocs_find(img->file, img->file_size, img->elf_end, &img->linux_relocs);
	if (err != LDR_OK)
		return err;
	/* (a tail without entries is all zero, caught above: kept for clarity) */
	if (lr->n64 + lr->ninv32 + lr->n32 == 0)
		return LDR_E_LINUX_RELOCS;
	img->reloc_kind = ELF_RELOC_LINUX;
	return LDR_OK;
}

/*
 * A Linux image's W+X segments, mapped by their sections (elf_pages.h):
 * every allocated, non-empty section that is writable or executable,
 * clipped to each W+X segment it overlaps (by virtual address, as the
 * section headers give it), into img->wx_sec[].  Section headers are
 * untrusted: the extents are compared without forming a sum that could
 * wrap.  No section headers: wx_by_section stays 0 (the segments' RWX).
 */
static enum ldr_err elf_wx_sections(struct elf_image *img)
{
	img->nwx_sec = 0;
	img->wx_by_section = img->shnum > 0;
	for (uint32_t i = 1; i < img->shnum; i++) {
		Elf64_Shdr sh;

		elf_shdr(img, i, &sh);
		if (sh.sh_type == SHT_NULL || !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0 ||
		    !(sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)))
			continue;
		for (unsigned k = 0; k < img->nseg; k++) {
			const struct elf_segment *s = &img->seg[k];
			/* [lo, hi): the overlap; the segment's end cannot wrap
			 * (elf_range_ok), the section's saturates */
			uint64_t send = s->vaddr + s->memsz;
			uint64_t xend = sh.sh_size > UINT64_MAX - sh.sh_addr ? UINT64_MAX
									     : sh.sh_addr + sh.sh_size;
			uint64_t lo = sh.sh_addr > s->vaddr ? sh.sh_addr : s->vaddr;
			uint64_t hi = xend < send ? xend : send;

			if ((s->flags & (PF_W | PF_X)) != (PF_W | PF_X) || lo >= hi)
				continue;
			if (img->nwx_sec == ELF_WX_SECTIONS_MAX)
				return LDR_E_WX_SECTIONS;
			img->wx_sec[img->nwx_sec++] = (struct elf_wx_section){
				.load_off = s->load_off + (lo - s->vaddr),
				.size = hi - lo,
				.flags = ((sh.sh_flags & SHF_WRITE) ? PF_W : 0) |
					 ((sh.sh_flags & SHF_EXECINSTR) ? PF_X : 0),
				.shndx = i,
			};
		}
	}
	return LDR_OK;
}

/*
 * Validate file[0, size) and describe it in *ret_img (on success only).
 * Order: header, program headers, section headers, relocation source
 * (ET_EXEC: sections, else the bytes after the image), Linux or not, W+X
 * segments, layout, Linux's link invariant, entry, a Linux W+X segment's
 * sections, W+X pages, dynamic section, end limit (max_vend).  Errors:
 * see elf_load.h.
 */
enum ldr_err elf_parse_diag(const void *file, uint64_t size,
			    const struct elf_limits *lim, struct elf_image *ret_img,
			    struct elf_wx_clash *wx_clash)
{
	const uint8_t *f = file;
	struct elf_limits def = elf_default_limits();
	struct elf_image img;
	struct elf_page_range pages[ELF_PAGE_RANGES_MAX];
	unsigned npages = 0;
	Elf64_Ehdr eh;
	Elf64_Phdr dyn = { 0 };
	enum ldr_err err;
	int wx = 0;

	if (!file && size)
		return LDR_E_INVAL;
	if (!lim)
		lim = &def;
	err = elf_check_header(f, size, &eh);
	if (err != LDR_OK)
		return err;

	memset(&img, 0, sizeof(img));
	img.file = f;
	img.file_size = size;
	img.type = eh.e_type;
	img.entry = eh.e_entry;
	img.elf_end = sizeof(eh);

	/* Count before bounds: e_phnum = PN_XNUM (65535) is "too many". */
	if (eh.e_phnum == 0)
		return LDR_E_NO_LOAD;
	if (eh.e_phnum > lim->max_phdrs)
		return LDR_E_TOO_MANY_PHDRS;
	if (eh.e_phentsize != sizeof(Elf64_Phdr))
		return LDR_E_BAD_PHENTSIZE;
	if (!ldr_in_bounds(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size))
		return LDR_E_PHDRS_OUTSIDE;
	if (eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > img.elf_end)
		img.elf_end = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);

	err = elf_read_phdrs(f, size, &eh, &img, &dyn, &wx);
	if (err != LDR_OK)
		return err;
	err = elf_read_shdrs(&eh, &img);
	if (err != LDR_OK)
		return err;
	/* An ET_EXEC's own dynamic tables, if any, are never applied; bytes
	 * after an ET_DYN are ignored (its relocations are in PT_DYNAMIC). */
	if (img.type == ET_EXEC) {
		err = elf_exec_relocs(&img);
		if (err != LDR_OK)
			return err;
	}

	/*
	 * Linux: an appended table, or a bzImage's payload without one (no
	 * RANDOMIZE_BASE).  Either is refused just below unless the image is
	 * Linux-shaped, so a W+X image that is not Linux never gets through.
	 */
	img.is_linux = img.reloc_kind == ELF_RELOC_LINUX ||
		    (lim->linux_payload && img.type == ET_EXEC && img.reloc_kind == ELF_RELOC_NONE);
	img.wx_linux = img.is_linux && lim->allow_wx_linux;
	/* W+X only for Linux (its init segment), and only when allowed */
	if (wx && !img.wx_linux) {
		for (unsigned i = 0; wx_clash && i < img.nseg; i++)
			if (img.seg[i].phdr == (unsigned)(wx - 1))
				*wx_clash = (struct elf_wx_clash){
					.off = 0, .phdr_w = img.seg[i].phdr,
					.phdr_x = img.seg[i].phdr, .vaddr_w = img.seg[i].vaddr,
					.vaddr_x = img.seg[i].vaddr,
				};
		return LDR_E_WX_SEGMENT;
	}
	img.layout = lim->layout;
	if (img.layout == ELF_LAYOUT_AUTO)
		img.layout = img.is_linux ? ELF_LAYOUT_PADDR : ELF_LAYOUT_VADDR;
	err = elf_place(&img, lim);
	if (err != LDR_OK)
		return err;
	/* A Linux table behind an image that is not Linux-shaped is not one;
	 * a bzImage's payload that is not is no vmlinux. */
	if (img.is_linux &&
	    (img.layout != ELF_LAYOUT_PADDR || !linux_link_ok(img.link_vbase, img.pbase)))
		return img.reloc_kind == ELF_RELOC_LINUX ? LDR_E_LINUX_RELOCS : LDR_E_LINUX_LAYOUT;
	err = elf_check_entry(&img);
	if (err != LDR_OK)
		return err;
	if (wx && img.wx_linux) {
		err = elf_wx_sections(&img);
		if (err != LDR_OK)
			return err;
	}
	/* pages shared by segments get the union of their permissions */
	err = elf_page_map(&img, pages, ELF_PAGE_RANGES_MAX, &npages, wx_clash);
	if (err != LDR_OK)
		return err;
	img.has_wx = 0;
	for (unsigned i = 0; i < npages; i++)
		if ((pages[i].flags & (PT_W | PT_X)) == (PT_W | PT_X))
			img.has_wx = 1;

	if (img.has_dynamic) {
		err = elf_read_dynamic(&img, &dyn);
		if (err != LDR_OK)
			return err;
	}
	if (img.type == ET_DYN) {
		/* A PIE without PT_DYNAMIC cannot say what to relocate. */
		if (!img.has_dynamic)
			return LDR_E_NOT_RELOCATABLE;
		img.reloc_kind = ELF_RELOC_DYNAMIC;
	}
	img.max_vend = reloc_max_vend(&img);
	*ret_img = img;
	return LDR_OK;
}

enum ldr_err elf_parse(const void *file, uint64_t size,
		       const struct elf_limits *lim, struct elf_image *ret_img)
{
	return elf_parse_diag(file, size, lim, ret_img, NULL);
}

/* Copy the segments to dest by load_off, zero the rest; LDR_E_INVAL if too small. */
enum ldr_err elf_load(const struct elf_image *img, void *dest, uint64_t dest_size)
{
	uint8_t *d = dest;
	uint64_t cur = 0;

	if (!img || !dest || dest_size < img->load_size)
		return LDR_E_INVAL;
	/*
	 * Segments are sorted by load_off and do not overlap, so one pass
	 * zeroes every gap and every BSS tail exactly once.
	 */
	for (unsigned i = 0; i < img->nseg; i++) {
		const struct elf_segment *s = &img->seg[i];

		memset(d + cur, 0, (size_t)(s->load_off - cur));
		/* a BSS-only segment's p_offset is never checked against the
		 * file (nothing is read), so no pointer is formed from it */
		if (s->filesz)
			memcpy(d + s->load_off, img->file + s->offset, (size_t)s->filesz);
		cur = s->load_off + s->filesz;
	}
	memset(d + cur, 0, (size_t)(img->load_size - cur));
	return LDR_OK;
}
