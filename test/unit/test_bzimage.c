/*
 * test_bzimage.c - host tests for src/bzimage.c on synthetic bzImages
 * (test/unit/decomp_fixture.h) around a small ELF: every payload format,
 * the header facts returned, one broken field at a time, truncation of the
 * file at every length, appended signatures, and the recorded size.  The
 * stock Debian kernels are checked by test/linux/check-bzimage.sh.
 */
#include <stdio.h>

#include "bzimage.h"
#include "decomp_fixture.h"
#include "elf_build.h"
#include "elf_load.h"
#include "test.h"

/* the payload's bytes (test_pipeline uses a real vmlinux.bin-like ELF) */
static struct buf kernel_elf(void)
{
	return (struct buf){ fx_data(100000, 77), 100000 };
}

enum fmt { F_XZ, F_LZ4, F_ZSTD, F_GZIP, F_COUNT };
static const char *const fmt_name[F_COUNT] = { "xz", "lz4", "zstd", "gzip" };

static struct buf stream_of(enum fmt f, const struct buf *k)
{
	switch (f) {
	case F_XZ: return fx_xz(k->p, k->len, 6, 32 * MIB);
	case F_LZ4: return fx_lz4(k->p, k->len);
	case F_ZSTD: return fx_zstd(k->p, k->len, 19, 1);
	default: return fx_gzip(k->p, k->len);
	}
}

static struct buf bz_of(enum fmt f, const struct buf *k)
{
	struct buf s = stream_of(f, k), b;

	b = fx_bzimage(s.p, s.len, f == F_GZIP, (uint32_t)k->len);
	free(s.p);
	return b;
}

static enum ldr_err parse(const struct buf *b, struct bzimage *bz)
{
	return bzimage_parse(b->p, b->len, DECOMP_DEFAULT_LIMIT, bz);
}

TEST(test_formats)
{
	struct buf k = kernel_elf();

	for (int f = 0; f < F_COUNT; f++) {
		struct buf b = bz_of((enum fmt)f, &k);
		struct bzimage bz;
		struct counting_alloc c;
		struct decomp_alloc a = ca_cap(&c);
		void *out = NULL;
		uint64_t len = 0, cap = 0;
		const uint8_t *payload = b.p + FX_BZ_SETUP + FX_BZ_POFF;

		CHECK(bzimage_detect(b.p, b.len), "%s: detected", fmt_name[f]);
		CHECK_EQ_U64(parse(&b, &bz), LDR_OK, "%s: parses", fmt_name[f]);
		CHECK_EQ_U64(bz.version, 0x020f, "%s: version", fmt_name[f]);
		CHECK_EQ_U64(bz.setup_size, FX_BZ_SETUP, "%s: setup size", fmt_name[f]);
		CHECK_EQ_U64(bz.image_size, b.len, "%s: image size", fmt_name[f]);
		CHECK(bz.setup_header == b.p + 0x1f1 && bz.setup_header_len == 0x26c - 0x1f1,
		      "%s: setup header bytes", fmt_name[f]);
		CHECK(bz.payload == payload && bz.stream == payload, "%s: payload", fmt_name[f]);
		CHECK_EQ_U64(bz.payload_len - bz.stream_len, f == F_GZIP ? 0 : 4,
			     "%s: the size word is not part of the stream", fmt_name[f]);
		CHECK_EQ_U64(bz.format, f == F_XZ ? DECOMP_XZ : f == F_LZ4 ? DECOMP_LZ4 :
				     f == F_ZSTD ? DECOMP_ZSTD : DECOMP_GZIP,
			     "%s: format", fmt_name[f]);
		CHECK_EQ_U64(bz.decompressed_size, k.len, "%s: recorded size", fmt_name[f]);
		CHECK(bz.init_size == 0x4000000 && bz.kernel_alignment == 0x200000 &&
		      bz.min_alignment == 21 && bz.xloadflags == 3 && bz.cmdline_size == 2047 &&
		      bz.initrd_addr_max == 0x7fffffff && bz.pref_address == 0x1000000 &&
		      bz.relocatable == 1,
		      "%s: header facts", fmt_name[f]);
		CHECK_EQ_U64(bzimage_decompress(&bz, DECOMP_DEFAULT_LIMIT, &a, &out, &len, &cap),
			     LDR_OK, "%s: decompresses", fmt_name[f]);
		CHECK(len == k.len && cap == k.len && memcmp(out, k.p, k.len) == 0,
		      "%s: vmlinux.bin back, in one buffer of its size", fmt_name[f]);
		if (out)
			a.free(a.ctx, out, cap);
		CHECK_EQ_U64(c.live, 0, "%s: nothing leaked", fmt_name[f]);
		free(b.p);
	}
	free(k.p);
}

