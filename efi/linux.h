/*
 * linux.h - the firmware side of Linux mode: memory for the zero page, the
 * command line and the setup_data chain (below 4 GiB, the loader's
 * reclaimable type), and filling it from the final memory map after
 * ExitBootServices.  The protocol itself is src/linux_boot.c.
 */
#ifndef EFI_LINUX_H
#define EFI_LINUX_H

#include "loader.h"
#include "memmap.h"

/*
 * Before ExitBootServices: allocate and lay out L->linux_block, copy the
 * command line, derive the kernel's RNG seed; log (verbose) the physical
 * base and the virtual offset.  Logs its own failure.
 */
EFI_STATUS linux_prepare(struct loader *L);

/*
 * After ExitBootServices, pure computation over the final map m: the e820
 * table (as e820_from_efi() converts it) into the zero page, then the
 * setup_data chain; in verbose mode the table is printed on COM1 in the
 * kernel's own "[mem 0x…-0x…]" form.  Returns the zero page's physical
 * address in *ret_bp.  Errors: those of e820_from_efi() and
 * linux_boot_params_fill().
 */
enum ldr_err linux_finish(struct loader *L, const struct efi_mmap *m, uint64_t acpi_rsdp,
			  uint64_t *ret_bp);

/* Release L->linux_block (a hand-off that failed before ExitBootServices). */
void linux_release(struct loader *L);

#endif
