/*
 * options.h - the loader's options: parsed from UEFI LoadOptions (UCS-2) and
 * from kaslr.conf beside the loader image; load options override the file.
 *
 *   load options:  [image.efi] key=value word … [-- kernel command line]
 *   kaslr.conf:    one "key value" per line, '#' starts a comment;
 *                  "cmdline" and "module" take the rest of their line.
 *
 * Modules (repeatable): module=PATH[:sha256=HEX][,STRING] in load options,
 * "module PATH[:sha256=HEX] [STRING]" in kaslr.conf.  PATH ends at the
 * first ',' or blank and cannot hold ':' (no FAT file name can), so the
 * pin is never part of it nor of STRING, which is everything after.
 *
 * Kernels (repeatable, at most OPT_KERNELS_MAX): the kernels to try, in
 * order.  Each kernel's initrds are the initrds that follow it up to the
 * next kernel; initrds before the first kernel belong to the first.  The
 * next kernel is tried only when shim refused the one before (a TRUST=shim
 * policy under Secure Boot: efi/main.c); anywhere else the first is the
 * one that boots or fails.
 *
 * No value holds a newline ('\n' or '\r'): every parser refuses one, so a
 * line of the settings text (options_settings_text) is one key's.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include "ldr.h"

#define OPT_PATH_MAX    256
#define OPT_CMDLINE_MAX 4096
#define OPT_TEXT_MAX    (16 * KIB)   /* load options or config file */
#define OPT_KEY_MAX     32
#define OPT_INITRD_MAX  8              /* initrd= files, concatenated in order */

#define OPT_KERNELS_MAX 4              /* kernel= files, tried in order */

/* A file the loader reads, optionally pinned by its SHA-256. */
struct opt_file {
	char path[OPT_PATH_MAX];
	int have_sha256;
	uint8_t sha256[32];
	uint32_t kernel;               /* an initrd: its kernel's index in the list */
};

#define OPT_MODULES_MAX 16
#define OPT_MODULE_STRING_MAX 256    /* with its NUL */

struct opt_module {
	char path[OPT_PATH_MAX];
	char string[OPT_MODULE_STRING_MAX]; /* NUL-terminated, may be empty */
	uint32_t string_len;
	int have_sha256;                    /* :sha256=HEX given */
	uint8_t sha256[32];
};

/*
 * The keys.  Their numbers are bits in struct ldr_options.set and in a
 * signed policy's allow mask (include/policy.h): never renumber, only add.
 * A key that names a file to boot (an initrd=) gets OPT_SB_NEVER: under
 * Secure Boot only the policy names files.
 */
enum opt_key_id {
	OPT_K_VERBOSE = 0,
	OPT_K_NOKASLR = 1,
	OPT_K_KERNEL = 2,
	OPT_K_CMDLINE = 3,
	OPT_K_SEED = 4,
	OPT_K_SHA256 = 5,
	OPT_K_MIN = 6,
	OPT_K_MAX = 7,
	OPT_K_MAXSIZE = 8,
	OPT_K_MODULE = 9,
	OPT_K_INITRD = 10,
	OPT_K_PHYS = 11,
	OPT_K_VIRT = 12,
	OPT_K_COUNT
};
#define OPT_BIT(id) (1u << (id))

/*
 * What an input from kaslr.conf or the load options may do while Secure
 * Boot is in force (without it every key is taken, the load options
 * winning over kaslr.conf, both over the embedded policy):
 */
enum opt_sb_rule {
	OPT_SB_TAKEN,      /* taken as without Secure Boot */
	OPT_SB_IF_ALLOWED, /* ignored (one warning) unless the policy allows it */
	OPT_SB_NEVER,      /* ignored (one warning); no policy can allow it */
};

/*
 * A forced placement, kaslr.phys= / kaslr.virt=: which slot instead of a
 * random one.  kaslr.phys=ADDR is a physical base; kaslr.virt=OFFSET is the
 * virtual offset (the hand-off's virt_offset: run-time minus link-time
 * virtual base, two's complement, so "-16M" is allowed).  "random" (the
 * default) draws as usual; ABOVE4G is physical only: the lowest slot at
 * or above 4 GiB.
 */
enum opt_place_kind {
	OPT_PLACE_RANDOM = 0,
	OPT_PLACE_LOWEST = 1,
	OPT_PLACE_HIGHEST = 2,
	OPT_PLACE_ABOVE4G = 3,
	OPT_PLACE_AT = 4,
};

