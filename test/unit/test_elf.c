/*
 * test_elf.c - host tests for src/elf.c: a table of malformed kernels (each
 * a valid PIE, ET_EXEC or Linux-like image from elf_build.h with one thing
 * broken) and the exact error each must give; what a valid image parses
 * to; elf_load's copy, BSS and gap zeroing; truncation and byte-flip sweeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_load.h"
#include "elf_build.h"
#include "test.h"

enum eb_kind { K_PIE, K_EXEC, K_LINUX };

struct parse_case {
	const char *name;
	enum eb_kind kind;
	void (*pre)(struct eb *e);           /* before serialising */
	void (*post)(struct eb *e);          /* on the bytes */
	void (*limits)(struct elf_limits *l);
	enum ldr_err want;
};

static void build(struct eb *e, enum eb_kind kind)
{
	static const uint32_t r64[] = { (uint32_t)(EB_V + 0x1100) };
	static const uint32_t rinv[] = { (uint32_t)(EB_V + 0x1300) };
	static const uint32_t r32[] = { (uint32_t)(EB_V + 0x1200) };

	if (kind == K_PIE) {
		eb_pie(e);
		eb_rela(e, 0, EB_WORDS, R_X86_64_RELATIVE, 0, 0x100);
	} else if (kind == K_EXEC) {
		eb_exec(e);
		eb_srela(e, 0, EB_V + 0x1100, R_X86_64_64, EB_SYM_DATA, 8);
	} else {
		eb_linux(e);
		eb_linux_table(e, r64, 1, rinv, 1, r32, 1);
	}
}

/* ---- header ---- */
static void p_empty(struct eb *e) { e->size = 0; }
static void p_trunc3(struct eb *e) { e->size = 3; }
static void p_trunc4(struct eb *e) { e->size = 4; }
static void p_trunc16(struct eb *e) { e->size = 16; }
static void p_trunc63(struct eb *e) { e->size = 63; }
static void p_magic(struct eb *e) { e->buf[1] = 'X'; }
static void p_mz(struct eb *e) { e->buf[0] = 'M'; e->buf[1] = 'Z'; e->size = 2; }
static void m_class32(struct eb *e) { e->eh.e_ident[EI_CLASS] = ELFCLASS32; }
static void m_classnone(struct eb *e) { e->eh.e_ident[EI_CLASS] = ELFCLASSNONE; }
static void m_bigendian(struct eb *e) { e->eh.e_ident[EI_DATA] = ELFDATA2MSB; }
static void m_identver(struct eb *e) { e->eh.e_ident[EI_VERSION] = 0; }
static void m_version(struct eb *e) { e->eh.e_version = 2; }
static void m_i386(struct eb *e) { e->eh.e_machine = EM_386; }
static void m_aarch64(struct eb *e) { e->eh.e_machine = EM_AARCH64; }
static void m_rel(struct eb *e) { e->eh.e_type = ET_REL; }
static void m_core(struct eb *e) { e->eh.e_type = ET_CORE; }
static void m_ehsize(struct eb *e) { e->eh.e_ehsize = 52; }
static void m_phentsize(struct eb *e) { e->eh.e_phentsize = 32; }
static void p_phnum_xnum(struct eb *e) { uint16_t n = PN_XNUM; eb_put(e, 56, &n, 2); }
static void p_phnum0(struct eb *e) { uint16_t n = 0; eb_put(e, 56, &n, 2); }
static void m_phoff_past(struct eb *e) { e->eh.e_phoff = 0x100000; }
static void m_phoff_wrap(struct eb *e) { e->eh.e_phoff = UINT64_MAX - 0x3f; }
static void p_phdrs_cut(struct eb *e) { e->size = 0x100; }
static void m_shentsize(struct eb *e) { e->eh.e_shentsize = 40; }
static void m_shoff_past(struct eb *e) { e->eh.e_shoff = 0x7f00; }
static void m_shoff_wrap(struct eb *e) { e->eh.e_shoff = UINT64_MAX - 0x100; }

