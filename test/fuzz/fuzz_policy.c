/*
 * fuzz_policy.c - libFuzzer target: policy_parse() over untrusted section
 * bytes; abort() when an accepted policy breaks a rule the loader relies
 * on (one kernel pin, terminated printable paths, no never-allowed key in
 * allow, cmdline_len right) or does not survive policy_write() and a
 * second parse unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct policy p, q;
	static uint8_t out[POLICY_SECTION_SIZE];
	uint8_t *raw = malloc(size ? size : 1);
	enum ldr_err err;

	/* exact-size copy: ASan sees any read past size */
	memcpy(raw, data, size);
	err = policy_parse(raw, size, &p);
	if (err != LDR_OK && err != LDR_E_POLICY_FORMAT)
		abort();
	if (err == LDR_OK && p.present) {
		if (!policy_kernel(&p) || (p.allow & ~policy_allowable()) || p.used > size)
			abort();
		if (p.nfiles > POLICY_MAX_FILES || p.cmdline_len != strlen(p.cmdline))
			abort();
		for (uint32_t i = 0; i < p.nfiles; i++)
			if (!memchr(p.file[i].path, 0, sizeof(p.file[i].path)) ||
			    policy_find(&p, p.file[i].kind, p.file[i].path) != &p.file[i])
				abort();
		if (policy_write(&p, out, sizeof(out)) != LDR_OK)
			abort();
		if (policy_parse(out, sizeof(out), &q) != LDR_OK || q.nfiles != p.nfiles ||
		    q.allow != p.allow || q.cmdline_len != p.cmdline_len ||
		    memcmp(q.file, p.file, sizeof(p.file[0]) * p.nfiles) != 0)
			abort();
	}
	free(raw);
	return 0;
}