/* One field broken at a time: its own error */
TEST(test_header_fields)
{
	struct buf k = kernel_elf(), s = stream_of(F_XZ, &k);
	size_t size_word = FX_BZ_SETUP + FX_BZ_POFF + s.len;
	const struct {
		const char *name;
		size_t off;
		unsigned width;
		uint32_t val;
		enum ldr_err want;
	} t[] = {
		{ "no 0xaa55", 0x1fe, 1, 0x00, LDR_E_BZIMAGE_MAGIC },
		{ "no HdrS", 0x202, 1, 'h', LDR_E_BZIMAGE_MAGIC },
		{ "version 2.11", 0x206, 2, 0x020b, LDR_E_BZIMAGE_VERSION },
		{ "version 1.0", 0x206, 2, 0x0100, LDR_E_BZIMAGE_VERSION },
		{ "32-bit only", 0x236, 2, 0x0002, LDR_E_BZIMAGE_NOT_64 },
		{ "alignment 0", 0x230, 4, 0, LDR_E_BZIMAGE_ALIGN },
		{ "alignment 3 MiB", 0x230, 4, 0x300000, LDR_E_BZIMAGE_ALIGN },
		{ "jump opcode", 0x200, 1, 0xe9, LDR_E_BZIMAGE_OUTSIDE },
		{ "header ends at 0x252", 0x201, 1, 0x50, LDR_E_BZIMAGE_OUTSIDE },
		{ "header ends at 0x301", 0x201, 1, 0xff, LDR_E_BZIMAGE_OUTSIDE },
		{ "setup_sects 255", 0x1f1, 1, 255, LDR_E_BZIMAGE_OUTSIDE },
		{ "setup_sects 1: the payload moves", 0x1f1, 1, 1, LDR_E_BZIMAGE_FORMAT },
		{ "syssize 2^32-1", 0x1f4, 4, 0xffffffff, LDR_E_BZIMAGE_OUTSIDE },
		{ "syssize 0", 0x1f4, 4, 0, LDR_E_BZIMAGE_PAYLOAD },
		{ "payload_offset 2^32-16", 0x248, 4, 0xfffffff0, LDR_E_BZIMAGE_PAYLOAD },
		{ "payload_length 2^32-1", 0x24c, 4, 0xffffffff, LDR_E_BZIMAGE_PAYLOAD },
		{ "payload_length 4", 0x24c, 4, 4, LDR_E_BZIMAGE_PAYLOAD },
		{ "payload_length 0", 0x24c, 4, 0, LDR_E_BZIMAGE_PAYLOAD },
		/* 7 bytes: the xz magic runs into the size word */
		{ "payload_length 7", 0x24c, 4, 7, LDR_E_BZIMAGE_PAYLOAD },
		{ "payload not compressed", FX_BZ_SETUP + FX_BZ_POFF, 1, 0x7f, LDR_E_BZIMAGE_FORMAT },
		{ "payload bzip2", FX_BZ_SETUP + FX_BZ_POFF, 4, 0x39685a42, LDR_E_UNSUPPORTED_BZIP2 },
		{ "payload lzo", FX_BZ_SETUP + FX_BZ_POFF, 4, 0x4f5a4c89, LDR_E_UNSUPPORTED_LZO },
		{ "payload lz4 frame", FX_BZ_SETUP + FX_BZ_POFF, 4, 0x184d2204,
		  LDR_E_UNSUPPORTED_LZ4_FRAME },
		{ "size word 0", size_word, 4, 0, LDR_E_BZIMAGE_SIZE },
		{ "size word 63", size_word, 4, 63, LDR_E_BZIMAGE_SIZE },
		{ "size word 2^32-1", size_word, 4, 0xffffffff, LDR_E_DECOMP_TOO_BIG },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct buf b = fx_bzimage(s.p, s.len, 0, (uint32_t)k.len);
		struct bzimage bz;

		for (unsigned w = 0; w < t[i].width; w++)
			b.p[t[i].off + w] = (uint8_t)(t[i].val >> (8 * w));
		memset(&bz, 0xa5, sizeof(bz));
		CHECK_EQ_U64(parse(&b, &bz), t[i].want, "%s", t[i].name);
		CHECK(bz.version == 0xa5a5, "%s: *ret untouched on error", t[i].name);
		free(b.p);
	}
	/* setup_sects 0 means 4 */
	{
		struct buf b = fx_bzimage(s.p, s.len, 0, (uint32_t)k.len);
		struct bzimage bz;

		b.p[0x1f1] = 0;
		memmove(b.p + 5 * 512, b.p + 4 * 512, b.len - 4 * 512);
		b.len += 512;
		CHECK_EQ_U64(parse(&b, &bz), LDR_OK, "setup_sects 0");
		CHECK_EQ_U64(bz.setup_size, 5 * 512, "setup_sects 0 is 4 sectors");
		free(b.p);
	}
	free(s.p);
	free(k.p);
}

