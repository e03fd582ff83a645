/*
 * seed.h - the rules for seeds that outlive one boot or come from an
 * earlier boot stage, as systemd-boot keeps them:
 *
 *  - \loader\random-seed on the ESP: 32 bytes to 32 KiB of random data,
 *    mixed into the pool (with the LoaderSystemToken EFI variable when it
 *    is set) and replaced before the kernel runs by a value derived from
 *    the pool, never the value the kernel gets;
 *  - the LINUX_EFI_RANDOM_SEED configuration table: {u32 size; u8 bits[]},
 *    which Linux reads (its EFI stub, and efi_init when started with an
 *    EFI system table) and credits; an earlier stage's table is mixed in,
 *    this loader's own replaces it.
 *
 * Pure rules and derivations; efi/seed.c does the firmware's part.
 */
#ifndef SEED_H
#define SEED_H

#include <stddef.h>
#include <stdint.h>

#include "entropy.h"

/* Sizes of \loader\random-seed systemd-boot accepts (it ignores others). */
#define SEED_FILE_MIN 32u
#define SEED_FILE_MAX (32u * 1024u)
/* A LoaderSystemToken larger than this is not read. */
#define SEED_TOKEN_MAX 4096u
/* An earlier stage's seed: at most this much is read (its size field is
 * not trusted further) and at least SEED_CHAIN_MIN counts as strong. */
#define SEED_CHAIN_MAX 1024u
#define SEED_CHAIN_MIN 32u
/* The table this loader installs: the u32 size, then the seed. */
#define SEED_TABLE_HDR 4u
#define SEED_TABLE_LEN 32u

/* The sources that make the pool strong: any of them and Linux may credit
 * a seed, and KB_FLAG_WEAK_ENTROPY is clear. */
#define SEED_STRONG_SOURCES \
	(KB_RNG_EFI | KB_RNG_RDSEED | KB_RNG_RDRAND | KB_RNG_SEEDFILE | KB_RNG_CHAIN)

/* 1 if the pool's sources include a strong one, else 0. */
int seed_strong(uint32_t sources);

/* 1 if a \loader\random-seed of size bytes is used, else 0. */
int seed_file_size_ok(uint64_t size);

/*
 * Which sources to credit once the seed file's fate is known: sources with
 * KB_RNG_SEEDFILE removed unless the fresh value was written back (a file
 * that cannot be rewritten gives the same bytes every boot) and, under
 * Secure Boot, unless another strong source contributed (the file is
 * unauthenticated: whoever can write the ESP knows it).
 */
uint32_t seed_credit_file(uint32_t sources, int written_back, int secure_boot);

/*
 * The length an earlier stage's LINUX_EFI_RANDOM_SEED table claims, from
 * its first four bytes (u32 little-endian): 0 when it is 0 or above
 * SEED_CHAIN_MAX, i.e. when the table is not to be read at all.
 */
uint32_t seed_table_len(const uint8_t hdr[SEED_TABLE_HDR]);

/*
 * Fill a table of SEED_TABLE_HDR + SEED_TABLE_LEN bytes: size = 32
 * (little-endian), then the seed.
 */
void seed_table_fill(uint8_t *out, const uint8_t seed[SEED_TABLE_LEN]);

/* The seed the OS gets in the table: derived from the pool's output. */
void seed_for_os(const uint8_t pool_seed[ENTROPY_SEED_SIZE], uint8_t ret[SEED_TABLE_LEN]);

/*
 * The next contents of \loader\random-seed, len bytes (the file keeps its
 * size): a generator keyed by a value derived from the pool's output
 * under its own label, so it is unrelated to every seed a kernel gets.
 */
void seed_file_next(const uint8_t pool_seed[ENTROPY_SEED_SIZE], uint8_t *out, size_t len);

#endif
