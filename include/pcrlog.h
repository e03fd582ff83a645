/*
 * pcrlog.h - the event log of a boot through kaslr-loader, read for
 * predicting the next boot's PCRs (kaslr-pcr predict): which records the
 * firmware or an earlier stage made and an update leaves as they are
 * (replayed: their digests stand), which are images started from files
 * (recomputed from the files), which are the loader's own or made at its
 * request (replaced by the next boot's), and which the prediction cannot
 * stand behind (an error for their PCR).  Then a PCR's value from those
 * parts.  The log is untrusted: every record is checked (src/tcglog.c).
 * No hashing here but through the caller's function: the banks are
 * SHA-1, SHA-256, SHA-384... as the log lists them.
 */
#ifndef PCRLOG_H
#define PCRLOG_H

#include "ldr.h"
#include "tcglog.h"
#include "options.h"

#define PCRLOG_PCRS       24
#define PCRLOG_DIGEST_MAX 64
#define PCRLOG_PATH_MAX   OPT_PATH_MAX

/* event types of the TCG PC Client Platform Firmware Profile read here */
#define TCG_EV_SEPARATOR                  0x00000004u
#define TCG_EV_EFI_VARIABLE_DRIVER_CONFIG 0x80000001u
#define TCG_EV_EFI_BOOT_SERVICES_APP      0x80000003u

/* TPM algorithm identifiers of the banks */
#define TCGLOG_ALG_SHA1   0x0004
#define TCGLOG_ALG_SHA384 0x000c
#define TCGLOG_ALG_SHA512 0x000d

enum pcrlog_kind {
	PCRLOG_SKIP,    /* EV_NO_ACTION: logged, never extended */
	PCRLOG_REPLAY,  /* the firmware's or an earlier stage's: its digest stands */
	PCRLOG_IMAGE,   /* PCR 4: an image started from a file up to the loader
			   (shim, the loader itself): its digest is recomputed
			   from that file */
	PCRLOG_LOADER,  /* the loader's own record (PCRs 5, 9, 11, 12), or one
			   it had shim or the firmware make (PCR 4, after its
			   own image): the next boot's take their place */
	PCRLOG_UNKNOWN, /* nothing the prediction can stand behind */
};

struct pcrlog_event {
	uint32_t pcr;
	uint32_t type;
	enum pcrlog_kind kind;
	uint64_t off;            /* its offset in the log */
	const uint8_t *digest;   /* the bank's digest in the log */
	const uint8_t *data;     /* its event data */
	uint32_t data_len;
	uint32_t tag;            /* EV_EVENT_TAG: its tag */
	/* an image record (EV_EFI_BOOT_SERVICES_APPLICATION): the file path
	 * of its device path with '\' separators ("" for none), and whether
	 * that is all the device path says (an image a boot loader read and
	 * started itself, as shim starts its second stage) */
	char path[PCRLOG_PATH_MAX];
	int file_only;
	const char *why;         /* PCRLOG_UNKNOWN: what it is */
	const uint8_t *now;      /* PCRLOG_IMAGE: the caller's recomputed digest */
};

#define PCRLOG_NONE ((size_t)-1)

struct pcrlog {
	uint16_t alg;            /* the bank */
	uint32_t size;           /* its digest size */
	struct pcrlog_event *ev; /* the records after the first, in order */
	size_t nev;
	size_t loader;           /* the loader's image record (PCR 4) */
	size_t starter;          /* the image record before it (PCRLOG_NONE: none) */
	size_t settings;         /* the loader's settings record (PCR 5) */
	int secure_boot;         /* PCR 7 has SecureBoot measured as 1 */
	uint8_t locality;        /* StartupLocality (PCR 0's first value), 0 if none */
	const char *why;         /* LDR_E_PCRLOG: the reason */
};

/*
 * Read the log log[0..len) for the bank alg into ret, its records into
 * ev[0..cap).  Errors: LDR_E_TCGLOG (a malformed record, or more than cap),
 * LDR_E_PCRLOG with ret->why: the log has no alg bank, holds no
 * kaslr-loader settings record after an image record, or holds more
 * than one.
 */
enum ldr_err pcrlog_read(const uint8_t *log, uint64_t len, uint16_t alg,
			 struct pcrlog_event *ev, size_t cap, struct pcrlog *ret);

/* One record of the next boot's: its PCR and its digest in the bank. */
struct pcrlog_record {
	uint32_t pcr;
	uint8_t digest[PCRLOG_DIGEST_MAX];
};

/* out = H(pcr || digest) in the bank (l->size bytes each); out may be pcr */
typedef void (*pcrlog_extend_fn)(void *ctx, const uint8_t *pcr, const uint8_t *digest,
				 uint8_t *out);

/*
 * PCR pcr (below PCRLOG_PCRS) of the next boot into out: from its reset
 * value, the log's records in order - a replayed record's digest, an
 * image's recomputed one (ev[i].now) - with the loader's records of the
 * last boot left out and the next boot's (rec[0..nrec), those for pcr, in
 * order) in their place, right after the loader's image record.  Errors:
 * LDR_E_PCRLOG with *ret_event (the record's index) and *ret_why: an
 * unknown record in that PCR, an image without its recomputed digest, a
 * firmware record between the loader's own.
 */
enum ldr_err pcrlog_predict(const struct pcrlog *l, uint32_t pcr,
			    const struct pcrlog_record *rec, size_t nrec, pcrlog_extend_fn extend,
			    void *ctx, uint8_t *out, size_t *ret_event, const char **ret_why);

/*
 * The file path of a device path dp[0..len) as the firmware would open it:
 * its file path nodes joined with single '\' separators, '/' read as '\',
 * into out (cap bytes, NUL-terminated; non-ASCII characters as '?').
 * Returns 1 with a path, 0 without one (or one that does not fit);
 * *ret_other: the device path has nodes other than file paths before its
 * end, *ret_fv: one of them names a firmware volume's file (PIWG).
 */
int pcrlog_devpath_file(const uint8_t *dp, uint64_t len, char *out, size_t cap, int *ret_other,
			int *ret_fv);

#endif
