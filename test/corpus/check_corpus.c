/*
 * check_corpus.c - runs every file of a corpus directory through the
 * loader's own pipeline (a bzImage: bzimage_parse() and
 * bzimage_decompress(); else decomp_image() when decomp_detect() knows the
 * format; both with the 512 MiB default limit; then elf_parse() with
 * elf_default_limits(), for a bzImage's payload with linux_payload set as
 * the loader parses it; elf_load() into a buffer of load_size;
 * reloc_apply() to 0x40000000) and checks that the first error is the one
 * the file's name ends in.
 *
 * usage: check_corpus [DIR [MIN_MALFORMED]]   (DIR: build/corpus/cases)
 * Prints "ok"/FAIL per file and a RESULT line (test/unit/test.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_load.h"
#include "bzimage.h"
#include "decomp_fixture.h"
#include "reloc.h"
#define TEST_OWN_MAIN
#include "test.h"

#define CORPUS_NEW_VBASE  0x40000000ULL
#define CORPUS_MAX_LOAD   (1 * GIB)
#define CORPUS_MIN_CASES  40
#define CORPUS_DEFAULT_DIR "build/corpus/cases"

static int err_by_name(const char *s, enum ldr_err *ret)
{
	for (int c = 0; c < LDR_ERR_COUNT; c++)
		if (strcmp(ldr_err_name((enum ldr_err)c), s) == 0) {
			*ret = (enum ldr_err)c;
			return 1;
		}
	return 0;
}

/* The pipeline; *ret_stage names the step that failed. */
static enum ldr_err run_pipeline(const uint8_t *file, uint64_t size, const char **ret_stage)
{
	const uint8_t *elf = file;
	uint64_t elf_size = size, cap = 0;
	void *inflated = NULL, *dest = NULL;
	struct elf_limits lim = elf_default_limits();
	struct elf_image img;
	struct reloc_report rep;
	enum ldr_err err;

	if (bzimage_detect(file, size)) {
		struct bzimage bz;

		*ret_stage = "bzimage_parse";
		err = bzimage_parse(file, size, DECOMP_DEFAULT_LIMIT, &bz);
		if (err != LDR_OK)
			return err;
		*ret_stage = "bzimage_decompress";
		err = bzimage_decompress(&bz, DECOMP_DEFAULT_LIMIT, &fx_heap, &inflated, &elf_size,
					 &cap);
		if (err != LDR_OK)
			return err;
		elf = inflated;
		lim.linux_payload = 1;
	} else if (decomp_detect(file, size) != DECOMP_NONE) {
		*ret_stage = "decomp_image";
		err = decomp_image(file, size, DECOMP_DEFAULT_LIMIT, 0, &fx_heap, &inflated,
				   &elf_size, &cap);
		if (err != LDR_OK)
			return err;
		elf = inflated;
	}
	*ret_stage = "elf_parse";
	err = elf_parse(elf, elf_size, &lim, &img);
	if (err != LDR_OK)
		goto out;
	*ret_stage = "elf_load";
	if (img.load_size > CORPUS_MAX_LOAD || !(dest = malloc(img.load_size ? img.load_size : 1))) {
		err = LDR_E_NOMEM;
		goto out;
	}
	err = elf_load(&img, dest, img.load_size);
	if (err != LDR_OK)
		goto out;
	*ret_stage = "reloc_apply";
	err = reloc_apply(&img, dest, img.load_size, CORPUS_NEW_VBASE, &rep);
out:
	free(dest);
	free(inflated);
	return err;
}

static int read_all(const char *path, uint8_t **ret, uint64_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return 0;
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			p = realloc(p, cap);
			if (!p)
				abort();
		}
		n = fread(p + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	*ret = p;
	*ret_len = len;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	char **names = NULL;
	size_t count = 0, malformed = 0;
	long min_cases = argc > 2 ? atol(argv[2]) : CORPUS_MIN_CASES;
	const char *dir = argc > 1 ? argv[1] : CORPUS_DEFAULT_DIR;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		perror(dir);
		CHECK(0, "corpus directory %s readable", dir);
		return test_summary("check_corpus");
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (count + 1) * sizeof(*names));
		names[count++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, count, sizeof(*names), cmp_str);

	for (size_t i = 0; i < count; i++) {
		const char *dot = strrchr(names[i], '.');
		char path[4096];
		enum ldr_err want, got;
		const char *stage;
		uint8_t *buf;
		uint64_t len;

		if (!dot || !err_by_name(dot + 1, &want)) {
			CHECK(0, "%s: name does not end in .<LDR_E_...>", names[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!read_all(path, &buf, &len)) {
			CHECK(0, "%s: unreadable", names[i]);
			continue;
		}
		got = run_pipeline(buf, len, &stage);
		free(buf);
		if (want != LDR_OK)
			malformed++;
		CHECK(got == want, "%s: %s returned %s (%s), want %s", names[i],
		      got == LDR_OK ? "pipeline" : stage, ldr_err_name(got), ldr_strerror(got),
		      ldr_err_name(want));
		if (got == want)
			printf("ok %-34s %-6s %s\n", names[i], got == LDR_OK ? "" : stage,
			       ldr_strerror(got));
	}
	CHECK(malformed >= (size_t)min_cases, "at least %ld malformed cases (found %zu)",
	      min_cases, malformed);
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return test_summary("check_corpus");
}
