/*
 * fuzz_pcrlog.c - libFuzzer target: an event log read for a prediction
 * (src/pcrlog.c) over untrusted bytes, as kaslr-pcr reads the kernel's
 * copy: pcrlog_read, then every PCR predicted with the loader's records
 * replaced by one made-up record per loader PCR and every image given its
 * log digest; abort() when a record's digest, data or path lies outside
 * the bytes, an index is out of range, or a refusal names no record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcrlog.h"
#include "sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ext(void *ctx, const uint8_t *pcr, const uint8_t *d, uint8_t *out)
{
	uint8_t b[64];

	(void)ctx;
	memcpy(b, pcr, 32);
	memcpy(b + 32, d, 32);
	sha256(b, 64, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pcrlog_event ev[2048];
	static const uint32_t pcrs[] = { 4, 5, 9, 11, 12 };
	struct pcrlog_record rec[5];
	uint8_t *raw = malloc(size ? size : 1), out[32];
	struct pcrlog l;

	memcpy(raw, data, size);
	if (pcrlog_read(raw, size, TCGLOG_ALG_SHA256, ev, 2048, &l) == LDR_OK) {
		if (l.nev > 2048 || l.loader >= l.nev || l.settings >= l.nev || l.size != 32 ||
		    (l.starter != PCRLOG_NONE && l.starter >= l.loader))
			abort();
		for (size_t i = 0; i < l.nev; i++) {
			const struct pcrlog_event *e = &ev[i];

			if (e->data < raw || e->data_len > size || e->data + e->data_len > raw + size ||
			    (e->digest && (e->digest < raw || e->digest + 32 > raw + size)) ||
			    memchr(e->path, 0, sizeof(e->path)) == NULL || e->pcr >= PCRLOG_PCRS ||
			    (e->kind == PCRLOG_UNKNOWN && !e->why))
				abort();
			if (e->kind == PCRLOG_IMAGE)
				ev[i].now = e->digest;
		}
		for (size_t k = 0; k < 5; k++) {
			rec[k].pcr = pcrs[k];
			memset(rec[k].digest, (int)k, sizeof(rec[k].digest));
		}
		for (uint32_t p = 0; p < PCRLOG_PCRS; p++) {
			size_t at;
			const char *why;
			enum ldr_err err = pcrlog_predict(&l, p, rec, 5, ext, NULL, out, &at, &why);

			if (err != LDR_OK && (err != LDR_E_PCRLOG || at >= l.nev || !why ||
					      ev[at].pcr != p))
				abort();
		}
	}
	free(raw);
	return 0;
}
