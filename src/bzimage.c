/*
 * bzimage.c - parse an x86 Linux bzImage's setup header and find its
 * compressed payload; decompress the payload and check its recorded size.
 * Every offset and length comes from the file: each is bounds-checked
 * before it is used, without forming a sum that could wrap.
 */
#include <string.h>

#include "bzimage.h"

/* vmlinux.bin holds at least an ELF header */
#define BZ_MIN_DECOMPRESSED 64

int bzimage_detect(const void *file, uint64_t size)
{
	const uint8_t *b = file;

	return size >= BZ_HEADER_MAGIC + 4 && ldr_le16(b + BZ_BOOT_FLAG) == 0xaa55 &&
	       memcmp(b + BZ_HEADER_MAGIC, "HdrS", 4) == 0;
}

static enum ldr_err bz_unsupported(enum decomp_format fmt)
{
	switch (fmt) {
	case DECOMP_BZIP2: return LDR_E_UNSUPPORTED_BZIP2;
	case DECOMP_LZMA: return LDR_E_UNSUPPORTED_LZMA;
	case DECOMP_LZO: return LDR_E_UNSUPPORTED_LZO;
	case DECOMP_LZ4_FRAME: return LDR_E_UNSUPPORTED_LZ4_FRAME;
	case DECOMP_NONE: return LDR_E_BZIMAGE_FORMAT;
	default: return LDR_OK;
	}
}

enum ldr_err bzimage_parse(const void *file, uint64_t size, uint64_t limit,
			   struct bzimage *ret)
{
	const uint8_t *b = file;
	struct bzimage bz;
	uint64_t hdr_end, poff, plen;
	unsigned sects;
	enum ldr_err err;

	if (!bzimage_detect(file, size))
		return size < BZ_HEADER_MAGIC + 4 ? LDR_E_BZIMAGE_TRUNCATED : LDR_E_BZIMAGE_MAGIC;
	if (size < BZ_VERSION + 2)
		return LDR_E_BZIMAGE_TRUNCATED;
	memset(&bz, 0, sizeof(bz));
	bz.version = ldr_le16(b + BZ_VERSION);
	if (bz.version < BZ_MIN_VERSION)
		return LDR_E_BZIMAGE_VERSION;
	if (size < BZ_HEADER_MIN_END)
		return LDR_E_BZIMAGE_TRUNCATED;
	/* the header's length is in its leading short jump */
	hdr_end = BZ_HEADER_MAGIC + (uint64_t)b[BZ_JUMP + 1];
	if (b[BZ_JUMP] != 0xeb || hdr_end < BZ_HEADER_MIN_END || hdr_end > BZ_HEADER_MAX_END)
		return LDR_E_BZIMAGE_OUTSIDE;
	if (hdr_end > size)
		return LDR_E_BZIMAGE_TRUNCATED;
	bz.setup_header = b + BZ_SETUP_SECTS;
	bz.setup_header_len = (uint32_t)(hdr_end - BZ_SETUP_SECTS);

	bz.xloadflags = ldr_le16(b + BZ_XLOADFLAGS);
	if (!(bz.xloadflags & XLF_KERNEL_64))
		return LDR_E_BZIMAGE_NOT_64;
	/* a kernel that is not relocatable is the caller's to place (at
	 * pref_address) or refuse */
	bz.relocatable = b[BZ_RELOCATABLE] != 0;
	bz.kernel_alignment = ldr_le32(b + BZ_KERNEL_ALIGNMENT);
	if (bz.kernel_alignment == 0 || (bz.kernel_alignment & (bz.kernel_alignment - 1)))
		return LDR_E_BZIMAGE_ALIGN;
	bz.min_alignment = b[BZ_MIN_ALIGNMENT];
	bz.initrd_addr_max = ldr_le32(b + BZ_INITRD_ADDR_MAX);
	bz.cmdline_size = ldr_le32(b + BZ_CMDLINE_SIZE);
	bz.pref_address = ldr_le64(b + BZ_PREF_ADDRESS);
	bz.init_size = ldr_le32(b + BZ_INIT_SIZE);

	/* setup sectors, then the kernel (syssize 16-byte units); anything
	 * after that in the file (a PE signature) is not ours to read */
	sects = b[BZ_SETUP_SECTS] ? b[BZ_SETUP_SECTS] : 4;
	bz.setup_size = ((uint64_t)sects + 1) * 512;
	bz.image_size = bz.setup_size + (uint64_t)ldr_le32(b + BZ_SYSSIZE) * 16;
	if (bz.setup_size < hdr_end || bz.image_size > size)
		return LDR_E_BZIMAGE_OUTSIDE;

	/* the payload: stream, then (but for gzip) its size as le32 */
	poff = bz.setup_size + ldr_le32(b + BZ_PAYLOAD_OFFSET);
	plen = ldr_le32(b + BZ_PAYLOAD_LENGTH);
	if (plen <= 4 || !ldr_in_bounds(poff, plen, bz.image_size))
		return LDR_E_BZIMAGE_PAYLOAD;
	bz.payload = b + poff;
	bz.payload_len = plen;
	bz.format = decomp_detect(bz.payload, plen);
	err = bz_unsupported(bz.format);
	if (err != LDR_OK)
		return err;
	bz.decompressed_size = ldr_le32(bz.payload + plen - 4);
	bz.stream = bz.payload;
	bz.stream_len = bz.format == DECOMP_GZIP ? plen : plen - 4;
	/* the magic must lie in the stream, not reach into the size word */
	if (decomp_detect(bz.stream, bz.stream_len) != bz.format)
		return LDR_E_BZIMAGE_PAYLOAD;
	if (bz.decompressed_size < BZ_MIN_DECOMPRESSED)
		return LDR_E_BZIMAGE_SIZE;
	if (bz.decompressed_size > limit)
		return LDR_E_DECOMP_TOO_BIG;
	*ret = bz;
	return LDR_OK;
}

enum ldr_err bzimage_decompress(const struct bzimage *bz, uint64_t limit,
				const struct decomp_alloc *a, void **ret_out,
				uint64_t *ret_len, uint64_t *ret_cap)
{
	void *out;
	uint64_t len, cap;
	enum ldr_err err;

	err = decomp_image(bz->stream, bz->stream_len, limit, bz->decompressed_size, a, &out,
			   &len, &cap);
	if (err != LDR_OK)
		return err;
	if (len != bz->decompressed_size) {
		a->free(a->ctx, out, cap);
		return LDR_E_BZIMAGE_SIZE_MISMATCH;
	}
	*ret_out = out;
	*ret_len = len;
	*ret_cap = cap;
	return LDR_OK;
}
