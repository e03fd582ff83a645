/*
 * elf_build.h - assembles small, valid x86-64 ELF kernels as byte arrays for
 * the ELF, relocation and Linux-table unit tests, so that each test case can
 * start from a good file and break one thing.  Three shapes:
 *
 *   PIE (ET_DYN), vbase 0            ET_EXEC --emit-relocs, higher half
 *   file 0x0000 text R-X  vaddr 0    file 0x1000 .text  R-X  EB_V (or EB_P)
 *        0x0040 phdrs                     0x2000 .data  RW-  EB_V+0x1000
 *        0x0200 .dynsym                   (bss to EB_V+0x3000)
 *        0x02b0 .dynstr                   0x3000 .symtab, 0x3400 .strtab
 *        0x0300 .rela.dyn                 0x3800 .rela.data/.rela.text/
 *        0x0480 .rela.plt                        .rela.debug
 *        0x0500 .relr                     0x3c00 section headers
 *        0x1000 data RW- vaddr 0x2000
 *               (dynamic at 0x2000, words at 0x2800, bss to 0x4000)
 *
 *   Linux-like ET_EXEC (layout by physical address, table appended)
 *   file 0x1000 text  R-X vaddr EB_V        paddr 16 MiB
 *        0x2000 data  RW- vaddr EB_V+0x1000 paddr 16 MiB+0x1000
 *        0x3000 percpu RW- vaddr 0          paddr 16 MiB+0x2000
 *        0x4000 init  RWX vaddr EB_V+0x3000 paddr 16 MiB+0x3000 (memsz 0x2000)
 *        0x5000 [0][64-bit...][0][inverse 32...][0][32-bit...]
 */
#ifndef ELF_BUILD_H
#define ELF_BUILD_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

#ifndef DT_RELRSZ
#define DT_RELRSZ 35
#endif
#ifndef DT_RELR
#define DT_RELR 36
#endif
#ifndef DT_RELRENT
#define DT_RELRENT 37
#endif

#define EB_SIZE  0x8000
#define EB_V     0xffffffff81000000ULL
#define EB_P     0x1000000ULL

/* PIE offsets */
#define EB_DYNSYM  0x200
#define EB_DYNSTR  0x2b0
#define EB_RELA    0x300
#define EB_JMPREL  0x480
#define EB_RELR    0x500
#define EB_DYNAMIC 0x1000   /* file; vaddr 0x2000 */
#define EB_WORDS   0x2800   /* vaddr of the relocated words */

/* ET_EXEC sections */
enum {
	EB_S_NULL, EB_S_TEXT, EB_S_DATA, EB_S_BSS, EB_S_SYMTAB, EB_S_STRTAB,
	EB_S_RELA_DATA, EB_S_RELA_TEXT, EB_S_DEBUG, EB_S_RELA_DEBUG, EB_S_COUNT
};
#define EB_SYMTAB_OFF 0x3000
#define EB_STRTAB_OFF 0x3400
#define EB_RELA_OFF   0x3800  /* .rela.data; .rela.text at +0x100; debug +0x200 */
#define EB_SHDR_OFF   0x3c00

/* symbol indices, same for PIE .dynsym and ET_EXEC .symtab */
enum { EB_SYM_NULL, EB_SYM_DATA, EB_SYM_ABS, EB_SYM_WEAK, EB_SYM_UNDEF,
       EB_SYM_TEXT, EB_SYM_DEBUG, EB_NSYM };

struct eb {
	uint8_t buf[EB_SIZE];
	uint64_t size;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[24];
	unsigned nph;
	Elf64_Dyn dyn[24];
	unsigned ndyn;          /* entries before the final DT_NULL */
	Elf64_Shdr sh[EB_S_COUNT];
	unsigned nrela, njmprel, nrelr;
	unsigned nsrela[3];     /* .rela.data, .rela.text, .rela.debug */
	uint32_t linux_tbl[64]; /* Linux table, file order */
	unsigned nlinux;
};

