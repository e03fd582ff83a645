/*
 * fuzz_pe.c - libFuzzer target: pe_find_section() over untrusted PE bytes
 * in both views; abort() when a section it returns lies outside the bytes.
 * ASan catches any header read past them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { POLICY_SECTION, ".text", ".data", ".reloc" };
	uint8_t *raw = malloc(size ? size : 1);

	memcpy(raw, data, size);
	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			struct pe_section s = { 0, 0 };
			enum ldr_err err = pe_find_section(raw, size, v ? PE_VIEW_MEMORY : PE_VIEW_FILE,
							   names[i], &s);

			if (err == LDR_OK) {
				if (s.off > size || size - s.off < s.size)
					abort();
				/* touch the section's bytes: ASan checks them */
				if (s.size)
					(void)*(volatile uint8_t *)(raw + s.off + s.size - 1);
			} else if (err != LDR_E_PE_FORMAT && err != LDR_E_PE_NO_SECTION) {
				abort();
			}
		}
	free(raw);
	return 0;
}