/* ---- segments ---- */
static void m_off_outside(struct eb *e) { e->ph[1].p_offset = 0x10000; e->ph[1].p_vaddr = 0x11000; }
static void m_filesz_outside(struct eb *e) { e->ph[1].p_filesz = 0x1001; e->ph[1].p_memsz = 0x2000; }
static void m_off_wrap(struct eb *e)
{
	e->ph[1].p_offset = UINT64_MAX - 0xfff;
	e->ph[1].p_vaddr = 0x3000;
}
static void m_filesz_gt_memsz(struct eb *e) { e->ph[1].p_memsz = 0x800; }
static void m_align_npot(struct eb *e) { e->ph[1].p_align = 0x1800; }
static void m_align_incongruent(struct eb *e) { e->ph[1].p_vaddr = 0x2100; e->ph[2].p_vaddr = 0x2100; }
static void m_overlap(struct eb *e) { e->ph[1].p_vaddr = 0x800; e->ph[1].p_align = 0; }
static void m_overlap_linux_paddr(struct eb *e) { e->ph[2].p_paddr = EB_P + 0x1800; e->ph[2].p_align = 0; }
static void m_vaddr_wrap(struct eb *e) { e->ph[1].p_vaddr = 0xfffffffffffff000ULL; }
static void m_vaddr_unroundable(struct eb *e)
{
	e->ph[1].p_vaddr = 0xffffffffffffe000ULL;
	e->ph[1].p_memsz = 0x1800;
}
static void m_paddr_wrap(struct eb *e) { e->ph[1].p_paddr = 0xfffffffffffff000ULL; }
static void m_too_big(struct eb *e) { e->ph[1].p_vaddr = 0x80000000; e->ph[2].p_vaddr = 0x80000000; }
static void l_small(struct elf_limits *l) { l->max_image_size = 0x2000; }
static void m_entry_outside(struct eb *e) { e->eh.e_entry = 0x5000; }
static void m_entry_data(struct eb *e) { e->eh.e_entry = 0x2010; }
static void m_entry_bss(struct eb *e) { e->ph[0].p_filesz = 0x800; e->eh.e_entry = 0x900; }
static void m_entry_linux_virt_data(struct eb *e) { e->eh.e_entry = EB_P + 0x1010; }
static void m_wx(struct eb *e) { e->ph[1].p_flags |= PF_X; }
static void m_wx_exec(struct eb *e) { e->ph[0].p_flags |= PF_W; }
/* ET_EXEC: text shrunk to half a page, data starting right after it */
static void m_shared_wx(struct eb *e)
{
	e->ph[0].p_filesz = e->ph[0].p_memsz = 0x800;
	e->ph[1].p_vaddr = EB_V + 0x800;
	e->ph[1].p_paddr = EB_P + 0x800;
	e->ph[1].p_align = 0x800;
}
static void l_no_wx(struct elf_limits *l) { l->allow_wx_linux = 0; }
static void l_vaddr(struct elf_limits *l) { l->layout = ELF_LAYOUT_VADDR; }
static void l_phdrs2(struct elf_limits *l) { l->max_phdrs = 2; }
static void m_interp(struct eb *e) { eb_phdr(e, PT_INTERP, PF_R, 0x600, 0x600, 0x600, 0x10, 0x10, 1); }
static void m_no_load(struct eb *e) { e->ph[0].p_type = PT_NOTE; e->ph[1].p_type = PT_NOTE; }
static void m_empty_loads(struct eb *e)
{
	e->ph[0].p_memsz = e->ph[0].p_filesz = 0;
	e->ph[1].p_memsz = e->ph[1].p_filesz = 0;
}
static void m_many_loads(struct eb *e)
{
	e->nph = 0;
	for (unsigned i = 0; i < ELF_MAX_SEGMENTS + 1; i++)
		eb_phdr(e, PT_LOAD, PF_R | PF_X, i * 0x80, i * 0x80, i * 0x80, 0x80, 0x80, 0);
}
static void m_note_outside(struct eb *e) { e->ph[3].p_offset = 0x1ff0; e->ph[3].p_filesz = 0x20; }

/* ---- dynamic ---- */
static void m_needed(struct eb *e) { eb_set_dyn(e, DT_NEEDED, 1); }
static void m_textrel(struct eb *e) { eb_set_dyn(e, DT_TEXTREL, 0); }
static void m_df_textrel(struct eb *e) { eb_set_dyn(e, DT_FLAGS, DF_TEXTREL | DF_BIND_NOW); }
static void m_dyn_straddle(struct eb *e) { e->ph[2].p_offset = 0xff0; e->ph[2].p_filesz = 0x100; }
static void m_dyn_twice(struct eb *e) { eb_phdr(e, PT_DYNAMIC, PF_R, EB_DYNAMIC, 0x2000, 0x2000, 0x20, 0x20, 8); }
static void m_no_dynamic(struct eb *e) { e->ph[2].p_type = PT_NULL; }
static void m_relasz_odd(struct eb *e) { eb_set_dyn(e, DT_RELASZ, 25); }
static void m_relaent(struct eb *e) { eb_set_dyn(e, DT_RELAENT, 16); }
static void m_no_relaent(struct eb *e) { eb_del_dyn(e, DT_RELAENT); }
static void m_rela_outside(struct eb *e) { eb_set_dyn(e, DT_RELA, 0x9000); }
static void m_rela_cross(struct eb *e) { eb_set_dyn(e, DT_RELA, 0xff0); }
static void m_no_rela_addr(struct eb *e) { eb_del_dyn(e, DT_RELA); }
static void m_relsz(struct eb *e) { eb_set_dyn(e, DT_RELSZ, 16); }
static void m_pltrel_rel(struct eb *e)
{
	eb_rela(e, 1, EB_WORDS + 8, R_X86_64_JUMP_SLOT, EB_SYM_TEXT, 0);
	eb_set_dyn(e, DT_PLTREL, DT_REL);
}
static void m_pltrelsz_odd(struct eb *e)
{
	eb_rela(e, 1, EB_WORDS + 8, R_X86_64_JUMP_SLOT, EB_SYM_TEXT, 0);
	eb_set_dyn(e, DT_PLTRELSZ, 30);
}
static void m_relrent(struct eb *e) { eb_relr(e, EB_WORDS + 8); eb_set_dyn(e, DT_RELRENT, 16); }
static void m_relrsz_odd(struct eb *e) { eb_relr(e, EB_WORDS + 8); eb_set_dyn(e, DT_RELRSZ, 12); }
static void m_syment(struct eb *e) { eb_set_dyn(e, DT_SYMENT, 16); }
static void m_symtab_outside(struct eb *e) { eb_set_dyn(e, DT_SYMTAB, 0x7000); }
static void m_strtab_outside(struct eb *e) { eb_set_dyn(e, DT_STRSZ, 0x10000); }

