/*
 * test_pcrlog.c - host tests for src/pcrlog.c (and the loader's PCR 12
 * bytes, src/tcglog.c) on hand-made event logs: a boot as OVMF and the
 * loader log it, with shim before the loader, with systemd-boot's record
 * before it; which records are replayed, recomputed and replaced; a PCR's
 * next value against the same log replayed as a TPM would, with the
 * loader's records swapped; and every log the prediction cannot stand
 * behind (an unknown record, another stage in the loader's PCRs, a
 * firmware record between the loader's own, an image from nowhere, no
 * loader, the loader twice, a missing bank, a record without the bank's
 * digest, truncation at every length) refused with the PCR and the reason.
 */
#include <stdlib.h>
#include <string.h>

#include "pcrlog.h"
#include "sha256.h"
#include "test.h"

/* ------------------------------------------------------------ the builder */

static uint8_t lg[16384];
static size_t lg_len;
static int lg_banks; /* 1: SHA-256; 2: SHA-1 and SHA-256 */

static void put(const void *p, size_t n)
{
	memcpy(lg + lg_len, p, n);
	lg_len += n;
}

static void put32(uint32_t v)
{
	for (int i = 0; i < 4; i++)
		lg[lg_len++] = (uint8_t)(v >> (8 * i));
}

static void put16(uint16_t v)
{
	lg[lg_len++] = (uint8_t)v;
	lg[lg_len++] = (uint8_t)(v >> 8);
}

static void lg_start(int banks)
{
	static const uint8_t zero[20];

	lg_len = 0;
	lg_banks = banks;
	put32(0);
	put32(TCG_EV_NO_ACTION);
	put(zero, 20);
	put32(16 + 4 + 4 + 4 + 4 * (uint32_t)banks + 1);
	put("Spec ID Event03", 16);
	put32(0);
	put32(0x00000200);
	put32((uint32_t)banks);
	if (banks == 2) {
		put16(TCGLOG_ALG_SHA1);
		put16(20);
	}
	put16(TCGLOG_ALG_SHA256);
	put16(32);
	lg[lg_len++] = 0;
}

/* one record: the SHA-256 of hashed (and a SHA-1 stand-in: its first 20 bytes) */
static size_t lg_event(uint32_t pcr, uint32_t type, const void *hashed, size_t hn,
		       const void *data, uint32_t dn)
{
	uint8_t d[32];
	size_t at = lg_len;

	sha256(hashed, hn, d);
	put32(pcr);
	put32(type);
	put32((uint32_t)lg_banks);
	if (lg_banks == 2) {
		put16(TCGLOG_ALG_SHA1);
		put(d, 20);
	}
	put16(TCGLOG_ALG_SHA256);
	put(d, 32);
	put32(dn);
	put(data, dn);
	return at;
}

/* an event whose data is what it hashes (actions, separators...) */
static void lg_plain(uint32_t pcr, uint32_t type, const char *s)
{
	lg_event(pcr, type, s, strlen(s), s, (uint32_t)strlen(s));
}

#define EV_SEP     0x00000004u
#define EV_CRTM    0x00000008u
#define EV_UNUSED  0x00000002u
#define EV_ACTION  0x80000007u
#define EV_BOOTVAR 0x80000002u
#define EV_AUTH    0x800000e0u

/* a device path: [hardware node], file path node(s) or an FV file node, end */
static size_t dp_build(uint8_t *o, const char *const *files, int hw, int fv)
{
	size_t n = 0;

	if (hw) { /* PciRoot-like ACPI node, 12 bytes */
		static const uint8_t acpi[12] = { 2, 1, 12, 0, 0xd0, 0x41, 0x03, 0x0a };

		memcpy(o, acpi, 12);
		n += 12;
	}
	if (fv) { /* MEDIA_PIWG_FW_FILE: a GUID */
		o[n] = 4;
		o[n + 1] = 6;
		o[n + 2] = 20;
		o[n + 3] = 0;
		memset(o + n + 4, 0xab, 16);
		n += 20;
	}
	for (int f = 0; files && files[f]; f++) {
		size_t l = strlen(files[f]), len = 4 + 2 * (l + 1);

		o[n] = 4;
		o[n + 1] = 4;
		o[n + 2] = (uint8_t)len;
		o[n + 3] = (uint8_t)(len >> 8);
		for (size_t i = 0; i <= l; i++) {
			o[n + 4 + 2 * i] = (uint8_t)files[f][i];
			o[n + 5 + 2 * i] = 0;
		}
		n += len;
	}
	o[n] = 0x7f;
	o[n + 1] = 0xff;
	o[n + 2] = 4;
	o[n + 3] = 0;
	return n + 4;
}

/* PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION for an image (path NULL: none) */
static size_t lg_image(const char *path, int hw, int fv, const char *content)
{
	uint8_t ev[512];
	const char *files[2] = { path, NULL };
	size_t n = 32;

	memset(ev, 0, 32);
	if (path || hw || fv) {
		size_t dl = dp_build(ev + 32, path ? files : NULL, hw, fv);

		ev[24] = (uint8_t)dl;
		n += dl;
	}
	return lg_event(4, TCG_EV_EFI_BOOT_SERVICES_APP, content, strlen(content), ev,
			(uint32_t)n);
}

/* EV_EVENT_TAG: tag, size, description; hashing content */
static void lg_tag(uint32_t pcr, uint32_t tag, const char *content)
{
	uint8_t ev[64];

	memcpy(ev, (uint8_t[]){ (uint8_t)tag, (uint8_t)(tag >> 8), (uint8_t)(tag >> 16),
				(uint8_t)(tag >> 24), 4, 0, 0, 0, 'd', 'e', 's', 'c' },
	       12);
	lg_event(pcr, TCG_EV_EVENT_TAG, content, strlen(content), ev, 12);
}

/* PCR 7's SecureBoot variable (UEFI_VARIABLE_DATA), value v */
static void lg_secure_boot(uint8_t v)
{
	uint8_t ev[64];
	size_t n = 0;

	memset(ev, 0x61, 16); /* the GUID */
	n = 16;
	memcpy(ev + n, (uint8_t[]){ 10, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 16);
	n += 16;
	for (const char *c = "SecureBoot"; *c; c++) {
		ev[n++] = (uint8_t)*c;
		ev[n++] = 0;
	}
	ev[n++] = v;
	lg_event(7, TCG_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n, ev, (uint32_t)n);
}

/* the firmware's part before the boot application */
static void lg_firmware(uint8_t secure)
{
	lg_plain(0, EV_CRTM, "OVMF 2022");
	lg_secure_boot(secure);
	lg_plain(1, EV_BOOTVAR, "Boot0001");
	for (uint32_t p = 0; p <= 7; p++)
		lg_event(p, EV_SEP, "\0\0\0\0", 4, "\0\0\0\0", 4);
	lg_plain(4, EV_ACTION, "Calling EFI Application from Boot Option");
}

/* the loader's records: policy, settings, command line, kernel, initrd */
static void lg_loader(const char *tag)
{
	char s[64];

	snprintf(s, sizeof(s), "policy %s", tag);
	lg_tag(5, TPM_TAG_POLICY, s);
	snprintf(s, sizeof(s), "settings %s", tag);
	lg_tag(5, TPM_TAG_SETTINGS, s);
	snprintf(s, sizeof(s), "cmdline %s", tag);
	lg_plain(12, TCG_EV_IPL, s);
	snprintf(s, sizeof(s), "kernel %s", tag);
	lg_tag(9, TPM_TAG_KERNEL, s);
	snprintf(s, sizeof(s), "initrd %s", tag);
	lg_tag(9, TPM_TAG_INITRD, s);
}

static void lg_exit_boot_services(void)
{
	lg_plain(5, EV_ACTION, "Exit Boot Services Invocation");
	lg_plain(5, EV_ACTION, "Exit Boot Services Returned with Success");
}

/* OVMF starting the loader from \EFI\BOOT\BOOTX64.EFI */
static void lg_plain_boot(const char *tag)
{
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_loader(tag);
	lg_exit_boot_services();
}

/* ------------------------------------------------------------ replaying */

static void ext(void *ctx, const uint8_t *pcr, const uint8_t *d, uint8_t *out)
{
	uint8_t b[64];

	(void)ctx;
	memcpy(b, pcr, 32);
	memcpy(b + 32, d, 32);
	sha256(b, 64, out);
}

/* PCR pcr as a TPM holds it after the whole log (SHA-256 bank) */
static void replay(uint32_t pcr, uint8_t out[32])
{
	struct tcglog_spec spec;
	struct tcglog_event e;
	uint64_t off;

	memset(out, 0, 32);
	if (tcglog_first(lg, lg_len, &spec, &off) != LDR_OK)
		return;
	while (off < lg_len && tcglog_event(lg, lg_len, off, &spec, &e) == LDR_OK) {
		if (e.pcr == pcr && e.type != TCG_EV_NO_ACTION)
			ext(NULL, out, e.sha256, out);
		off += e.size;
	}
}

static struct pcrlog_event ev[256];
static struct pcrlog L;

static enum ldr_err rd(void)
{
	return pcrlog_read(lg, lg_len, TCGLOG_ALG_SHA256, ev, 256, &L);
}

/* every image record gets its log digest as its recomputed one */
static void same_images(void)
{
	for (size_t i = 0; i < L.nev; i++)
		if (ev[i].kind == PCRLOG_IMAGE)
			ev[i].now = ev[i].digest;
}

static struct pcrlog_record rec[16];
static size_t nrec;

static void rec_add(uint32_t pcr, const char *content)
{
	rec[nrec].pcr = pcr;
	memset(rec[nrec].digest, 0, sizeof(rec[nrec].digest));
	sha256(content, strlen(content), rec[nrec].digest);
	nrec++;
}

/* the loader's records as lg_loader(tag) measures them */
static void rec_loader(const char *tag)
{
	char s[64];

	nrec = 0;
	snprintf(s, sizeof(s), "policy %s", tag);
	rec_add(5, s);
	snprintf(s, sizeof(s), "settings %s", tag);
	rec_add(5, s);
	snprintf(s, sizeof(s), "cmdline %s", tag);
	rec_add(12, s);
	snprintf(s, sizeof(s), "kernel %s", tag);
	rec_add(9, s);
	snprintf(s, sizeof(s), "initrd %s", tag);
	rec_add(9, s);
}

static enum ldr_err predict(uint32_t pcr, uint8_t out[32], size_t *at, const char **why)
{
	return pcrlog_predict(&L, pcr, rec, nrec, ext, NULL, out, at, why);
}

/* ------------------------------------------------------------ tests */

TEST(test_plain_boot)
{
	uint8_t got[32], want[32];
	size_t at;
	const char *why;

	lg_plain_boot("A");
	CHECK(rd() == LDR_OK, "read: %s", L.why ? L.why : "");
	/* 12 firmware records, the image, the loader's 5, ExitBootServices' 2 */
	CHECK(L.nev == 20, "20 records (%zu)", L.nev);
	CHECK(L.loader == 12 && ev[12].kind == PCRLOG_IMAGE, "the loader's image record");
	CHECK(strcmp(ev[12].path, "\\EFI\\BOOT\\BOOTX64.EFI") == 0, "its path: %s", ev[12].path);
	CHECK(!ev[12].file_only, "the firmware's record names the device");
	CHECK(L.starter == PCRLOG_NONE && L.settings == 14, "no starter, the settings record");
	CHECK(!L.secure_boot, "Secure Boot off");
	CHECK(ev[0].kind == PCRLOG_REPLAY && ev[11].kind == PCRLOG_REPLAY, "firmware replayed");
	for (size_t i = 13; i <= 17; i++)
		CHECK(ev[i].kind == PCRLOG_LOADER, "record %zu the loader's", i);
	CHECK(ev[18].kind == PCRLOG_REPLAY && ev[19].kind == PCRLOG_REPLAY,
	      "ExitBootServices' records replayed");

	/* the same records again: every PCR as the TPM holds it */
	same_images();
	rec_loader("A");
	for (uint32_t p = 0; p < 16; p++) {
		replay(p, want);
		CHECK(predict(p, got, &at, &why) == LDR_OK, "PCR %u predicted", p);
		CHECK(memcmp(got, want, 32) == 0, "PCR %u: the unchanged boot's own value", p);
	}

	/* the next boot's records replace these: the log with them instead */
	rec_loader("B");
	lg_plain_boot("B");
	for (uint32_t p = 0; p < 16; p++) {
		replay(p, want);
		lg_plain_boot("A");
		CHECK(rd() == LDR_OK, "read A");
		same_images();
		CHECK(predict(p, got, &at, &why) == LDR_OK, "PCR %u predicted", p);
		CHECK(memcmp(got, want, 32) == 0, "PCR %u: boot B's value from boot A's log", p);
		lg_plain_boot("B");
	}

	/* a new loader image: PCR 4 takes the recomputed digest */
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "new loader image");
	lg_loader("B");
	lg_exit_boot_services();
	replay(4, want);
	lg_plain_boot("A");
	rd();
	{
		uint8_t d[32];

		sha256("new loader image", 16, d);
		ev[L.loader].now = d;
		CHECK(predict(4, got, &at, &why) == LDR_OK && memcmp(got, want, 32) == 0,
		      "PCR 4 with the new loader's digest");
		ev[L.loader].now = NULL;
		CHECK(predict(4, got, &at, &why) == LDR_E_PCRLOG && at == L.loader,
		      "an image without its recomputed digest is an error");
	}
}

