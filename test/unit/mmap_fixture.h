/*
 * mmap_fixture.h - test helpers for raw UEFI memory maps: building
 * descriptors byte by byte with any descriptor size, and loading captured
 * maps from test/fixtures/NAME.mmap (shared by test_e820.c and test_slot.c).
 *
 * Fixture format: text, one descriptor per line, four hex numbers
 * (with or without 0x), separated by blanks:
 *
 *     type attribute physical_start number_of_pages
 *     7 f 100000 7f00
 *
 * Blank lines and lines starting with '#' are ignored; any other line that
 * does not parse is an error the tests report.  The directory can be moved
 * with the environment variable MMAP_FIXTURE_DIR.
 */
#ifndef MMAP_FIXTURE_H
#define MMAP_FIXTURE_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e820.h"

#define MMAP_FIXTURE_DEFAULT_DIR "test/fixtures"
#define MMAP_FIXTURE_EXT ".mmap"
#define MMAP_FIXTURE_MAX_FILES 64

struct mmap_buf {
	uint8_t *buf;
	size_t size;      /* bytes used */
	size_t cap;
	size_t desc_size;
};

static inline void mmap_init(struct mmap_buf *m, size_t desc_size)
{
	m->buf = NULL;
	m->size = 0;
	m->cap = 0;
	m->desc_size = desc_size;
}

static inline void mmap_free_buf(struct mmap_buf *m)
{
	free(m->buf);
	m->buf = NULL;
	m->size = m->cap = 0;
}

static inline void mmap_put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Append one descriptor of m->desc_size bytes.  The padding after Type,
 * VirtualStart and any bytes past the 40 of version 1 are filled with junk,
 * as real firmware may leave them: the parser must not look at them.
 */
static inline void mmap_add(struct mmap_buf *m, uint32_t type, uint64_t attr,
			    uint64_t phys, uint64_t pages)
{
	uint8_t *d;

	if (m->size + m->desc_size > m->cap) {
		m->cap = (m->cap + m->desc_size) * 2;
		m->buf = realloc(m->buf, m->cap);
		if (!m->buf) {
			perror("realloc");
			exit(2);
		}
	}
	d = m->buf + m->size;
	memset(d, 0xa5, m->desc_size);
	mmap_put_le(d + EFI_MD_OFF_TYPE, type, 4);
	mmap_put_le(d + EFI_MD_OFF_PHYS, phys, 8);
	mmap_put_le(d + EFI_MD_OFF_VIRT, 0x5a5a5a5a5a5a5a5aULL ^ phys, 8);
	mmap_put_le(d + EFI_MD_OFF_PAGES, pages, 8);
	mmap_put_le(d + EFI_MD_OFF_ATTR, attr, 8);
	m->size += m->desc_size;
}

static inline size_t mmap_count(const struct mmap_buf *m)
{
	return m->size / m->desc_size;
}

/*
 * Load a fixture file into m (desc_size already set).  Returns the number
 * of descriptors, or -1 with a message in err (size errlen) on a bad line.
 */
static inline long mmap_load_fixture(const char *path, struct mmap_buf *m,
				     char *err, size_t errlen)
{
	char line[512];
	long n = 0, lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long type, attr, phys, pages;
		char *p = line;
		char extra;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
			continue;
		if (sscanf(p, "%llx %llx %llx %llx %c", &type, &attr, &phys, &pages, &extra) != 4 ||
		    type > 0xffffffffULL) {
			snprintf(err, errlen, "%s:%ld: not 'type attr phys pages' in hex", path, lineno);
			fclose(f);
			return -1;
		}
		mmap_add(m, (uint32_t)type, attr, phys, pages);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * Names of the fixture files (full paths, sorted, malloc'd) into names;
 * returns how many (0 when the directory does not exist).
 */
static inline int mmap_fixture_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline int mmap_list_fixtures(char *names[MMAP_FIXTURE_MAX_FILES])
{
	const char *dir = getenv("MMAP_FIXTURE_DIR");
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (!dir || !*dir)
		dir = MMAP_FIXTURE_DEFAULT_DIR;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < MMAP_FIXTURE_MAX_FILES) {
		size_t len = strlen(de->d_name), elen = strlen(MMAP_FIXTURE_EXT);

		if (len <= elen || strcmp(de->d_name + len - elen, MMAP_FIXTURE_EXT) != 0)
			continue;
		names[n] = malloc(strlen(dir) + len + 2);
		if (!names[n])
			break;
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), mmap_fixture_cmp);
	return n;
}

/* Small deterministic generator for shuffles and random cases. */
static inline uint64_t mmap_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* Rewrite m with its descriptors in a random order. */
static inline void mmap_shuffle(struct mmap_buf *m, uint64_t *seed)
{
	size_t n = mmap_count(m), ds = m->desc_size;
	uint8_t *tmp = malloc(ds ? ds : 1);

	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(mmap_rand(seed) % i);

		memcpy(tmp, m->buf + (i - 1) * ds, ds);
		memcpy(m->buf + (i - 1) * ds, m->buf + j * ds, ds);
		memcpy(m->buf + j * ds, tmp, ds);
	}
	free(tmp);
}

#endif
