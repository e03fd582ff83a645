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

/* What the user can do about a class of errors (the last column below). */
#define LDR_HINT_KERNEL  "kernel= must name an ELF64 x86-64 kernel built as PIE or with --emit-relocs"
#define LDR_HINT_DECOMP  "the compressed kernel file is damaged: copy it again"
#define LDR_HINT_FORMAT  "recompress it with xz, zstd, gzip or lz4 -l (a Linux bzImage: CONFIG_KERNEL_XZ, _ZSTD, _GZIP or _LZ4)"
#define LDR_HINT_BZIMAGE "kernel= must name an x86-64 Linux bzImage (boot protocol 2.12 or later)"
#define LDR_HINT_OPTIONS "see kaslr.conf(5)"
#define LDR_HINT_MEMORY  "give the machine more memory or lower kaslr.min="
#define LDR_HINT_FGK     "link with -ffunction-sections --emit-relocs, .text.* left out of the linker script (include/PROTOCOL.md, function-granular KASLR)"
#define LDR_HINT_POLICY  "write the policy and sign the loader with kaslr-loader-install or make install (see kaslr.conf(5), SECURE BOOT)"
#define LDR_HINT_UKI     "build it as linuxx64.efi.stub(7) shows, no two sections overlapping"
#define LDR_HINT_UKI_STUB "build it with systemd-stub 252.3 to 252.x, as Debian 12's (see kaslr.conf(5), UNIFIED KERNEL IMAGES)"

/*
 * Every error the core can return, one row each, and the only list of them:
 *   X(code, EFI status it maps to (EFI_ prefix left off), message, hint or NULL)
 * One code per distinct cause, so that a single log line identifies a
 * failure.  The enum, ldr_strerror() (src/err.c), the EFI status and hint
 * of a report (efi/log.c) and the corpus checker's names all expand it.
 */