TEST(test_fewer_and_more_records)
{
	uint8_t got[32], want[32];
	size_t at;
	const char *why;

	/* boot A without a policy record, B with one and two initrds */
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_tag(5, TPM_TAG_SETTINGS, "settings A");
	lg_plain(12, TCG_EV_IPL, "cmdline A");
	lg_tag(9, TPM_TAG_KERNEL, "kernel A");
	lg_exit_boot_services();
	CHECK(rd() == LDR_OK, "read A");
	same_images();
	rec_loader("B");
	rec_add(9, "initrd two");
	CHECK(predict(5, got, &at, &why) == LDR_OK, "PCR 5");
	CHECK(predict(9, got, &at, &why) == LDR_OK, "PCR 9");
	memset(want, 0, 32);
	for (size_t k = 0; k < nrec; k++)
		if (rec[k].pcr == 9)
			ext(NULL, want, rec[k].digest, want);
	CHECK(memcmp(got, want, 32) == 0, "PCR 9: kernel and two initrds from zero");
	/* PCR 5: separator, policy, settings, then the firmware's two */
	CHECK(predict(5, got, &at, &why) == LDR_OK, "PCR 5 again");
	{
		uint8_t sep[32], d[32];

		memset(want, 0, 32);
		sha256("\0\0\0\0", 4, sep);
		ext(NULL, want, sep, want);
		ext(NULL, want, rec[0].digest, want);
		ext(NULL, want, rec[1].digest, want);
		sha256("Exit Boot Services Invocation", 29, d);
		ext(NULL, want, d, want);
		sha256("Exit Boot Services Returned with Success", 40, d);
		ext(NULL, want, d, want);
		CHECK(memcmp(got, want, 32) == 0, "PCR 5: the new records before ExitBootServices'");
	}
}

