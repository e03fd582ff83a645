/*
 * libc.c - the few C library string functions the core (and libz.a) call that
 * gnu-efi's libefi does not provide, and faster memcpy and memset than its.
 */
#include <stddef.h>
#include <stdint.h>

int memcmp(const void *a, const void *b, size_t n);
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

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else if (d > s) {
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

/*
 * memcpy and memset.  libefi has both, copying and filling one byte a
 * time, in the object that also holds InitializeLib, so they cannot simply
 * be defined again here: the Makefile links with --wrap=memcpy
 * --wrap=memset, which sends every call to them in the image (the core,
 * the decompressors, libefi itself) to the __wrap_ versions below.  They
 * move eight bytes at a time through unaligned 64-bit accesses (x86 allows
 * them; no SSE in this image): elf_load() copies the kernel, the BSS is
 * zeroed, function-granular KASLR moves every function.
 */
typedef uint64_t __attribute__((may_alias, aligned(1))) libc_word;
typedef uint32_t __attribute__((may_alias, aligned(1))) libc_half;

void *__wrap_memcpy(void *dst, const void *src, size_t n);
void *__wrap_memset(void *dst, int c, size_t n);

void *__wrap_memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	for (; n >= 32; n -= 32, d += 32, s += 32) {
		libc_word a = ((const libc_word *)s)[0], b = ((const libc_word *)s)[1];
		libc_word e = ((const libc_word *)s)[2], f = ((const libc_word *)s)[3];

		((libc_word *)d)[0] = a;
		((libc_word *)d)[1] = b;
		((libc_word *)d)[2] = e;
		((libc_word *)d)[3] = f;
	}
	for (; n >= 8; n -= 8, d += 8, s += 8)
		*(libc_word *)d = *(const libc_word *)s;
	if (n >= 4) { /* a 32-bit field, the commonest small copy in the core */
		*(libc_half *)d = *(const libc_half *)s;
		n -= 4;
		d += 4;
		s += 4;
	}
	while (n--)
		*d++ = *s++;
	return dst;
}

void *__wrap_memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	uint64_t w = 0x0101010101010101ULL * (unsigned char)c;

	for (; n >= 32; n -= 32, d += 32) {
		((libc_word *)d)[0] = w;
		((libc_word *)d)[1] = w;
		((libc_word *)d)[2] = w;
		((libc_word *)d)[3] = w;
	}
	for (; n >= 8; n -= 8, d += 8)
		*(libc_word *)d = w;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}