struct opt_place {
	uint32_t kind;  /* enum opt_place_kind */
	uint32_t zero;  /* always 0 (the struct is compared bytewise) */
	uint64_t value; /* OPT_PLACE_AT: the address or offset; else 0 */
};

/* The longest text options_place_text() writes, with its NUL. */
#define OPT_PLACE_TEXT_MAX 24

struct ldr_options {
	/* kernel=PATH, repeatable: the kernels to try, in order; none: the
	 * default, kernel.elf beside the loader */
	char kernels[OPT_KERNELS_MAX][OPT_PATH_MAX];
	uint32_t nkernels;
	int kernels_replace;           /* the next kernel= starts a new list */
	char cmdline[OPT_CMDLINE_MAX]; /* NUL-terminated */
	uint32_t cmdline_len;
	int verbose;
	int nokaslr;
	int have_seed;                 /* kaslr.seed=HEX given */
	uint8_t seed[32];
	uint64_t min_addr;             /* kaslr.min= (default 16 MiB) */
	uint64_t max_addr;             /* kaslr.max= (0 = top of RAM) */
	int have_sha256;               /* sha256=HEX given */
	uint8_t sha256[32];
	uint64_t max_kernel;           /* kaslr.maxsize=: inflate limit */
	/* initrd=PATH[:sha256=HEX], repeatable (Linux kernels): every
	 * kernel's, in order, each naming its kernel (OPT_INITRD_MAX in all) */
	struct opt_file initrd[OPT_INITRD_MAX];
	uint32_t ninitrd;
	struct opt_module modules[OPT_MODULES_MAX]; /* in the order given */
	uint32_t nmodules;
	int modules_replace;           /* the next module= starts a new list */
	struct opt_place phys;         /* kaslr.phys= */
	struct opt_place virt;         /* kaslr.virt= */
	/* set by the parsers on error: the key or value at fault, and for
	 * kaslr.conf its line (1-based; 0 for load options) */
	char bad[OPT_KEY_MAX + 1];
	uint32_t bad_line;
	uint32_t set;                  /* OPT_BIT() of every key a parser set */
};

void options_defaults(struct ldr_options *o);

/*
 * UCS-2 LoadOptions bytes -> ASCII.  nbytes may be odd (the stray byte is
 * ignored) and need not contain a terminator; the text ends at the first
 * NUL or at nbytes.  out receives at most cap-1 characters plus a NUL.
 * Errors: LDR_E_OPT_ENCODING (a character outside printable ASCII/space/
 * tab; *ret_len then holds its index), LDR_E_OPT_TOO_LONG.
 */
enum ldr_err options_from_ucs2(const void *bytes, uint64_t nbytes, char *out,
			       size_t cap, size_t *ret_len);

/*
 * Parse a load-options line (len bytes, need not be NUL-terminated; a NUL
 * ends the text) into o,
 * overriding what is there; its first module= replaces every module the
 * config file gave.  A first word ending in ".efi" without '=' is the
 * image's own path (the UEFI shell passes argv[0]) and is skipped.
 * Errors: LDR_E_OPT_UNKNOWN_ARG, LDR_E_OPT_VALUE, LDR_E_OPT_HEX,
 * LDR_E_OPT_TOO_LONG, LDR_E_OPT_TOO_MANY; o->bad names the key.
 */
enum ldr_err options_parse_line(struct ldr_options *o, const char *s, size_t len);

/* Parse kaslr.conf text (a NUL ends it).  Same errors; o->bad names the key. */
enum ldr_err options_parse_config(struct ldr_options *o, const char *s, size_t len);

/*
 * Take the keys src set (src->set) into dst, as one more source read after
 * those already in dst.  With secure set, each key follows its
 * enum opt_sb_rule, `allow` being the policy's OPT_BIT() mask; a key whose
 * value equals dst's is never counted as ignored.  Returns the OPT_BIT()s
 * of the keys ignored (the caller warns once for each).
 *
 * `kernel` (the list) and `initrd` (every kernel's initrds) are two keys:
 * a source that names kernels but no initrd keeps the earlier initrds,
 * which stay with the kernel at their index (those of an index the new
 * list does not reach are dropped); a source that names initrds replaces
 * all of them.
 */
