/*
 * fuzz_authenticode.c - libFuzzer target: the Authenticode ranges of a PE
 * file (src/authenticode.c) over untrusted bytes, as kaslr-pcr takes them
 * from files on an ESP; abort() when a range it returns lies outside the
 * bytes or there are more than the bound.  ASan catches any read past
 * them (the digest reads every range).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "authenticode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *raw = malloc(size ? size : 1), d[32];
	struct authenticode a;

	memcpy(raw, data, size);
	if (authenticode_ranges(raw, size, &a) == LDR_OK) {
		if (a.n > AUTHENTICODE_RANGES_MAX)
			abort();
		for (uint32_t i = 0; i < a.n; i++)
			if (a.r[i].len == 0 || a.r[i].off > size || size - a.r[i].off < a.r[i].len)
				abort();
		if (authenticode_sha256(raw, size, d) != LDR_OK)
			abort();
	}
	free(raw);
	return 0;
}
