/*
 * policy.h - the policy embedded in the signed loader image: the files it
 * may boot (ESP path and SHA-256 of the kernel and each initrd), the
 * kernel command line, and which options kaslr.conf and the load options
 * may still change while Secure Boot is in force.  It lives in the PE
 * section POLICY_SECTION (fixed size, built with an empty header); the
 * host tool (src/tools/kaslr-policy.c) fills it in before signing, so the
 * signature covers it.
 *
 * Format (little-endian), POLICY_SECTION_SIZE bytes:
 *
 *   0  magic "KASLRPOL"      16 u32 flags (POLICY_F_WRITTEN, POLICY_F_TRUST_SHIM)
 *   8  u16 version (1)       20 u32 allow: OPT_BIT()s (include/options.h)
 *  10  u16 header size (32)  24 u32 number of records
 *  12  u32 length used       28 u32 reserved, 0
 *  32  records, each: u16 type, u16 0, u32 n, n bytes, zero padding to 8
 *        POLICY_REC_KERNEL, _INITRD: sha256[32], then the path (\EFI\...)
 *        POLICY_REC_CMDLINE: the command line (printable ASCII)
 *
 * Bytes past "length used" are zero and not part of the policy.
 */
#ifndef POLICY_H
#define POLICY_H

#include "ldr.h"
#include "options.h"

#define POLICY_SECTION      ".kpolicy"
#define POLICY_SECTION_SIZE (8 * KIB)
#define POLICY_MAGIC        "KASLRPOL"
#define POLICY_VERSION      1
#define POLICY_HEADER_SIZE  32
#define POLICY_F_WRITTEN    1u
/*
 * TRUST=shim: under Secure Boot a kernel whose pin does not match may
 * still boot when shim (present: the loader was started through it)
 * verifies its signature; initrds then need no pin (they are measured);
 * kaslr.conf and the load options may name the kernel and its initrds.
 * Without shim only the pins count.  Policies without the flag read as
 * before (the version stays 1).
 */
#define POLICY_F_TRUST_SHIM 2u
#define POLICY_MAX_FILES    16

/* The empty header the build puts into the section: "no policy". */
#define POLICY_EMPTY_INIT { 'K', 'A', 'S', 'L', 'R', 'P', 'O', 'L', \
			    POLICY_VERSION, 0, POLICY_HEADER_SIZE, 0, \
			    POLICY_HEADER_SIZE, 0, 0, 0 }

enum policy_kind {
	POLICY_KERNEL = 1,
	POLICY_INITRD = 2,
	POLICY_MODULE = 3, /* a module= file: no policy names one (Secure Boot
			      takes no module=); only its own :sha256= pins it */
};
#define POLICY_REC_KERNEL  1
#define POLICY_REC_INITRD  2
#define POLICY_REC_CMDLINE 3

struct policy_file {
	enum policy_kind kind;
	uint8_t sha256[32];
	char path[OPT_PATH_MAX]; /* NUL-terminated, '\' separators, from the ESP root */
};

struct policy {
	int present;      /* 0: the section holds the build's empty header */
	int trust_shim;   /* POLICY_F_TRUST_SHIM */
	uint32_t allow;   /* OPT_BIT()s of keys unsigned inputs may change */
	uint32_t nfiles;  /* exactly one POLICY_KERNEL among them when present */
	struct policy_file file[POLICY_MAX_FILES];
	int have_cmdline;
	char cmdline[OPT_CMDLINE_MAX];
	uint32_t cmdline_len;
	uint32_t used;    /* bytes of the section the policy occupies */
};

/* The keys a policy may allow: those whose rule is not OPT_SB_NEVER. */
uint32_t policy_allowable(void);

/*
 * Parse a policy section (len bytes; may be larger than the policy).
 * Errors: LDR_E_POLICY_FORMAT for anything malformed.
 */
enum ldr_err policy_parse(const uint8_t *buf, uint64_t len, struct policy *ret);

/*
 * Write p into buf (cap bytes, all of them written: the rest zeroed).
 * Errors: LDR_E_POLICY_FORMAT (p breaks a rule policy_parse checks),
 * LDR_E_POLICY_TOO_BIG.
 */
enum ldr_err policy_write(const struct policy *p, uint8_t *buf, uint64_t cap);

/* The pin for path (compared as FAT does: case-insensitive, / = \), or NULL. */
const struct policy_file *policy_find(const struct policy *p, enum policy_kind kind,
				      const char *path);

/* The kernel's pin of a present policy (NULL when absent). */
const struct policy_file *policy_kernel(const struct policy *p);

/*
 * May the file at path, whose SHA-256 is digest, be booted?  With secure
 * set only a matching pin of the policy admits it; without, the pin
 * `override` (sha256= from kaslr.conf or the load options; may be NULL)
 * or else the policy's pin for path, if any, must match.
 * Errors: LDR_E_POLICY_UNPINNED, LDR_E_POLICY_HASH, and for a mismatched
 * override LDR_E_HASH_MISMATCH, LDR_E_INITRD_HASH_MISMATCH or
 * LDR_E_MODULE_HASH_MISMATCH by kind.
 */
enum ldr_err policy_check_digest(const struct policy *p, int secure, enum policy_kind kind,
				 const char *path, const uint8_t digest[32],
				 const uint8_t *override);

/*
 * Does policy_check_digest need the file's digest at all?  Only when
 * Secure Boot is on, a pin `override` is given, or the policy pins path:
 * otherwise every digest is admitted, and the file need not be hashed.
 */
int policy_wants_digest(const struct policy *p, int secure, enum policy_kind kind,
			const char *path, const uint8_t *override);

/*
 * policy_check_digest, then what a TRUST=shim policy adds under Secure
 * Boot (shim: shim's SHIM_LOCK protocol is there): a kernel no pin admits
 * comes down to shim's Verify, an initrd no pin admits is admitted (it is
 * measured); nothing else (a module) comes in through shim.  LDR_OK with
 * *ask_shim set: the kernel boots only if shim's Verify accepts its bytes
 * (*ask_shim is never set for another kind).  Errors: policy_check_digest's,
 * LDR_E_SHIM_ABSENT (a kernel only shim could have admitted, and no shim).
 */
enum ldr_err policy_check_trust(const struct policy *p, int secure, int shim,
				enum policy_kind kind, const char *path,
				const uint8_t digest[32], const uint8_t *override, int *ask_shim);

/*
 * Is Secure Boot in force, from the firmware's SecureBoot and SetupMode
 * variables (each its one byte, or -1 when absent or not one byte)?  Only
 * SecureBoot == 1 turns it on, and only SetupMode == 1 turns it off again
 * (as Linux and shim read them): a SetupMode that is missing or malformed
 * leaves the policy enforced.
 */
int policy_secure_boot(int secure_boot, int setup_mode);

/* the options trust mode of a policy (OPT_TRUST_SHIM for a TRUST=shim one) */
enum opt_trust policy_trust(const struct policy *p);

/*
 * Defaults from a present policy: kernel path, initrds and command line
 * into o (the pins stay in the policy and are applied by
 * policy_check_digest).
 */
void policy_to_options(const struct policy *p, struct ldr_options *o);

#endif