/* Writes outside the buffer (a test moved a table far away) are dropped. */
static inline void eb_put(struct eb *e, uint64_t off, const void *p, size_t n)
{
	if (off <= EB_SIZE && EB_SIZE - off >= n)
		memcpy(e->buf + off, p, n);
}

static inline void eb_put64(struct eb *e, uint64_t off, uint64_t v)
{
	eb_put(e, off, &v, 8);
}

static inline void eb_put32(struct eb *e, uint64_t off, uint32_t v)
{
	eb_put(e, off, &v, 4);
}

static inline Elf64_Dyn *eb_find_dyn(struct eb *e, int64_t tag)
{
	for (unsigned i = 0; i < e->ndyn; i++)
		if (e->dyn[i].d_tag == tag)
			return &e->dyn[i];
	return NULL;
}

/* Set (or append) a dynamic entry. */
static inline void eb_set_dyn(struct eb *e, int64_t tag, uint64_t val)
{
	Elf64_Dyn *d = eb_find_dyn(e, tag);

	if (!d)
		d = &e->dyn[e->ndyn++];
	d->d_tag = tag;
	d->d_un.d_val = val;
}

static inline void eb_del_dyn(struct eb *e, int64_t tag)
{
	Elf64_Dyn *d = eb_find_dyn(e, tag);

	if (d) {
		*d = e->dyn[e->ndyn - 1];
		e->ndyn--;
	}
}

static inline void eb_header(struct eb *e, uint16_t type, uint64_t entry)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->eh.e_ident, ELFMAG, SELFMAG);
	e->eh.e_ident[EI_CLASS] = ELFCLASS64;
	e->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	e->eh.e_ident[EI_VERSION] = EV_CURRENT;
	e->eh.e_type = type;
	e->eh.e_machine = EM_X86_64;
	e->eh.e_version = EV_CURRENT;
	e->eh.e_entry = entry;
	e->eh.e_phoff = sizeof(Elf64_Ehdr);
	e->eh.e_ehsize = sizeof(Elf64_Ehdr);
	e->eh.e_phentsize = sizeof(Elf64_Phdr);
}

static inline Elf64_Phdr *eb_phdr(struct eb *e, uint32_t type, uint32_t flags,
			   uint64_t off, uint64_t vaddr, uint64_t paddr,
			   uint64_t filesz, uint64_t memsz, uint64_t align)
{
	Elf64_Phdr *p = &e->ph[e->nph++];

	*p = (Elf64_Phdr){ .p_type = type, .p_flags = flags, .p_offset = off,
			   .p_vaddr = vaddr, .p_paddr = paddr, .p_filesz = filesz,
			   .p_memsz = memsz, .p_align = align };
	return p;
}

static inline void eb_sym(struct eb *e, uint64_t tab, unsigned i, uint32_t name,
		   unsigned char bind, unsigned char type, uint16_t shndx, uint64_t value)
{
	Elf64_Sym s = { .st_name = name, .st_info = ELF64_ST_INFO(bind, type),
			.st_shndx = shndx, .st_value = value };

	eb_put(e, tab + (uint64_t)i * sizeof(s), &s, sizeof(s));
}

static const char eb_strtab[] = "\0data_sym\0abs_sym\0weak_und\0undef_sym\0text_sym\0dbg_sym";
/* offsets of the names above */
enum { EB_N_DATA = 1, EB_N_ABS = 10, EB_N_WEAK = 18, EB_N_UNDEF = 27,
       EB_N_TEXT = 37, EB_N_DEBUG = 46 };