#define LDR_ERRORS(X) \
	X(LDR_OK, SUCCESS, "success", NULL) \
	X(LDR_E_NOMEM, OUT_OF_RESOURCES, "out of memory", LDR_HINT_MEMORY) \
	X(LDR_E_INVAL, INVALID_PARAMETER, "invalid argument", NULL) \
	X(LDR_E_OVERFLOW, LOAD_ERROR, "arithmetic overflow in a size or address", NULL) \
	X(LDR_E_TRUNCATED, LOAD_ERROR, "file too short for its ELF header", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_MAGIC, LOAD_ERROR, "not an ELF file (bad magic)", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_CLASS, UNSUPPORTED, "not a 64-bit ELF (EI_CLASS)", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_DATA, LOAD_ERROR, "not little-endian (EI_DATA)", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_VERSION, LOAD_ERROR, "unknown ELF version", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_MACHINE, UNSUPPORTED, "not an x86-64 ELF (e_machine)", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_TYPE, UNSUPPORTED, "ELF type is neither ET_EXEC nor ET_DYN", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_EHSIZE, LOAD_ERROR, "bad e_ehsize", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_PHENTSIZE, LOAD_ERROR, "bad e_phentsize", LDR_HINT_KERNEL) \
	X(LDR_E_PHDRS_OUTSIDE, LOAD_ERROR, "program headers lie outside the file", LDR_HINT_KERNEL) \
	X(LDR_E_TOO_MANY_PHDRS, LOAD_ERROR, "too many program headers", LDR_HINT_KERNEL) \
	X(LDR_E_BAD_SHENTSIZE, LOAD_ERROR, "bad e_shentsize", LDR_HINT_KERNEL) \
	X(LDR_E_SHDRS_OUTSIDE, LOAD_ERROR, "section headers lie outside the file", LDR_HINT_KERNEL) \
	X(LDR_E_NO_LOAD, LOAD_ERROR, "no PT_LOAD segment", LDR_HINT_KERNEL) \
	X(LDR_E_SEG_OUTSIDE, LOAD_ERROR, "segment data lies outside the file", LDR_HINT_KERNEL) \
	X(LDR_E_SEG_FILESZ, LOAD_ERROR, "segment p_filesz exceeds p_memsz", LDR_HINT_KERNEL) \
	X(LDR_E_SEG_ALIGN, LOAD_ERROR, "segment alignment is invalid", LDR_HINT_KERNEL) \
	X(LDR_E_SEG_OVERLAP, LOAD_ERROR, "segments overlap", LDR_HINT_KERNEL) \
	X(LDR_E_SEG_WRAP, LOAD_ERROR, "segment wraps the address space", LDR_HINT_KERNEL) \
	X(LDR_E_IMAGE_TOO_BIG, LOAD_ERROR, "image larger than the configured limit", LDR_HINT_KERNEL) \
	X(LDR_E_ENTRY_OUTSIDE, LOAD_ERROR, "entry point is not in an executable segment", LDR_HINT_KERNEL) \
	X(LDR_E_WX_SEGMENT, LOAD_ERROR, "segment is both writable and executable", "give writable data and code their own segments (link with -z separate-code and page-aligned sections)") \
	X(LDR_E_WX_PAGE, LOAD_ERROR, "a writable and an executable segment share a page", "link with -z separate-code, or page-align the segments in the linker script (. = ALIGN(4096) between them)") \
	X(LDR_E_WX_SECTIONS, LOAD_ERROR, "over 64 writable or executable sections in a Linux RWX segment", NULL) \
	X(LDR_E_INTERP, LOAD_ERROR, "image asks for an interpreter (PT_INTERP)", LDR_HINT_KERNEL) \
	X(LDR_E_DYN_OUTSIDE, LOAD_ERROR, "dynamic section lies outside the image", LDR_HINT_KERNEL) \
	X(LDR_E_DYN_NEEDED, LOAD_ERROR, "image needs a shared library (DT_NEEDED)", LDR_HINT_KERNEL) \
	X(LDR_E_DYN_TEXTREL, LOAD_ERROR, "image has text relocations (DT_TEXTREL)", LDR_HINT_KERNEL) \
	X(LDR_E_DYN_BAD, LOAD_ERROR, "malformed dynamic section", LDR_HINT_KERNEL) \
	X(LDR_E_RELA_OUTSIDE, LOAD_ERROR, "relocation table lies outside the image", LDR_HINT_KERNEL) \
	X(LDR_E_RELA_ENTSIZE, LOAD_ERROR, "bad relocation entry size", LDR_HINT_KERNEL) \
	X(LDR_E_RELOC_TYPE, UNSUPPORTED, "unsupported relocation type", LDR_HINT_KERNEL) \
	X(LDR_E_RELOC_TARGET, LOAD_ERROR, "relocation target lies outside the image", LDR_HINT_KERNEL) \
	X(LDR_E_RELOC_RANGE, LOAD_ERROR, "relocated value does not fit its field", LDR_HINT_KERNEL) \
	X(LDR_E_RELOC_SYMBOL, LOAD_ERROR, "relocation names a bad symbol", LDR_HINT_KERNEL) \
	X(LDR_E_UNDEF_SYMBOL, LOAD_ERROR, "relocation against an undefined symbol", LDR_HINT_KERNEL) \
	X(LDR_E_RELR_BAD, LOAD_ERROR, "malformed DT_RELR table", LDR_HINT_KERNEL) \
	X(LDR_E_LINUX_RELOCS, LOAD_ERROR, "malformed Linux relocation table", LDR_HINT_KERNEL) \
	X(LDR_E_LINUX_LAYOUT, LOAD_ERROR, "not an x86-64 vmlinux (physical base is not virtual - 0xffffffff80000000)", LDR_HINT_BZIMAGE) \
	X(LDR_E_LINUX_PREF_ADDRESS, LOAD_ERROR, "pref_address is not the vmlinux's physical base", LDR_HINT_BZIMAGE) \
	X(LDR_E_NOT_RELOCATABLE, LOAD_ERROR, "image cannot be relocated (no relocations)", LDR_HINT_KERNEL) \
	X(LDR_E_DECOMP_HEADER, LOAD_ERROR, "bad header of the compressed stream", LDR_HINT_DECOMP) \
	X(LDR_E_DECOMP_CORRUPT, LOAD_ERROR, "corrupt compressed data", LDR_HINT_DECOMP) \
	X(LDR_E_DECOMP_CHECK, LOAD_ERROR, "compressed data fails its checksum", LDR_HINT_DECOMP) \
	X(LDR_E_DECOMP_TRUNCATED, LOAD_ERROR, "compressed data is truncated", LDR_HINT_DECOMP) \
	X(LDR_E_DECOMP_TOO_BIG, LOAD_ERROR, "decompressed size exceeds the limit", "raise kaslr.maxsize= if the kernel really is that large") \
	X(LDR_E_DECOMP_TRAILING, LOAD_ERROR, "garbage after the compressed stream", LDR_HINT_DECOMP) \
	X(LDR_E_DECOMP_MEMORY, UNSUPPORTED, "stream needs a larger window than the loader allows (xz dictionary over 64 MiB, zstd window over 128 MiB)", "recompress with a smaller dictionary or window (xz -6, zstd -19)") \
	X(LDR_E_UNSUPPORTED_BZIP2, UNSUPPORTED, "bzip2 compression is not supported", LDR_HINT_FORMAT) \
	X(LDR_E_UNSUPPORTED_LZMA, UNSUPPORTED, "lzma (.lzma, LZMA-alone) compression is not supported", LDR_HINT_FORMAT) \
	X(LDR_E_UNSUPPORTED_LZO, UNSUPPORTED, "lzo (lzop) compression is not supported", LDR_HINT_FORMAT) \
	X(LDR_E_UNSUPPORTED_LZ4_FRAME, UNSUPPORTED, "lz4 frame format is not supported (only the legacy format of lz4 -l)", LDR_HINT_FORMAT) \
	X(LDR_E_BZIMAGE_MAGIC, LOAD_ERROR, "not a bzImage (no HdrS and 0xAA55 in the setup header)", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_TRUNCATED, LOAD_ERROR, "bzImage shorter than its setup header", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_VERSION, UNSUPPORTED, "bzImage boot protocol older than 2.12", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_NOT_64, UNSUPPORTED, "bzImage has no 64-bit entry (XLF_KERNEL_64)", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_ALIGN, LOAD_ERROR, "bzImage kernel_alignment is not a power of two", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_OUTSIDE, LOAD_ERROR, "bzImage setup header, setup code or kernel lies outside the file", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_PAYLOAD, LOAD_ERROR, "bzImage payload lies outside the kernel image", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_FORMAT, LOAD_ERROR, "bzImage payload is not in a known compressed format", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_SIZE, LOAD_ERROR, "bzImage records an implausible decompressed size", LDR_HINT_BZIMAGE) \
	X(LDR_E_BZIMAGE_SIZE_MISMATCH, LOAD_ERROR, "bzImage payload decompressed to another size than it records", LDR_HINT_BZIMAGE) \
	X(LDR_E_FGK_NOTE, LOAD_ERROR, "malformed function-granular KASLR note", LDR_HINT_FGK) \
	X(LDR_E_FGK_NOT_SECTIONS, LOAD_ERROR, "function-granular KASLR needs an ET_EXEC linked with --emit-relocs", LDR_HINT_FGK) \
	X(LDR_E_FGK_NO_FUNCTIONS, LOAD_ERROR, "kernel asks for function-granular KASLR but has fewer than two function sections", LDR_HINT_FGK) \
	X(LDR_E_FGK_LAYOUT, LOAD_ERROR, "function sections are not one run of aligned code sections in one executable segment", LDR_HINT_FGK) \
	X(LDR_E_FGK_ROOM, LOAD_ERROR, "no room after the function sections for the padding a shuffled order may need", LDR_HINT_FGK) \
	X(LDR_E_FGK_TABLE, LOAD_ERROR, "a table named in the function-granular KASLR note is absent or malformed", LDR_HINT_FGK) \
	X(LDR_E_NOT_KERNEL, LOAD_ERROR, "not an ELF kernel: its first two bytes pass for a zlib header, but what follows does not inflate to an ELF file", \
	  "kernel= must name an ELF64 x86-64 kernel, plain or compressed (gzip, zlib, xz, lz4 -l, zstd), or a Linux bzImage; a flat binary (objcopy -O binary) is not one") \
	X(LDR_E_MMAP_DESC_SIZE, LOAD_ERROR, "bad memory map descriptor size", NULL) \
	X(LDR_E_MMAP_TOO_BIG, OUT_OF_RESOURCES, "memory map has too many entries", NULL) \
	X(LDR_E_NO_SLOT, OUT_OF_RESOURCES, "no memory slot large enough for the kernel", LDR_HINT_MEMORY) \
	X(LDR_E_VIRT_NO_SLOT, OUT_OF_RESOURCES, "no virtual slot for the kernel", NULL) \
	X(LDR_E_NO_ENTROPY, NOT_READY, "no entropy source", NULL) \
	X(LDR_E_PT_ALIGN, LOAD_ERROR, "page-table mapping not page-aligned", NULL) \
	X(LDR_E_OPT_UNKNOWN, INVALID_PARAMETER, "unknown option", LDR_HINT_OPTIONS) \
	X(LDR_E_OPT_UNKNOWN_ARG, INVALID_PARAMETER, "unknown loader option", \
	  "the kernel's own arguments go after \"--\" (kernel=FILE -- console=ttyS0)") \
	X(LDR_E_OPT_CONF_EQUALS, INVALID_PARAMETER, "kaslr.conf lines are \"key value\", not key=value", \
	  "write e.g. \"kernel vmlinuz\" (load options are the ones written key=value)") \
	X(LDR_E_OPT_VALUE, INVALID_PARAMETER, "bad option value", LDR_HINT_OPTIONS) \
	X(LDR_E_OPT_HEX, INVALID_PARAMETER, "bad value: expected exactly 64 hex digits (32 bytes)", NULL) \
	X(LDR_E_OPT_TOO_LONG, INVALID_PARAMETER, "options too long", LDR_HINT_OPTIONS) \
	X(LDR_E_OPT_TOO_MANY, INVALID_PARAMETER, "too many files of one kind", "at most 4 kernel=, 16 module= and 8 initrd= options (the initrds of all the kernels together)") \
	X(LDR_E_OPT_ENCODING, INVALID_PARAMETER, "options are not valid UCS-2 text", LDR_HINT_OPTIONS) \
	X(LDR_E_HASH_MISMATCH, SECURITY_VIOLATION, "kernel SHA-256 does not match sha256=", "the file changed or sha256= is stale") \
	X(LDR_E_MODULE_HASH_MISMATCH, SECURITY_VIOLATION, "module SHA-256 does not match its :sha256= pin", "the file changed or the pin is stale") \
	X(LDR_E_INITRD_HASH_MISMATCH, SECURITY_VIOLATION, "initrd SHA-256 does not match its :sha256= pin", "the file changed or the pin is stale") \
	X(LDR_E_EMPTY_FILE, LOAD_ERROR, "file is empty", "copy the kernel file again") \
	X(LDR_E_LINUX_SETUP, LOAD_ERROR, "the kernel's setup header is longer than boot_params holds", NULL) \
	X(LDR_E_PT_UNMAPPED, LOAD_ERROR, "address is not mapped by the page tables", NULL) \
	X(LDR_E_EBS_REFUSED, ABORTED, "ExitBootServices refused every memory map key", NULL) \
	X(LDR_E_EBS_MAP, ABORTED, "GetMemoryMap failed at ExitBootServices", NULL) \
	X(LDR_E_SLOT_REFUSED, OUT_OF_RESOURCES, "firmware refused every slot drawn for the kernel", NULL) \
	/* the embedded policy and Secure Boot (src/policy.c, src/pe.c) */ \
	X(LDR_E_PE_FORMAT, LOAD_ERROR, "malformed PE image headers", NULL) \
	X(LDR_E_PE_NO_SECTION, NOT_FOUND, "the PE image has no such section", NULL) \
	X(LDR_E_POLICY_FORMAT, SECURITY_VIOLATION, "the embedded policy is malformed", LDR_HINT_POLICY) \
	X(LDR_E_POLICY_TOO_BIG, BUFFER_TOO_SMALL, "the policy does not fit its section", "pin fewer files or shorten the command line") \
	X(LDR_E_POLICY_NONE, SECURITY_VIOLATION, "Secure Boot is on and the loader carries no policy", LDR_HINT_POLICY) \
	X(LDR_E_POLICY_UNPINNED, SECURITY_VIOLATION, "file is not pinned by the embedded policy", LDR_HINT_POLICY) \
	X(LDR_E_TCGLOG, LOAD_ERROR, "malformed TPM event log record", NULL) \
	X(LDR_E_POLICY_HASH, SECURITY_VIOLATION, "file's SHA-256 differs from the embedded policy's pin", "the file changed: install it again with make install (or the kernel hooks), which re-signs the loader") \
	X(LDR_E_SHIM_ABSENT, SECURITY_VIOLATION, "not pinned, and shim is absent (the firmware started the loader directly): only the policy's pins count", "start the loader through shim (make install SHIM=...), or pin the kernel with make install") \
	X(LDR_E_SHIM_REFUSED, SECURITY_VIOLATION, "not pinned, and shim's SHIM_LOCK Verify refused its signature", "boot a kernel signed by a key shim trusts (the distribution's, or an enrolled MOK)") \
	/* unified kernel images (src/uki.c, efi/uki.c) */ \
	X(LDR_E_UKI_HEADERS, LOAD_ERROR, "UKI: not an x86-64 PE32+ image of 1 to 96 sections", LDR_HINT_UKI) \
	X(LDR_E_UKI_NO_LINUX, LOAD_ERROR, "UKI without a .linux section", LDR_HINT_UKI) \
	X(LDR_E_UKI_SECTION, LOAD_ERROR, "UKI section outside the file or image, or in its headers or signature", LDR_HINT_UKI) \
	X(LDR_E_UKI_OVERLAP, LOAD_ERROR, "UKI sections overlap in memory", LDR_HINT_UKI) \
	X(LDR_E_UKI_NO_STUB, UNSUPPORTED, "UKI names no systemd-stub version (.sdmagic, .sbat)", LDR_HINT_UKI_STUB) \
	X(LDR_E_UKI_STUB_UNKNOWN, UNSUPPORTED, "UKI of a systemd-stub version whose measurements the loader does not make", LDR_HINT_UKI_STUB) \
	X(LDR_E_UKI_CMDLINE, INVALID_PARAMETER, "UKI command line not ASCII or over 4095 characters", NULL) \
	X(LDR_E_UKI_SIGNATURE, SECURITY_VIOLATION, "no pin admits it, and the firmware refused its signature (db, dbx)", \
	  "sign it with a key in db (sbsign), or pin it") \
	/* predicting the next boot's PCRs (src/pcrlog.c, kaslr-pcr) */ \
	X(LDR_E_PCRLOG, UNSUPPORTED, "the event log allows no exact prediction of that PCR", NULL) \
	/* end of LDR_ERRORS */