TEST(test_shim_chain)
{
	uint8_t got[32], want[32], d[32];
	size_t at;
	const char *why;

	lg_start(2);
	lg_firmware(1);
	lg_image("\\EFI\\kaslr-loader\\shimx64.efi", 1, 0, "shim");
	lg_plain(14, TCG_EV_IPL, "MokList");
	lg_plain(7, EV_AUTH, "SbatLevel");
	lg_image("\\EFI\\kaslr-loader\\grubx64.efi", 0, 0, "loader");
	lg_loader("A");
	lg_image(NULL, 0, 0, "kernel's Authenticode A"); /* shim's Verify */
	lg_exit_boot_services();
	CHECK(rd() == LDR_OK, "read: %s", L.why ? L.why : "");
	CHECK(L.secure_boot, "Secure Boot on");
	CHECK(L.starter != PCRLOG_NONE && ev[L.starter].kind == PCRLOG_IMAGE &&
		      strcmp(ev[L.starter].path, "\\EFI\\kaslr-loader\\shimx64.efi") == 0,
	      "shim started the loader");
	CHECK(ev[L.loader].file_only && strcmp(ev[L.loader].path, "\\EFI\\kaslr-loader\\grubx64.efi") == 0,
	      "shim's record of its second stage: a file path alone");
	CHECK(ev[L.starter + 1].kind == PCRLOG_REPLAY, "shim's PCR 14 record replayed");
	CHECK(ev[L.nev - 3].kind == PCRLOG_LOADER, "the Verify record is the loader's to predict");
	same_images();
	rec_loader("A");
	rec_add(4, "kernel's Authenticode B");
	sha256("kernel's Authenticode B", 23, d);
	CHECK(predict(4, got, &at, &why) == LDR_OK, "PCR 4 predicted");
	replay(4, want); /* shim, loader, then Verify A: redo with B */
	{
		uint8_t s[32], l[32];

		memset(want, 0, 32);
		sha256("\0\0\0\0", 4, s);
		ext(NULL, want, s, want);
		sha256("Calling EFI Application from Boot Option", 40, s);
		ext(NULL, want, s, want);
		sha256("shim", 4, s);
		ext(NULL, want, s, want);
		sha256("loader", 6, l);
		ext(NULL, want, l, want);
		ext(NULL, want, d, want);
	}
	CHECK(memcmp(got, want, 32) == 0, "PCR 4: shim, the loader, the new kernel's Verify");
	/* the other bank is there too, and a missing one is an error */
	CHECK(pcrlog_read(lg, lg_len, TCGLOG_ALG_SHA1, ev, 256, &L) == LDR_OK && L.size == 20,
	      "the SHA-1 bank");
	CHECK(pcrlog_read(lg, lg_len, TCGLOG_ALG_SHA384, ev, 256, &L) == LDR_E_PCRLOG &&
		      strstr(L.why, "bank"),
	      "no SHA-384 bank");
}