/* relocatable_kernel 0 (no RELOCATABLE): parsed, said, left to the caller */
TEST(test_not_relocatable)
{
	struct buf k = kernel_elf(), b = bz_of(F_XZ, &k);
	struct bzimage bz;

	b.p[0x234] = 0;
	memset(&bz, 0xa5, sizeof(bz));
	CHECK_EQ_U64(parse(&b, &bz), LDR_OK, "a non-relocatable bzImage parses");
	CHECK_EQ_U64(bz.relocatable, 0, "and says it is not relocatable");
	CHECK_EQ_U64(bz.pref_address, 0x1000000, "its pref_address, for the caller");
	b.p[0x234] = 2;
	CHECK(parse(&b, &bz) == LDR_OK && bz.relocatable == 1, "any non-zero byte is relocatable");
	free(b.p);
	free(k.p);
}

/* Every length of the file short of the image: an error, never a read past it */
TEST(test_truncated_file)
{
	struct buf k = kernel_elf();
	struct buf b = bz_of(F_LZ4, &k);
	unsigned ok = 0, bad = 0;

	for (size_t n = 0; n < b.len; n++) {
		struct bzimage bz;
		/* an exact copy: ASan sees a read past n */
		uint8_t *t = malloc(n ? n : 1);
		enum ldr_err err;

		memcpy(t, b.p, n);
		err = bzimage_parse(t, n, DECOMP_DEFAULT_LIMIT, &bz);
		if (err == LDR_OK)
			ok++;
		else if (err != LDR_E_BZIMAGE_TRUNCATED && err != LDR_E_BZIMAGE_MAGIC &&
			 err != LDR_E_BZIMAGE_OUTSIDE)
			bad++;
		free(t);
	}
	CHECK_EQ_U64(ok, 0, "a cut file parsed");
	CHECK_EQ_U64(bad, 0, "a cut file gave another error than truncated/outside/magic");
	free(b.p);
	free(k.p);
}

