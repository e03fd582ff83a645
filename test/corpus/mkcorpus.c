/*
 * mkcorpus.c - writes the corpus of malformed kernels: each file is one
 * real payload build (or a small synthetic ELF, or plain bytes) broken in
 * one way, named "<case>.<LDR_E_...>" after the first error the loader's
 * pipeline must report for it.  A few "ok-*.LDR_OK" controls prove that
 * the checker accepts good kernels.  Compressed kernels come in every
 * format the loader decodes (gzip, zlib, xz, LZ4 legacy, zstd) and those it
 * refuses by name; bzImages are built here around a payload, each with one
 * field of the setup header or the payload broken.  check_corpus.c reads
 * the directory.
 *
 * usage: mkcorpus OUTDIR kernel-pie.elf kernel-exec.elf
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "decomp_fixture.h"


struct blob {
	uint8_t *p;
	size_t n;
};

static const char *out_dir;
static int n_cases, n_ok;

static void die(const char *what)
{
	fprintf(stderr, "mkcorpus: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void fail(const char *what)
{
	fprintf(stderr, "mkcorpus: %s\n", what);
	exit(2);
}

static struct blob read_file(const char *path)
{
	struct blob b = { NULL, 0 };
	FILE *f = fopen(path, "rb");
	long len;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		die(path);
	b.n = (size_t)len;
	b.p = malloc(b.n + 1);
	if (!b.p || fread(b.p, 1, b.n, f) != b.n)
		die(path);
	fclose(f);
	return b;
}

static struct blob dup_blob(const struct blob *b, size_t extra)
{
	struct blob c = { malloc(b->n + extra + 1), b->n };

	if (!c.p)
		die("malloc");
	memcpy(c.p, b->p, b->n);
	memset(c.p + b->n, 0, extra + 1);
	return c;
}

/* Write the case and free its bytes; names must be unique. */
static void emit(const char *name, const char *err, struct blob *b)
{
	char path[4096];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%s", out_dir, name, err);
	if (stat(path, &st) == 0) {
		fprintf(stderr, "mkcorpus: duplicate case %s\n", name);
		exit(2);
	}
	f = fopen(path, "wb");
	if (!f || (b->n && fwrite(b->p, 1, b->n, f) != b->n) || fclose(f) != 0)
		die(path);
	if (strcmp(err, "LDR_OK") == 0)
		n_ok++;
	else
		n_cases++;
	free(b->p);
	b->p = NULL;
}

/* ------------------------------------------------------------ ELF edits */

static void get_eh(const struct blob *b, Elf64_Ehdr *e) { memcpy(e, b->p, sizeof(*e)); }
static void put_eh(struct blob *b, const Elf64_Ehdr *e) { memcpy(b->p, e, sizeof(*e)); }

static size_t ph_off(const struct blob *b, unsigned i)
{
	Elf64_Ehdr e;

	get_eh(b, &e);
	return (size_t)e.e_phoff + (size_t)i * sizeof(Elf64_Phdr);
}

static void get_ph(const struct blob *b, unsigned i, Elf64_Phdr *ph)
{
	memcpy(ph, b->p + ph_off(b, i), sizeof(*ph));
}

static void put_ph(struct blob *b, unsigned i, const Elf64_Phdr *ph)
{
	memcpy(b->p + ph_off(b, i), ph, sizeof(*ph));
}

#define EDIT_EH(b, stmt)                          \
	do {                                      \
		Elf64_Ehdr e;                     \
		get_eh((b), &e);                  \
		stmt;                             \
		put_eh((b), &e);                  \
	} while (0)

#define EDIT_PH(b, i, stmt)                       \
	do {                                      \
		Elf64_Phdr ph;                    \
		get_ph((b), (i), &ph);            \
		stmt;                             \
		put_ph((b), (i), &ph);            \
	} while (0)

/* Index of the n-th program header of type, with all of flags set. */
static unsigned find_ph(const struct blob *b, uint32_t type, uint32_t flags, unsigned nth)
{
	Elf64_Ehdr e;

	get_eh(b, &e);
	for (unsigned i = 0; i < e.e_phnum; i++) {
		Elf64_Phdr ph;

		get_ph(b, i, &ph);
		if (ph.p_type == type && (ph.p_flags & flags) == flags && nth-- == 0)
			return i;
	}
	fail("payload lacks an expected program header");
	return 0;
}

/* File offset of the dynamic entry with tag (first one). */
static size_t find_dyn(const struct blob *b, int64_t tag)
{
	Elf64_Phdr ph;

	get_ph(b, find_ph(b, PT_DYNAMIC, 0, 0), &ph);
	for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= ph.p_filesz; o += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;

		memcpy(&d, b->p + ph.p_offset + o, sizeof(d));
		if (d.d_tag == tag)
			return (size_t)(ph.p_offset + o);
		if (d.d_tag == DT_NULL)
			break;
	}
	fail("payload lacks an expected dynamic tag");
	return 0;
}

static void put_dyn(struct blob *b, size_t off, int64_t tag, uint64_t val)
{
	Elf64_Dyn d = { .d_tag = tag, .d_un.d_val = val };

	memcpy(b->p + off, &d, sizeof(d));
}

/* Section header index by name. */
static unsigned find_sh(const struct blob *b, const char *name)
{
	Elf64_Ehdr e;
	Elf64_Shdr str;

	get_eh(b, &e);
	memcpy(&str, b->p + e.e_shoff + (size_t)e.e_shstrndx * sizeof(str), sizeof(str));
	for (unsigned i = 1; i < e.e_shnum; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, b->p + e.e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
		if (strcmp((const char *)b->p + str.sh_offset + sh.sh_name, name) == 0)
			return i;
	}
	fail("payload lacks an expected section");
	return 0;
}

static size_t sh_off(const struct blob *b, unsigned i)
{
	Elf64_Ehdr e;

	get_eh(b, &e);
	return (size_t)e.e_shoff + (size_t)i * sizeof(Elf64_Shdr);
}

#define EDIT_SH(b, i, stmt)                                         \
	do {                                                        \
		Elf64_Shdr sh;                                      \
		memcpy(&sh, (b)->p + sh_off((b), (i)), sizeof(sh)); \
		stmt;                                               \
		memcpy((b)->p + sh_off((b), (i)), &sh, sizeof(sh)); \
	} while (0)

/* File offset of the first relocation of a RELA table (section or dynamic). */
static size_t first_rela_of_section(const struct blob *b, const char *name)
{
	Elf64_Shdr sh;

	memcpy(&sh, b->p + sh_off(b, find_sh(b, name)), sizeof(sh));
	return (size_t)sh.sh_offset;
}

static void edit_rela(struct blob *b, size_t off, int set_off, uint64_t r_offset,
		      int set_info, uint64_t r_info)
{
	Elf64_Rela r;

	memcpy(&r, b->p + off, sizeof(r));
	if (set_off)
		r.r_offset = r_offset;
	if (set_info)
		r.r_info = r_info;
	memcpy(b->p + off, &r, sizeof(r));
}

