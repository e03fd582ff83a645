/*
 * sha256_x86.c - the SHA-256 compression function on the x86 SHA
 * extensions (SHA256RNDS2, SHA256MSG1, SHA256MSG2) with SSSE3 and SSE4.1.
 * Only this function is compiled for those instruction sets (a target
 * attribute), and it runs only when sha256_x86_usable() (src/sha256.c)
 * found them in CPUID; the loader's own other code is built without SSE.
 * (Debian's decompressor libraries linked into the image are plain x86-64
 * code and use SSE2 as System V code does.)
 *
 * Vector state: the function has the Microsoft x64 calling convention,
 * the one UEFI uses, so the compiler saves and restores every register of
 * XMM6-XMM15 it touches; XMM0-XMM5 are the caller's to lose, and the
 * loader's own code (built without SSE) keeps nothing in them.  Firmware
 * interrupt handlers save the vector state they use themselves.
 *
 * Layout: SHA256RNDS2 keeps the eight working variables in two registers,
 * one holding A, B, E, F and the other C, D, G, H (A and C in the top
 * 32 bits), runs two rounds, and takes their two W[t] + K[t] in the low
 * half of a third register.  The message schedule advances four words at a
 * time: W[t..t+3] = MSG2(MSG1(W[t-16..], W[t-12..]) + W[t-7..t-4], W[t-4..]).
 */
#include "sha256.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* four rounds from the words of m and the constants from t */
#define NI_FOUR(m, t) \
	do { \
		__m128i wk = _mm_add_epi32( \
			(m), _mm_loadu_si128((const __m128i *)(const void *)(sha256_round_k + (t)))); \
		cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk); \
		abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0e)); \
	} while (0)
/* m0 holds W[t-16..t-13]; it becomes W[t..t+3] */
#define NI_NEXT(m0, m1, m2, m3) \
	((m0) = _mm_sha256msg2_epu32( \
		 _mm_add_epi32(_mm_sha256msg1_epu32((m0), (m1)), _mm_alignr_epi8((m3), (m2), 4)), \
		 (m3)))

__attribute__((ms_abi, target("ssse3,sse4.1,sha"))) void
sha256_x86_blocks(uint32_t state[8], const uint8_t *p, size_t nblocks)
{
	/* within each 32-bit word, bytes reversed: the message is big-endian */
	const __m128i be = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
	/* words listed lowest first: state[0..3] is A B C D, state[4..7] E F G H */
	__m128i x = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)state),
				      0xb1); /* B A D C */
	__m128i y = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)(state + 4)),
				      0x1b); /* H G F E */
	__m128i abef = _mm_alignr_epi8(x, y, 8);    /* F E B A: A on top */
	__m128i cdgh = _mm_blend_epi16(y, x, 0xf0); /* H G D C: C on top */

	for (; nblocks; nblocks--, p += SHA256_BLOCK_SIZE) {
		const __m128i *in = (const __m128i *)(const void *)p;
		__m128i abef0 = abef, cdgh0 = cdgh;
		__m128i m0 = _mm_shuffle_epi8(_mm_loadu_si128(in + 0), be);
		__m128i m1 = _mm_shuffle_epi8(_mm_loadu_si128(in + 1), be);
		__m128i m2 = _mm_shuffle_epi8(_mm_loadu_si128(in + 2), be);
		__m128i m3 = _mm_shuffle_epi8(_mm_loadu_si128(in + 3), be);
		unsigned t;

		NI_FOUR(m0, 0);
		NI_FOUR(m1, 4);
		NI_FOUR(m2, 8);
		NI_FOUR(m3, 12);
		for (t = 16; t < 64; t += 16) {
			NI_NEXT(m0, m1, m2, m3);
			NI_FOUR(m0, t);
			NI_NEXT(m1, m2, m3, m0);
			NI_FOUR(m1, t + 4);
			NI_NEXT(m2, m3, m0, m1);
			NI_FOUR(m2, t + 8);
			NI_NEXT(m3, m0, m1, m2);
			NI_FOUR(m3, t + 12);
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}

	x = _mm_shuffle_epi32(abef, 0x1b); /* A B E F */
	y = _mm_shuffle_epi32(cdgh, 0xb1); /* G H C D */
	_mm_storeu_si128((__m128i *)(void *)state, _mm_blend_epi16(x, y, 0xf0)); /* A B C D */
	_mm_storeu_si128((__m128i *)(void *)(state + 4), _mm_alignr_epi8(y, x, 8)); /* E F G H */
}
#endif
