/*
 * bzimage.h - the x86 Linux bzImage as a container: its setup header
 * (boot protocol 2.12 or later, 64-bit) and its compressed
 * payload, whose decompression is vmlinux.bin: the ELF kernel followed by
 * Linux's relocation table (include/linux_reloc.h).
 */
#ifndef BZIMAGE_H
#define BZIMAGE_H

#include "decompress.h"

/* setup header fields (offsets in the file, as in boot_params) */
#define BZ_SETUP_SECTS      0x1f1
#define BZ_SYSSIZE          0x1f4
#define BZ_BOOT_FLAG        0x1fe  /* 0xaa55 */
#define BZ_JUMP             0x200  /* 0xeb, then the header's length - 2 */
#define BZ_HEADER_MAGIC     0x202  /* "HdrS" */
#define BZ_VERSION          0x206
#define BZ_INITRD_ADDR_MAX  0x22c
#define BZ_KERNEL_ALIGNMENT 0x230
#define BZ_RELOCATABLE      0x234
#define BZ_MIN_ALIGNMENT    0x235
#define BZ_XLOADFLAGS       0x236
#define BZ_CMDLINE_SIZE     0x238
#define BZ_PAYLOAD_OFFSET   0x248
#define BZ_PAYLOAD_LENGTH   0x24c
#define BZ_PREF_ADDRESS     0x258
#define BZ_INIT_SIZE        0x260
/* the fields above end here: a shorter header lacks some of them */
#define BZ_HEADER_MIN_END   0x268
/* boot_params keeps the header in [0x1f1, 0x290) */
#define BZ_HEADER_MAX_END   0x290

#define BZ_MIN_VERSION      0x020c
#define XLF_KERNEL_64              (1u << 0)
#define XLF_CAN_BE_LOADED_ABOVE_4G (1u << 1)

struct bzimage {
	uint16_t version;           /* 0x020f for Linux 6.1 */
	uint64_t setup_size;        /* (setup_sects + 1) * 512: the 64-bit code starts here */
	uint64_t image_size;        /* setup_size + syssize * 16: the bzImage proper; a
				     * signature may follow it in the file */
	const uint8_t *setup_header;/* file bytes [0x1f1, 0x202 + byte at 0x201), to copy */
	uint32_t setup_header_len;  /* into boot_params at 0x1f1 */
	const uint8_t *payload;     /* as recorded: [payload_offset, +payload_length) */
	uint64_t payload_len;
	const uint8_t *stream;      /* the compressed stream in it (gzip: all of it; */
	uint64_t stream_len;        /* the others: all but the appended size word) */
	enum decomp_format format;
	uint32_t decompressed_size; /* the payload's last 4 bytes: vmlinux.bin's size */
	uint32_t init_size;         /* memory the kernel needs from its load address */
	uint32_t kernel_alignment;  /* a power of two */
	uint8_t min_alignment;      /* log2 */
	uint8_t relocatable;        /* relocatable_kernel: 0 = runs only at
				     * pref_address (built without RELOCATABLE) */
	uint16_t xloadflags;        /* XLF_* */
	uint32_t initrd_addr_max;
	uint32_t cmdline_size;
	uint64_t pref_address;
};

/* Whether file looks like a bzImage at all (0xAA55 and "HdrS"). */
int bzimage_detect(const void *file, uint64_t size);

/*
 * Validate the setup header of file[0..size) and find its payload.
 * `limit` bounds the size the payload claims (kaslr.maxsize=).
 * On success *ret holds pointers into file.  Errors: LDR_E_BZIMAGE_*,
 * LDR_E_UNSUPPORTED_* (payload in a format the loader refuses),
 * LDR_E_DECOMP_TOO_BIG (claims more than limit).
 */
enum ldr_err bzimage_parse(const void *file, uint64_t size, uint64_t limit,
			   struct bzimage *ret);

/*
 * Decompress bz's payload (decomp_image with its size as the hint) and
 * check that it came out as large as the bzImage records
 * (LDR_E_BZIMAGE_SIZE_MISMATCH otherwise).  Outputs as decomp_image().
 */
enum ldr_err bzimage_decompress(const struct bzimage *bz, uint64_t limit,
				const struct decomp_alloc *a, void **ret_out,
				uint64_t *ret_len, uint64_t *ret_cap);

#endif