/* PIE: the file offset of .rela.dyn's first entry, through DT_RELA. */
static size_t pie_rela0(const struct blob *pie)
{
	Elf64_Dyn d;
	Elf64_Phdr ph;
	unsigned i = find_ph(pie, PT_LOAD, 0, 1); /* the read-only data segment */

	memcpy(&d, pie->p + find_dyn(pie, DT_RELA), sizeof(d));
	get_ph(pie, i, &ph);
	if (d.d_un.d_ptr < ph.p_vaddr || d.d_un.d_ptr - ph.p_vaddr >= ph.p_filesz)
		fail("DT_RELA is not in the second PT_LOAD");
	return (size_t)(ph.p_offset + (d.d_un.d_ptr - ph.p_vaddr));
}

/* ------------------------------------------------------------ synthetic */

/*
 * A small ET_EXEC made here: one R+X PT_LOAD at 16 MiB holding a `hlt; jmp`
 * loop, no sections, no relocations (so it loads only at its link address).
 * nph program headers, the extra ones PT_NULL.
 *
 *   0x000 ELF header | 0x040 phdrs ... | 0x1000 code (16 bytes)
 */
static struct blob mini_exec(unsigned nph)
{
	size_t phend = sizeof(Elf64_Ehdr) + (size_t)nph * sizeof(Elf64_Phdr);
	size_t code = phend > 0x1000 ? (phend + 0xfff) & ~(size_t)0xfff : 0x1000;
	struct blob b = { calloc(1, code + 16 + 1), code + 16 };
	Elf64_Ehdr e = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			     EV_CURRENT },
		.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_entry = 16 * MIB, .e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = (uint16_t)nph,
	};
	Elf64_Phdr ph = {
		.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = code,
		.p_vaddr = 16 * MIB, .p_paddr = 16 * MIB, .p_filesz = 16, .p_memsz = 16,
		.p_align = 0x1000,
	};
	static const uint8_t loop[16] = { 0xf4, 0xeb, 0xfd };

	if (!b.p)
		die("calloc");
	put_eh(&b, &e);
	if (nph)
		put_ph(&b, 0, &ph);
	memcpy(b.p + code, loop, sizeof(loop));
	return b;
}

static struct blob text_blob(const char *s)
{
	struct blob b = { malloc(strlen(s) + 1), strlen(s) };

	memcpy(b.p, s, b.n + 1);
	return b;
}

/* ------------------------------------------------------------ compression */

/* the streams of test/unit/decomp_fixture.h as blobs */
static struct blob of_buf(struct buf b)
{
	return (struct blob){ b.p, b.len };
}

static struct blob gz(const struct blob *b) { return of_buf(fx_deflate(b->p, b->n, 31)); }
static struct blob zl(const struct blob *b) { return of_buf(fx_deflate(b->p, b->n, 15)); }

/* nzero zero bytes, deflated a chunk at a time (no big buffer). */
static struct blob zero_bomb(uint64_t nzero)
{
	static const uint8_t zeros[1 << 16];
	const size_t cap = 4 * MIB;
	struct blob b = { malloc(cap), 0 };
	uint64_t left = nzero;
	z_stream zs;
	int flush;