static inline void eb_symbols(struct eb *e, uint64_t tab, uint64_t str,
		       uint64_t data_addr, uint64_t text_addr,
		       uint16_t text_sec, uint16_t data_sec, uint16_t dbg_sec)
{
	eb_sym(e, tab, EB_SYM_DATA, EB_N_DATA, STB_GLOBAL, STT_OBJECT, data_sec, data_addr);
	eb_sym(e, tab, EB_SYM_ABS, EB_N_ABS, STB_GLOBAL, STT_NOTYPE, SHN_ABS, 0x5000);
	eb_sym(e, tab, EB_SYM_WEAK, EB_N_WEAK, STB_WEAK, STT_NOTYPE, SHN_UNDEF, 0);
	eb_sym(e, tab, EB_SYM_UNDEF, EB_N_UNDEF, STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0);
	eb_sym(e, tab, EB_SYM_TEXT, EB_N_TEXT, STB_GLOBAL, STT_FUNC, text_sec, text_addr);
	eb_sym(e, tab, EB_SYM_DEBUG, EB_N_DEBUG, STB_LOCAL, STT_NOTYPE, dbg_sec, 0);
	eb_put(e, str, eb_strtab, sizeof(eb_strtab));
}

/* A PIE with an empty RELA/JMPREL/RELR set; see eb_rela() to add some. */
static inline void eb_pie(struct eb *e)
{
	eb_header(e, ET_DYN, 0x100);
	eb_phdr(e, PT_LOAD, PF_R | PF_X, 0, 0, 0, 0x1000, 0x1000, 0x1000);
	eb_phdr(e, PT_LOAD, PF_R | PF_W, 0x1000, 0x2000, 0x2000, 0x1000, 0x2000, 0x1000);
	eb_phdr(e, PT_DYNAMIC, PF_R | PF_W, EB_DYNAMIC, 0x2000, 0x2000, 0, 0, 8);
	eb_phdr(e, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0, 16);
	e->size = 0x2000;
	eb_symbols(e, EB_DYNSYM, EB_DYNSTR, EB_WORDS, 0x100, 1, 1, 1);
	eb_set_dyn(e, DT_SYMTAB, EB_DYNSYM);
	eb_set_dyn(e, DT_SYMENT, sizeof(Elf64_Sym));
	eb_set_dyn(e, DT_STRTAB, EB_DYNSTR);
	eb_set_dyn(e, DT_STRSZ, sizeof(eb_strtab));
	eb_set_dyn(e, DT_RELA, EB_RELA);
	eb_set_dyn(e, DT_RELASZ, 0);
	eb_set_dyn(e, DT_RELAENT, sizeof(Elf64_Rela));
	eb_set_dyn(e, DT_FLAGS_1, DF_1_PIE);
}

/* Append a relocation to the PIE's .rela.dyn (plt != 0: .rela.plt). */
static inline void eb_rela(struct eb *e, int plt, uint64_t where, uint32_t type,
		    uint32_t sym, int64_t addend)
{
	Elf64_Rela r = { .r_offset = where, .r_info = ELF64_R_INFO(sym, type),
			 .r_addend = addend };

	if (plt) {
		eb_put(e, EB_JMPREL + e->njmprel++ * sizeof(r), &r, sizeof(r));
		eb_set_dyn(e, DT_JMPREL, EB_JMPREL);
		eb_set_dyn(e, DT_PLTRELSZ, e->njmprel * sizeof(r));
		eb_set_dyn(e, DT_PLTREL, DT_RELA);
	} else {
		eb_put(e, EB_RELA + e->nrela++ * sizeof(r), &r, sizeof(r));
		eb_set_dyn(e, DT_RELASZ, e->nrela * sizeof(r));
	}
}

static inline void eb_relr(struct eb *e, uint64_t word)
{
	eb_put64(e, EB_RELR + e->nrelr++ * 8, word);
	eb_set_dyn(e, DT_RELR, EB_RELR);
	eb_set_dyn(e, DT_RELRSZ, e->nrelr * 8);
	eb_set_dyn(e, DT_RELRENT, 8);
}

/* PIE: file offset of the data-segment word at vaddr v. */
static inline uint64_t eb_pie_off(uint64_t v)
{
	return v - 0x1000;
}

