/*
 * rng.c - reads the machine's entropy sources (EFI_RNG_PROTOCOL, RDSEED,
 * RDRAND, RDTSC) and feeds them to the core's entropy pool.  Health checks
 * and mixing live in src/entropy.c; this file only executes instructions
 * and firmware calls.
 */
#include <efi.h>
#include <efilib.h>

#include "rng.h"
#include "cpuid.h"
#include "tsc.h"
#include "log.h"

/*
 * gnu-efi 3.0.15 defines the protocol in efiprot.h; older releases did not.
 * Fall back to the UEFI 2.5+ (section 37.5) definitions.
 */
#ifndef EFI_RNG_PROTOCOL_GUID
#define EFI_RNG_PROTOCOL_GUID \
	{ 0x3152bca5, 0xeade, 0x433d, { 0x86, 0x2e, 0xc0, 0x1c, 0xdc, 0x29, 0x1f, 0x44 } }
#define EFI_RNG_ALGORITHM_RAW \
	{ 0xe43176d7, 0xb6e8, 0x4827, { 0xb7, 0x84, 0x7f, 0xfd, 0xc4, 0xb6, 0x85, 0x61 } }
typedef EFI_GUID EFI_RNG_ALGORITHM;
struct _EFI_RNG_PROTOCOL;
typedef EFI_STATUS (EFIAPI *EFI_RNG_GET_INFO)(struct _EFI_RNG_PROTOCOL *This,
					      UINTN *RNGAlgorithmListSize,
					      EFI_RNG_ALGORITHM *RNGAlgorithmList);
typedef EFI_STATUS (EFIAPI *EFI_RNG_GET_RNG)(struct _EFI_RNG_PROTOCOL *This,
					     EFI_RNG_ALGORITHM *RNGAlgorithm,
					     UINTN RNGValueLength, UINT8 *RNGValue);
typedef struct _EFI_RNG_PROTOCOL {
	EFI_RNG_GET_INFO GetInfo;
	EFI_RNG_GET_RNG GetRNG;
} EFI_RNG_PROTOCOL;
#endif

#define RNG_CPUID1_ECX_RDRAND (1u << 30)
#define RNG_CPUID7_EBX_RDSEED (1u << 18)

/* 1 if CPUID.1:ECX bit 30 (RDRAND) is set, else 0. */
int rng_cpu_has_rdrand(void)
{
	if (cpuid_max_leaf() < 1)
		return 0;
	return (cpuid(1, 0).ecx & RNG_CPUID1_ECX_RDRAND) != 0;
}

/* 1 if CPUID.(EAX=7,ECX=0):EBX bit 18 (RDSEED) is set, else 0. */
int rng_cpu_has_rdseed(void)
{
	if (cpuid_max_leaf() < 7)
		return 0;
	return (cpuid(7, 0).ebx & RNG_CPUID7_EBX_RDSEED) != 0;
}

/* hwrng_step_fn for RDRAND r64: CF=1 means the value is valid (SDM vol. 1 7.3.17). */
static int rng_rdrand_step(void *ctx, uint64_t *ret_value)
{
	uint64_t v;
	uint8_t ok;

	(void)ctx;
	__asm__ volatile("rdrand %0\n\tsetc %1" : "=r"(v), "=qm"(ok) : : "cc");
	if (!ok)
		return 0;
	*ret_value = v;
	return 1;
}

/* hwrng_step_fn for RDSEED r64; CF=0 is common under contention, hence retries. */
static int rng_rdseed_step(void *ctx, uint64_t *ret_value)
{
	uint64_t v;
	uint8_t ok;

	(void)ctx;
	__asm__ volatile("rdseed %0\n\tsetc %1" : "=r"(v), "=qm"(ok) : : "cc");
	if (!ok)
		return 0;
	*ret_value = v;
	return 1;
}

/*
 * Ask EFI_RNG_PROTOCOL for RNG_EFI_BYTES, preferring the raw (entropy
 * source) algorithm and falling back to the firmware's default DRBG.
 * Adds them under KB_RNG_EFI when a call succeeds with non-zero output.
 */
