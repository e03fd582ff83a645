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

/*
 * The x86 SHA extensions (src/sha256_x86.c).  CPUID's answer is checked
 * against the kernel's reading of it; the block function against the
 * portable one, and against UEFI's rule that a called function leaves
 * XMM6-XMM15 as they were.  Without the extensions only the first runs.
 */
static int cpuinfo_has_sha(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int sha = 0, ssse3 = 0, sse41 = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		sha = strstr(line, " sha_ni") != NULL;
		ssse3 = strstr(line, " ssse3") != NULL;
		sse41 = strstr(line, " sse4_1") != NULL;
		break;
	}
	fclose(f);
	return sha && ssse3 && sse41;
}

TEST(test_x86_detect)
{
	int info = cpuinfo_has_sha();

	if (info < 0) {
		printf("SKIP test_x86_detect: no /proc/cpuinfo\n");
		return;
	}
#if defined(__x86_64__)
	CHECK(sha256_x86_usable() == info, "CPUID says %d, /proc/cpuinfo %d", sha256_x86_usable(),
	      info);
#else
	CHECK(sha256_x86_usable() == 0, "usable off x86-64");
#endif
}

#if defined(__x86_64__)
/* a reproducible byte stream */
static uint64_t xs_state = 0x9e3779b97f4a7c15ull;
static uint8_t xs_byte(void)
{
	return (uint8_t)(test_rand(&xs_state) >> 24);
}

TEST(test_x86_blocks)
{
	uint8_t data[64 * 40];

	if (!sha256_x86_usable()) {
		printf("SKIP test_x86_blocks: the CPU has no SHA extensions\n");
		return;
	}
	for (size_t n = 1; n <= 40; n++) {
		uint32_t a[8], b[8];

		for (size_t i = 0; i < 8; i++)
			a[i] = b[i] = (uint32_t)xs_byte() << 24 | (uint32_t)xs_byte() << 16 |
				      (uint32_t)xs_byte() << 8 | xs_byte();
		for (size_t i = 0; i < 64 * n; i++)
			data[i] = xs_byte();
		/* from an odd address: the loads must not need alignment */
		memmove(data + 1, data, 64 * n - 1);
		sha256_portable_blocks(a, data + 1, n - 1);
		sha256_x86_blocks(b, data + 1, n - 1);
		CHECK(memcmp(a, b, sizeof(a)) == 0, "%zu blocks: SHA extensions = portable", n - 1);
	}
}

/* the digest of len bytes through updates shorter than SHA256_X86_MIN (the
 * portable code) and in one call (the SHA extensions when present) */
TEST(test_x86_update_lengths)
{
	static const size_t lens[] = { 1023, 1024, 1025, 1087, 1088, 4096 + 55, 65536 + 63,
				       1u << 20 };
	static uint8_t buf[(1u << 20) + 1];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = xs_byte();
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint8_t one[SHA256_DIGEST_SIZE], pieces[SHA256_DIGEST_SIZE];
		struct sha256_ctx ctx;

		sha256(buf + 1, lens[i], one);
		sha256_init(&ctx);
		for (size_t off = 0; off < lens[i]; off += 1000)
			sha256_update(&ctx, buf + 1 + off, lens[i] - off < 1000 ? lens[i] - off : 1000);
		sha256_final(&ctx, pieces);
		CHECK(memcmp(one, pieces, sizeof(one)) == 0, "%zu bytes: one call = 1000-byte pieces",
		      lens[i]);
	}
}

/* a few bytes buffered first, then a long run: the buffer is topped up
 * by the portable code and the rest goes to the SHA extensions */
TEST(test_x86_after_partial)
{
	static const size_t heads[] = { 1, 63, 64, 65, 1000 };
	static uint8_t buf[70000];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = xs_byte();
	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		uint8_t one[SHA256_DIGEST_SIZE], two[SHA256_DIGEST_SIZE];
		struct sha256_ctx ctx;

		sha256(buf, sizeof(buf), one);
		sha256_init(&ctx);
		sha256_update(&ctx, buf, heads[i]);
		sha256_update(&ctx, buf + heads[i], sizeof(buf) - heads[i]);
		sha256_final(&ctx, two);
		CHECK(memcmp(one, two, sizeof(one)) == 0, "%zu bytes, then the rest in one call",
		      heads[i]);
	}
}

/*
 * Calls sha256_x86_blocks as UEFI firmware calls a function: arguments in
 * RCX, RDX and R8, 32 bytes of shadow space, a 16-byte aligned stack, and
 * XMM6-XMM15 holding values of the caller's that must survive.
 */
TEST(test_x86_keeps_xmm)
{
	uint8_t before[160], after[160], data[128];
	uint32_t state[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	if (!sha256_x86_usable()) {
		printf("SKIP test_x86_keeps_xmm: the CPU has no SHA extensions\n");
		return;
	}
	for (size_t i = 0; i < sizeof(before); i++)
		before[i] = xs_byte();
	memset(after, 0, sizeof(after));
	memset(data, 0x5a, sizeof(data));
	{
		register uint32_t *rcx __asm__("rcx") = state;
		register const uint8_t *rdx __asm__("rdx") = data;
		register size_t r8 __asm__("r8") = 2;
		void *fn = (void *)sha256_x86_blocks;

		__asm__ volatile("movdqu 0(%[b]), %%xmm6\n\t"
				 "movdqu 16(%[b]), %%xmm7\n\t"
				 "movdqu 32(%[b]), %%xmm8\n\t"
				 "movdqu 48(%[b]), %%xmm9\n\t"
				 "movdqu 64(%[b]), %%xmm10\n\t"
				 "movdqu 80(%[b]), %%xmm11\n\t"
				 "movdqu 96(%[b]), %%xmm12\n\t"
				 "movdqu 112(%[b]), %%xmm13\n\t"
				 "movdqu 128(%[b]), %%xmm14\n\t"
				 "movdqu 144(%[b]), %%xmm15\n\t"
				 "mov %%rsp, %%rbx\n\t"
				 "sub $128, %%rsp\n\t" /* past the red zone */
				 "and $-16, %%rsp\n\t"
				 "sub $32, %%rsp\n\t"
				 "call *%[fn]\n\t"
				 "mov %%rbx, %%rsp\n\t"
				 "movdqu %%xmm6, 0(%[a])\n\t"
				 "movdqu %%xmm7, 16(%[a])\n\t"
				 "movdqu %%xmm8, 32(%[a])\n\t"
				 "movdqu %%xmm9, 48(%[a])\n\t"
				 "movdqu %%xmm10, 64(%[a])\n\t"
				 "movdqu %%xmm11, 80(%[a])\n\t"
				 "movdqu %%xmm12, 96(%[a])\n\t"
				 "movdqu %%xmm13, 112(%[a])\n\t"
				 "movdqu %%xmm14, 128(%[a])\n\t"
				 "movdqu %%xmm15, 144(%[a])"
				 : "+r"(rcx), "+r"(rdx), "+r"(r8)
				 : [b] "r"(before), [a] "r"(after), [fn] "r"(fn)
				 : "rax", "rbx", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3",
				   "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
				   "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
	}
	for (int r = 0; r < 10; r++)
		CHECK(memcmp(before + 16 * r, after + 16 * r, 16) == 0, "XMM%d kept", r + 6);
	{
		uint32_t want[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

		sha256_portable_blocks(want, data, 2);
		CHECK(memcmp(want, state, sizeof(want)) == 0, "the state, called as firmware would");
	}
}
#endif