static inline void eb_shdr(struct eb *e, unsigned i, uint32_t type, uint64_t flags,
		    uint64_t addr, uint64_t off, uint64_t size, uint32_t link,
		    uint32_t info, uint64_t entsize)
{
	e->sh[i] = (Elf64_Shdr){ .sh_type = type, .sh_flags = flags,
				 .sh_addr = addr, .sh_offset = off, .sh_size = size,
				 .sh_link = link, .sh_info = info,
				 .sh_addralign = 8, .sh_entsize = entsize };
}

/*
 * ET_EXEC linked at v (text; data at v + 0x1000), loaded at EB_P, with
 * --emit-relocs sections; add relocs with eb_srela().  eb_exec(): v = EB_V
 * (higher half); v = EB_P gives an identity-linked kernel.
 */
static inline void eb_exec_at(struct eb *e, uint64_t v)
{
	eb_header(e, ET_EXEC, v + 0x10);
	eb_phdr(e, PT_LOAD, PF_R | PF_X, 0x1000, v, EB_P, 0x1000, 0x1000, 0x1000);
	eb_phdr(e, PT_LOAD, PF_R | PF_W, 0x2000, v + 0x1000, EB_P + 0x1000,
		0x1000, 0x2000, 0x1000);
	e->size = EB_SHDR_OFF + EB_S_COUNT * sizeof(Elf64_Shdr);
	e->eh.e_shoff = EB_SHDR_OFF;
	e->eh.e_shnum = EB_S_COUNT;
	e->eh.e_shentsize = sizeof(Elf64_Shdr);
	eb_shdr(e, EB_S_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, v, 0x1000,
		0x1000, 0, 0, 0);
	eb_shdr(e, EB_S_DATA, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, v + 0x1000,
		0x2000, 0x1000, 0, 0, 0);
	eb_shdr(e, EB_S_BSS, SHT_NOBITS, SHF_ALLOC | SHF_WRITE, v + 0x2000,
		0x3000, 0x1000, 0, 0, 0);
	eb_shdr(e, EB_S_SYMTAB, SHT_SYMTAB, 0, 0, EB_SYMTAB_OFF,
		EB_NSYM * sizeof(Elf64_Sym), EB_S_STRTAB, 1, sizeof(Elf64_Sym));
	eb_shdr(e, EB_S_STRTAB, SHT_STRTAB, 0, 0, EB_STRTAB_OFF,
		sizeof(eb_strtab), 0, 0, 0);
	eb_shdr(e, EB_S_RELA_DATA, SHT_RELA, SHF_INFO_LINK, 0, EB_RELA_OFF, 0,
		EB_S_SYMTAB, EB_S_DATA, sizeof(Elf64_Rela));
	eb_shdr(e, EB_S_RELA_TEXT, SHT_RELA, SHF_INFO_LINK, 0, EB_RELA_OFF + 0x100, 0,
		EB_S_SYMTAB, EB_S_TEXT, sizeof(Elf64_Rela));
	eb_shdr(e, EB_S_DEBUG, SHT_PROGBITS, 0, 0, 0x3b00, 0x100, 0, 0, 0);
	eb_shdr(e, EB_S_RELA_DEBUG, SHT_RELA, SHF_INFO_LINK, 0, EB_RELA_OFF + 0x200, 0,
		EB_S_SYMTAB, EB_S_DEBUG, sizeof(Elf64_Rela));
	eb_symbols(e, EB_SYMTAB_OFF, EB_STRTAB_OFF, v + 0x1000, v + 0x10,
		   EB_S_TEXT, EB_S_DATA, EB_S_DEBUG);
}

static inline void eb_exec(struct eb *e)
{
	eb_exec_at(e, EB_V);
}

/* ET_EXEC: file offset of the byte at link vaddr v (text or data). */
static inline uint64_t eb_exec_off(uint64_t v)
{
	return v - EB_V + 0x1000;
}

