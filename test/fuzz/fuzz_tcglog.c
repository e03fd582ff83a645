/*
 * fuzz_tcglog.c - libFuzzer target: the TPM event log reader (src/tcglog.c)
 * over untrusted bytes, walked record by record as efi/tpm.c and the test
 * kernel do; abort() when a record it returns lies outside the bytes or
 * does not advance.  ASan catches any read past them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcglog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *raw = malloc(size ? size : 1);
	struct tcglog_spec spec;
	struct tcglog_event e;
	uint64_t off = 0;

	memcpy(raw, data, size);
	if (tcglog_first(raw, size, &spec, &off) == LDR_OK) {
		if (off > size || spec.nalg == 0 || spec.nalg > TCGLOG_MAX_ALGS)
			abort();
		while (off < size && tcglog_event(raw, size, off, &spec, &e) == LDR_OK) {
			if (e.size == 0 || e.size > size - off || e.data < raw ||
			    e.data + e.data_len > raw + size)
				abort();
			if (e.sha256 && (e.sha256 < raw || e.sha256 + 32 > raw + size))
				abort();
			off += e.size;
		}
	}
	free(raw);
	return 0;
}