enum ldr_err {
#define LDR_ERR_ENUM(code, status, msg, hint) code,
	LDR_ERRORS(LDR_ERR_ENUM)
#undef LDR_ERR_ENUM
	LDR_ERR_COUNT
};

/* A short, constant, human-readable description of err. Never NULL. */
const char *ldr_strerror(enum ldr_err err);

/* What the user can do about err, or NULL when the message says it all. */
const char *ldr_err_hint_of(enum ldr_err err);

/* The code's own name ("LDR_E_BAD_MAGIC"), for tests and the corpus (host builds only). */
const char *ldr_err_name(enum ldr_err err);

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

/* Little-endian integers from untrusted bytes (no alignment assumed). */
static inline uint16_t ldr_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t ldr_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t ldr_le64(const uint8_t *p)
{
	return (uint64_t)ldr_le32(p) | (uint64_t)ldr_le32(p + 4) << 32;
}

/*
 * Host-order loads and stores of 4 and 8 bytes at any alignment: one move
 * each.  The EFI build compiles with -fno-builtin, where memcpy(&v, p, 8)
 * is a call; __builtin_memcpy of a constant size is always inlined.
 */
static inline uint32_t ldr_get32(const void *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t ldr_get64(const void *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ldr_put32(void *p, uint32_t v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

static inline void ldr_put64(void *p, uint64_t v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

static inline uint64_t ldr_align_up(uint64_t v, uint64_t a)
{
	return (v + (a - 1)) & ~(a - 1);
}

static inline uint64_t ldr_align_down(uint64_t v, uint64_t a)
{
	return v & ~(a - 1);
}

/*
 * Zero secret material (seeds, keys, hash states) in a way the compiler may
 * not elide even when the object is never read again: volatile stores, then
 * a barrier that claims to read the memory.
 */
static inline void ldr_wipe(void *p, size_t len)
{
	volatile uint8_t *v = (volatile uint8_t *)p;

	while (len--)
		*v++ = 0;
	__asm__ volatile("" : : "r"(p) : "memory");
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
