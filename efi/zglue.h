/*
 * zglue.h - what Debian's libz.a needs from its host inside the EFI image:
 * malloc/free, and a real stack-protector canary at %fs:0x28.
 */
#ifndef EFI_ZGLUE_H
#define EFI_ZGLUE_H

#include <efi.h>
#include <efilib.h>
#include "inflate.h"

/*
 * Point FS at a loader-owned block whose word at 0x28 is `canary` (random,
 * from the entropy pool), remembering firmware's FS base; zglue_leave()
 * restores it.  Every return to firmware and the hand-off go through leave.
 */
void zglue_enter(EFI_HANDLE image, uint64_t canary);
void zglue_leave(void);

/* Zero the canary (it came from the entropy pool); before the jump. */
void zglue_wipe(void);

/* The allocator capability src/inflate.c takes: pool for small, pages for big. */
extern const struct inflate_alloc zglue_alloc;

#endif
