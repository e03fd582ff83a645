/*
 * seed.c - size rules, crediting and derivations for the ESP seed file and
 * the LINUX_EFI_RANDOM_SEED table (include/seed.h).
 */
#include <string.h>

#include "seed.h"

int seed_strong(uint32_t sources)
{
	return (sources & SEED_STRONG_SOURCES) != 0;
}

int seed_file_size_ok(uint64_t size)
{
	return size >= SEED_FILE_MIN && size <= SEED_FILE_MAX;
}

uint32_t seed_credit_file(uint32_t sources, int written_back, int secure_boot)
{
	uint32_t others = sources & SEED_STRONG_SOURCES & ~KB_RNG_SEEDFILE;

	if (!written_back || (secure_boot && !others))
		sources &= ~KB_RNG_SEEDFILE;
	return sources;
}

uint32_t seed_table_len(const uint8_t hdr[SEED_TABLE_HDR])
{
	uint32_t n = ldr_le32(hdr);

	return n <= SEED_CHAIN_MAX ? n : 0;
}

void seed_table_fill(uint8_t *out, const uint8_t seed[SEED_TABLE_LEN])
{
	out[0] = (uint8_t)SEED_TABLE_LEN;
	out[1] = out[2] = out[3] = 0;
	memcpy(out + SEED_TABLE_HDR, seed, SEED_TABLE_LEN);
}

void seed_for_os(const uint8_t pool_seed[ENTROPY_SEED_SIZE], uint8_t ret[SEED_TABLE_LEN])
{
	entropy_derive(pool_seed, "linux efi random seed table", ret);
}

void seed_file_next(const uint8_t pool_seed[ENTROPY_SEED_SIZE], uint8_t *out, size_t len)
{
	uint8_t key[ENTROPY_SEED_SIZE];
	struct drbg d;

	entropy_derive(pool_seed, "esp random-seed file", key);
	drbg_init(&d, key);
	drbg_bytes(&d, out, len);
	ldr_wipe(key, sizeof(key));
	ldr_wipe(&d, sizeof(d));
}
