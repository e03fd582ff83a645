/*
 * bzcheck.c - the loader's core on real bzImages (test/linux/check-bzimage.sh
 * runs it on Debian's kernels): bzimage_parse, bzimage_decompress with the
 * default limit, elf_parse and linux_detect of the result.  For each
 * NAME=FILE[:FORMAT] prints the facts found and the SHA-256 of vmlinux.bin
 * ("sha256 NAME HEX"), "ok"/"FAIL" lines, and as its last line
 *   bzcheck: N passed, N failed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bzimage.h"
#include "decomp_fixture.h"
#include "elf_load.h"
#include "linux_boot.h"
#include "sha256.h"

static int passed, failed;

static void result(int ok, const char *name, const char *what)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("%s %s: %s\n", ok ? "ok" : "FAIL", name, what);
}

static uint8_t *read_all(const char *path, uint64_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		return NULL;
	p = malloc((size_t)n + 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*ret_len = (uint64_t)n;
	return p;
}

static void check(const char *name, const char *path, const char *want_fmt)
{
	struct elf_limits lim = elf_default_limits();
	struct elf_image img;
	struct bzimage bz;
	uint64_t size = 0, len, cap;
	uint8_t *file = read_all(path, &size), digest[32];
	void *out;
	enum ldr_err err;
	char line[512];

	if (!file) {
		result(0, name, "cannot read the file");
		return;
	}
	err = bzimage_parse(file, size, DECOMP_DEFAULT_LIMIT, &bz);
	snprintf(line, sizeof(line), "bzimage_parse: %s", ldr_strerror(err));
	result(err == LDR_OK, name, line);
	if (err != LDR_OK)
		goto out;
	snprintf(line, sizeof(line),
		 "protocol %x.%02x, %s payload of %llu bytes (stream %llu) at %llu, "
		 "claims %u bytes; image %llu of the file's %llu; init_size 0x%x, "
		 "alignment 0x%x, xloadflags 0x%x, cmdline_size %u, setup header %u bytes",
		 bz.version >> 8, bz.version & 0xff, decomp_format_name(bz.format),
		 (unsigned long long)bz.payload_len, (unsigned long long)bz.stream_len,
		 (unsigned long long)(bz.payload - file), bz.decompressed_size,
		 (unsigned long long)bz.image_size, (unsigned long long)size, bz.init_size,
		 bz.kernel_alignment, bz.xloadflags, bz.cmdline_size, bz.setup_header_len);
	result(!want_fmt || strcmp(decomp_format_name(bz.format), want_fmt) == 0, name, line);
	err = bzimage_decompress(&bz, DECOMP_DEFAULT_LIMIT, &fx_heap, &out, &len, &cap);
	snprintf(line, sizeof(line), "bzimage_decompress: %s, %llu bytes", ldr_strerror(err),
		 err == LDR_OK ? (unsigned long long)len : 0ULL);
	result(err == LDR_OK, name, line);
	if (err != LDR_OK)
		goto out;
	err = elf_parse(out, len, &lim, &img);
	snprintf(line, sizeof(line), "elf_parse of vmlinux.bin: %s; %u segments, %s relocations",
		 ldr_strerror(err), err == LDR_OK ? img.nseg : 0,
		 err == LDR_OK && img.reloc_kind == ELF_RELOC_LINUX ? "Linux" : "no Linux");
	result(err == LDR_OK && img.reloc_kind == ELF_RELOC_LINUX && linux_detect(&img), name,
	       line);
	sha256(out, len, digest);
	printf("sha256 %s ", name);
	for (int i = 0; i < 32; i++)
		printf("%02x", digest[i]);
	printf("\n");
	free(out);
out:
	free(file);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *colon;

		if (!eq) {
			fprintf(stderr, "usage: bzcheck NAME=FILE[:FORMAT]...\n");
			return 2;
		}
		*eq = 0;
		colon = strrchr(eq + 1, ':');
		if (colon)
			*colon = 0;
		check(argv[i], eq + 1, colon ? colon + 1 : NULL);
	}
	printf("bzcheck: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
