/*
 * zglue.h - what Debian's libz.a, liblzma.a, liblz4.a and libzstd.a need
 * from their host inside the EFI image: an allocator that works with
 * interrupts masked, malloc/free, and a real stack-protector canary at
 * %fs:0x28.
 */
#ifndef EFI_ZGLUE_H
#define EFI_ZGLUE_H

#include <efi.h>
#include <efilib.h>
#include "decompress.h"

/*
 * Point FS at a loader-owned block whose word at 0x28 is `canary` (random,
 * from the entropy pool), remembering firmware's FS base; zglue_leave()
 * restores it.  Every return to firmware and the hand-off go through leave.
 */
void zglue_enter(EFI_HANDLE image, uint64_t canary);
void zglue_leave(void);

/* Called, if set, when a library's stack check fails, before the loader
 * exits to firmware from there: wipes the loader's secrets. */
extern void (*zglue_abort_hook)(void);

/* Zero the canary (it came from the entropy pool); before the jump. */
void zglue_wipe(void);

/* The allocator capability src/decompress.c takes: pages for the output,
 * the arena (see zglue.c) for library state, TPL_HIGH_LEVEL around calls. */
extern const struct decomp_alloc zglue_alloc;

#endif
