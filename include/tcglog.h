/*
 * tcglog.h - the TCG2 "crypto agile" event log that firmware keeps for
 * EFI_TCG2_PROTOCOL: its first event (SHA-1 format, carrying the Spec ID
 * event that lists the digest algorithms) and the TCG_PCR_EVENT2 records
 * after it.  Used to size the log the loader hands to Linux (efi/tpm.c)
 * and by the test kernel to read the loader's measurements back.
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
