/*
 * rng.h - the firmware side of entropy gathering: which sources this
 * machine has, and one call that feeds all of them into an entropy pool.
 */
#ifndef EFI_RNG_H
#define EFI_RNG_H

#include <efi.h>

#include "entropy.h"

/* Samples asked of each hardware RNG instruction (64 bits each). */
#define RNG_HW_VALUES 4
/* Bytes asked of EFI_RNG_PROTOCOL. */
#define RNG_EFI_BYTES 32
/* RDTSC reads mixed in, interleaved with the other sources. */
#define RNG_TSC_READS 16

/*
 * Feed every entropy source present into pool (already entropy_init'ed):
 * EFI_RNG_PROTOCOL (raw algorithm, then the default), RDSEED, RDRAND and
 * RDTSC.  A hardware RNG is credited (its KB_RNG_* bit set) only if it
 * delivered all RNG_HW_VALUES health-checked values.  Prints nothing and
 * sets no globals; the caller reads pool->sources to report and to decide
 * whether entropy is weak.
 * Returns EFI_SUCCESS when at least RDTSC contributed; EFI_INVALID_PARAMETER
 * for a NULL pool; EFI_UNSUPPORTED if the CPU has no TSC (then nothing at
 * all was timed, though other sources may have been added).
 */
EFI_STATUS rng_gather(struct entropy_pool *pool);

/* 1 if CPUID.1:ECX bit 30 (RDRAND) is set, else 0. */
int rng_cpu_has_rdrand(void);

/* 1 if CPUID.(EAX=7,ECX=0):EBX bit 18 (RDSEED) is set, else 0. */
int rng_cpu_has_rdseed(void);


#endif