TEST(test_refused)
{
	uint8_t got[32];
	size_t at, rec_at;
	const char *why;

	/* an unknown record in PCR 9: PCR 9 refused, PCR 5 still predicted */
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_loader("A");
	rec_at = L.nev;
	lg_plain(9, EV_UNUSED, "what is this");
	lg_exit_boot_services();
	CHECK(rd() == LDR_OK, "read");
	same_images();
	rec_loader("B");
	CHECK(predict(9, got, &at, &why) == LDR_E_PCRLOG && ev[at].type == EV_UNUSED &&
		      strstr(why, "event type"),
	      "PCR 9: unknown record refused (%s)", why ? why : "");
	CHECK(predict(5, got, &at, &why) == LDR_OK, "PCR 5 unaffected");
	(void)rec_at;

	/* systemd-boot's PCR 12 record before the loader's image */
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\systemd\\systemd-bootx64.efi", 1, 0, "sd-boot");
	lg_plain(12, TCG_EV_IPL, "entry options");
	lg_image("\\EFI\\kaslr\\kaslr-loader.efi", 1, 0, "loader");
	lg_loader("A");
	CHECK(rd() == LDR_OK, "read");
	same_images();
	CHECK(predict(12, got, &at, &why) == LDR_E_PCRLOG && strstr(why, "another boot stage"),
	      "PCR 12: another stage's record refused");
	CHECK(predict(4, got, &at, &why) == LDR_OK, "PCR 4: both images recomputed");
	CHECK(L.starter != PCRLOG_NONE && !ev[L.loader].file_only, "systemd-boot started it");

	/* a firmware record between the loader's own */
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_tag(5, TPM_TAG_POLICY, "p");
	lg_plain(5, EV_ACTION, "in between");
	lg_tag(5, TPM_TAG_SETTINGS, "s");
	CHECK(rd() == LDR_OK, "read");
	same_images();
	CHECK(predict(5, got, &at, &why) == LDR_E_PCRLOG && strstr(why, "between"),
	      "PCR 5: a firmware record between the loader's refused");

	/* images from nowhere, and from the firmware's own volume */
	lg_start(1);
	lg_firmware(0);
	lg_image(NULL, 1, 1, "UEFI shell");
	lg_image(NULL, 0, 0, "from memory");
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_loader("A");
	CHECK(rd() == LDR_OK, "read");
	same_images();
	CHECK(ev[L.loader - 2].kind == PCRLOG_REPLAY, "a firmware volume's image replayed");
	CHECK(ev[L.loader - 1].kind == PCRLOG_UNKNOWN, "an image without a file is unknown");
	CHECK(predict(4, got, &at, &why) == LDR_E_PCRLOG && at == L.loader - 1,
	      "PCR 4 refused at that record");

	/* an image record outside PCR 4 */
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_event(2, TCG_EV_EFI_BOOT_SERVICES_APP, "x", 1, "x", 1);
	lg_loader("A");
	CHECK(rd() == LDR_OK, "read");
	CHECK(predict(2, got, &at, &why) == LDR_E_PCRLOG, "PCR 2: an image record there refused");
}