/* Append to .rela.data (sec 0), .rela.text (1) or .rela.debug (2). */
static inline void eb_srela(struct eb *e, unsigned sec, uint64_t where, uint32_t type,
		     uint32_t sym, int64_t addend)
{
	static const unsigned idx[3] = { EB_S_RELA_DATA, EB_S_RELA_TEXT, EB_S_RELA_DEBUG };
	Elf64_Rela r = { .r_offset = where, .r_info = ELF64_R_INFO(sym, type),
			 .r_addend = addend };
	Elf64_Shdr *sh = &e->sh[idx[sec]];

	eb_put(e, sh->sh_offset + e->nsrela[sec]++ * sizeof(r), &r, sizeof(r));
	sh->sh_size = e->nsrela[sec] * sizeof(r);
}

/* Linux-like vmlinux.bin; the table is added with eb_linux_word(). */
static inline void eb_linux(struct eb *e)
{
	eb_header(e, ET_EXEC, EB_P);
	eb_phdr(e, PT_LOAD, PF_R | PF_X, 0x1000, EB_V, EB_P, 0x1000, 0x1000, 0x1000);
	eb_phdr(e, PT_LOAD, PF_R | PF_W, 0x2000, EB_V + 0x1000, EB_P + 0x1000,
		0x1000, 0x1000, 0x1000);
	eb_phdr(e, PT_LOAD, PF_R | PF_W, 0x3000, 0, EB_P + 0x2000, 0x1000, 0x1000, 0x1000);
	eb_phdr(e, PT_LOAD, PF_R | PF_W | PF_X, 0x4000, EB_V + 0x3000, EB_P + 0x3000,
		0x1000, 0x2000, 0x1000);
	eb_phdr(e, PT_NOTE, 0, 0x1800, EB_V + 0x800, EB_P + 0x800, 0x20, 0x20, 4);
	e->size = 0x5000;
}

/* Append one 32-bit word to the Linux table (file order). */
static inline void eb_linux_word(struct eb *e, uint32_t w)
{
	e->linux_tbl[e->nlinux++] = w;
}

/* The usual Linux table: [0][64...][0][inv32...][0][32...]. */
static inline void eb_linux_table(struct eb *e, const uint32_t *r64, unsigned n64,
			   const uint32_t *rinv, unsigned ninv,
			   const uint32_t *r32, unsigned n32)
{
	eb_linux_word(e, 0);
	for (unsigned i = 0; i < n64; i++)
		eb_linux_word(e, r64[i]);
	eb_linux_word(e, 0);
	for (unsigned i = 0; i < ninv; i++)
		eb_linux_word(e, rinv[i]);
	eb_linux_word(e, 0);
	for (unsigned i = 0; i < n32; i++)
		eb_linux_word(e, r32[i]);
}

/* Serialise headers, dynamic section, section headers and the Linux table. */
static inline void eb_write(struct eb *e)
{
	Elf64_Dyn null = { .d_tag = DT_NULL };

	e->eh.e_phnum = (uint16_t)e->nph;
	eb_put(e, 0, &e->eh, sizeof(e->eh));
	for (unsigned i = 0; i < e->nph; i++) {
		if (e->ph[i].p_type == PT_DYNAMIC && e->ph[i].p_filesz == 0)
			e->ph[i].p_filesz = e->ph[i].p_memsz = (e->ndyn + 1) * sizeof(Elf64_Dyn);
		if (e->eh.e_phoff < EB_SIZE)
			eb_put(e, e->eh.e_phoff + i * sizeof(Elf64_Phdr), &e->ph[i],
			       sizeof(Elf64_Phdr));
	}
	if (e->ndyn) {
		eb_put(e, EB_DYNAMIC, e->dyn, e->ndyn * sizeof(Elf64_Dyn));
		eb_put(e, EB_DYNAMIC + e->ndyn * sizeof(Elf64_Dyn), &null, sizeof(null));
	}
	if (e->eh.e_shnum == EB_S_COUNT && e->eh.e_shoff == EB_SHDR_OFF)
		eb_put(e, EB_SHDR_OFF, e->sh, sizeof(e->sh));
	for (unsigned i = 0; i < e->nlinux; i++)
		eb_put32(e, e->size + i * 4, e->linux_tbl[i]);
	e->size += e->nlinux * 4;
}

#endif
