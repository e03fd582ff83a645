/*
 * bench_entropy.c - how much placement entropy the loader gets on each
 * captured OVMF memory map, next to the theoretical count and to what
 * Linux's own KASLR rule would give on the same map.
 *
 *   usage: bench_entropy PAYLOAD_ELF HIGH_ELF FIXTURE.mmap ...
 *
 * Physical, per map and image size (the payload's loaded size, 16 MiB,
 * 66 MiB), 2 MiB alignment, at or above 16 MiB (kaslr.min's default):
 *   loader       slot_count() over e820_free_from_efi(): what efi/place.c
 *                draws from (the map was captured at that step)
 *   theoretical  slot_theoretical() over e820_from_efi(): every RAM byte,
 *                including what firmware occupies right now
 *   Linux        arch/x86/boot/compressed/kaslr.c, process_efi_entries():
 *                each EfiConventionalMemory descriptor on its own (not
 *                merged with its neighbours), EFI_MEMORY_SP skipped, only
 *                mirrored ones when any is mirrored, start clipped to 16 MiB
 *                and rounded up to 2 MiB, 1 + (end - start - size) / 2 MiB
 *                slots each; its mem_avoid list (initrd, command line, the
 *                compressed kernel) is left out, so this is an upper bound
 * Virtual, per image size (HIGH_ELF's, 58 MiB):
 *   loader       2 MiB-aligned bases keeping the image inside
 *                [KB_VIRT_WINDOW_START, KB_VIRT_WINDOW_END)
 *   Linux        find_random_virt_addr(): 1 + (1 GiB - 16 MiB - size) / 2 MiB
 *                (image inside [16 MiB, 1 GiB) of the kernel mapping)
 * Output: CSV rows (bench.h), sections "entropy-phys" and "entropy-virt".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "e820.h"
#include "elf_load.h"
#include "kaslr_boot.h"
#include "ldr.h"
#include "mmap_fixture.h"
#include "slot.h"

#define ENT_DESC_SIZE  48              /* OVMF's descriptor size */
#define ENT_LINUX_MIN  (16 * MIB)      /* LOAD_PHYSICAL_ADDR */
#define ENT_LINUX_ALIGN (2 * MIB)      /* CONFIG_PHYSICAL_ALIGN */
#define ENT_LINUX_VIRT (1 * GIB)       /* KERNEL_IMAGE_SIZE with KASLR */