/* ---- sections (ET_EXEC --emit-relocs) ---- */
static void m_srela_entsize(struct eb *e) { e->sh[EB_S_RELA_DATA].sh_entsize = 16; }
static void m_srela_size_odd(struct eb *e) { e->sh[EB_S_RELA_DATA].sh_size = 30; }
static void m_srela_outside(struct eb *e) { e->sh[EB_S_RELA_DATA].sh_offset = 0x7ff0; }
static void m_srela_link(struct eb *e) { e->sh[EB_S_RELA_DATA].sh_link = EB_S_STRTAB; }
static void m_srela_link_range(struct eb *e) { e->sh[EB_S_RELA_DATA].sh_link = 99; }
static void m_srela_info(struct eb *e) { e->sh[EB_S_RELA_DATA].sh_info = 99; }
static void m_symtab_entsize(struct eb *e) { e->sh[EB_S_SYMTAB].sh_entsize = 16; }
static void m_symtab_sec_outside(struct eb *e) { e->sh[EB_S_SYMTAB].sh_size = 0x100000; }
static void m_srel(struct eb *e) { e->sh[EB_S_RELA_TEXT].sh_type = SHT_REL; }

/* ---- Linux table ---- */
static void p_linux_one_sep_missing(struct eb *e)
{
	/* drop the leading 0 (the 64-bit list's terminator) */
	memmove(e->buf + 0x5000, e->buf + 0x5004, e->size - 0x5004);
	e->size -= 4;
}
static void m_linux_no_seps(struct eb *e)
{
	e->nlinux = 0;
	eb_linux_word(e, (uint32_t)(EB_V + 0x1100));
	eb_linux_word(e, (uint32_t)(EB_V + 0x1200));
	eb_linux_word(e, (uint32_t)(EB_V + 0x1300));
}
static void m_linux_short(struct eb *e) { e->nlinux = 0; eb_linux_word(e, 0); eb_linux_word(e, 0); }
static void p_linux_odd_tail(struct eb *e) { e->buf[e->size++] = 0; e->buf[e->size++] = 1; }
static void p_linux_garbage_pad(struct eb *e)
{
	memmove(e->buf + 0x5004, e->buf + 0x5000, e->size - 0x5000);
	eb_put32(e, 0x5000, 0xdeadbeef);
	e->size += 4;
}

