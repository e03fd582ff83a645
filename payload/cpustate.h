/*
 * payload/cpustate.h - checks of the CPU state a kernel of this protocol is
 * entered with (include/PROTOCOL.md, "Entry state"): CR0 and CR4, the x87
 * and SSE state, masked interrupt controllers, and the TSC frequency the
 * loader handed over against the PIT.  A failed check reports through the
 * callback and does not return.
 */
#ifndef PAYLOAD_CPUSTATE_H
#define PAYLOAD_CPUSTATE_H

#include <stdint.h>

#include "kaslr_boot.h"
#include "leftovers.h"

struct cs_report {
	uint64_t cr4;
	uint64_t pit_hz;     /* the TSC's rate measured against the PIT here */
	unsigned lvt_masked; /* local APIC LVT entries found masked */
};

/*
 * Everything but the TSC: call it first thing, before any code could have
 * touched the x87 or SSE registers (this payload's C never does: it is
 * built with -mgeneral-regs-only).
 */
void cs_check(const struct kaslr_boot_info *info, lo_fail_fn fail, struct cs_report *ret);

/* info->tsc_hz against the TSC's rate over 20 ms of PIT channel 2, each end a latched count
 * bracketed by TSC reads (cpustate.c): exact however late the payload runs. */
void cs_check_tsc(const struct kaslr_boot_info *info, lo_fail_fn fail, struct cs_report *ret);

#endif
