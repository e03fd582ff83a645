/*
 * authenticode.h - the byte ranges of a PE image that its Authenticode
 * digest covers (the Windows PE/COFF specification's "Calculating the PE
 * Image Hash"), which firmware and shim extend into PCR 4 for each image
 * they start or verify.  The ranges, not a digest: the host tool hashes
 * them in every PCR bank (SHA-1, SHA-256, SHA-384...).  The bytes are
 * untrusted: every header field is checked against the file's length.
 */
#ifndef AUTHENTICODE_H
#define AUTHENTICODE_H

#include "ldr.h"

/* the headers in three pieces, a range per section, the trailing data */
#define AUTHENTICODE_SECTIONS_MAX 96
#define AUTHENTICODE_RANGES_MAX   (3 + AUTHENTICODE_SECTIONS_MAX + 1)

struct authenticode_range {
	uint64_t off;
	uint64_t len;
};

struct authenticode {
	struct authenticode_range r[AUTHENTICODE_RANGES_MAX];
	uint32_t n;
	uint64_t cert_off, cert_len; /* the certificate table (0, 0: unsigned) */
};

/*
 * The ranges of the PE32+ (or PE32) file img[0..len), in the order they
 * are hashed: the headers up to SizeOfHeaders without the CheckSum field
 * and the certificate table's directory entry (without a directory entry
 * for it: everything after CheckSum); each section's raw data
 * (SizeOfRawData bytes at PointerToRawData; none for 0) in the order of
 * PointerToRawData (stable: equal offsets keep the table's order); then,
 * when the file is longer than SizeOfHeaders plus those sections' sizes
 * (S), the bytes from offset S to the end less the certificate table's
 * size.  That is the specification's arithmetic, as UEFI firmware
 * (EDK II's measurement of a PE image) and shim do it.  Empty ranges are
 * left out.  Errors: LDR_E_PE_FORMAT (no PE headers, more than
 * AUTHENTICODE_SECTIONS_MAX sections, a header field or a section's data
 * outside the file, a certificate table larger than what is left).
 */
enum ldr_err authenticode_ranges(const void *img, uint64_t len, struct authenticode *ret);

/* The SHA-256 Authenticode digest of img[0..len) (authenticode_ranges' errors). */
enum ldr_err authenticode_sha256(const void *img, uint64_t len, uint8_t ret[32]);

#endif