	memset(&zs, 0, sizeof(zs));
	if (!b.p || deflateInit2(&zs, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		fail("bomb");
	do {
		uInt chunk = left > sizeof(zeros) ? (uInt)sizeof(zeros) : (uInt)left;

		left -= chunk;
		flush = left ? Z_NO_FLUSH : Z_FINISH;
		zs.next_in = (Bytef *)zeros;
		zs.avail_in = chunk;
		do {
			zs.next_out = b.p + zs.total_out;
			zs.avail_out = (uInt)(cap - zs.total_out);
			if (!zs.avail_out)
				fail("bomb output");
			deflate(&zs, flush);
		} while (zs.avail_in);
	} while (flush != Z_FINISH);
	b.n = zs.total_out;
	deflateEnd(&zs);
	return b;
}

/* ------------------------------------------------------------ the cases */

static void header_cases(const struct blob *pie)
{
	struct blob c;
	static const size_t cuts[] = { 1, 10, 63 };

	c = (struct blob){ malloc(1), 0 };
	emit("empty", "LDR_E_EMPTY_FILE", &c);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		char name[32];

		c = dup_blob(pie, 0);
		c.n = cuts[i];
		snprintf(name, sizeof(name), "trunc-ehdr-%zu", cuts[i]);
		emit(name, "LDR_E_TRUNCATED", &c);
	}
	c = text_blob("MZ");
	emit("short-mz", "LDR_E_BAD_MAGIC", &c);
	c = text_blob("#!/bin/sh\necho this is not a kernel\n");
	emit("text-file", "LDR_E_BAD_MAGIC", &c);
	c = dup_blob(pie, 0);
	c.p[1] = 'X';
	emit("bad-magic", "LDR_E_BAD_MAGIC", &c);
	c = dup_blob(pie, 0);
	memset(c.p, 0, 4);
	emit("bad-magic-zeros", "LDR_E_BAD_MAGIC", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_ident[EI_CLASS] = ELFCLASS32);
	emit("bad-class-32", "LDR_E_BAD_CLASS", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_ident[EI_CLASS] = 7);
	emit("bad-class-7", "LDR_E_BAD_CLASS", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_ident[EI_DATA] = ELFDATA2MSB);
	emit("bad-data-msb", "LDR_E_BAD_DATA", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_ident[EI_VERSION] = 2);
	emit("bad-version-ident", "LDR_E_BAD_VERSION", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_version = 0);
	emit("bad-version-field", "LDR_E_BAD_VERSION", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_machine = EM_386);
	emit("bad-machine-i386", "LDR_E_BAD_MACHINE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_machine = EM_AARCH64);
	emit("bad-machine-aarch64", "LDR_E_BAD_MACHINE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_type = ET_REL);
	emit("bad-type-rel", "LDR_E_BAD_TYPE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_type = ET_CORE);
	emit("bad-type-core", "LDR_E_BAD_TYPE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_ehsize = 52);
	emit("bad-ehsize", "LDR_E_BAD_EHSIZE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_phnum = PN_XNUM);
	emit("phnum-65535", "LDR_E_TOO_MANY_PHDRS", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_phnum = 0);
	emit("phnum-0", "LDR_E_NO_LOAD", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_phentsize = 32);
	emit("phentsize-32", "LDR_E_BAD_PHENTSIZE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_phentsize = 64);
	emit("phentsize-64", "LDR_E_BAD_PHENTSIZE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_phoff = pie->n);
	emit("phoff-past-end", "LDR_E_PHDRS_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_phoff = pie->n - 100);
	emit("phoff-straddles-end", "LDR_E_PHDRS_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_phoff = UINT64_MAX - 0x20);
	emit("phoff-wraps", "LDR_E_PHDRS_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	c.n = 64 + 2 * sizeof(Elf64_Phdr);
	emit("trunc-phdrs", "LDR_E_PHDRS_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_shentsize = 40);
	emit("shentsize-40", "LDR_E_BAD_SHENTSIZE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_shoff = pie->n - 64);
	emit("shoff-past-end", "LDR_E_SHDRS_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_shnum = 0xffff);
	emit("shnum-65535", "LDR_E_SHDRS_OUTSIDE", &c);
}

static void segment_cases(const struct blob *pie)
{
	unsigned text = find_ph(pie, PT_LOAD, PF_X, 0);
	unsigned ro = find_ph(pie, PT_LOAD, 0, 1);
	unsigned rw = find_ph(pie, PT_LOAD, PF_W, 0);
	unsigned dyn = find_ph(pie, PT_DYNAMIC, 0, 0);
	struct blob c;

	c = dup_blob(pie, 0);
	EDIT_PH(&c, rw, ph.p_filesz = pie->n - ph.p_offset + 1);
	emit("seg-past-eof", "LDR_E_SEG_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	c.n = 0x1800; /* inside the text segment's file bytes */
	emit("trunc-inside-text", "LDR_E_SEG_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, ro, ph.p_offset = UINT64_MAX - 0xfff; ph.p_vaddr = 0x3000);
	emit("seg-offset-wraps", "LDR_E_SEG_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, text, ph.p_memsz = ph.p_filesz - 1);
	emit("filesz-gt-memsz", "LDR_E_SEG_FILESZ", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, ro, ph.p_align = 0x3000);
	emit("align-not-pow2", "LDR_E_SEG_ALIGN", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, ro, ph.p_vaddr += 0x10; ph.p_paddr += 0x10);
	emit("align-offset-mismatch", "LDR_E_SEG_ALIGN", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, rw, ph.p_vaddr = UINT64_MAX - 0xfff - 0x1000 + (ph.p_offset & 0xfff);
		ph.p_paddr = ph.p_vaddr);
	emit("seg-wraps", "LDR_E_SEG_WRAP", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, ro, ph.p_vaddr = 0x2000; ph.p_paddr = 0x2000);
	emit("seg-overlap", "LDR_E_SEG_OVERLAP", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, rw, ph.p_memsz = 2ULL * 1024 * MIB);
	emit("image-2gib", "LDR_E_IMAGE_TOO_BIG", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, text, ph.p_flags |= PF_W);
	emit("wx-text", "LDR_E_WX_SEGMENT", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, rw, ph.p_flags |= PF_X);
	emit("wx-data", "LDR_E_WX_SEGMENT", &c);
	c = dup_blob(pie, 0);
	EDIT_EH(&c, e.e_entry = 0x7fff0000);
	emit("entry-outside", "LDR_E_ENTRY_OUTSIDE", &c);
	{
		Elf64_Phdr rph;

		get_ph(pie, ro, &rph);
		c = dup_blob(pie, 0);
		EDIT_EH(&c, e.e_entry = rph.p_vaddr + 0x10);
		emit("entry-in-rodata", "LDR_E_ENTRY_OUTSIDE", &c);
	}
	c = dup_blob(pie, 0);
	EDIT_PH(&c, text, ph.p_flags &= ~(uint32_t)PF_X);
	emit("no-exec-segment", "LDR_E_ENTRY_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, dyn, ph.p_type = PT_INTERP);
	emit("pt-interp", "LDR_E_INTERP", &c);
	c = dup_blob(pie, 0);
	for (unsigned i = 0; i < 3; i++)
		EDIT_PH(&c, find_ph(&c, PT_LOAD, 0, 0), ph.p_type = PT_NOTE);
	emit("no-pt-load", "LDR_E_NO_LOAD", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, dyn, ph.p_type = PT_NULL);
	emit("pie-no-dynamic", "LDR_E_NOT_RELOCATABLE", &c);
}

static void dynamic_cases(const struct blob *pie)
{
	unsigned dyn = find_ph(pie, PT_DYNAMIC, 0, 0);
	size_t debug = find_dyn(pie, DT_DEBUG), rela0 = pie_rela0(pie);
	struct blob c;

	c = dup_blob(pie, 0);
	put_dyn(&c, debug, DT_NEEDED, 1);
	emit("dt-needed", "LDR_E_DYN_NEEDED", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, debug, DT_TEXTREL, 0);
	emit("dt-textrel", "LDR_E_DYN_TEXTREL", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, debug, DT_FLAGS, DF_TEXTREL);
	emit("df-textrel", "LDR_E_DYN_TEXTREL", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, debug, DT_RELSZ, 16);
	emit("dt-rel", "LDR_E_DYN_BAD", &c);
	c = dup_blob(pie, 0);
	EDIT_PH(&c, dyn, ph.p_offset = 0x100);
	emit("dynamic-outside-load", "LDR_E_DYN_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	{
		/* a second PT_DYNAMIC in place of the GNU_STACK-less slot: reuse
		 * the first PT_LOAD header's neighbour by copying PT_DYNAMIC */
		Elf64_Phdr d;

		get_ph(&c, dyn, &d);
		EDIT_EH(&c, e.e_phnum++);
		put_ph(&c, dyn + 1, &d);
	}
	emit("two-dynamic", "LDR_E_DYN_BAD", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, find_dyn(&c, DT_RELAENT), DT_RELAENT, 16);
	emit("relaent-16", "LDR_E_RELA_ENTSIZE", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, find_dyn(&c, DT_RELASZ), DT_RELASZ, 0x100000);
	emit("relasz-outside", "LDR_E_RELA_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, find_dyn(&c, DT_RELA), DT_RELA, 0x4000); /* in .data: its file bytes end early */
	put_dyn(&c, find_dyn(&c, DT_RELASZ), DT_RELASZ, 0x2000 * 24);
	emit("rela-beyond-segment", "LDR_E_RELA_OUTSIDE", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, debug, DT_RELRSZ, 8);
	put_dyn(&c, find_dyn(&c, DT_HASH), DT_RELR, 0x3000);
	emit("relr-no-relrent", "LDR_E_RELR_BAD", &c);
	c = dup_blob(pie, 0);
	put_dyn(&c, find_dyn(&c, DT_SYMENT), DT_SYMENT, 16);
	emit("syment-16", "LDR_E_RELOC_SYMBOL", &c);

	/* relocations that only reloc_apply() can refuse */
	c = dup_blob(pie, 0);
	edit_rela(&c, rela0, 0, 0, 1, ELF64_R_INFO(0, 0x99));
	emit("reloc-type-153", "LDR_E_RELOC_TYPE", &c);
	c = dup_blob(pie, 0);
	edit_rela(&c, rela0 + 5 * sizeof(Elf64_Rela), 0, 0, 1, ELF64_R_INFO(0, R_X86_64_COPY));
	emit("reloc-type-copy", "LDR_E_RELOC_TYPE", &c);
	c = dup_blob(pie, 0);
	edit_rela(&c, rela0, 0, 0, 1, ELF64_R_INFO(0, R_X86_64_PC32));
	emit("reloc-type-pc32-in-pie", "LDR_E_RELOC_TYPE", &c);
	c = dup_blob(pie, 0);
	edit_rela(&c, rela0 + 10 * sizeof(Elf64_Rela), 1, 0x100000, 0, 0);
	emit("reloc-target-outside", "LDR_E_RELOC_TARGET", &c);
	c = dup_blob(pie, 0);
	edit_rela(&c, rela0, 1, UINT64_MAX - 3, 0, 0);
	emit("reloc-target-wraps", "LDR_E_RELOC_TARGET", &c);
	c = dup_blob(pie, 0);
	edit_rela(&c, rela0, 0, 0, 1, ELF64_R_INFO(0x7777, R_X86_64_64));
	emit("reloc-symbol-index", "LDR_E_RELOC_SYMBOL", &c);
}

/* ------------------------------------------------------------ tails */

#define LINUX_MAP 0xffffffff80000000ULL /* Linux's __START_KERNEL_map */

/*
 * The exec payload without section headers (so without its --emit-relocs
 * sections), cut after its last segment; the extra bytes of room after it
 * are zero.
 */
static struct blob stripped_exec(const struct blob *exec, size_t extra)
{
	struct blob c = dup_blob(exec, extra);
	Elf64_Phdr rw;

	get_ph(&c, find_ph(&c, PT_LOAD, PF_W, 0), &rw);
	EDIT_EH(&c, e.e_shnum = 0; e.e_shoff = 0; e.e_shstrndx = 0);
	c.n = (size_t)(rw.p_offset + rw.p_filesz);
	memset(c.p + c.n, 0, exec->n + extra - c.n);
	return c;
}

/* Make the text segment writable too (W+X). */
static void text_wx(struct blob *b)
{
	EDIT_PH(b, find_ph(b, PT_LOAD, PF_X, 0), ph.p_flags |= PF_W);
}

/* 16 bytes that are neither padding nor a Linux table (room: 16 + 1). */
static void append_garbage(struct blob *b)
{
	memcpy(b->p + b->n, "this is garbage!", 16);
	b->n += 16;
}

/* Zeros up to the next 4 KiB multiple (a page when already at one). */
static void pad_page(struct blob *b)
{
	b->n = (b->n | 0xfff) + 1;
}

/* Link every PT_LOAD at physical + LINUX_MAP, as x86-64 Linux is. */
static void linux_shape(struct blob *b)
{
	Elf64_Ehdr eh;

	get_eh(b, &eh);
	for (unsigned i = 0; i < eh.e_phnum; i++)
		EDIT_PH(b, i, if (ph.p_type == PT_LOAD) ph.p_vaddr = ph.p_paddr + LINUX_MAP);
}

/* Append Linux's table [0][64-bit ...][0][0]: n 64-bit fields, no others. */
static void append_linux_table(struct blob *b, const uint32_t *v64, unsigned n)
{
	fx_put_le32(b->p + b->n, 0);
	b->n += 4;
	for (unsigned i = 0; i < n; i++, b->n += 4)
		fx_put_le32(b->p + b->n, v64[i]);
	fx_put_le32(b->p + b->n, 0);
	fx_put_le32(b->p + b->n + 4, 0);
	b->n += 8;
}

static void exec_cases(const struct blob *exec)
{
	size_t rtext = first_rela_of_section(exec, ".rela.text");
	struct blob c;
	Elf64_Rela r0;

	memcpy(&r0, exec->p + rtext, sizeof(r0));
	c = dup_blob(exec, 0);
	edit_rela(&c, rtext, 0, 0, 1, ELF64_R_INFO(ELF64_R_SYM(r0.r_info), 0x99));
	emit("exec-reloc-type-153", "LDR_E_RELOC_TYPE", &c);
	c = dup_blob(exec, 0);
	edit_rela(&c, rtext, 0, 0, 1, ELF64_R_INFO(ELF64_R_SYM(r0.r_info), R_X86_64_GOTPCREL));
	emit("exec-reloc-type-gotpcrel", "LDR_E_RELOC_TYPE", &c);
	c = dup_blob(exec, 0);
	edit_rela(&c, rtext, 1, 0x20000000, 0, 0);
	emit("exec-reloc-target-outside", "LDR_E_RELOC_TARGET", &c);
	c = dup_blob(exec, 0);
	edit_rela(&c, rtext, 0, 0, 1, ELF64_R_INFO(0xfffff, R_X86_64_64));
	emit("exec-reloc-symbol-index", "LDR_E_RELOC_SYMBOL", &c);
	/* an R_X86_64_32S field near INT32_MAX: + delta no longer fits */
	c = dup_blob(exec, 0);
	edit_rela(&c, rtext, 0, 0, 1, ELF64_R_INFO(ELF64_R_SYM(r0.r_info), R_X86_64_32S));
	fx_put_le32(c.p + 0x1000 + (r0.r_offset - 16 * MIB), 0x7fff0000);
	emit("exec-reloc-32s-range", "LDR_E_RELOC_RANGE", &c);
	c = dup_blob(exec, 0);
	EDIT_SH(&c, find_sh(&c, ".rela.text"), sh.sh_entsize = 16);
	emit("exec-rela-entsize", "LDR_E_RELA_ENTSIZE", &c);
	c = dup_blob(exec, 0);
	EDIT_SH(&c, find_sh(&c, ".rela.text"), sh.sh_offset = exec->n - 24);
	emit("exec-rela-outside", "LDR_E_RELA_OUTSIDE", &c);
	c = dup_blob(exec, 0);
	EDIT_SH(&c, find_sh(&c, ".rela.text"), sh.sh_link = 0);
	emit("exec-rela-no-symtab", "LDR_E_RELOC_SYMBOL", &c);
	c = dup_blob(exec, 0);
	EDIT_SH(&c, find_sh(&c, ".rela.text"), sh.sh_info = 999);
	emit("exec-rela-info", "LDR_E_SHDRS_OUTSIDE", &c);

	/* section headers stripped: no relocations to move it with */
	c = stripped_exec(exec, 0);
	emit("exec-stripped", "LDR_E_NOT_RELOCATABLE", &c);
}

/*
 * Bytes after the ELF image.  Zero padding (e.g. to a 4 KiB multiple) is not
 * a relocation table: an --emit-relocs kernel is still moved by its
 * sections, one without them stays unrelocatable, and W^X stays.  A Linux
 * table is taken only behind a Linux-shaped image (virtual = physical +
 * 0xffffffff80000000) and only with entries; other bytes are refused.
 */
static void tail_cases(const struct blob *exec)
{
	size_t rtext = first_rela_of_section(exec, ".rela.text");
	size_t rdata = first_rela_of_section(exec, ".rela.data");
	uint32_t fields[4];
	struct blob c;
	Elf64_Rela r0;

	memcpy(&r0, exec->p + rtext, sizeof(r0));
	for (unsigned i = 0; i < 4; i++) {
		Elf64_Rela r;

		memcpy(&r, exec->p + rdata + i * sizeof(r), sizeof(r));
		if (ELF64_R_TYPE(r.r_info) != R_X86_64_64)
			fail(".rela.data does not start with 64-bit relocations");
		fields[i] = (uint32_t)(r.r_offset + LINUX_MAP);
	}

	c = dup_blob(exec, 0x1000);
	pad_page(&c);
	emit("exec-zero-padded", "LDR_OK", &c);
	/* proof that the sections are applied: a 32S field that cannot move */
	c = dup_blob(exec, 0x1000);
	edit_rela(&c, rtext, 0, 0, 1, ELF64_R_INFO(ELF64_R_SYM(r0.r_info), R_X86_64_32S));
	fx_put_le32(c.p + 0x1000 + (r0.r_offset - 16 * MIB), 0x7fff0000);
	pad_page(&c);
	emit("exec-zero-padded-32s-range", "LDR_E_RELOC_RANGE", &c);
	c = dup_blob(exec, 0x1000);
	text_wx(&c);
	pad_page(&c);
	emit("exec-zero-padded-wx", "LDR_E_WX_SEGMENT", &c);
	c = dup_blob(exec, 64);
	append_garbage(&c);
	emit("exec-trailing-garbage", "LDR_OK", &c);

	c = stripped_exec(exec, 0x1000);
	pad_page(&c);
	emit("exec-stripped-zero-padded", "LDR_E_NOT_RELOCATABLE", &c);
	c = stripped_exec(exec, 0x1000);
	text_wx(&c);
	pad_page(&c);
	emit("exec-stripped-zero-padded-wx", "LDR_E_WX_SEGMENT", &c);
	c = stripped_exec(exec, 64);
	append_garbage(&c);
	emit("exec-stripped-trailing-garbage", "LDR_E_LINUX_RELOCS", &c);
	c = stripped_exec(exec, 64);
	c.n += 8; /* a zero and a non-zero word: not padding, too short for a table */
	c.p[c.n - 1] = 1;
	emit("exec-stripped-trailing-word", "LDR_E_LINUX_RELOCS", &c);
	/* a well-formed table, but the image is not Linux-shaped */
	c = stripped_exec(exec, 64);
	append_linux_table(&c, fields, 4);
	emit("exec-stripped-linux-table", "LDR_E_LINUX_RELOCS", &c);

	/* Linux-shaped: the table is taken, W+X tolerated */
	c = stripped_exec(exec, 64);
	linux_shape(&c);
	append_linux_table(&c, fields, 4);
	emit("linux-shaped-table", "LDR_OK", &c);
	c = stripped_exec(exec, 64);
	linux_shape(&c);
	text_wx(&c);
	append_linux_table(&c, fields, 4);
	emit("linux-shaped-wx", "LDR_OK", &c);
	/* ... unless the "table" has no entries: three zero words are padding */
	c = stripped_exec(exec, 64);
	linux_shape(&c);
	text_wx(&c);
	append_linux_table(&c, NULL, 0);
	emit("linux-shaped-empty-table-wx", "LDR_E_WX_SEGMENT", &c);
	/* a well-formed table naming a field far outside the image */
	c = stripped_exec(exec, 64);
	linux_shape(&c);
	fields[0] = 0x7ff00000;
	append_linux_table(&c, fields, 1);
	emit("linux-shaped-reloc-outside", "LDR_E_RELOC_TARGET", &c);
}

/*
 * The exec payload with its rodata segment moved into the last, partly
 * used page of its text (16-byte aligned, right after the code), with
 * flags: read-only gives an R+X page, writable a W+X one.  bss != 0 makes
 * it a segment without file bytes.
 */
static struct blob text_page_shared(const struct blob *exec, uint32_t flags, int bss)
{
	struct blob c = dup_blob(exec, 0);
	unsigned ti = find_ph(&c, PT_LOAD, PF_X, 0), ri = find_ph(&c, PT_LOAD, 0, 1);
	Elf64_Phdr t, r;
	uint64_t end;

	get_ph(&c, ti, &t);
	get_ph(&c, ri, &r);
	end = t.p_vaddr + t.p_memsz;
	if (r.p_flags != PF_R || end % 0x1000 == 0 || end % 0x1000 > 0xf00)
		fail("exec payload: no partly used last text page for rodata");
	r.p_vaddr = ((end + 15) & ~(uint64_t)15) + (r.p_offset & 15);
	r.p_paddr = r.p_vaddr;
	r.p_align = 16;
	r.p_flags = flags;
	if (bss)
		r.p_filesz = 0;
	if ((r.p_vaddr ^ (end - 1)) & ~(uint64_t)0xfff)
		fail("exec payload: moved rodata left the last text page");
	put_ph(&c, ri, &r);
	return c;
}

/* Pages shared by segments: the union of their permissions, W+X refused. */
static void shared_page_cases(const struct blob *exec)
{
	struct blob c;

	c = text_page_shared(exec, PF_R, 0);
	emit("shared-page-text-rodata", "LDR_OK", &c);
	c = text_page_shared(exec, PF_R | PF_W, 0);
	emit("shared-page-text-data", "LDR_E_WX_PAGE", &c);
	c = text_page_shared(exec, PF_R | PF_W, 1);
	emit("shared-page-text-bss", "LDR_E_WX_PAGE", &c);
	c = text_page_shared(exec, PF_R | PF_W, 0);
	{
		struct blob g = gz(&c);

		free(c.p);
		emit("gz-of-shared-page-wx", "LDR_E_WX_PAGE", &g);
	}
}

static void synthetic_cases(void)
{
	struct blob c;

	c = mini_exec(1);
	emit("mini-exec-no-relocs", "LDR_E_NOT_RELOCATABLE", &c);
	c = mini_exec(65);
	emit("mini-65-phdrs", "LDR_E_TOO_MANY_PHDRS", &c);
	c = mini_exec(17);
	for (unsigned i = 1; i < 17; i++) {
		Elf64_Phdr ph;

		get_ph(&c, 0, &ph);
		ph.p_vaddr += (uint64_t)i * 0x1000;
		ph.p_paddr += (uint64_t)i * 0x1000;
		put_ph(&c, i, &ph);
	}
	emit("mini-17-loads", "LDR_E_TOO_MANY_PHDRS", &c);
	c = mini_exec(2);
	{
		/* a second, empty-file BSS segment on top of the code */
		Elf64_Phdr ph;

		get_ph(&c, 0, &ph);
		ph.p_flags = PF_R | PF_W;
		ph.p_filesz = 0;
		ph.p_memsz = 0x2000;
		ph.p_vaddr -= 0x1000;
		ph.p_paddr -= 0x1000;
		put_ph(&c, 1, &ph);
	}
	emit("mini-bss-overlap", "LDR_E_SEG_OVERLAP", &c);
	c = mini_exec(1);
	EDIT_PH(&c, 0, ph.p_vaddr = UINT64_MAX - 0xfff; ph.p_memsz = 0x2000);
	emit("mini-vaddr-wraps", "LDR_E_SEG_WRAP", &c);
	c = mini_exec(1);
	EDIT_PH(&c, 0, ph.p_paddr = UINT64_MAX - 0x7ff);
	emit("mini-paddr-wraps", "LDR_E_SEG_WRAP", &c);
	c = mini_exec(1);
	EDIT_EH(&c, e.e_entry = 16 * MIB + 16);
	emit("mini-entry-at-end", "LDR_E_ENTRY_OUTSIDE", &c);
	c = mini_exec(1);
	EDIT_PH(&c, 0, ph.p_type = PT_LOAD; ph.p_memsz = 0);
	emit("mini-empty-load", "LDR_E_SEG_FILESZ", &c);
}

static void gzip_cases(const struct blob *pie, const struct blob *exec)
{
	struct blob g = gz(pie), z = zl(pie), c, t;

	c = dup_blob(&g, 0);
	c.n = g.n / 2;
	emit("gz-truncated-half", "LDR_E_DECOMP_TRUNCATED", &c);
	c = dup_blob(&g, 0);
	c.n = g.n - 4;
	emit("gz-truncated-trailer", "LDR_E_DECOMP_TRUNCATED", &c);
	c = dup_blob(&g, 0);
	c.n = 10;
	emit("gz-header-only", "LDR_E_DECOMP_TRUNCATED", &c);
	c = dup_blob(&g, 0);
	c.p[g.n - 8] ^= 0xff;
	emit("gz-bad-crc", "LDR_E_DECOMP_CHECK", &c);
	c = dup_blob(&g, 0);
	fx_put_le32(c.p + g.n - 4, (uint32_t)pie->n + 1);
	emit("gz-bad-isize", "LDR_E_DECOMP_CHECK", &c);
	c = dup_blob(&g, 0);
	c.p[3] = 0x80;
	emit("gz-reserved-flag", "LDR_E_DECOMP_HEADER", &c);
	c = dup_blob(&g, 0);
	c.p[2] = 7;
	emit("gz-method-7", "LDR_E_DECOMP_HEADER", &c);
	c = dup_blob(&g, 0);
	c.p[10] |= 0x06;
	emit("gz-bad-block-type", "LDR_E_DECOMP_CORRUPT", &c);
	c = dup_blob(&g, 64);
	memcpy(c.p + c.n, "trailing garbage", 16);
	c.n += 16;
	emit("gz-trailing-garbage", "LDR_E_DECOMP_TRAILING", &c);
	c = dup_blob(&g, g.n);
	memcpy(c.p + g.n, g.p, g.n);
	c.n = 2 * g.n;
	emit("gz-two-members", "LDR_E_DECOMP_TRAILING", &c);
	c = dup_blob(&z, 0);
	c.p[z.n - 1] ^= 0x55;
	emit("zlib-bad-adler", "LDR_E_DECOMP_CHECK", &c);
	c = dup_blob(&z, 0);
	c.n = z.n - 100;
	emit("zlib-truncated", "LDR_E_DECOMP_TRUNCATED", &c);
	c = dup_blob(&z, 0);
	c.p[0] = 0x78;
	c.p[1] = 0xbb; /* FDICT */
	emit("zlib-preset-dict", "LDR_E_DECOMP_HEADER", &c);

	/* compressed streams of bad kernels: the ELF error comes through */
	t = dup_blob(pie, 0);
	t.p[1] = 'X';
	c = gz(&t);
	free(t.p);
	emit("gz-of-bad-magic", "LDR_E_BAD_MAGIC", &c);
	t = dup_blob(pie, 0);
	EDIT_PH(&t, find_ph(&t, PT_LOAD, PF_X, 0), ph.p_flags |= PF_W);
	c = gz(&t);
	free(t.p);
	emit("gz-of-wx", "LDR_E_WX_SEGMENT", &c);
	t = dup_blob(pie, 0);
	edit_rela(&t, pie_rela0(&t), 0, 0, 1, ELF64_R_INFO(0, 0x99));
	c = zl(&t);
	free(t.p);
	emit("zlib-of-reloc-type", "LDR_E_RELOC_TYPE", &c);
	t = dup_blob(exec, 0);
	t.n = 40;
	c = gz(&t);
	free(t.p);
	emit("gz-of-truncated", "LDR_E_TRUNCATED", &c);
	t = (struct blob){ malloc(1), 0 };
	c = gz(&t);
	free(t.p);
	emit("gz-of-empty", "LDR_E_EMPTY_FILE", &c);
	c = gz(&g);
	emit("gz-of-gz", "LDR_E_BAD_MAGIC", &c);

	/* a flat binary (the exec kernel's code, as objcopy -O binary gives
	 * it) that starts with "mov %rsp, %rbp": 48 89 passes zlib's header
	 * check, the rest does not inflate */
	{
		Elf64_Phdr ph;

		get_ph(exec, find_ph(exec, PT_LOAD, PF_X, 0), &ph);
		c = (struct blob){ malloc(ph.p_filesz), ph.p_filesz };
		memcpy(c.p, exec->p + ph.p_offset, ph.p_filesz);
		memcpy(c.p, "\x48\x89\xe5", 3);
		emit("flat-zlib-lookalike", "LDR_E_NOT_KERNEL", &c);
	}

	/* 520 MiB of zeros in about half a megabyte: past the 512 MiB default */
	c = zero_bomb(520 * MIB);
	emit("gz-bomb-520m", "LDR_E_DECOMP_TOO_BIG", &c);

	/* controls */
	c = dup_blob(pie, 0);
	emit("ok-pie", "LDR_OK", &c);
	c = dup_blob(exec, 0);
	emit("ok-exec", "LDR_OK", &c);
	emit("ok-pie-gz", "LDR_OK", &g);
	emit("ok-pie-zlib", "LDR_OK", &z);
	c = gz(exec);
	emit("ok-exec-gz", "LDR_OK", &c);
}

/* ------------------------------------------------------------ xz, lz4, zstd */

static struct blob xz_blob(const struct blob *b, uint32_t preset, uint32_t dict)
{
	return of_buf(fx_xz(b->p, b->n, preset, dict));
}

static struct blob lz4_blob(const struct blob *b) { return of_buf(fx_lz4(b->p, b->n)); }
static struct blob zstd_blob(const struct blob *b, int level)
{
	return of_buf(fx_zstd(b->p, b->n, level, 1));
}

/* a blob of n bytes starting with magic, the rest a counter */
static struct blob magic_blob(const void *magic, size_t mlen, size_t n)
{
	struct blob c = { malloc(n + 1), n };

	if (!c.p)
		die("malloc");
	for (size_t i = 0; i < n; i++)
		c.p[i] = (uint8_t)(i * 7);
	memcpy(c.p, magic, mlen);
	return c;
}

static struct blob cut_blob(const struct blob *b, size_t n)
{
	struct blob c = dup_blob(b, 0);

	c.n = n;
	return c;
}

static struct blob append_blob(const struct blob *b, const void *tail, size_t n)
{
	struct blob c = dup_blob(b, n);

	memcpy(c.p + b->n, tail, n);
	c.n += n;
	return c;
}

static void format_cases(const struct blob *pie, const struct blob *exec)
{
	struct blob x = xz_blob(pie, 6, 0), l = lz4_blob(pie), z = zstd_blob(pie, 19), c, t;
	static const uint8_t raw_frame_256m[] = {
		/* zstd frame, window 2^28 (exponent 18), one empty raw last block */
		0x28, 0xb5, 0x2f, 0xfd, 0x00, 18 << 3, 0x01, 0x00, 0x00,
	};

	c = dup_blob(&x, 0);
	emit("ok-pie-xz", "LDR_OK", &c);
	c = dup_blob(&l, 0);
	emit("ok-pie-lz4", "LDR_OK", &c);
	c = dup_blob(&z, 0);
	emit("ok-pie-zstd", "LDR_OK", &c);
	c = lz4_blob(exec);
	emit("ok-exec-lz4", "LDR_OK", &c);

	c = cut_blob(&x, x.n / 2);
	emit("xz-truncated-half", "LDR_E_DECOMP_TRUNCATED", &c);
	c = cut_blob(&x, x.n - 1);
	emit("xz-truncated-footer", "LDR_E_DECOMP_TRUNCATED", &c);
	c = append_blob(&x, "\0\0\0\0", 4);
	emit("xz-stream-padding", "LDR_E_DECOMP_TRAILING", &c);
	c = append_blob(&x, "trailing garbage", 16);
	emit("xz-trailing-garbage", "LDR_E_DECOMP_TRAILING", &c);
	c = dup_blob(&x, 0);
	{
		/* the block's CRC32 sits just before the index */
		uint32_t backward = (c.p[c.n - 8] | c.p[c.n - 7] << 8 | c.p[c.n - 6] << 16 |
				     (uint32_t)c.p[c.n - 5] << 24) + 1;

		c.p[c.n - 12 - backward * 4 - 1] ^= 0x80;
	}
	emit("xz-bad-check", "LDR_E_DECOMP_CHECK", &c);
	c = dup_blob(&x, 0);
	c.p[x.n / 2] ^= 0xff;
	c.p[x.n / 2 + 1] ^= 0xff;
	emit("xz-corrupt-data", "LDR_E_DECOMP_CORRUPT", &c);
	/* a dictionary of 128 MiB named in the block header (CRC32 fixed) */
	c = dup_blob(&x, 0);
	{
		size_t hsize = ((size_t)c.p[12] + 1) * 4;

		for (size_t i = 14; i + 6 < 12 + hsize; i++)
			if (c.p[i] == 0x21 && c.p[i + 1] == 0x01) {
				c.p[i + 2] = 30;
				break;
			}
		fx_put_le32(c.p + 12 + hsize - 4, (uint32_t)crc32(0, c.p + 12, (uInt)(hsize - 4)));
	}
	emit("xz-dict-128m", "LDR_E_DECOMP_MEMORY", &c);

	c = cut_blob(&l, l.n - 10);
	emit("lz4-truncated-block", "LDR_E_DECOMP_TRUNCATED", &c);
	c = cut_blob(&l, 6);
	emit("lz4-truncated-size", "LDR_E_DECOMP_TRUNCATED", &c);
	c = append_blob(&l, "\x20\0\0\0garbage garbage garbage garbage", 36);
	emit("lz4-trailing-block", "LDR_E_DECOMP_TRAILING", &c);
	c = dup_blob(&l, 0);
	fx_put_le32(c.p + 4, 0x7fffffff);
	emit("lz4-block-size-huge", "LDR_E_DECOMP_CORRUPT", &c);
	c = dup_blob(&l, 0);
	/* the first token claims 15 + 3 * 255 + more literals than the block has */
	memset(c.p + 8, 0xff, 8);
	emit("lz4-corrupt-block", "LDR_E_DECOMP_CORRUPT", &c);

	c = cut_blob(&z, z.n / 2);
	emit("zstd-truncated-half", "LDR_E_DECOMP_TRUNCATED", &c);
	c = cut_blob(&z, 5);
	emit("zstd-truncated-header", "LDR_E_DECOMP_TRUNCATED", &c);
	c = append_blob(&z, "garbage", 7);
	emit("zstd-trailing-garbage", "LDR_E_DECOMP_TRAILING", &c);
	c = dup_blob(&z, z.n);
	memcpy(c.p + z.n, z.p, z.n);
	c.n = 2 * z.n;
	emit("zstd-two-frames", "LDR_E_DECOMP_TRAILING", &c);
	c = dup_blob(&z, 0);
	c.p[z.n - 1] ^= 0x01;
	emit("zstd-bad-checksum", "LDR_E_DECOMP_CHECK", &c);
	c = dup_blob(&z, 0);
	c.p[4] |= 0x08; /* reserved bit of the frame header descriptor */
	emit("zstd-reserved-bit", "LDR_E_DECOMP_HEADER", &c);
	c = (struct blob){ malloc(sizeof(raw_frame_256m)), sizeof(raw_frame_256m) };
	memcpy(c.p, raw_frame_256m, sizeof(raw_frame_256m));
	emit("zstd-window-256m", "LDR_E_DECOMP_MEMORY", &c);
	/* 520 MiB of zeros as zstd: past the 512 MiB default */
	t = (struct blob){ calloc(1, 520 * MIB), 520 * MIB };
	if (!t.p)
		die("calloc");
	c = zstd_blob(&t, 3);
	free(t.p);
	emit("zstd-bomb-520m", "LDR_E_DECOMP_TOO_BIG", &c);

	/* compressed bad kernels: the ELF error comes through */
	t = dup_blob(pie, 0);
	t.p[1] = 'X';
	c = xz_blob(&t, 0, 0);
	free(t.p);
	emit("xz-of-bad-magic", "LDR_E_BAD_MAGIC", &c);
	t = dup_blob(pie, 0);
	EDIT_PH(&t, find_ph(&t, PT_LOAD, PF_X, 0), ph.p_flags |= PF_W);
	c = lz4_blob(&t);
	free(t.p);
	emit("lz4-of-wx", "LDR_E_WX_SEGMENT", &c);

	/* formats recognised and refused by name */
	c = magic_blob("BZh91AY&SY", 10, 4096);
	emit("bzip2-magic", "LDR_E_UNSUPPORTED_BZIP2", &c);
	c = magic_blob("\x5d\0\0\x80\0", 5, 4096);
	emit("lzma-magic", "LDR_E_UNSUPPORTED_LZMA", &c);
	c = magic_blob("\x89LZO\0\r\n\x1a\n", 9, 4096);
	emit("lzo-magic", "LDR_E_UNSUPPORTED_LZO", &c);
	c = magic_blob("\x04\x22\x4d\x18", 4, 4096);
	emit("lz4-frame-magic", "LDR_E_UNSUPPORTED_LZ4_FRAME", &c);
	free(x.p);
	free(l.p);
	free(z.p);
}

/* ------------------------------------------------------------ bzImage */

#define BZ_SETUP FX_BZ_SETUP
#define BZ_POFF  FX_BZ_POFF
static struct blob bz_blob(const struct blob *stream, int gzip, uint32_t size)
{
	return of_buf(fx_bzimage(stream->p, stream->n, gzip, size));
}

static void bzimage_cases(const struct blob *pie)
{
	struct blob x = xz_blob(pie, 6, 32 * MIB), l = lz4_blob(pie), z = zstd_blob(pie, 19);
	struct blob g = gz(pie), c, t;
	uint32_t size = (uint32_t)pie->n;

	c = bz_blob(&x, 0, size);
	emit("ok-bz-xz", "LDR_OK", &c);
	c = bz_blob(&l, 0, size);
	emit("ok-bz-lz4", "LDR_OK", &c);
	c = bz_blob(&z, 0, size);
	emit("ok-bz-zstd", "LDR_OK", &c);
	c = bz_blob(&g, 1, size);
	emit("ok-bz-gzip", "LDR_OK", &c);
	/* signed: a PE signature appended after the declared image */
	t = bz_blob(&x, 0, size);
	c = dup_blob(&t, 2048);
	memset(c.p + t.n, 0x30, 2048);
	c.n += 2048;
	free(t.p);
	emit("ok-bz-signed", "LDR_OK", &c);

#define BZ_EDIT(name, err, stmt)              \
	do {                                  \
		c = bz_blob(&x, 0, size);     \
		stmt;                         \
		emit(name, err, &c);          \
	} while (0)
	BZ_EDIT("bz-version-2.11", "LDR_E_BZIMAGE_VERSION", c.p[0x206] = 0x0b);
	BZ_EDIT("bz-not-64", "LDR_E_BZIMAGE_NOT_64", c.p[0x236] = 0x02);
	/* not relocatable: the header is fine, the loader places it at its
	 * pref_address (efi/linux.c) */
	BZ_EDIT("ok-bz-not-relocatable", "LDR_OK", c.p[0x234] = 0);
	BZ_EDIT("bz-align-3m", "LDR_E_BZIMAGE_ALIGN", fx_put_le32(c.p + 0x230, 0x300000));
	BZ_EDIT("bz-align-0", "LDR_E_BZIMAGE_ALIGN", fx_put_le32(c.p + 0x230, 0));
	BZ_EDIT("bz-header-short", "LDR_E_BZIMAGE_OUTSIDE", c.p[0x201] = 0x50);
	BZ_EDIT("bz-header-long", "LDR_E_BZIMAGE_OUTSIDE", c.p[0x201] = 0xff);
	BZ_EDIT("bz-setup-sects-255", "LDR_E_BZIMAGE_OUTSIDE", c.p[0x1f1] = 255);
	BZ_EDIT("bz-syssize-huge", "LDR_E_BZIMAGE_OUTSIDE", fx_put_le32(c.p + 0x1f4, 0xffffffff));
	BZ_EDIT("bz-file-cut", "LDR_E_BZIMAGE_OUTSIDE", c.n = c.n / 2);
	BZ_EDIT("bz-payload-offset-huge", "LDR_E_BZIMAGE_PAYLOAD",
		fx_put_le32(c.p + 0x248, 0xfffffff0));
	BZ_EDIT("bz-payload-length-huge", "LDR_E_BZIMAGE_PAYLOAD",
		fx_put_le32(c.p + 0x24c, 0xffffffff));
	BZ_EDIT("bz-payload-length-4", "LDR_E_BZIMAGE_PAYLOAD", fx_put_le32(c.p + 0x24c, 4));
	/* the xz magic reaching into the size word (found by fuzz_bzimage) */
	BZ_EDIT("bz-payload-length-7", "LDR_E_BZIMAGE_PAYLOAD", fx_put_le32(c.p + 0x24c, 7));
	BZ_EDIT("bz-payload-not-compressed", "LDR_E_BZIMAGE_FORMAT",
		memcpy(c.p + BZ_SETUP + BZ_POFF, pie->p, 16));
	BZ_EDIT("bz-payload-bzip2", "LDR_E_UNSUPPORTED_BZIP2",
		memcpy(c.p + BZ_SETUP + BZ_POFF, "BZh9", 4));
	BZ_EDIT("bz-size-0", "LDR_E_BZIMAGE_SIZE",
		fx_put_le32(c.p + BZ_SETUP + BZ_POFF + x.n, 0));
	BZ_EDIT("bz-size-4g", "LDR_E_DECOMP_TOO_BIG",
		fx_put_le32(c.p + BZ_SETUP + BZ_POFF + x.n, 0xffffffff));
	BZ_EDIT("bz-size-short", "LDR_E_BZIMAGE_SIZE_MISMATCH",
		fx_put_le32(c.p + BZ_SETUP + BZ_POFF + x.n, size - 1));
	BZ_EDIT("bz-size-long", "LDR_E_BZIMAGE_SIZE_MISMATCH",
		fx_put_le32(c.p + BZ_SETUP + BZ_POFF + x.n, size + 4096));
	BZ_EDIT("bz-xz-corrupt", "LDR_E_DECOMP_CORRUPT",
		c.p[BZ_SETUP + BZ_POFF + x.n / 2] ^= 0xff;
		c.p[BZ_SETUP + BZ_POFF + x.n / 2 + 1] ^= 0xff);
	/* the size word taken as part of the stream: length 4 too long */
	BZ_EDIT("bz-payload-length-plus-4", "LDR_E_DECOMP_TRAILING",
		fx_put_le32(c.p + 0x24c, (uint32_t)x.n + 8);
		fx_put_le32(c.p + BZ_SETUP + BZ_POFF + x.n + 4, size);
		fx_put_le32(c.p + 0x1f4, (uint32_t)((c.n + 16 - BZ_SETUP) / 16));
		c.n += 16);
#undef BZ_EDIT
	/* a stream cut short inside a well-formed bzImage */
	t = cut_blob(&x, x.n - 40);
	c = bz_blob(&t, 0, size);
	free(t.p);
	emit("bz-xz-truncated", "LDR_E_DECOMP_TRUNCATED", &c);
	/* a good bzImage around a bad kernel */
	t = dup_blob(pie, 0);
	t.p[0] = 0;
	c = zstd_blob(&t, 3);
	free(t.p);
	t = bz_blob(&c, 0, size);
	free(c.p);
	emit("bz-of-bad-magic", "LDR_E_BAD_MAGIC", &t);
	free(x.p);
	free(l.p);
	free(z.p);
	free(g.p);
}

int main(int argc, char **argv)
{
	struct blob pie, exec;

	if (argc != 4) {
		fprintf(stderr, "usage: %s OUTDIR kernel-pie.elf kernel-exec.elf\n", argv[0]);
		return 2;
	}
	out_dir = argv[1];
	if (mkdir(out_dir, 0755) != 0 && errno != EEXIST)
		die(out_dir);
	pie = read_file(argv[2]);
	exec = read_file(argv[3]);
	header_cases(&pie);
	segment_cases(&pie);
	dynamic_cases(&pie);
	exec_cases(&exec);
	tail_cases(&exec);
	shared_page_cases(&exec);
	synthetic_cases();
	gzip_cases(&pie, &exec);
	format_cases(&pie, &exec);
	bzimage_cases(&pie);
	printf("mkcorpus: %d malformed cases and %d controls in %s\n", n_cases, n_ok, out_dir);
	free(pie.p);
	free(exec.p);
	return 0;
}
