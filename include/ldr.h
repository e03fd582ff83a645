/*
 * ldr.h - definitions shared by every module of the portable core:
 * size units, the error enum and its strings, and the physical-address helper.
 * The core never prints; it returns one of these codes and efi/ reports it.
 */
#ifndef LDR_H
#define LDR_H

#include <stddef.h>
#include <stdint.h>

#define KIB (1024ULL)
#define MIB (1024ULL * KIB)
#define GIB (1024ULL * MIB)

#define PAGE_SIZE (4 * KIB)

/*
 * One code per distinct cause, so that a single log line identifies a failure.
 * Keep ldr_strerror() in src/err.c in step with this list.
 */
enum ldr_err {
	LDR_OK = 0,
	/* generic */
	LDR_E_NOMEM,
	LDR_E_INVAL,
	LDR_E_OVERFLOW,
	/* ELF header */
	LDR_E_TRUNCATED,
	LDR_E_BAD_MAGIC,
	LDR_E_BAD_CLASS,
	LDR_E_BAD_DATA,
	LDR_E_BAD_VERSION,
	LDR_E_BAD_MACHINE,
	LDR_E_BAD_TYPE,
	LDR_E_BAD_EHSIZE,
	LDR_E_BAD_PHENTSIZE,
	LDR_E_PHDRS_OUTSIDE,
	LDR_E_TOO_MANY_PHDRS,
	LDR_E_BAD_SHENTSIZE,
	LDR_E_SHDRS_OUTSIDE,
	/* segments */
	LDR_E_NO_LOAD,
	LDR_E_SEG_OUTSIDE,
	LDR_E_SEG_FILESZ,
	LDR_E_SEG_ALIGN,
	LDR_E_SEG_OVERLAP,
	LDR_E_SEG_WRAP,
	LDR_E_IMAGE_TOO_BIG,
	LDR_E_ENTRY_OUTSIDE,
	LDR_E_WX_SEGMENT,
	LDR_E_INTERP,
	/* dynamic section and relocations */
	LDR_E_DYN_OUTSIDE,
	LDR_E_DYN_NEEDED,
	LDR_E_DYN_TEXTREL,
	LDR_E_DYN_BAD,
	LDR_E_RELA_OUTSIDE,
	LDR_E_RELA_ENTSIZE,
	LDR_E_RELOC_TYPE,
	LDR_E_RELOC_TARGET,
	LDR_E_RELOC_RANGE,
	LDR_E_RELOC_SYMBOL,
	LDR_E_UNDEF_SYMBOL,
	LDR_E_RELR_BAD,
	LDR_E_LINUX_RELOCS,
	LDR_E_NOT_RELOCATABLE,
	/* compression */
	LDR_E_GZIP_HEADER,
	LDR_E_GZIP_CORRUPT,
	LDR_E_GZIP_CRC,
	LDR_E_GZIP_TRUNCATED,
	LDR_E_GZIP_TOO_BIG,
	LDR_E_GZIP_TRAILING,
	/* memory map and slots */
	LDR_E_MMAP_DESC_SIZE,
	LDR_E_MMAP_TOO_BIG,
	LDR_E_NO_SLOT,
	LDR_E_VIRT_NO_SLOT,
	/* entropy */
	LDR_E_NO_ENTROPY,
	/* page tables */
	LDR_E_PT_ALIGN,
	LDR_E_PT_CONFLICT,
	/* options and config */
	LDR_E_OPT_UNKNOWN,
	LDR_E_OPT_VALUE,
	LDR_E_OPT_TOO_LONG,
	LDR_E_OPT_ENCODING,
	LDR_E_HASH_MISMATCH,
	LDR_E_EMPTY_FILE,
	/* Linux boot protocol */
	LDR_E_LINUX_SETUP,
	LDR_E_LINUX_VERSION,
	LDR_E_PT_UNMAPPED,
	LDR_E_SLOT_REFUSED,
	LDR_ERR_COUNT
};

/* A short, constant, human-readable description of err. Never NULL. */
const char *ldr_strerror(enum ldr_err err);

/*
 * Overflow-safe "does [off, off + need) lie inside a buffer of len bytes".
 * Written so that off + need is never formed.
 */
static inline int ldr_in_bounds(uint64_t off, uint64_t need, uint64_t len)
{
	return off <= len && len - off >= need;
}

/* a + b without wrapping; returns 0 and leaves *ret untouched on overflow. */
static inline int ldr_add_ok(uint64_t a, uint64_t b, uint64_t *ret)
{
	if (a > UINT64_MAX - b)
		return 0;
	*ret = a + b;
	return 1;
}

static inline uint64_t ldr_align_up(uint64_t v, uint64_t a)
{
	return (v + (a - 1)) & ~(a - 1);
}

static inline uint64_t ldr_align_down(uint64_t v, uint64_t a)
{
	return v & ~(a - 1);
}

/* The one place a physical address becomes a pointer (identity mapping). */
static inline void *phys_to_ptr(uint64_t phys)
{
	return (void *)(uintptr_t)phys;
}

static inline uint64_t ptr_to_phys(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

#endif