static const struct parse_case parse_cases[] = {
	{ "empty file", K_PIE, NULL, p_empty, NULL, LDR_E_EMPTY_FILE },
	{ "truncated at 3", K_PIE, NULL, p_trunc3, NULL, LDR_E_TRUNCATED },
	{ "truncated at 4", K_PIE, NULL, p_trunc4, NULL, LDR_E_TRUNCATED },
	{ "truncated at 16", K_PIE, NULL, p_trunc16, NULL, LDR_E_TRUNCATED },
	{ "truncated at 63", K_PIE, NULL, p_trunc63, NULL, LDR_E_TRUNCATED },
	{ "bad magic", K_PIE, NULL, p_magic, NULL, LDR_E_BAD_MAGIC },
	{ "MZ, 2 bytes", K_PIE, NULL, p_mz, NULL, LDR_E_BAD_MAGIC },
	{ "ELFCLASS32", K_PIE, m_class32, NULL, NULL, LDR_E_BAD_CLASS },
	{ "ELFCLASSNONE", K_EXEC, m_classnone, NULL, NULL, LDR_E_BAD_CLASS },
	{ "big endian", K_PIE, m_bigendian, NULL, NULL, LDR_E_BAD_DATA },
	{ "EI_VERSION 0", K_PIE, m_identver, NULL, NULL, LDR_E_BAD_VERSION },
	{ "e_version 2", K_EXEC, m_version, NULL, NULL, LDR_E_BAD_VERSION },
	{ "EM_386", K_PIE, m_i386, NULL, NULL, LDR_E_BAD_MACHINE },
	{ "EM_AARCH64", K_LINUX, m_aarch64, NULL, NULL, LDR_E_BAD_MACHINE },
	{ "ET_REL", K_PIE, m_rel, NULL, NULL, LDR_E_BAD_TYPE },
	{ "ET_CORE", K_EXEC, m_core, NULL, NULL, LDR_E_BAD_TYPE },
	{ "e_ehsize 52", K_PIE, m_ehsize, NULL, NULL, LDR_E_BAD_EHSIZE },
	{ "e_phentsize 32", K_PIE, m_phentsize, NULL, NULL, LDR_E_BAD_PHENTSIZE },
	{ "e_phnum 65535", K_PIE, NULL, p_phnum_xnum, NULL, LDR_E_TOO_MANY_PHDRS },
	{ "e_phnum over max_phdrs", K_PIE, NULL, NULL, l_phdrs2, LDR_E_TOO_MANY_PHDRS },
	{ "e_phnum 0", K_PIE, NULL, p_phnum0, NULL, LDR_E_NO_LOAD },
	{ "e_phoff past the end", K_PIE, m_phoff_past, NULL, NULL, LDR_E_PHDRS_OUTSIDE },
	{ "e_phoff + size wraps", K_PIE, m_phoff_wrap, NULL, NULL, LDR_E_PHDRS_OUTSIDE },
	{ "phdrs cut by EOF", K_PIE, NULL, p_phdrs_cut, NULL, LDR_E_PHDRS_OUTSIDE },
	{ "e_shentsize 40", K_EXEC, m_shentsize, NULL, NULL, LDR_E_BAD_SHENTSIZE },
	{ "e_shoff past the end", K_EXEC, m_shoff_past, NULL, NULL, LDR_E_SHDRS_OUTSIDE },
	{ "e_shoff + size wraps", K_EXEC, m_shoff_wrap, NULL, NULL, LDR_E_SHDRS_OUTSIDE },
	{ "p_offset past EOF", K_PIE, m_off_outside, NULL, NULL, LDR_E_SEG_OUTSIDE },
	{ "p_filesz past EOF", K_PIE, m_filesz_outside, NULL, NULL, LDR_E_SEG_OUTSIDE },
	{ "p_offset + p_filesz wraps", K_PIE, m_off_wrap, NULL, NULL, LDR_E_SEG_OUTSIDE },
	{ "PT_GNU_STACK past EOF", K_PIE, m_note_outside, NULL, NULL, LDR_E_SEG_OUTSIDE },
	{ "p_filesz > p_memsz", K_PIE, m_filesz_gt_memsz, NULL, NULL, LDR_E_SEG_FILESZ },
	{ "p_align not a power of 2", K_PIE, m_align_npot, NULL, NULL, LDR_E_SEG_ALIGN },
	{ "p_offset !~ p_vaddr", K_PIE, m_align_incongruent, NULL, NULL, LDR_E_SEG_ALIGN },
	{ "overlapping segments", K_PIE, m_overlap, NULL, NULL, LDR_E_SEG_OVERLAP },
	{ "overlapping paddrs (Linux)", K_LINUX, m_overlap_linux_paddr, NULL, NULL, LDR_E_SEG_OVERLAP },
	{ "vaddr + memsz wraps", K_PIE, m_vaddr_wrap, NULL, NULL, LDR_E_SEG_WRAP },
	{ "vaddr end cannot round", K_PIE, m_vaddr_unroundable, NULL, NULL, LDR_E_SEG_WRAP },
	{ "paddr + memsz wraps", K_EXEC, m_paddr_wrap, NULL, NULL, LDR_E_SEG_WRAP },
	{ "span of 2 GiB", K_PIE, m_too_big, NULL, NULL, LDR_E_IMAGE_TOO_BIG },
	{ "span over the limit", K_PIE, NULL, NULL, l_small, LDR_E_IMAGE_TOO_BIG },
	{ "Linux laid out by vaddr", K_LINUX, NULL, NULL, l_vaddr, LDR_E_IMAGE_TOO_BIG },
	{ "no PT_LOAD", K_PIE, m_no_load, NULL, NULL, LDR_E_NO_LOAD },
	{ "only empty PT_LOADs", K_PIE, m_empty_loads, NULL, NULL, LDR_E_NO_LOAD },
	{ "17 PT_LOADs", K_EXEC, m_many_loads, NULL, NULL, LDR_E_TOO_MANY_PHDRS },
	{ "entry outside", K_PIE, m_entry_outside, NULL, NULL, LDR_E_ENTRY_OUTSIDE },
	{ "entry in data", K_PIE, m_entry_data, NULL, NULL, LDR_E_ENTRY_OUTSIDE },
	{ "entry past p_filesz", K_PIE, m_entry_bss, NULL, NULL, LDR_E_ENTRY_OUTSIDE },
	{ "Linux entry in data", K_LINUX, m_entry_linux_virt_data, NULL, NULL, LDR_E_ENTRY_OUTSIDE },
	{ "W+X data (PIE)", K_PIE, m_wx, NULL, NULL, LDR_E_WX_SEGMENT },
	{ "W+X text (ET_EXEC)", K_EXEC, m_wx_exec, NULL, NULL, LDR_E_WX_SEGMENT },
	{ "Linux W+X not allowed", K_LINUX, NULL, NULL, l_no_wx, LDR_E_WX_SEGMENT },
	{ "text and data share a page", K_EXEC, m_shared_wx, NULL, NULL, LDR_E_WX_PAGE },
	{ "PT_INTERP", K_PIE, m_interp, NULL, NULL, LDR_E_INTERP },
	{ "DT_NEEDED", K_PIE, m_needed, NULL, NULL, LDR_E_DYN_NEEDED },
	{ "DT_TEXTREL", K_PIE, m_textrel, NULL, NULL, LDR_E_DYN_TEXTREL },
	{ "DF_TEXTREL", K_PIE, m_df_textrel, NULL, NULL, LDR_E_DYN_TEXTREL },
	{ "PT_DYNAMIC across segments", K_PIE, m_dyn_straddle, NULL, NULL, LDR_E_DYN_OUTSIDE },
	{ "two PT_DYNAMIC", K_PIE, m_dyn_twice, NULL, NULL, LDR_E_DYN_BAD },
	{ "ET_DYN without PT_DYNAMIC", K_PIE, m_no_dynamic, NULL, NULL, LDR_E_NOT_RELOCATABLE },
	{ "DT_RELASZ 25", K_PIE, m_relasz_odd, NULL, NULL, LDR_E_RELA_ENTSIZE },
	{ "DT_RELAENT 16", K_PIE, m_relaent, NULL, NULL, LDR_E_RELA_ENTSIZE },
	{ "DT_RELAENT missing", K_PIE, m_no_relaent, NULL, NULL, LDR_E_RELA_ENTSIZE },
	{ "DT_RELA outside", K_PIE, m_rela_outside, NULL, NULL, LDR_E_RELA_OUTSIDE },
	{ "DT_RELA across segment end", K_PIE, m_rela_cross, NULL, NULL, LDR_E_RELA_OUTSIDE },
	{ "DT_RELASZ without DT_RELA", K_PIE, m_no_rela_addr, NULL, NULL, LDR_E_DYN_BAD },
	{ "DT_REL table", K_PIE, m_relsz, NULL, NULL, LDR_E_DYN_BAD },
	{ "DT_PLTREL = DT_REL", K_PIE, m_pltrel_rel, NULL, NULL, LDR_E_DYN_BAD },
	{ "DT_PLTRELSZ 30", K_PIE, m_pltrelsz_odd, NULL, NULL, LDR_E_RELA_ENTSIZE },
	{ "DT_RELRENT 16", K_PIE, m_relrent, NULL, NULL, LDR_E_RELR_BAD },
	{ "DT_RELRSZ 12", K_PIE, m_relrsz_odd, NULL, NULL, LDR_E_RELR_BAD },
	{ "DT_SYMENT 16", K_PIE, m_syment, NULL, NULL, LDR_E_RELOC_SYMBOL },
	{ "DT_SYMTAB outside", K_PIE, m_symtab_outside, NULL, NULL, LDR_E_DYN_OUTSIDE },
	{ "DT_STRSZ outside", K_PIE, m_strtab_outside, NULL, NULL, LDR_E_DYN_OUTSIDE },
	{ "SHT_RELA entsize 16", K_EXEC, m_srela_entsize, NULL, NULL, LDR_E_RELA_ENTSIZE },
	{ "SHT_RELA size 30", K_EXEC, m_srela_size_odd, NULL, NULL, LDR_E_RELA_ENTSIZE },
	{ "SHT_REL for .text", K_EXEC, m_srel, NULL, NULL, LDR_E_RELA_ENTSIZE },
	{ "SHT_RELA outside", K_EXEC, m_srela_outside, NULL, NULL, LDR_E_RELA_OUTSIDE },
	{ "SHT_RELA sh_link strtab", K_EXEC, m_srela_link, NULL, NULL, LDR_E_RELOC_SYMBOL },
	{ "SHT_RELA sh_link 99", K_EXEC, m_srela_link_range, NULL, NULL, LDR_E_RELOC_SYMBOL },
	{ "SHT_RELA sh_info 99", K_EXEC, m_srela_info, NULL, NULL, LDR_E_SHDRS_OUTSIDE },
	{ "symtab entsize 16", K_EXEC, m_symtab_entsize, NULL, NULL, LDR_E_RELOC_SYMBOL },
	{ "symtab outside", K_EXEC, m_symtab_sec_outside, NULL, NULL, LDR_E_RELOC_SYMBOL },
	{ "Linux table, first 0 missing", K_LINUX, NULL, p_linux_one_sep_missing, NULL, LDR_E_LINUX_RELOCS },
	{ "Linux table, no separators", K_LINUX, m_linux_no_seps, NULL, NULL, LDR_E_LINUX_RELOCS },
	/* two zero words are padding, not a table: not Linux, so no W+X */
	{ "Linux table, 8 zero bytes", K_LINUX, m_linux_short, NULL, NULL, LDR_E_WX_SEGMENT },
	{ "Linux table, odd tail", K_LINUX, NULL, p_linux_odd_tail, NULL, LDR_E_LINUX_RELOCS },
	{ "Linux table, garbage before", K_LINUX, NULL, p_linux_garbage_pad, NULL, LDR_E_LINUX_RELOCS },
};

