/*
 * decomp_backend.h - what src/decompress.c (the driver: buffers, limit,
 * guard, progress) asks of each library backend (src/decomp_gzip.c,
 * decomp_xz.c, decomp_lz4.c, decomp_zstd.c).  Internal to the core.
 */
#ifndef DECOMP_BACKEND_H
#define DECOMP_BACKEND_H

#include "decompress.h"

/* One decompression: the driver's view plus the backend's own state. */
struct decomp_run {
	const struct decomp_alloc *a;
	const uint8_t *in;      /* the whole stream */
	uint64_t in_len;
	uint64_t limit;         /* the output limit */
	uint64_t mem_need;      /* prepare / DS_NEED_MEM: total library state */
	uint64_t size_hint;     /* prepare: output size the stream claims, or 0 */
	uint64_t produced;      /* output made by the steps before this one */
	enum ldr_err err;       /* DS_ERROR: why */
	void *lib;              /* the backend's state */
	uint64_t pos;           /* the LZ4 backend's own input position */
	int lz4_short;          /* the LZ4 backend: last block was short */
};

/*
 * One call's window: the driver fills all but the last two, the backend
 * those.  buf, buf_cap and buf_used describe the whole output buffer, for a
 * backend that decodes straight into it and bounds a call by its input
 * instead (zstd with a stable output buffer); out/out_avail is the chunk.
 */
struct decomp_io {
	const uint8_t *in;
	uint64_t in_avail;
	int in_last;            /* in_avail reaches the end of the input */
	uint8_t *out;           /* buf + buf_used */
	uint64_t out_avail;     /* may be 0: "finish without more output" */
	uint8_t *buf;
	uint64_t buf_cap, buf_used;
	uint64_t in_used;
	uint64_t out_made;
};

enum decomp_status {
	DS_MORE,     /* call again (progress or not: the driver judges) */
	DS_END,      /* the stream ended, all output delivered */
	DS_NEED_OUT, /* cannot go on without more output room */
	DS_NEED_MEM, /* needs r->mem_need bytes of state: raise, then go on */
	DS_ERROR,    /* r->err */
};

/*
 * Every function is called inside the guard.  prepare() allocates nothing:
 * it checks the header it needs and sets r->mem_need (the state init()
 * and the first steps may allocate) and r->size_hint; the driver reserves
 * that much before init().  raise_mem is only needed by backends that can
 * return DS_NEED_MEM.  end() frees everything init() and steps allocated
 * and is called after any init() that returned LDR_OK.
 */
struct decomp_backend {
	enum ldr_err (*prepare)(struct decomp_run *r);
	enum ldr_err (*init)(struct decomp_run *r);
	enum decomp_status (*step)(struct decomp_run *r, struct decomp_io *io);
	enum ldr_err (*raise_mem)(struct decomp_run *r);
	void (*end)(struct decomp_run *r);
	uint64_t mem_max;       /* refuse a stream whose state exceeds this */
	uint64_t out_chunk;     /* output offered per step; 0: DECOMP_CHUNK */
};

extern const struct decomp_backend decomp_gzip, decomp_zlib, decomp_xz, decomp_lz4,
	decomp_zstd;

/* Library state through a->alloc with the size kept in front (the
 * libraries' free functions are not told it); 16-byte aligned. */
void *decomp_lib_alloc(const struct decomp_alloc *a, uint64_t size);
void decomp_lib_free(const struct decomp_alloc *a, void *p);

/* bytes of bookkeeping decomp_lib_alloc adds to each allocation */
#define DECOMP_LIB_OVERHEAD 16

#endif
