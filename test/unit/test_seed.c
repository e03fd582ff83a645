/*
 * test_seed.c - host tests for src/seed.c: which \loader\random-seed sizes
 * are used, when the file is credited, which sources make the pool strong,
 * the LINUX_EFI_RANDOM_SEED table's size field and layout, and that the
 * value written back to the ESP, the OS's seed and the loader's other
 * derived seeds are all different.
 */
#include <stdint.h>
#include <string.h>

#include "seed.h"
#include "test.h"

TEST(test_file_sizes)
{
	CHECK(!seed_file_size_ok(0), "empty");
	CHECK(!seed_file_size_ok(31), "31 bytes");
	CHECK(seed_file_size_ok(32), "32 bytes");
	CHECK(seed_file_size_ok(512), "512 bytes (bootctl's size)");
	CHECK(seed_file_size_ok(32768), "32 KiB");
	CHECK(!seed_file_size_ok(32769), "32 KiB + 1");
	CHECK(!seed_file_size_ok(UINT64_MAX), "2^64 - 1");
	CHECK(!seed_file_size_ok(((uint64_t)1 << 32) + 32), "2^32 + 32 (no truncation)");
}

TEST(test_strong)
{
	CHECK(!seed_strong(0), "nothing");
	CHECK(!seed_strong(KB_RNG_RDTSC), "RDTSC alone is weak");
	CHECK(seed_strong(KB_RNG_EFI | KB_RNG_RDTSC), "EFI_RNG_PROTOCOL");
	CHECK(seed_strong(KB_RNG_RDSEED), "RDSEED");
	CHECK(seed_strong(KB_RNG_RDRAND), "RDRAND");
	CHECK(seed_strong(KB_RNG_SEEDFILE | KB_RNG_RDTSC), "the ESP seed file");
	CHECK(seed_strong(KB_RNG_CHAIN), "an earlier stage's seed");
	CHECK(!seed_strong(1u << 30), "an unknown bit");
}

TEST(test_credit_file)
{
	uint32_t f = KB_RNG_SEEDFILE | KB_RNG_RDTSC;

	CHECK_EQ_U64(seed_credit_file(f, 1, 0), f, "written back, no Secure Boot: credited");
	CHECK_EQ_U64(seed_credit_file(f, 0, 0), KB_RNG_RDTSC, "not written back: not credited");
	CHECK_EQ_U64(seed_credit_file(f, 1, 1), KB_RNG_RDTSC,
		     "Secure Boot and nothing else strong: not credited");
	CHECK_EQ_U64(seed_credit_file(f | KB_RNG_EFI, 1, 1), f | KB_RNG_EFI,
		     "Secure Boot with EFI_RNG_PROTOCOL: credited");
	CHECK_EQ_U64(seed_credit_file(f | KB_RNG_CHAIN, 1, 1), f | KB_RNG_CHAIN,
		     "Secure Boot with an earlier stage's seed: credited");
	CHECK_EQ_U64(seed_credit_file(f | KB_RNG_RDRAND, 0, 1), KB_RNG_RDTSC | KB_RNG_RDRAND,
		     "not written back: only the file's bit goes");
	CHECK_EQ_U64(seed_credit_file(KB_RNG_RDTSC, 1, 0), KB_RNG_RDTSC, "no file: unchanged");
	CHECK(!seed_strong(seed_credit_file(f, 0, 0)), "an unwritable file leaves the pool weak");
}

TEST(test_table_len)
{
	uint8_t h[4];

	memcpy(h, "\x20\0\0\0", 4);
	CHECK_EQ_U64(seed_table_len(h), 32, "32");
	memcpy(h, "\0\x01\0\0", 4);
	CHECK_EQ_U64(seed_table_len(h), 256, "little-endian");
	memcpy(h, "\0\x04\0\0", 4);
	CHECK_EQ_U64(seed_table_len(h), SEED_CHAIN_MAX, "the largest read");
	memcpy(h, "\x01\x04\0\0", 4);
	CHECK_EQ_U64(seed_table_len(h), 0, "one more: not read");
	memcpy(h, "\xff\xff\xff\xff", 4);
	CHECK_EQ_U64(seed_table_len(h), 0, "2^32 - 1: not read");
	memcpy(h, "\x20\0\0\x01", 4);
	CHECK_EQ_U64(seed_table_len(h), 0, "high byte set: not read");
	memcpy(h, "\0\0\0\0", 4);
	CHECK_EQ_U64(seed_table_len(h), 0, "empty");
}