TEST(test_not_a_loader_boot)
{
	/* no settings record */
	lg_start(1);
	lg_firmware(0);
	lg_image("\\EFI\\debian\\grubx64.efi", 1, 0, "grub");
	CHECK(rd() == LDR_E_PCRLOG && strstr(L.why, "no kaslr-loader settings"), "no loader");
	/* the loader twice (a first run that failed, then another boot option) */
	lg_plain_boot("A");
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_loader("B");
	CHECK(rd() == LDR_E_PCRLOG && strstr(L.why, "more than once"), "the loader twice");
	/* no image record before the loader's */
	lg_start(1);
	lg_loader("A");
	CHECK(rd() == LDR_E_PCRLOG && strstr(L.why, "no PCR 4 record"), "no image record");
	/* a record without the bank's digest: SHA-1 only in a two-bank log */
	lg_start(2);
	lg_firmware(0);
	put32(4);
	put32(EV_ACTION);
	put32(1);
	put16(TCGLOG_ALG_SHA1);
	memset(lg + lg_len, 1, 20);
	lg_len += 20;
	put32(0);
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_loader("A");
	CHECK(rd() == LDR_E_TCGLOG, "a record without the SHA-256 digest refused");
	CHECK(pcrlog_read(lg, lg_len, TCGLOG_ALG_SHA1, ev, 256, &L) == LDR_OK,
	      "the SHA-1 bank has all its digests");
	/* more records than room */
	lg_plain_boot("A");
	CHECK(pcrlog_read(lg, lg_len, TCGLOG_ALG_SHA256, ev, 5, &L) == LDR_E_TCGLOG,
	      "more records than the array holds");
}

TEST(test_locality)
{
	uint8_t got[32], want[32], d[32];
	static const char loc[] = "StartupLocality";
	uint8_t data[17];
	size_t at;
	const char *why;

	lg_start(1);
	memcpy(data, loc, 16);
	data[16] = 3;
	lg_event(0, TCG_EV_NO_ACTION, "", 0, data, 17);
	lg_plain(0, EV_CRTM, "H-CRTM");
	lg_image("\\EFI\\BOOT\\BOOTX64.EFI", 1, 0, "loader image");
	lg_loader("A");
	CHECK(rd() == LDR_OK && L.locality == 3, "StartupLocality 3");
	CHECK(ev[0].kind == PCRLOG_SKIP, "EV_NO_ACTION never extended");
	memset(want, 0, 32);
	want[31] = 3;
	sha256("H-CRTM", 6, d);
	ext(NULL, want, d, want);
	same_images();
	nrec = 0;
	CHECK(predict(0, got, &at, &why) == LDR_OK && memcmp(got, want, 32) == 0,
	      "PCR 0 starts from the locality");
	CHECK(predict(24, got, &at, &why) == LDR_E_INVAL, "PCR 24 does not exist");
}