static double ent_bits(uint64_t n)
{
	return n > 1 ? log2((double)n) : 0.0;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Linux's physical slot count on a raw map (see the top of the file). */
static uint64_t linux_phys_slots(const struct mmap_buf *m, uint64_t image_size)
{
	int mirror = e820_efi_has_mirror(m->buf, m->size, m->desc_size);
	uint64_t total = 0;

	for (size_t off = 0; off + m->desc_size <= m->size; off += m->desc_size) {
		const uint8_t *d = m->buf + off;
		uint32_t type = (uint32_t)le64(d + EFI_MD_OFF_TYPE) & 0xffffffffu;
		uint64_t attr = le64(d + EFI_MD_OFF_ATTR);
		uint64_t start = le64(d + EFI_MD_OFF_PHYS);
		uint64_t end = start + le64(d + EFI_MD_OFF_PAGES) * EFI_MD_PAGE_SIZE;

		if (type != EFI_MT_CONVENTIONAL || (attr & EFI_MA_SP))
			continue;
		if (mirror && !(attr & EFI_MA_MORE_RELIABLE))
			continue;
		if (start < ENT_LINUX_MIN)
			start = ENT_LINUX_MIN;
		start = ldr_align_up(start, ENT_LINUX_ALIGN);
		if (start >= end || end - start < image_size)
			continue;
		total += 1 + (end - start - image_size) / ENT_LINUX_ALIGN;
	}
	return total;
}

static uint64_t linux_virt_slots(uint64_t image_size)
{
	if (image_size > ENT_LINUX_VIRT - ENT_LINUX_MIN)
		return 0;
	return 1 + (ENT_LINUX_VIRT - ENT_LINUX_MIN - image_size) / ENT_LINUX_ALIGN;
}

/* Loaded size of an ELF file, or 0 with a message. */
static uint64_t elf_load_size(const char *path)
{
	struct elf_image img;
	uint64_t size, ret = 0;
	uint8_t *buf = bench_read_file(path, &size);
	enum ldr_err err;

	if (!buf)
		return 0;
	err = elf_parse(buf, size, NULL, &img);
	if (err == LDR_OK)
		ret = img.load_size;
	else
		fprintf(stderr, "bench_entropy: %s: %s\n", path, ldr_strerror(err));
	free(buf);
	return ret;
}

/* "payload 48 KiB", "16 MiB": prefix and a short size, for item names. */
static void size_name(const char *prefix, uint64_t n, char *out, size_t len)
{
	if (n % MIB == 0)
		snprintf(out, len, "%s%llu MiB", prefix, (unsigned long long)(n / MIB));
	else
		snprintf(out, len, "%s%llu KiB", prefix, (unsigned long long)((n + KIB - 1) / KIB));
}

/* The fixture's name without directory and extension: "ovmf-q35-2G". */
static void map_name(const char *path, char *out, size_t len)
{
	const char *b = bench_basename(path), *dot = strrchr(b, '.');
	size_t n = dot ? (size_t)(dot - b) : strlen(b);

	if (n >= len)
		n = len - 1;
	memcpy(out, b, n);
	out[n] = '\0';
}

static void phys_rows(const char *path, const uint64_t *sizes, const char *const *labels,
		      int nsizes)
{
	struct mmap_buf m;
	struct mem_region *freel = NULL, *e820 = NULL;
	size_t nfree = 0, ne = 0, cap;
	char err[256], map[64], item[128];
	long nd;

	map_name(path, map, sizeof(map));
	mmap_init(&m, ENT_DESC_SIZE);
	nd = mmap_load_fixture(path, &m, err, sizeof(err));
	if (nd <= 0) {
		bench_row("entropy-phys", map, "loader slots", "error: %s", nd < 0 ? err : "empty map");
		mmap_free_buf(&m);
		return;
	}
	cap = E820_CAP_FOR((size_t)nd);
	freel = calloc(cap, sizeof(*freel));
	e820 = calloc(cap, sizeof(*e820));
	if (!freel || !e820 ||
	    e820_free_from_efi(m.buf, m.size, m.desc_size, freel, cap, &nfree) != LDR_OK ||
	    e820_from_efi(m.buf, m.size, m.desc_size, e820, cap, &ne) != LDR_OK) {
		bench_row("entropy-phys", map, "loader slots", "error: map rejected");
		goto out;
	}
	for (int i = 0; i < nsizes; i++) {
		struct slot_params sp;
		uint64_t got, theo, lin;

		memset(&sp, 0, sizeof(sp));
		sp.image_size = sizes[i];
		sp.align = SLOT_ALIGN;
		sp.min_addr = SLOT_DEFAULT_MIN;
		got = slot_count(freel, nfree, &sp);
		theo = slot_theoretical(e820, ne, &sp);
		lin = linux_phys_slots(&m, sizes[i]);
		snprintf(item, sizeof(item), "%s / %s", map, labels[i]);
		bench_row("entropy-phys", item, "loader slots", "%llu", (unsigned long long)got);
		bench_row("entropy-phys", item, "theoretical", "%llu", (unsigned long long)theo);
		if (theo)
			bench_row("entropy-phys", item, "loader/theoretical", "%.3f",
				  (double)got / (double)theo);
		else
			bench_row("entropy-phys", item, "loader/theoretical", "n/a");
		bench_row("entropy-phys", item, "loader bits", "%.2f", ent_bits(got));
		bench_row("entropy-phys", item, "theoretical bits", "%.2f", ent_bits(theo));
		bench_row("entropy-phys", item, "Linux rule slots", "%llu", (unsigned long long)lin);
		bench_row("entropy-phys", item, "Linux bits", "%.2f", ent_bits(lin));
	}
out:
	free(freel);
	free(e820);
	mmap_free_buf(&m);
}

static void virt_rows(const uint64_t *sizes, const char *const *labels, int nsizes)
{
	struct mem_region win = {
		.addr = KB_VIRT_WINDOW_START,
		.size = KB_VIRT_WINDOW_END - KB_VIRT_WINDOW_START,
		.type = E820_RAM,
	};

	for (int i = 0; i < nsizes; i++) {
		struct slot_params sp;
		uint64_t got, lin = linux_virt_slots(sizes[i]);

		memset(&sp, 0, sizeof(sp));
		sp.image_size = sizes[i];
		sp.align = SLOT_ALIGN;
		sp.min_addr = KB_VIRT_WINDOW_START;
		got = slot_count(&win, 1, &sp);
		bench_row("entropy-virt", labels[i], "loader slots", "%llu", (unsigned long long)got);
		bench_row("entropy-virt", labels[i], "loader bits", "%.2f", ent_bits(got));
		bench_row("entropy-virt", labels[i], "Linux slots (1 GiB window)", "%llu",
			  (unsigned long long)lin);
		bench_row("entropy-virt", labels[i], "Linux bits", "%.2f", ent_bits(lin));
	}
}

int main(int argc, char **argv)
{
	uint64_t psize[3], vsize[2];
	char pl[3][64], vl[2][64];
	const char *plabel[3], *vlabel[2];

	if (argc < 4) {
		fprintf(stderr, "usage: bench_entropy PAYLOAD_ELF HIGH_ELF FIXTURE.mmap ...\n");
		return 2;
	}
	psize[0] = elf_load_size(argv[1]);
	psize[1] = 16 * MIB;
	psize[2] = 66 * MIB;
	vsize[0] = elf_load_size(argv[2]);
	vsize[1] = 58 * MIB;
	size_name("payload ", psize[0], pl[0], sizeof(pl[0]));
	size_name("", psize[1], pl[1], sizeof(pl[1]));
	size_name("", psize[2], pl[2], sizeof(pl[2]));
	for (int i = 0; i < 3; i++)
		plabel[i] = pl[i];
	size_name("payload-high ", vsize[0], vl[0], sizeof(vl[0]));
	size_name("", vsize[1], vl[1], sizeof(vl[1]));
	vlabel[0] = vl[0];
	vlabel[1] = vl[1];

	for (int i = 3; i < argc; i++)
		phys_rows(argv[i], psize[0] ? psize : psize + 1,
			  psize[0] ? plabel : plabel + 1, psize[0] ? 3 : 2);
	virt_rows(vsize[0] ? vsize : vsize + 1, vsize[0] ? vlabel : vlabel + 1,
		  vsize[0] ? 2 : 1);
	return 0;
}
