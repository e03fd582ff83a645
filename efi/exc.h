/*
 * exc.h - the loader's early-exception reports, live from the hand-off until
 * the kernel loads its own IDT.
 */
#ifndef EFI_EXC_H
#define EFI_EXC_H

#include <stdint.h>

#include "kaslr_boot.h"

#define EXC_STUBS 33 /* vectors 0..31, then one for everything else */

/* addresses of the stubs, for IDT gates (vector >= 32 uses the last) */
extern const uint64_t exc_stub_table[EXC_STUBS];

/*
 * What a crash report needs to decode RIP; set once before the hand-off.
 * It stays in the loader image's data by design (include/PROTOCOL.md,
 * "What stays in memory"), tagged KB_CRASH_FACTS_MAGIC so that a kernel
 * (or a test) can find it.
 */
struct exc_facts {
	uint64_t magic; /* KB_CRASH_FACTS_MAGIC */
	uint64_t phys_base, virt_base, link_base, image_size;
	uint64_t phys_offset, virt_offset;
};
void exc_set_facts(const struct exc_facts *f);

#endif
