/*
 * payload/fgk.h - what the generated functions of the function-granular
 * KASLR test kernel (payload/fgkgen.c) and its checks (payload/fgk_main.c)
 * share: each function's id, the tables' entry layouts, the symbols.
 */
#ifndef PAYLOAD_FGK_H
#define PAYLOAD_FGK_H

#include <stdint.h>

/* What fgk_fn_i returns: distinct for every i, never a small number. */
#define FGK_ID(i) (0x5a000000ULL + (uint64_t)(i) * 7919u)

/* .fgk_abs: sorted by addr (note: KASLR_FGK_KEY_ABS64 at offset 0) */
struct fgk_abs_entry {
	uint64_t addr, id;
};

/* .fgk_rel: sorted by the address fn points at (KASLR_FGK_KEY_REL32 at
 * offset 0); fn and anchor are both PC-relative (rel_mask 0x3) */
struct fgk_rel_entry {
	int32_t fn, anchor;
	uint32_t id, pad;
};

extern const uint32_t fgk_count;
extern uint64_t (*const fgk_ptr_ro[])(uint64_t);
extern uint64_t (*fgk_ptr_rw[])(uint64_t);
extern const uint64_t fgk_link[];
extern const uint64_t fgk_anchor[];
uint64_t fgk_direct(uint32_t i, uint64_t d);

/* the other two function sections, the dispatcher and the entry point
 * (entry.S's, moved into .text._start by payload/fgk.mk), and their link
 * addresses as absolute symbols (fgkgen's OUT.lds) */
void _start(void);
extern const char fgk_link_direct[], fgk_link_start[];

/* the table sections' bounds, from payload/fgk.lds */
extern const struct fgk_abs_entry fgk_abs_start[], fgk_abs_end[];
extern const struct fgk_rel_entry fgk_rel_start[], fgk_rel_end[];

#endif