/* A signature after the declared image (sbsign appends one) is not read */
TEST(test_signed)
{
	struct buf k = kernel_elf(), b = bz_of(F_XZ, &k);
	struct bzimage bz;
	struct counting_alloc c;
	struct decomp_alloc a = ca_cap(&c);
	void *out;
	uint64_t len, cap;
	size_t image = b.len;

	memset(b.p + b.len, 0x30, 2048);
	b.len += 2048;
	CHECK_EQ_U64(parse(&b, &bz), LDR_OK, "signed parses");
	CHECK_EQ_U64(bz.image_size, image, "image size excludes the signature");
	CHECK_EQ_U64(bzimage_decompress(&bz, DECOMP_DEFAULT_LIMIT, &a, &out, &len, &cap), LDR_OK,
		     "signed decompresses");
	CHECK(len == k.len && memcmp(out, k.p, k.len) == 0, "signed: bytes");
	a.free(a.ctx, out, cap);
	/* a payload reaching into the signature is outside the image */
	fx_put_le32(b.p + 0x24c, ldr_le32(b.p + 0x24c) + 32);
	CHECK_EQ_U64(parse(&b, &bz), LDR_E_BZIMAGE_PAYLOAD, "payload past the image");
	free(b.p);
	free(k.p);
}

/* The recorded size must be what comes out; the limit applies to the claim */
TEST(test_recorded_size)
{
	struct buf k = kernel_elf(), s = stream_of(F_ZSTD, &k);
	static const int64_t delta[] = { -1, 1, 4096, -4096 };

	for (size_t i = 0; i < sizeof(delta) / sizeof(delta[0]); i++) {
		struct buf b = fx_bzimage(s.p, s.len, 0, (uint32_t)((int64_t)k.len + delta[i]));
		struct bzimage bz;
		struct counting_alloc c;
		struct decomp_alloc a = ca_cap(&c);
		void *out = (void *)1;
		uint64_t len = 5, cap = 6;

		CHECK_EQ_U64(parse(&b, &bz), LDR_OK, "size %+lld parses", (long long)delta[i]);
		CHECK_EQ_U64(bzimage_decompress(&bz, DECOMP_DEFAULT_LIMIT, &a, &out, &len, &cap),
			     LDR_E_BZIMAGE_SIZE_MISMATCH, "size %+lld", (long long)delta[i]);
		CHECK(out == (void *)1 && len == 5 && cap == 6, "outputs untouched");
		CHECK_EQ_U64(c.live, 0, "size %+lld: nothing leaked", (long long)delta[i]);
		free(b.p);
	}
	{
		struct buf b = fx_bzimage(s.p, s.len, 0, (uint32_t)k.len);
		struct bzimage bz;

		CHECK_EQ_U64(bzimage_parse(b.p, b.len, k.len - 1, &bz), LDR_E_DECOMP_TOO_BIG,
			     "limit below the recorded size");
		CHECK_EQ_U64(bzimage_parse(b.p, b.len, k.len, &bz), LDR_OK, "limit = recorded size");
		free(b.p);
	}
	free(s.p);
	free(k.p);
}

/* bzImage -> vmlinux.bin -> elf_parse, as the Linux protocol module will */
TEST(test_pipeline)
{
	static const uint32_t r64[] = { 0x81001100u }, rinv[] = { 0x81001300u },
			      r32[] = { 0x81001200u };
	static struct eb e;
	struct buf s, b;
	struct bzimage bz;
	struct elf_image img;
	struct counting_alloc c;
	struct decomp_alloc a = ca_cap(&c);
	void *out = NULL;
	uint64_t len = 0, cap = 0;

	memset(&e, 0, sizeof(e));
	eb_linux(&e);
	eb_linux_table(&e, r64, 1, rinv, 1, r32, 1);
	eb_write(&e);
	s = stream_of(F_XZ, &(struct buf){ e.buf, e.size });
	b = fx_bzimage(s.p, s.len, 0, (uint32_t)e.size);
	CHECK_EQ_U64(parse(&b, &bz), LDR_OK, "pipeline: parse");
	CHECK_EQ_U64(bzimage_decompress(&bz, DECOMP_DEFAULT_LIMIT, &a, &out, &len, &cap), LDR_OK,
		     "pipeline: decompress");
	CHECK(len == e.size && memcmp(out, e.buf, len) == 0, "pipeline: vmlinux.bin back");
	CHECK_EQ_U64(elf_parse(out, len, NULL, &img), LDR_OK, "pipeline: elf_parse");
	CHECK(img.reloc_kind != ELF_RELOC_NONE, "pipeline: the Linux table is found");
	if (out)
		a.free(a.ctx, out, cap);
	free(b.p);
	free(s.p);
}
