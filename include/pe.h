/*
 * pe.h - finding a named section in a PE32+ image, either as a file (the
 * host tool that writes the policy) or as loaded in memory (the loader
 * reading its own embedded policy from its ImageBase).  Every header field
 * is bounds-checked against the bytes given.
 */
#ifndef PE_H
#define PE_H

#include "ldr.h"

#define PE_NAME_LEN 8

/* where the section's bytes are: file offsets, or loaded-image RVAs */
enum pe_view {
	PE_VIEW_FILE,
	PE_VIEW_MEMORY,
};

struct pe_section {
	uint64_t off;  /* from the start of the bytes given */
	uint64_t size; /* bytes with content: min(VirtualSize, SizeOfRawData) */
};

/*
 * Find the section called name (at most PE_NAME_LEN characters) in the
 * len bytes at img.  Errors: LDR_E_PE_FORMAT (not a PE32+ image, or a
 * header or the section outside the bytes), LDR_E_PE_NO_SECTION.
 */
enum ldr_err pe_find_section(const void *img, uint64_t len, enum pe_view view,
			     const char *name, struct pe_section *ret);

/*
 * The certificate table (Authenticode signatures) a file carries: its
 * size in *ret_size, 0 when unsigned.  Errors: LDR_E_PE_FORMAT.
 */
enum ldr_err pe_signature_size(const void *img, uint64_t len, uint64_t *ret_size);

#endif
