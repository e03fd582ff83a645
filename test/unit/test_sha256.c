/*
 * test_sha256.c - host tests for src/sha256.c: the FIPS 180-4 / NIST
 * example vectors, padding-boundary lengths, and streaming updates split
 * at every offset giving the same digest as the one-shot call.
 */
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "test.h"

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void hex_to_digest(const char *hex, uint8_t out[SHA256_DIGEST_SIZE])
{
	for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
		out[i] = (uint8_t)(hex_nibble(hex[2 * i]) << 4 | hex_nibble(hex[2 * i + 1]));
}

static int digest_is(const uint8_t got[SHA256_DIGEST_SIZE], const char *hex)
{
	uint8_t want[SHA256_DIGEST_SIZE];

	hex_to_digest(hex, want);
	return memcmp(got, want, SHA256_DIGEST_SIZE) == 0;
}

/* The standard vectors, as text. */
static const struct {
	const char *name;
	const char *msg;
	const char *digest;
} text_cases[] = {
	{ "empty", "",
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "abc",
	  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "448-bit", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "896-bit",
	  "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	  "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

/*
 * Padding boundaries: message byte i is (7 * i + 3) mod 256.  55 is the
 * longest message whose padding fits one block, 56..63 need a second one.
 * Digests from an independent implementation (Python hashlib).
 */
static const struct {
	size_t len;
	const char *digest;
} len_cases[] = {
	{ 55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b" },
	{ 56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27" },
	{ 57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73" },
	{ 63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055" },
	{ 64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241" },
	{ 65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e" },
	{ 119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e" },
	{ 120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5" },
	{ 128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6" },
	{ 200, "2c7e18c942ef065b526a2d4e5546283749cd3ddfb51d8fc71f42717363685f46" },
};

static const char million_a[] =
	"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

static void fill_pattern(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(7 * i + 3);
}

TEST(test_text_vectors)
{
	for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
		uint8_t d[SHA256_DIGEST_SIZE];
		struct sha256_ctx ctx;
		size_t len = strlen(text_cases[i].msg);

		sha256(text_cases[i].msg, len, d);
		CHECK(digest_is(d, text_cases[i].digest), "one-shot %s", text_cases[i].name);

		/* byte at a time through the streaming interface */
		sha256_init(&ctx);
		for (size_t j = 0; j < len; j++)
			sha256_update(&ctx, text_cases[i].msg + j, 1);
		sha256_final(&ctx, d);
		CHECK(digest_is(d, text_cases[i].digest), "bytewise %s", text_cases[i].name);
	}
}

TEST(test_length_vectors)
{
	uint8_t msg[200];

	fill_pattern(msg, sizeof(msg));
	for (size_t i = 0; i < sizeof(len_cases) / sizeof(len_cases[0]); i++) {
		uint8_t d[SHA256_DIGEST_SIZE];

		sha256(msg, len_cases[i].len, d);
		CHECK(digest_is(d, len_cases[i].digest), "length %zu", len_cases[i].len);
	}
}

TEST(test_million_a)
{
	uint8_t *buf = malloc(1000000);
	uint8_t d[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;

	CHECK(buf != NULL, "malloc");
	if (!buf)
		return;
	memset(buf, 'a', 1000000);
	sha256(buf, 1000000, d);
	CHECK(digest_is(d, million_a), "one million 'a', one-shot");

	/* odd-sized chunks so that the buffered path runs constantly */
	sha256_init(&ctx);
	for (size_t off = 0; off < 1000000;) {
		size_t n = 1000000 - off < 997 ? 1000000 - off : 997;

		sha256_update(&ctx, buf + off, n);
		off += n;
	}
	sha256_final(&ctx, d);
	CHECK(digest_is(d, million_a), "one million 'a', 997-byte chunks");
	free(buf);
}

TEST(test_split_updates)
{
	uint8_t msg[200], want[SHA256_DIGEST_SIZE];

	fill_pattern(msg, sizeof(msg));
	sha256(msg, sizeof(msg), want);
	for (size_t k = 0; k <= 130; k++) {
		uint8_t d[SHA256_DIGEST_SIZE];
		struct sha256_ctx ctx;

		sha256_init(&ctx);
		sha256_update(&ctx, msg, k);
		sha256_update(&ctx, NULL, 0);
		sha256_update(&ctx, msg + k, sizeof(msg) - k);
		sha256_final(&ctx, d);
		CHECK(memcmp(d, want, sizeof(d)) == 0, "split at %zu", k);

		/* three pieces: [0,k) [k,k+37) [k+37,200) */
		sha256_init(&ctx);
		sha256_update(&ctx, msg, k);
		sha256_update(&ctx, msg + k, 37);
		sha256_update(&ctx, msg + k + 37, sizeof(msg) - k - 37);
		sha256_final(&ctx, d);
		CHECK(memcmp(d, want, sizeof(d)) == 0, "three-way split at %zu", k);
	}
}

TEST(test_final_wipes)
{
	struct sha256_ctx ctx, zero;
	uint8_t d[SHA256_DIGEST_SIZE];

	memset(&zero, 0, sizeof(zero));
	sha256_init(&ctx);
	sha256_update(&ctx, "secret seed", 11);
	sha256_final(&ctx, d);
	CHECK(memcmp(&ctx, &zero, sizeof(ctx)) == 0, "context wiped after final");
}