TEST(run_parse_cases)
{
	static struct eb e;
	size_t n = sizeof(parse_cases) / sizeof(parse_cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct parse_case *c = &parse_cases[i];
		struct elf_limits lim = elf_default_limits();
		struct elf_image img;
		enum ldr_err err;
		uint8_t *copy;

		build(&e, c->kind);
		if (c->pre)
			c->pre(&e);
		eb_write(&e);
		if (c->post)
			c->post(&e);
		if (c->limits)
			c->limits(&lim);
		/* An exact-size heap copy lets ASan catch any read past EOF. */
		copy = malloc(e.size ? e.size : 1);
		memcpy(copy, e.buf, e.size);
		err = elf_parse(copy, e.size, &lim, &img);
		CHECK(err == c->want, "%s: got %s, want %s", c->name,
		      ldr_strerror(err), ldr_strerror(c->want));
		free(copy);
	}
	printf("test_elf: %zu malformed-image cases\n", n);
}

static enum ldr_err parse_kind(struct eb *e, enum eb_kind kind, struct elf_image *img)
{
	build(e, kind);
	eb_write(e);
	return elf_parse(e->buf, e->size, NULL, img);
}

TEST(test_valid_pie)
{
	static struct eb e;
	struct elf_image img;
	uint64_t off = 0;

	CHECK(parse_kind(&e, K_PIE, &img) == LDR_OK, "PIE parses");
	CHECK_EQ_U64(img.type, ET_DYN, "PIE type");
	CHECK_EQ_U64(img.layout, ELF_LAYOUT_VADDR, "PIE layout");
	CHECK_EQ_U64(img.reloc_kind, ELF_RELOC_DYNAMIC, "PIE reloc kind");
	CHECK_EQ_U64(img.vbase, 0, "PIE vbase");
	CHECK_EQ_U64(img.vend, 0x4000, "PIE vend");
	CHECK_EQ_U64(img.load_size, 0x4000, "PIE load size");
	CHECK_EQ_U64(img.link_vbase, 0, "PIE link vbase");
	CHECK_EQ_U64(img.entry_off, 0x100, "PIE entry offset");
	CHECK_EQ_U64(img.nseg, 2, "PIE segments");
	CHECK_EQ_U64(img.seg[1].load_off, 0x2000, "PIE data load offset");
	CHECK_EQ_U64(img.max_align, 0x1000, "PIE max align");
	CHECK_EQ_U64(img.dyn.rela_off, EB_RELA, "PIE rela offset");
	CHECK_EQ_U64(img.dyn.rela_size, 24, "PIE rela size");
	CHECK_EQ_U64(img.dyn.symtab_off, EB_DYNSYM, "PIE symtab offset");
	CHECK_EQ_U64(img.dyn.symtab_count, (0x1000 - EB_DYNSYM) / 24, "PIE symtab count");
	CHECK(!img.has_wx, "PIE has no W+X");
	CHECK(elf_vaddr_to_file(&img, 0x2810, 8, &off) && off == 0x1810, "vaddr_to_file in data");
	CHECK(!elf_vaddr_to_file(&img, 0x2ffc, 8, &off), "vaddr_to_file across file end");
	CHECK(!elf_vaddr_to_file(&img, 0x3100, 8, &off), "vaddr_to_file in bss");

	/* Trailing bytes after an ET_DYN are ignored. */
	e.buf[e.size++] = 0x55;
	CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_OK, "PIE with a trailing byte");
}

