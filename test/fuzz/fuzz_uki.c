/*
 * fuzz_uki.c - libFuzzer target: uki_detect() and uki_parse() over
 * untrusted PE bytes; abort() when a section it takes lies outside them
 * or its raw bytes exceed its size.  What a taken image feeds (the
 * command line, the os-release name, PCR 11, the initrd with its cpio
 * archives) runs too, on images small enough to hash and build quickly
 * (a section's zeros past its raw bytes may reach 4 GiB).  ASan catches
 * any read past the bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uki.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char line[OPT_CMDLINE_MAX], name[64];
	uint8_t *raw = malloc(size ? size : 1), pcr[32];
	uint64_t total = 0, rd;
	struct uki u;
	enum ldr_err err;
	size_t n;

	memcpy(raw, data, size);
	(void)uki_detect(raw, size);
	err = uki_parse(raw, size, &u);
	if (err != LDR_OK && err != LDR_E_UKI_STUB_UNKNOWN) {
		free(raw);
		return 0;
	}
	for (int k = 0; k < UKI_SEC_COUNT; k++) {
		const struct uki_section *s = &u.sec[k];

		if (s->raw > s->size || s->off > size || size - s->off < s->raw)
			abort();
		if (s->raw)
			(void)*(volatile uint8_t *)(raw + s->off + s->raw - 1);
		total += s->size;
	}
	if (u.sec[UKI_SEC_LINUX].size == 0)
		abort();
	(void)uki_cmdline(raw + u.sec[UKI_SEC_CMDLINE].off, u.sec[UKI_SEC_CMDLINE].raw, line,
			  sizeof(line), &n);
	(void)uki_os_name(raw + u.sec[UKI_SEC_OSREL].off, u.sec[UKI_SEC_OSREL].raw, name,
			  sizeof(name));
	if (total <= (4u << 20)) {
		uki_pcr11(raw, &u, pcr);
		rd = uki_initrd_size(&u);
		if (rd) {
			uint8_t *b = malloc(rd);

			uki_initrd_build(raw, &u, b);
			free(b);
		}
	}
	free(raw);
	return 0;
}