TEST(test_truncated)
{
	size_t full, ok = 0;

	lg_start(2);
	lg_firmware(1);
	lg_image("\\EFI\\kaslr-loader\\shimx64.efi", 1, 0, "shim");
	lg_image("\\EFI\\kaslr-loader\\grubx64.efi", 0, 0, "loader");
	lg_loader("A");
	lg_exit_boot_services();
	full = lg_len;
	for (size_t n = 0; n < full; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		enum ldr_err err;

		memcpy(copy, lg, n);
		err = pcrlog_read(copy, n, TCGLOG_ALG_SHA256, ev, 256, &L);
		/* a log cut at a record's end is a shorter log: read, if it
		 * still has the loader's settings record */
		ok += err == LDR_OK;
		CHECK(err == LDR_OK || err == LDR_E_TCGLOG || err == LDR_E_PCRLOG,
		      "length %zu: %s", n, ldr_err_name(err));
		free(copy);
	}
	/* at the end of the settings, command line, kernel, initrd and first
	 * ExitBootServices record */
	CHECK(ok == 5, "cut after the settings record or a later one: %zu lengths read", ok);
}

TEST(test_devpath)
{
	static const char *const two[] = { "\\EFI", "BOOT/x.efi", NULL };
	static const char *const doubled[] = { "\\EFI\\", "\\BOOT\\", NULL };
	uint8_t dp[256];
	char out[64];
	int other, fv;
	size_t n;

	n = dp_build(dp, two, 1, 0);
	CHECK(pcrlog_devpath_file(dp, n, out, sizeof(out), &other, &fv) &&
		      strcmp(out, "\\EFI\\BOOT\\x.efi") == 0 && other && !fv,
	      "two nodes joined, '/' as '\\': %s", out);
	n = dp_build(dp, doubled, 0, 0);
	CHECK(pcrlog_devpath_file(dp, n, out, sizeof(out), &other, &fv) &&
		      strcmp(out, "\\EFI\\BOOT\\") == 0 && !other,
	      "no doubled separator: %s", out);
	n = dp_build(dp, two, 0, 0);
	dp[4 + 2 * 2] = 0xe9; /* a non-ASCII character: 0x00e9 */
	CHECK(pcrlog_devpath_file(dp, n, out, sizeof(out), &other, &fv) && out[2] == '?',
	      "non-ASCII as '?': %s", out);
	CHECK(!pcrlog_devpath_file(dp, n, out, 6, &other, &fv) && out[0] == 0,
	      "a path that does not fit: none");
	n = dp_build(dp, NULL, 1, 1);
	CHECK(!pcrlog_devpath_file(dp, n, out, sizeof(out), &other, &fv) && fv,
	      "a firmware volume file: no path, fv");
	n = dp_build(dp, two, 0, 0);
	dp[2] = 2; /* a node shorter than its header ends the walk */
	CHECK(!pcrlog_devpath_file(dp, n, out, sizeof(out), &other, &fv), "bad node length");
	n = dp_build(dp, two, 0, 0);
	CHECK(!pcrlog_devpath_file(dp, 10, out, sizeof(out), &other, &fv), "node past the end");
}

TEST(test_cmdline_bytes)
{
	uint8_t out[16];

	CHECK(tcglog_cmdline_event("ab c", 4, out, sizeof(out)) == 8 &&
		      memcmp(out, "a\0b\0 \0c\0", 8) == 0,
	      "UTF-16LE, no NUL");
	CHECK(tcglog_cmdline_event("abcdefghij", 10, out, 7) == 6, "cut at what fits");
	CHECK(tcglog_cmdline_event("", 0, out, sizeof(out)) == 0, "empty line: no bytes");
}
