/*
 * zstd_legacy.c - keeps libzstd's decoders of its pre-1.0 formats (v0.5 to
 * v0.7) out of the image: 81 KB of code no boot can reach.  src/decomp_zstd.c
 * reads a stream's frame header before decoding (ZSTD_getFrameHeader
 * refuses every magic number but the current format's) and decodes that one
 * frame only, so libzstd never enters its legacy paths.  These definitions
 * satisfy zstd_decompress.o's references to them, so that ld does not pull
 * zstd_v05.o, zstd_v06.o and zstd_v07.o out of libzstd.a; should the library
 * reach one after all, each refuses: no context, an error code, no frame.
 * The host build links the whole library; decoding is the same there.
 */
#include <stddef.h>

/* any value libzstd's legacy checks take for an error ((size_t)-1: generic) */
#define LEGACY_ERROR ((size_t)-1)
#define LEGACY_CONTENTSIZE_ERROR (0ULL - 2)

#define LEGACY_VERSION(v) \
	void *ZBUFF##v##_createDCtx(void); \
	void *ZBUFF##v##_createDCtx(void) { return NULL; } \
	size_t ZBUFF##v##_freeDCtx(void *d); \
	size_t ZBUFF##v##_freeDCtx(void *d) { (void)d; return 0; } \
	size_t ZBUFF##v##_decompressInitDictionary(void *d, const void *dict, size_t n); \
	size_t ZBUFF##v##_decompressInitDictionary(void *d, const void *dict, size_t n) \
	{ (void)d; (void)dict; (void)n; return LEGACY_ERROR; } \
	size_t ZBUFF##v##_decompressContinue(void *d, void *dst, size_t *dn, const void *src, \
					     size_t *sn); \
	size_t ZBUFF##v##_decompressContinue(void *d, void *dst, size_t *dn, const void *src, \
					     size_t *sn) \
	{ (void)d; (void)dst; (void)src; *dn = 0; *sn = 0; return LEGACY_ERROR; } \
	void *ZSTD##v##_createDCtx(void); \
	void *ZSTD##v##_createDCtx(void) { return NULL; } \
	size_t ZSTD##v##_freeDCtx(void *d); \
	size_t ZSTD##v##_freeDCtx(void *d) { (void)d; return 0; } \
	size_t ZSTD##v##_decompress_usingDict(void *d, void *dst, size_t dn, const void *src, \
					      size_t sn, const void *dict, size_t n); \
	size_t ZSTD##v##_decompress_usingDict(void *d, void *dst, size_t dn, const void *src, \
					      size_t sn, const void *dict, size_t n) \
	{ (void)d; (void)dst; (void)dn; (void)src; (void)sn; (void)dict; (void)n; \
	  return LEGACY_ERROR; } \
	size_t ZSTD##v##_getFrameParams(void *params, const void *src, size_t sn); \
	size_t ZSTD##v##_getFrameParams(void *params, const void *src, size_t sn) \
	{ (void)params; (void)src; (void)sn; return LEGACY_ERROR; } \
	void ZSTD##v##_findFrameSizeInfoLegacy(const void *src, size_t sn, size_t *csize, \
					       unsigned long long *dbound); \
	void ZSTD##v##_findFrameSizeInfoLegacy(const void *src, size_t sn, size_t *csize, \
					       unsigned long long *dbound) \
	{ (void)src; (void)sn; *csize = LEGACY_ERROR; *dbound = LEGACY_CONTENTSIZE_ERROR; }

LEGACY_VERSION(v05)
LEGACY_VERSION(v06)
LEGACY_VERSION(v07)