TEST(test_valid_exec)
{
	static struct eb e;
	struct elf_image img;

	CHECK(parse_kind(&e, K_EXEC, &img) == LDR_OK, "ET_EXEC parses");
	CHECK_EQ_U64(img.reloc_kind, ELF_RELOC_SECTIONS, "ET_EXEC reloc kind");
	CHECK_EQ_U64(img.n_rela_sections, 2, "ET_EXEC: .rela.data and .rela.text (not debug)");
	CHECK_EQ_U64(img.vbase, EB_V, "ET_EXEC vbase");
	CHECK_EQ_U64(img.pbase, EB_P, "ET_EXEC pbase");
	CHECK_EQ_U64(img.load_size, 0x3000, "ET_EXEC load size");
	CHECK_EQ_U64(img.entry_off, 0x10, "ET_EXEC entry offset");
	CHECK_EQ_U64(img.elf_end, img.file_size, "ET_EXEC ends with its section headers");

	/* Without section headers there is nothing to relocate with. */
	eb_exec(&e);
	e.eh.e_shnum = 0;
	e.eh.e_shoff = 0;
	e.size = 0x3000;
	eb_write(&e);
	CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_OK, "ET_EXEC without sections");
	CHECK_EQ_U64(img.reloc_kind, ELF_RELOC_NONE, "ET_EXEC without sections: no relocs");
	/* ... and bytes after it are not a Linux table. */
	e.buf[e.size++] = 1;
	CHECK(elf_parse(e.buf, e.size, NULL, &img) == LDR_E_LINUX_RELOCS, "ET_EXEC + 1 byte");
}

/* ---- bytes after the ELF image: padding, a Linux table, or neither ---- */
static void t_strip(struct eb *e)
{
	e->eh.e_shnum = 0;
	e->eh.e_shoff = 0;
	e->size = 0x3000;
	memset(e->buf + 0x3000, 0, EB_SIZE - 0x3000);  /* symtab, strtab, relas */
}
/* virtual = physical: not Linux's link invariant */
static void t_identity(struct eb *e)
{
	for (unsigned i = 0; i < e->nph; i++)
		e->ph[i].p_vaddr = e->ph[i].p_paddr;
	e->eh.e_entry = EB_P + 0x10;
}
static void t_strip_wx(struct eb *e) { t_strip(e); m_wx_exec(e); }
static void t_strip_identity(struct eb *e) { t_strip(e); t_identity(e); }
static void t_table(struct eb *e)
{
	static const uint32_t r64[] = { (uint32_t)(EB_V + 0x1100) };

	eb_linux_table(e, r64, 1, NULL, 0, NULL, 0);
}
static void t_strip_table(struct eb *e) { t_strip(e); t_table(e); }
static void t_identity_table(struct eb *e) { t_strip_identity(e); t_table(e); }
static void t_empty_table(struct eb *e)
{
	e->nlinux = 0;
	eb_linux_table(e, NULL, 0, NULL, 0, NULL, 0);
}
static void t_linux_skew(struct eb *e)
{
	e->ph[0].p_vaddr += 2 * MIB;
	e->ph[1].p_vaddr += 2 * MIB;
	e->ph[3].p_vaddr += 2 * MIB;
}
/* zeros up to the next 4 KiB boundary (a whole page when already there) */
static void t_pad_page(struct eb *e) { e->size = (e->size | 0xfff) + 1; }
static void t_pad12(struct eb *e) { e->size += 12; }
static void t_garbage(struct eb *e)
{
	memcpy(e->buf + e->size, "this is garbage!", 16);
	e->size += 16;
}

