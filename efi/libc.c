/*
 * libc.c - the C library string functions the core and the decompression
 * libraries call: those gnu-efi's libefi lacks, and fast memcpy/memset in
 * place of its byte loops (the Makefile weakens libefi's).
 */
#include <stddef.h>
#include <stdint.h>

int memcmp(const void *a, const void *b, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
void *memchr(const void *s, int c, size_t n);

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}

/*
 * memcpy and memset a quadword at a time (string instructions: DF is
 * clear in UEFI code), replacing gnu-efi's byte loops; written in assembly
 * so that no compiler can turn them back into calls to themselves.
 */
void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	size_t q = n >> 3, r = n & 7;

	__asm__ volatile("rep movsq" : "+D"(d), "+S"(src), "+c"(q) : : "memory");
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(r) : : "memory");
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;
	uint64_t v = (uint8_t)c * 0x0101010101010101ULL;
	size_t q = n >> 3, r = n & 7;

	__asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(v) : "memory");
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(r) : "a"(v) : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	/* forward is safe unless dst starts inside [src, src + n) */
	if (d <= s || (size_t)(d - s) >= n) {
		return memcpy(dst, src, n);
	} else {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	for (; n; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}