uint32_t options_merge(struct ldr_options *dst, const struct ldr_options *src, int secure,
		       uint32_t allow);

/*
 * What the embedded policy trusts besides its pins (include/policy.h,
 * POLICY_F_TRUST_SHIM): with OPT_TRUST_SHIM the keys that name a kernel
 * or its initrds (options_key_shim) are taken under Secure Boot as well;
 * the files they name still pass the policy's gate (efi/secureboot.c),
 * where shim's signature check stands in for a kernel's pin.
 */
enum opt_trust {
	OPT_TRUST_PINS = 0,
	OPT_TRUST_SHIM = 1,
};

/* options_merge under a policy's trust mode (options_merge: OPT_TRUST_PINS) */
uint32_t options_merge_trust(struct ldr_options *dst, const struct ldr_options *src,
			     int secure, uint32_t allow, enum opt_trust trust);

/* The key table, for the policy tool and kaslr.conf(5)'s rule table. */
const char *options_key_name(enum opt_key_id id);
enum opt_sb_rule options_key_rule(enum opt_key_id id);
/* 1 for the keys OPT_TRUST_SHIM takes under Secure Boot (kernel, initrd) */
int options_key_shim(enum opt_key_id id);
/* what the key would do that Secure Boot forbids ("" for a taken key) */
const char *options_key_risk(enum opt_key_id id);
/* OPT_K_COUNT when name[0..len) is no key */
enum opt_key_id options_key_find(const char *name, size_t len);

/*
 * The effective settings as one canonical text, measured on every boot
 * (docs/measured-boot.md, kaslr.conf(5) SETTINGS TEXT): the first line OPT_SETTINGS_HEADER,
 * then one "key=value" line per key in the key table's order - every key,
 * set or not, with the value the loader uses: flags 0 or 1, sizes in
 * lower-case hex (0x1000000), paths as given, a pin as 64 hex digits or
 * "none", kaslr.seed as "sha256:" and the SHA-256 of the seed (the event
 * log is readable; the seed is not put there) or "none"; one line per
 * module (PATH[:sha256=HEX],STRING) and per initrd (PATH[:sha256=HEX]) in
 * order, none when there are none.  With more than one kernel, each kernel
 * line is "kernel.N=PATH" (N = 1, 2, ... its place in the list) and each
 * initrd line "initrd.N=PATH[:sha256=HEX]" naming its kernel, the first
 * kernel's initrds first; with one kernel (or none) the text is as it
 * always was.  The command line is left out: it has PCR 12 to itself.  No
 * draw of the generator is ever part of it, so the same settings give the
 * same text on every boot, and no two different settings give the same
 * text (no value holds a newline).  Errors: LDR_E_OPT_TOO_LONG (cap too
 * small; OPT_SETTINGS_MAX always suffices).
 */
#define OPT_SETTINGS_HEADER "kaslr-loader settings 1"
#define OPT_SETTINGS_MAX    (16 * KIB)
enum ldr_err options_settings_text(const struct ldr_options *o, char *out, size_t cap,
				   size_t *ret_len);

/*
 * Keep kernel number k of the list (0-based, below the list's length or 0
 * for the default kernel) and only its initrds, in order: what is left is
 * the one kernel that boots, as if it had been named alone.  The caller
 * measured the whole list first (options_settings_text).
 */
void options_choose_kernel(struct ldr_options *o, uint32_t k);

/* How many kernels the list tries: its length, 1 for the default kernel. */
uint32_t options_kernel_count(const struct ldr_options *o);

/* The path of kernel k (0-based), "" for the default kernel. */
const char *options_kernel(const struct ldr_options *o, uint32_t k);

/*
 * A placement as its option value, e.g. "lowest", "above4g",
 * "0x40000000", "-0x1000000" (virt offsets below the link base), "random"
 * for the default: what options_parse_* read back.  buf holds at least
 * OPT_PLACE_TEXT_MAX bytes; the text is NUL-terminated.
 */
void options_place_text(const struct opt_place *p, char *buf, size_t cap);

/*
 * Parse a size: decimal or 0x-hex, optional K/M/G suffix (binary units).
 * Errors: LDR_E_OPT_VALUE (syntax, or overflow).
 */
enum ldr_err options_parse_size(const char *s, size_t len, uint64_t *ret);

#endif