struct tail_case {
	const char *name;
	enum eb_kind kind;
	void (*pre)(struct eb *e);
	void (*post)(struct eb *e);
	enum ldr_err want;
	enum elf_reloc_kind want_kind;    /* checked when want == LDR_OK */
	enum elf_layout want_layout;
};

static const struct tail_case tail_cases[] = {
	{ "zero-padded --emit-relocs kernel", K_EXEC, NULL, t_pad_page, LDR_OK,
	  ELF_RELOC_SECTIONS, ELF_LAYOUT_VADDR },
	{ "zero-padded W+X --emit-relocs kernel", K_EXEC, m_wx_exec, t_pad_page,
	  LDR_E_WX_SEGMENT, 0, 0 },
	{ "garbage after an --emit-relocs kernel", K_EXEC, NULL, t_garbage, LDR_OK,
	  ELF_RELOC_SECTIONS, ELF_LAYOUT_VADDR },
	{ "Linux table after an --emit-relocs kernel", K_EXEC, t_table, NULL, LDR_OK,
	  ELF_RELOC_SECTIONS, ELF_LAYOUT_VADDR },
	{ "zero-padded kernel without sections", K_EXEC, t_strip, t_pad_page, LDR_OK,
	  ELF_RELOC_NONE, ELF_LAYOUT_VADDR },
	{ "12 zero bytes after a kernel without sections", K_EXEC, t_strip, t_pad12, LDR_OK,
	  ELF_RELOC_NONE, ELF_LAYOUT_VADDR },
	{ "zero-padded W+X kernel without sections", K_EXEC, t_strip_wx, t_pad_page,
	  LDR_E_WX_SEGMENT, 0, 0 },
	{ "garbage after a kernel without sections", K_EXEC, t_strip, t_garbage,
	  LDR_E_LINUX_RELOCS, 0, 0 },
	{ "Linux table after a Linux-shaped kernel", K_EXEC, t_strip_table, NULL, LDR_OK,
	  ELF_RELOC_LINUX, ELF_LAYOUT_PADDR },
	{ "Linux table after an identity-linked kernel", K_EXEC, t_identity_table, NULL,
	  LDR_E_LINUX_RELOCS, 0, 0 },
	{ "Linux table, virtual != physical + map start", K_LINUX, t_linux_skew, NULL,
	  LDR_E_LINUX_RELOCS, 0, 0 },
	{ "Linux image with an empty table (W+X init)", K_LINUX, t_empty_table, NULL,
	  LDR_E_WX_SEGMENT, 0, 0 },
	{ "zero-padded Linux image without a table (W+X init)", K_LINUX, t_empty_table,
	  t_pad_page, LDR_E_WX_SEGMENT, 0, 0 },
};

TEST(test_trailing_bytes)
{
	static struct eb e;
	size_t n = sizeof(tail_cases) / sizeof(tail_cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct tail_case *c = &tail_cases[i];
		struct elf_image img;
		enum ldr_err err;

		build(&e, c->kind);
		if (c->pre)
			c->pre(&e);
		eb_write(&e);
		if (c->post)
			c->post(&e);
		err = elf_parse(e.buf, e.size, NULL, &img);
		CHECK(err == c->want, "%s: got %s, want %s", c->name, ldr_strerror(err),
		      ldr_strerror(c->want));
		if (err != LDR_OK || c->want != LDR_OK)
			continue;
		CHECK_EQ_U64(img.reloc_kind, c->want_kind, "%s: relocation source", c->name);
		CHECK_EQ_U64(img.layout, c->want_layout, "%s: layout", c->name);
		CHECK(!img.has_wx, "%s: no W+X tolerated", c->name);
	}
}

TEST(test_valid_linux)
{
	static struct eb e;
	struct elf_image img;

	CHECK(parse_kind(&e, K_LINUX, &img) == LDR_OK, "Linux parses");
	CHECK_EQ_U64(img.reloc_kind, ELF_RELOC_LINUX, "Linux reloc kind");
	CHECK_EQ_U64(img.layout, ELF_LAYOUT_PADDR, "Linux layout by paddr");
	CHECK_EQ_U64(img.pbase, EB_P, "Linux pbase");
	CHECK_EQ_U64(img.load_size, 0x5000, "Linux load size");
	CHECK_EQ_U64(img.link_vbase, EB_V, "Linux link vbase");
	CHECK_EQ_U64(img.vbase, 0, "Linux vbase includes the per-cpu vaddr 0");
	CHECK_EQ_U64(img.entry_off, 0, "Linux physical entry");
	CHECK_EQ_U64(img.elf_end, 0x5000, "Linux elf_end");
	CHECK_EQ_U64(img.linux_relocs.off, 0x5000, "Linux table offset");
	CHECK_EQ_U64(img.linux_relocs.len, 24, "Linux table length");
	CHECK_EQ_U64(img.linux_relocs.n64 * 100 + img.linux_relocs.ninv32 * 10 +
		     img.linux_relocs.n32, 111, "Linux table counts");
	CHECK(img.has_wx, "Linux init segment is W+X");
	CHECK_EQ_U64(img.seg[2].vaddr, 0, "per-cpu segment third by paddr");
	CHECK_EQ_U64(img.seg[2].load_off, 0x2000, "per-cpu placed by paddr");
}

