/*
 * tcglog.h - the TCG2 "crypto agile" event log that firmware keeps for
 * EFI_TCG2_PROTOCOL: its first event (SHA-1 format, carrying the Spec ID
 * event that lists the digest algorithms) and the TCG_PCR_EVENT2 records
 * after it; and the records the loader itself writes there (which PCR,
 * which tag, which bytes).  Used to size the log the loader hands to Linux
 * (efi/tpm.c), by the test kernel to read the loader's measurements back
 * and by kaslr-pcr to predict them (src/pcrlog.c).
 */
#ifndef TCGLOG_H
#define TCGLOG_H

#include "ldr.h"

#define TCGLOG_MAX_ALGS   8
#define TCGLOG_ALG_SHA256 0x000b
#define TCGLOG_EVENT_MAX  (1 * MIB) /* larger records are refused */

/* event types this project writes or reads */
#define TCG_EV_NO_ACTION 0x00000003u
#define TCG_EV_IPL       0x0000000du
#define TCG_EV_EVENT_TAG 0x00000006u

/* the loader's PCRs and event tags (docs/measured-boot.md, what is measured where) */
#define TPM_PCR_POLICY  5  /* boot-loader configuration: the policy, the settings */
#define TPM_PCR_FILES   9  /* the kernel file, each initrd and each module */
#define TPM_PCR_CMDLINE 12 /* the kernel command line */
#define TPM_TAG_KERNEL  0x4b4c4b52u /* the kernel file ("RKLK") */
#define TPM_TAG_POLICY  0x4b4c5043u /* the policy ("CPLK") */
#define TPM_TAG_INITRD  0x8f3b22ecu /* the tag Linux's EFI stub gives an initrd */
#define TPM_TAG_MODULE  0x4b4c4d4fu /* a module= file ("OMLK") */
#define TPM_TAG_SETTINGS 0x4b4c5354u /* the effective settings ("TSLK") */
#define TPM_TAG_REFUSED 0x4b4c5246u /* a kernel shim refused ("FRLK") */

/*
 * The loader's own PCR 12 record of the kernel command line line[0..len)
 * (ASCII): the bytes it hashes, which are also its event data - the line
 * in UTF-16LE, as systemd-boot and systemd-stub record it, without a NUL.
 * Written to out (cap bytes; cut at what fits); returns their number.
 * The loader (efi/tpm.c) and kaslr-pcr both call this: what PCR 12 holds
 * is decided here alone.
 */
uint64_t tcglog_cmdline_event(const char *line, uint64_t len, uint8_t *out, uint64_t cap);

struct tcglog_spec {
	uint32_t nalg;
	uint16_t alg[TCGLOG_MAX_ALGS];
	uint16_t size[TCGLOG_MAX_ALGS];
};

struct tcglog_event {
	uint32_t pcr;
	uint32_t type;
	uint64_t size;          /* bytes of the whole record */
	const uint8_t *sha256;  /* its SHA-256 digest, NULL if none */
	/* each bank's digest, in the order of tcglog_spec's alg[] (NULL: the
	 * record has none for that algorithm) */
	const uint8_t *digest[TCGLOG_MAX_ALGS];
	const uint8_t *data;    /* the event data */
	uint32_t data_len;
};

/*
 * The first record (SHA-1 format) at log[0..len): its size and the digest
 * algorithms its Spec ID event lists.  Errors: LDR_E_TCGLOG.
 */
enum ldr_err tcglog_first(const uint8_t *log, uint64_t len, struct tcglog_spec *ret_spec,
			  uint64_t *ret_size);

/* The TCG_PCR_EVENT2 record at log[off..len).  Errors: LDR_E_TCGLOG. */
enum ldr_err tcglog_event(const uint8_t *log, uint64_t len, uint64_t off,
			  const struct tcglog_spec *spec, struct tcglog_event *ret);

#endif