TEST(test_table_fill)
{
	uint8_t seed[SEED_TABLE_LEN], t[SEED_TABLE_HDR + SEED_TABLE_LEN + 1];

	for (unsigned i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)(0xa0 + i);
	memset(t, 0xee, sizeof(t));
	seed_table_fill(t, seed);
	CHECK(memcmp(t, "\x20\0\0\0", 4) == 0, "size field: 32, little-endian");
	CHECK(memcmp(t + 4, seed, sizeof(seed)) == 0, "the seed follows");
	CHECK(t[sizeof(t) - 1] == 0xee, "nothing written past the table");
	CHECK_EQ_U64(seed_table_len(t), SEED_TABLE_LEN, "read back");
}

TEST(test_derivations)
{
	uint8_t pool[ENTROPY_SEED_SIZE], pool2[ENTROPY_SEED_SIZE];
	uint8_t os[SEED_TABLE_LEN], os2[SEED_TABLE_LEN], other[ENTROPY_SEED_SIZE];
	uint8_t file[96], file2[96], file_short[32];

	for (unsigned i = 0; i < sizeof(pool); i++)
		pool[i] = (uint8_t)(7 * i + 1);
	memcpy(pool2, pool, sizeof(pool));
	pool2[31] ^= 1;

	seed_for_os(pool, os);
	seed_file_next(pool, file, sizeof(file));
	CHECK(memcmp(os, pool, sizeof(os)) != 0, "the OS's seed is not the pool's output");
	CHECK(memcmp(file, pool, sizeof(pool)) != 0, "the file is not the pool's output");
	CHECK(memcmp(file, os, sizeof(os)) != 0, "the file never holds the OS's seed");
	for (unsigned off = 0; off + sizeof(os) <= sizeof(file); off++)
		CHECK(memcmp(file + off, os, sizeof(os)) != 0, "OS seed inside the file at %u", off);
	entropy_derive(pool, "linux setup_data rng seed", other);
	CHECK(memcmp(other, os, sizeof(os)) != 0, "table seed != setup_data seed");
	CHECK(memcmp(other, file, sizeof(other)) != 0, "file != setup_data seed");
	entropy_derive(pool, "kernel rng_seed", other);
	CHECK(memcmp(other, os, sizeof(os)) != 0, "table seed != native rng_seed");
	CHECK(memcmp(other, file, sizeof(other)) != 0, "file != native rng_seed");

	/* deterministic in the pool, and every pool bit matters */
	seed_for_os(pool, os2);
	CHECK(memcmp(os, os2, sizeof(os)) == 0, "same pool, same OS seed");
	seed_file_next(pool, file2, sizeof(file2));
	CHECK(memcmp(file, file2, sizeof(file)) == 0, "same pool, same file");
	seed_for_os(pool2, os2);
	CHECK(memcmp(os, os2, sizeof(os)) != 0, "another pool, another OS seed");
	seed_file_next(pool2, file2, sizeof(file2));
	CHECK(memcmp(file, file2, sizeof(file)) != 0, "another pool, another file");
	/* a file's next contents are one stream: a shorter file gets its prefix */
	seed_file_next(pool, file_short, sizeof(file_short));
	CHECK(memcmp(file, file_short, sizeof(file_short)) == 0, "prefix of one stream");
	CHECK(memcmp(file, file + 32, 32) != 0 && memcmp(file + 32, file + 64, 32) != 0,
	      "no repeated blocks");
}