TEST(test_load)
{
	static struct eb e;
	static uint8_t dest[0x6000];
	struct elf_image img;
	int ok = 1;

	CHECK(parse_kind(&e, K_PIE, &img) == LDR_OK, "PIE parses for load");
	eb_put64(&e, eb_pie_off(EB_WORDS), 0x1122334455667788ULL);
	memset(dest, 0xaa, sizeof(dest));
	CHECK(elf_load(&img, dest, img.load_size - 1) == LDR_E_INVAL, "load: dest too small");
	CHECK(elf_load(&img, NULL, sizeof(dest)) == LDR_E_INVAL, "load: NULL dest");
	CHECK(elf_load(&img, dest, img.load_size) == LDR_OK, "load PIE");
	CHECK(memcmp(dest, e.buf, 0x1000) == 0, "text copied");
	for (unsigned i = 0x1000; i < 0x2000; i++)
		ok &= dest[i] == 0;
	CHECK(ok, "gap between segments zeroed");
	CHECK(memcmp(dest + 0x2000, e.buf + 0x1000, 0x1000) == 0, "data copied");
	ok = 1;
	for (unsigned i = 0x3000; i < 0x4000; i++)
		ok &= dest[i] == 0;
	CHECK(ok, "bss zeroed");
	CHECK(dest[0x4000] == 0xaa, "nothing written past load_size");

	CHECK(parse_kind(&e, K_LINUX, &img) == LDR_OK, "Linux parses for load");
	memset(e.buf + 0x3000, 0x5c, 0x1000);  /* per-cpu bytes */
	memset(e.buf + 0x4000, 0x6d, 0x1000);  /* init bytes */
	memset(dest, 0xaa, sizeof(dest));
	CHECK(elf_load(&img, dest, sizeof(dest)) == LDR_OK, "load Linux");
	CHECK(dest[0x2000] == 0x5c && dest[0x2fff] == 0x5c, "per-cpu at its physical offset");
	CHECK(dest[0x3000] == 0x6d && dest[0x3fff] == 0x6d, "init at its physical offset");
	CHECK(dest[0x4000] == 0 && dest[0x4fff] == 0, "init bss zeroed");
	CHECK(dest[0x5000] == 0xaa, "Linux: nothing past load_size");
}

/* Every proper prefix of a valid image must be refused (and read in bounds). */
TEST(test_truncation_sweep)
{
	static struct eb e;
	enum eb_kind kinds[] = { K_PIE, K_EXEC, K_LINUX };
	int bad = 0;

	for (unsigned k = 0; k < 3; k++) {
		build(&e, kinds[k]);
		eb_write(&e);
		/*
		 * A Linux image cut inside its table can read as a shorter
		 * valid table (the format has no length or checksum), and cut
		 * right at elf_end it is a plain ET_EXEC: sweep up to elf_end.
		 */
		uint64_t end = kinds[k] == K_LINUX ? 0x5000 : e.size;

		for (uint64_t len = 0; len < end; len++) {
			uint8_t *copy = malloc(len ? len : 1);
			struct elf_image img;

			memcpy(copy, e.buf, len);
			if (elf_parse(copy, len, NULL, &img) == LDR_OK) {
				if (bad++ < 3)
					printf("  prefix %llu of kind %u parsed\n",
					       (unsigned long long)len, k);
			}
			free(copy);
		}
	}
	CHECK(bad == 0, "no truncated image parses");
}

/* Flip header bytes to many values: never crash, never read out of bounds. */
TEST(test_header_flips)
{
	static struct eb e;
	static const uint8_t vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	enum eb_kind kinds[] = { K_PIE, K_EXEC, K_LINUX };
	unsigned ok = 0, runs = 0, load_bad = 0;

	for (unsigned k = 0; k < 3; k++) {
		build(&e, kinds[k]);
		eb_write(&e);
		uint8_t *copy = malloc(e.size);

		for (unsigned pos = 0; pos < 0x200; pos++) {
			for (unsigned v = 0; v < sizeof(vals); v++) {
				struct elf_image img;
				static uint8_t dest[0x6000];

				memcpy(copy, e.buf, e.size);
				copy[pos] = vals[v];
				runs++;
				if (elf_parse(copy, e.size, NULL, &img) != LDR_OK)
					continue;
				ok++;
				if (img.load_size <= sizeof(dest) &&
				    elf_load(&img, dest, sizeof(dest)) != LDR_OK)
					load_bad++;
			}
		}
		free(copy);
	}
	CHECK(runs == 3 * 0x200 * 5 && ok > 0, "flip sweep ran (%u of %u parsed)", ok, runs);
	CHECK(load_bad == 0, "every flipped image that parses also loads");
}
