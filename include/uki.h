/*
 * uki.h - unified kernel images (systemd-stub with .linux, .initrd,
 * .cmdline, .osrel... sections in one PE file) as the loader boots them
 * itself: recognising one, finding its sections exactly as the stub that
 * built it would, that stub's version, what that version measures (PCR
 * 11's events, the command line it would take and measure), the cpio
 * archives it hands the initrd, and the name .osrel gives.  The bytes are
 * untrusted: every offset and size is checked before use.  No firmware
 * here (efi/uki.c is the firmware side).
 */
#ifndef UKI_H
#define UKI_H

#include "ldr.h"

/*
 * The sections systemd-stub 252 knows, in the order it measures them into
 * PCR 11 (.pcrsig excepted: it signs the PCR values and is never measured).
 */
enum uki_section_id {
	UKI_SEC_LINUX,
	UKI_SEC_OSREL,
	UKI_SEC_CMDLINE,
	UKI_SEC_INITRD,
	UKI_SEC_SPLASH,
	UKI_SEC_DTB,
	UKI_SEC_PCRSIG,
	UKI_SEC_PCRPKEY,
	UKI_SEC_COUNT
};

/*
 * Where a section's bytes are.  The stub reads them from its loaded
 * image, where the firmware copied min(VirtualSize, SizeOfRawData) bytes
 * of raw data and zeroed the rest up to VirtualSize: its bytes are the
 * raw bytes at off, then size - raw zeros.
 */
struct uki_section {
	uint64_t off;  /* file offset of its raw data */
	uint64_t raw;  /* raw bytes used: min(VirtualSize, SizeOfRawData) */
	uint64_t size; /* VirtualSize, the bytes the stub uses; 0: absent (as
			  the stub treats a section of VirtualSize 0) */
};

#define UKI_VERSION_MAX 64

/* the PCRs systemd-stub 252 measures into */
#define UKI_PCR_IMAGE  11 /* the sections */
#define UKI_PCR_PARAMS 12 /* a command line passed in (an override) */

/* the files the stub hands the initrd, under /.extra */
#define UKI_EXTRA_DIR     ".extra"
#define UKI_PCRSIG_FILE   "tpm2-pcr-signature.json"
#define UKI_PCRPKEY_FILE  "tpm2-pcr-public-key.pem"

struct uki {
	struct uki_section sec[UKI_SEC_COUNT];
	/* the stub's version as .sdmagic ("#### LoaderInfo: systemd-stub
	 * VERSION ####") or else .sbat's "systemd" line gives it: printable
	 * ASCII, NUL-terminated, "" when neither names one */
	char stub_version[UKI_VERSION_MAX];
	unsigned stub_major, stub_minor; /* 252 and 39 for "252.39-1~deb12u2" */
	int stub_known; /* a version whose measurements this loader makes */
};

/* The section's name as the stub spells it (".linux"), "" out of range. */
const char *uki_section_name(enum uki_section_id id);

/*
 * Is this a unified kernel image: PE headers the stub would read, with a
 * section it would take for .linux (whatever else is wrong with it:
 * uki_parse says what)?  Never reads outside the len bytes.
 */
int uki_detect(const void *img, uint64_t len);

/*
 * The sections of the UKI in img[0..len), found as systemd-stub 252 finds
 * them (a section whose name starts with ".linux" is .linux, the last of
 * several wins), and its stub's version.  Refused, beyond what the stub
 * checks, so that the bytes used are the bytes signed and the bytes the
 * stub would have seen: a used section whose raw data lies outside the
 * file or in its certificate table, that lies outside SizeOfImage or in
 * the headers, or whose place in the loaded image overlaps another
 * section's.  *ret is filled before a version is judged.  Errors:
 * LDR_E_UKI_HEADERS, LDR_E_UKI_NO_LINUX, LDR_E_UKI_SECTION,
 * LDR_E_UKI_OVERLAP, LDR_E_UKI_NO_STUB, LDR_E_UKI_STUB_UNKNOWN.
 */
enum ldr_err uki_parse(const void *img, uint64_t len, struct uki *ret);

/*
 * The size bytes of section s of img (the bytes uki_parse took) into out:
 * its raw bytes, then zeros, as the stub sees them in its loaded image.
 */
void uki_section_copy(const void *img, const struct uki_section *s, uint8_t *out);

/* One PCR 11 record: the section's name (with its NUL), or its bytes. */
struct uki_event {
	uint8_t sec;  /* enum uki_section_id */
	uint8_t data; /* 0: the name's bytes, 1: the section's bytes */
};
#define UKI_EVENTS_MAX (2 * UKI_SEC_COUNT)

/*
 * The EV_IPL records the UKI's stub version makes in PCR 11, in order:
 * for each measured section present, its name then its bytes; each
 * record's event data is the section's name in UTF-16 with its NUL.
 * Returns how many (0 for a stub version not known).  ev holds
 * UKI_EVENTS_MAX.
 */
size_t uki_events(const struct uki *u, struct uki_event *ev);

/*
 * PCR 11 (SHA-256 bank) from all zeros after those records, over img (the
 * bytes uki_parse took): what `systemd-measure calculate` prints for the
 * sections-only phase.
 */
void uki_pcr11(const void *img, const struct uki *u, uint8_t ret[32]);

/*
 * A command line as the stub makes it from a .cmdline section or from
 * the text it was passed: up to the first NUL or len bytes, every control
 * character (below 0x20) a space, trailing spaces dropped.  Only ASCII is
 * taken (the loader's lines are ASCII).  out gets at most cap - 1
 * characters and a NUL; *ret_len the length.  Errors: LDR_E_UKI_CMDLINE
 * (a byte of 0x80 or above, or longer than cap - 1).
 */
enum ldr_err uki_cmdline(const uint8_t *s, uint64_t len, char *out, size_t cap,
			 size_t *ret_len);

/*
 * The initrd the stub hands Linux: .initrd's bytes, zeros to a multiple
 * of 4, then one cpio archive (newc) for each of .pcrsig and .pcrpkey
 * present, as /.extra/tpm2-pcr-signature.json and
 * /.extra/tpm2-pcr-public-key.pem (byte for byte what stub 252 writes).
 * uki_initrd_size: its length (0 when there is nothing); uki_initrd_build
 * writes it to out (that many bytes).
 */
uint64_t uki_initrd_size(const struct uki *u);
void uki_initrd_build(const void *img, const struct uki *u, uint8_t *out);

/*
 * One such archive for data[0..len) as /.extra/NAME: its length with out
 * NULL, else written to out (that many bytes).  len at most UINT32_MAX.
 */
uint64_t uki_cpio(const char *name, const void *data, uint64_t len, uint8_t *out);

/*
 * The name os-release text gives (.osrel): PRETTY_NAME, else NAME,
 * unquoted, anything but printable ASCII as '?', at most cap - 1
 * characters.  Returns 1 when out holds a name, 0 when there is none.
 */
int uki_os_name(const uint8_t *osrel, uint64_t len, char *out, size_t cap);

#endif