static void rng_gather_efi(struct entropy_pool *pool)
{
	EFI_GUID proto_guid = EFI_RNG_PROTOCOL_GUID;
	EFI_RNG_ALGORITHM raw = EFI_RNG_ALGORITHM_RAW;
	EFI_RNG_PROTOCOL *rng = NULL;
	uint8_t buf[RNG_EFI_BYTES], buf2[RNG_EFI_BYTES];
	EFI_STATUS st;

	st = BS->LocateProtocol(&proto_guid, NULL, (void **)&rng);
	if (EFI_ERROR(st) || !rng)
		return;

	/* the raw (entropy source) algorithm, else the firmware's default;
	 * two answers each, so a stuck generator shows */
	st = rng->GetRNG(rng, &raw, sizeof(buf), buf);
	if (!EFI_ERROR(st))
		st = rng->GetRNG(rng, &raw, sizeof(buf2), buf2);
	if (EFI_ERROR(st) || !entropy_output_plausible(buf, buf2, sizeof(buf))) {
		st = rng->GetRNG(rng, NULL, sizeof(buf), buf);
		if (!EFI_ERROR(st))
			st = rng->GetRNG(rng, NULL, sizeof(buf2), buf2);
	}
	if (!EFI_ERROR(st) && entropy_output_plausible(buf, buf2, sizeof(buf))) {
		entropy_add(pool, KB_RNG_EFI, buf, sizeof(buf));
		entropy_add(pool, KB_RNG_EFI, buf2, sizeof(buf2));
	} else if (!EFI_ERROR(st)) {
		/* zeros, one byte repeated, or the same answer twice: a firmware
		 * bug, not randomness */
		log_warn(L"EFI_RNG_PROTOCOL answers with repeating bytes: not used as entropy");
	}
	ldr_wipe(buf, sizeof(buf));
	ldr_wipe(buf2, sizeof(buf2));
}

/*
 * RNG_HW_VALUES health-checked values from one instruction; credited only
 * when all arrived (a source that stalls or sticks is not counted on).
 */
static void rng_gather_hw(struct entropy_pool *pool, hwrng_step_fn step, uint32_t bit)
{
	uint64_t vals[RNG_HW_VALUES];
	unsigned n = entropy_hwrng_collect(step, NULL, vals, RNG_HW_VALUES);

	if (n == RNG_HW_VALUES)
		entropy_add(pool, bit, vals, sizeof(vals));
	ldr_wipe(vals, sizeof(vals));
}

/*
 * Feed every present source into pool.  TSC reads are taken between the
 * other sources and around CPUID (which traps to the hypervisor when
 * virtualised), so their low bits carry the jitter of firmware calls.
 * Returns EFI_SUCCESS (RDTSC contributed), EFI_INVALID_PARAMETER (NULL
 * pool) or EFI_UNSUPPORTED (no TSC).
 */
EFI_STATUS rng_gather(struct entropy_pool *pool)
{
	uint64_t tsc[RNG_TSC_READS];
	int has_tsc;
	unsigned t = 0;

	if (!pool)
		return EFI_INVALID_PARAMETER;
	has_tsc = tsc_present();
	if (has_tsc)
		tsc[t++] = tsc_read();

	rng_gather_efi(pool);
	if (has_tsc)
		tsc[t++] = tsc_read();
	if (rng_cpu_has_rdseed())
		rng_gather_hw(pool, rng_rdseed_step, KB_RNG_RDSEED);
	if (has_tsc)
		tsc[t++] = tsc_read();
	if (rng_cpu_has_rdrand())
		rng_gather_hw(pool, rng_rdrand_step, KB_RNG_RDRAND);
	if (!has_tsc)
		return EFI_UNSUPPORTED;

	while (t < RNG_TSC_READS) {
		(void)cpuid(0, 0);
		tsc[t++] = tsc_read();
	}
	entropy_add(pool, KB_RNG_RDTSC, tsc, sizeof(tsc));
	ldr_wipe(tsc, sizeof(tsc));
	return EFI_SUCCESS;
}
