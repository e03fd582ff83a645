/*
 * payload/mkzlib.c - host build tool: writes a zlib-format (RFC 1950)
 * copy of a file, so the loader's zlib path has a test kernel without
 * needing python or pigz.  Usage: mkzlib IN OUT.  Exit 0 on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

static int mkzlib_read(const char *path, unsigned char **ret_buf, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f)
		return -1;
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 16;
			unsigned char *nbuf = realloc(buf, ncap);

			if (!nbuf)
				break;
			buf = nbuf;
			cap = ncap;
		}
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (n == 0) {
			if (ferror(f))
				break;
			fclose(f);
			*ret_buf = buf;
			*ret_len = len;
			return 0;
		}
	}
	free(buf);
	fclose(f);
	return -1;
}

int main(int argc, char **argv)
{
	unsigned char *in, *out;
	size_t in_len;

	if (argc != 3) {
		fprintf(stderr, "usage: mkzlib IN OUT\n");
		return 2;
	}
	if (mkzlib_read(argv[1], &in, &in_len) != 0) {
		perror(argv[1]);
		return 1;
	}
	uLongf out_len = compressBound(in_len);
	out = malloc(out_len);
	if (!out || compress2(out, &out_len, in, in_len, Z_BEST_COMPRESSION) != Z_OK) {
		fprintf(stderr, "mkzlib: compress2 failed\n");
		return 1;
	}
	FILE *f = fopen(argv[2], "wb");
	if (!f || fwrite(out, 1, out_len, f) != out_len || fclose(f) != 0) {
		perror(argv[2]);
		return 1;
	}
	free(in);
	free(out);
	return 0;
}
