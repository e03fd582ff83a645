/*
 * tsc.h - the time-stamp counter: entropy (rng.c), the Boot Loader Interface
 * times (bli.c) and verbose step timings (log.c) all read it here.
 */
#ifndef EFI_TSC_H
#define EFI_TSC_H

#include <stdint.h>

/* 1 if CPUID says the CPU has a TSC. */
int tsc_present(void);

/* The counter; callers must know the TSC exists. */
uint64_t tsc_read(void);

/*
 * TSC ticks per second: CPUID 0x15 (TSC/crystal ratio times the crystal
 * frequency) when the CPU states it, else CPUID 0x16 (base frequency in MHz,
 * which the TSC runs at on the CPUs that report it), else measured once
 * against BS->Stall (the shortest of five 1 ms calls) and remembered (boot
 * services must be up then).
 * 0 if there is no TSC; never 0 otherwise.  Handed to kernels (tsc_hz).
 */
uint64_t tsc_hz(void);

/* The same in ticks per microsecond (at least 1 when there is a TSC). */
uint64_t tsc_per_us(void);

#endif
