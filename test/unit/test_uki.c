/*
 * test_uki.c - host tests for src/uki.c on hand-built PE files: the
 * sections found as systemd-stub 252 finds them (names by their own
 * characters, the last header wins, VirtualSize 0 absent, zeros past the
 * raw data), the stub version from .sdmagic and .sbat, PCR 11's records
 * and value, the command line the stub makes, its cpio archives byte for
 * byte, the os-release name; and hostile headers and section tables
 * (offsets and sizes near 2^32, overlaps, truncation at every length,
 * random bytes) refused without a read outside the buffer (ASan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uki.h"
#include "sha256.h"
#include "test.h"

#define IMG_CAP 0x20000
#define LFANEW  0x80
#define OPTSZ   0xf0
#define SECT    (LFANEW + 24 + OPTSZ)

static uint8_t img[IMG_CAP];
static uint32_t img_len;
static unsigned nsect;

static void put16(uint32_t off, uint16_t v)
{
	img[off] = (uint8_t)v;
	img[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint32_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		img[off + i] = (uint8_t)(v >> (8 * i));
}

/* headers of an x86-64 PE32+ image, SizeOfImage 0x40000, headers 0x400 */
static void pe_begin(void)
{
	memset(img, 0, sizeof(img));
	img[0] = 'M';
	img[1] = 'Z';
	put32(0x3c, LFANEW);
	memcpy(img + LFANEW, "PE\0\0", 4);
	put16(LFANEW + 4, 0x8664);
	put16(LFANEW + 20, OPTSZ);
	put16(LFANEW + 24, 0x20b);
	put32(LFANEW + 24 + 56, 0x40000);
	put32(LFANEW + 24 + 60, 0x400);
	put32(LFANEW + 24 + 108, 16);
	nsect = 0;
	img_len = 0x1000;
}

/* one section header, its raw data (data, len bytes) appended to the file
 * at a 512-byte boundary; returns its file offset */
static uint32_t pe_add(const char *name, uint32_t va, uint32_t vsize, const void *data,
		       uint32_t len)
{
	uint32_t h = SECT + nsect * 40, off = img_len;

	memset(img + h, 0, 40);
	memcpy(img + h, name, strlen(name) < 8 ? strlen(name) : 8);
	put32(h + 8, vsize);
	put32(h + 12, va);
	put32(h + 16, (len + 511) & ~511u);
	put32(h + 20, off);
	if (len)
		memcpy(img + off, data, len);
	img_len = off + ((len + 511) & ~511u);
	put16(LFANEW + 6, (uint16_t)++nsect);
	return off;
}

static void pe_add_text(const char *name, uint32_t va, const char *s)
{
	pe_add(name, va, (uint32_t)strlen(s), s, (uint32_t)strlen(s));
}

#define MAGIC_252 "#### LoaderInfo: systemd-stub 252.39-1~deb12u2 ####"
#define SBAT_252 "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n" \
		 "systemd,1,The systemd Developers,systemd,252,https://systemd.io/\n"

static const char linux_bytes[] = "MZ pretend bzImage";
static const char osrel[] = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
static const char cmdline[] = "console=ttyS0 quiet\n";
static const char initrd[] = "070701 an initrd of 29 bytes!";

/* a UKI as objcopy builds one: the stub's .text, .sbat, .sdmagic, then
 * .osrel .cmdline .linux .initrd at 64 KiB steps */
static void uki_good(void)
{
	pe_begin();
	pe_add(".text", 0x1000, 0x800, "code", 4);
	pe_add(".sbat", 0x2000, sizeof(SBAT_252) - 1, SBAT_252, sizeof(SBAT_252) - 1);
	pe_add(".sdmagic", 0x3000, sizeof(MAGIC_252), MAGIC_252, sizeof(MAGIC_252));
	pe_add_text(".osrel", 0x10000, osrel);
	pe_add_text(".cmdline", 0x20000, cmdline);
	pe_add(".linux", 0x30000, sizeof(linux_bytes), linux_bytes, sizeof(linux_bytes));
	pe_add(".initrd", 0x38000, sizeof(initrd) - 1, initrd, sizeof(initrd) - 1);
}

static void extend(uint8_t pcr[32], const void *data, size_t len)
{
	uint8_t both[64];

	memcpy(both, pcr, 32);
	sha256(data, len, both + 32);
	sha256(both, 64, pcr);
}

TEST(good_image)
{
	struct uki u;
	char name[64];

	uki_good();
	CHECK(uki_detect(img, img_len), "detected");
	CHECK(uki_parse(img, img_len, &u) == LDR_OK, "parsed");
	CHECK(strcmp(u.stub_version, "252.39-1~deb12u2") == 0, "version '%s'", u.stub_version);
	CHECK(u.stub_major == 252 && u.stub_minor == 39 && u.stub_known, "252.39 known");
	CHECK_EQ_U64(u.sec[UKI_SEC_LINUX].size, sizeof(linux_bytes), ".linux size");
	CHECK(memcmp(img + u.sec[UKI_SEC_LINUX].off, linux_bytes, sizeof(linux_bytes)) == 0,
	      ".linux bytes");
	CHECK_EQ_U64(u.sec[UKI_SEC_INITRD].size, sizeof(initrd) - 1, ".initrd size");
	CHECK_EQ_U64(u.sec[UKI_SEC_CMDLINE].size, strlen(cmdline), ".cmdline size");
	CHECK(u.sec[UKI_SEC_SPLASH].size == 0 && u.sec[UKI_SEC_DTB].size == 0 &&
	      u.sec[UKI_SEC_PCRSIG].size == 0 && u.sec[UKI_SEC_PCRPKEY].size == 0, "absent");
	CHECK(uki_os_name(img + u.sec[UKI_SEC_OSREL].off, u.sec[UKI_SEC_OSREL].raw, name,
			  sizeof(name)) && strcmp(name, "Debian GNU/Linux 12 (bookworm)") == 0,
	      "PRETTY_NAME '%s'", name);
}

/* the records, in the stub's order: name then bytes, for each present */
TEST(events_and_pcr11)
{
	static const uint8_t want[][2] = {
		{ UKI_SEC_LINUX, 0 }, { UKI_SEC_LINUX, 1 }, { UKI_SEC_OSREL, 0 }, { UKI_SEC_OSREL, 1 },
		{ UKI_SEC_CMDLINE, 0 }, { UKI_SEC_CMDLINE, 1 }, { UKI_SEC_INITRD, 0 },
		{ UKI_SEC_INITRD, 1 }, { UKI_SEC_PCRPKEY, 0 }, { UKI_SEC_PCRPKEY, 1 },
	};
	struct uki_event ev[UKI_EVENTS_MAX];
	uint8_t pcr[32], got[32];
	struct uki u;
	size_t n;

	uki_good();
	/* .pcrsig is never measured; .pcrpkey is, last */
	pe_add_text(".pcrpkey", 0x3c000, "-----BEGIN PUBLIC KEY-----\n");
	pe_add_text(".pcrsig", 0x3d000, "{\"sha256\":[]}\n");
	CHECK(uki_parse(img, img_len, &u) == LDR_OK, "parsed");
	n = uki_events(&u, ev);
	CHECK_EQ_U64(n, sizeof(want) / sizeof(want[0]), "records");
	for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(ev[i].sec == want[i][0] && ev[i].data == want[i][1], "record %zu", i);
	/* the value, from the contents written above */
	memset(pcr, 0, 32);
	extend(pcr, ".linux", 7);
	extend(pcr, linux_bytes, sizeof(linux_bytes));
	extend(pcr, ".osrel", 7);
	extend(pcr, osrel, strlen(osrel));
	extend(pcr, ".cmdline", 9);
	extend(pcr, cmdline, strlen(cmdline));
	extend(pcr, ".initrd", 8);
	extend(pcr, initrd, strlen(initrd));
	extend(pcr, ".pcrpkey", 9);
	extend(pcr, "-----BEGIN PUBLIC KEY-----\n", 27);
	uki_pcr11(img, &u, got);
	CHECK(memcmp(pcr, got, 32) == 0, "PCR 11");
	/* an unknown version makes no records */
	u.stub_known = 0;
	CHECK(uki_events(&u, ev) == 0, "no records for an unknown stub");
}

/* the stub compares a name's own characters and keeps the last match;
 * VirtualSize 0 is absent; the bytes past the raw data are zeros */
TEST(stub_section_rules)
{
	static const char zpad[] = "abc";
	uint8_t buf[600], pcr[32], got[32];
	struct uki u;

	uki_good();
	pe_add(".linuxAB", 0x3a000, 5, "later", 5);
	CHECK(uki_parse(img, img_len, &u) == LDR_OK, "parsed");
	CHECK(u.sec[UKI_SEC_LINUX].size == 5 &&
	      memcmp(img + u.sec[UKI_SEC_LINUX].off, "later", 5) == 0, "the last .linux* wins");

	uki_good();
	pe_add(".splash", 0x3a000, 0, "x", 1);
	CHECK(uki_parse(img, img_len, &u) == LDR_OK && u.sec[UKI_SEC_SPLASH].size == 0,
	      "VirtualSize 0 is absent");

	/* .dtb: 3 raw bytes (SizeOfRawData rounds to 512), VirtualSize 600 */
	uki_good();
	{
		uint32_t h = SECT + nsect * 40;

		pe_add(".dtb", 0x3a000, 600, zpad, 3);
		put32(h + 16, 3); /* SizeOfRawData exactly 3 */
	}
	CHECK(uki_parse(img, img_len, &u) == LDR_OK, "parsed");
	CHECK(u.sec[UKI_SEC_DTB].size == 600 && u.sec[UKI_SEC_DTB].raw == 3, "raw 3 of 600");
	memset(buf, 0xee, sizeof(buf));
	uki_section_copy(img, &u.sec[UKI_SEC_DTB], buf);
	CHECK(memcmp(buf, zpad, 3) == 0 && buf[3] == 0 && buf[599] == 0, "zeros after the raw bytes");
	memset(pcr, 0, 32);
	extend(pcr, ".linux", 7);
	extend(pcr, linux_bytes, sizeof(linux_bytes));
	extend(pcr, ".osrel", 7);
	extend(pcr, osrel, strlen(osrel));
	extend(pcr, ".cmdline", 9);
	extend(pcr, cmdline, strlen(cmdline));
	extend(pcr, ".initrd", 8);
	extend(pcr, initrd, strlen(initrd));
	extend(pcr, ".dtb", 5);
	extend(pcr, buf, 600);
	uki_pcr11(img, &u, got);
	CHECK(memcmp(pcr, got, 32) == 0, "PCR 11 over VirtualSize bytes, zeros included");

	/* a .linux without a name match: ".linu" is not ".linux" */
	pe_begin();
	pe_add(".sdmagic", 0x3000, sizeof(MAGIC_252), MAGIC_252, sizeof(MAGIC_252));
	pe_add(".linu", 0x30000, 4, "abcd", 4);
	CHECK(!uki_detect(img, img_len), "no .linux, no UKI");
	CHECK(uki_parse(img, img_len, &u) == LDR_E_UKI_NO_LINUX, "no .linux");
}

static enum ldr_err parse_magic(const char *magic, const char *sbat)
{
	struct uki u;

	pe_begin();
	if (sbat)
		pe_add(".sbat", 0x2000, (uint32_t)strlen(sbat), sbat, (uint32_t)strlen(sbat));
	if (magic)
		pe_add(".sdmagic", 0x3000, (uint32_t)strlen(magic) + 1, magic,
		       (uint32_t)strlen(magic) + 1);
	pe_add(".linux", 0x30000, 4, "abcd", 4);
	return uki_parse(img, img_len, &u);
}

TEST(stub_versions)
{
	struct {
		const char *magic, *sbat;
		enum ldr_err want;
	} c[] = {
		{ MAGIC_252, NULL, LDR_OK },
		{ MAGIC_252, SBAT_252, LDR_OK },
		{ "#### LoaderInfo: systemd-stub 252.3 ####", NULL, LDR_OK },
		{ "#### LoaderInfo: systemd-stub 252.2 ####", NULL, LDR_E_UKI_STUB_UNKNOWN },
		{ "#### LoaderInfo: systemd-stub 252 ####", NULL, LDR_E_UKI_STUB_UNKNOWN },
		{ "#### LoaderInfo: systemd-stub 253.1 ####", NULL, LDR_E_UKI_STUB_UNKNOWN },
		{ "#### LoaderInfo: systemd-stub 2520.3 ####", NULL, LDR_E_UKI_STUB_UNKNOWN },
		{ "#### LoaderInfo: systemd-stub 255.4-1ubuntu8 ####", NULL, LDR_E_UKI_STUB_UNKNOWN },
		/* .sbat disagrees with .sdmagic */
		{ MAGIC_252, "systemd,1,The systemd Developers,systemd,254,https://systemd.io/\n",
		  LDR_E_UKI_STUB_UNKNOWN },
		/* only .sbat: its major alone cannot say 252.3 or later */
		{ NULL, SBAT_252, LDR_E_UKI_STUB_UNKNOWN },
		{ NULL, NULL, LDR_E_UKI_NO_STUB },
		/* malformed magic: no suffix, blank in the version, wrong prefix */
		{ "#### LoaderInfo: systemd-stub 252.39", NULL, LDR_E_UKI_NO_STUB },
		{ "#### LoaderInfo: systemd-stub 252.39 x ####", NULL, LDR_E_UKI_NO_STUB },
		{ "#### LoaderInfo: systemd-boot 252.39 ####", NULL, LDR_E_UKI_NO_STUB },
		{ "#### LoaderInfo: systemd-stub  ####", NULL, LDR_E_UKI_NO_STUB },
		/* a vendor line is not systemd's */
		{ NULL, "systemd.debian,1,Debian,systemd,252.39-1~deb12u2,https://bugs.debian.org/\n",
		  LDR_E_UKI_NO_STUB },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		enum ldr_err got = parse_magic(c[i].magic, c[i].sbat);

		CHECK(got == c[i].want, "case %zu: %s, want %s", i, ldr_err_name(got),
		      ldr_err_name(c[i].want));
	}
}

/* headers and section tables that must be refused (and never read past) */
TEST(hostile)
{
	struct uki u;
	uint32_t lin;

	/* the .linux header is the 6th (index 5) in uki_good() */
	lin = SECT + 5 * 40;
#define REFUSE(what, want, edit)                                                  \
	do {                                                                       \
		uki_good();                                                        \
		edit;                                                              \
		enum ldr_err e_ = uki_parse(img, img_len, &u);                     \
		CHECK(e_ == (want), "%s: %s", what, ldr_err_name(e_));             \
	} while (0)
	REFUSE("machine", LDR_E_UKI_HEADERS, put16(LFANEW + 4, 0x14c));
	REFUSE("PE32", LDR_E_UKI_HEADERS, put16(LFANEW + 24, 0x10b));
	REFUSE("no sections", LDR_E_UKI_HEADERS, put16(LFANEW + 6, 0));
	REFUSE("97 sections", LDR_E_UKI_HEADERS, put16(LFANEW + 6, 97));
	REFUSE("65535 sections", LDR_E_UKI_HEADERS, put16(LFANEW + 6, 0xffff));
	REFUSE("optional header too small", LDR_E_UKI_HEADERS, put16(LFANEW + 20, 60));
	REFUSE("optional header past the end", LDR_E_UKI_HEADERS, put16(LFANEW + 20, 0xffff));
	REFUSE("lfanew outside", LDR_E_UKI_HEADERS, put32(0x3c, 0xfffffff0));
	REFUSE("lfanew at the end", LDR_E_UKI_HEADERS, put32(0x3c, IMG_CAP - 8));
	REFUSE("no PE signature", LDR_E_UKI_HEADERS, img[LFANEW] = 'X');
	REFUSE("raw offset past the file", LDR_E_UKI_SECTION, put32(lin + 20, 0xfffffe00));
	REFUSE("raw size past the file", LDR_E_UKI_SECTION,
	       (put32(lin + 8, 0xffffffff), put32(lin + 16, 0xffffffff)));
	REFUSE("VirtualSize past SizeOfImage", LDR_E_UKI_SECTION, put32(lin + 8, 0x10001));
	REFUSE("VirtualAddress past SizeOfImage", LDR_E_UKI_SECTION, put32(lin + 12, 0xfffffff0));
	REFUSE("in the headers", LDR_E_UKI_SECTION, put32(lin + 12, 0x200));
	REFUSE("overlaps .initrd", LDR_E_UKI_OVERLAP, put32(lin + 12, 0x37ff0));
	REFUSE("overlaps the stub's .text", LDR_E_UKI_OVERLAP, put32(lin + 12, 0x1400));
	/* a section of the stub's own may not overlap a used one either way */
	REFUSE(".text over .cmdline", LDR_E_UKI_OVERLAP,
	       (put32(SECT + 8, 0x20000), put32(SECT + 12, 0x1000)));
	/* raw data inside the certificate table (unsigned bytes) */
	REFUSE("in the signature", LDR_E_UKI_SECTION,
	       (put32(LFANEW + 24 + 144, 0x1000), put32(LFANEW + 24 + 148, 0x20000)));
	REFUSE(".sdmagic outside the file", LDR_E_UKI_SECTION, put32(SECT + 2 * 40 + 20, 0x7fffff00));
#undef REFUSE
	/* a certificate table elsewhere is fine */
	uki_good();
	put32(LFANEW + 24 + 144, img_len);
	put32(LFANEW + 24 + 148, 0x100);
	CHECK(uki_parse(img, img_len + 0x100, &u) == LDR_OK, "signature after the sections");
}

/* every prefix of a good image: refused (or, at full length, taken), no
 * read past it (ASan) */
TEST(truncation)
{
	struct uki u;
	uint8_t *copy;
	uint32_t full;
	int ok = 1;

	uki_good();
	full = img_len;
	for (uint32_t n = 0; n <= full; n++) {
		enum ldr_err e;

		copy = malloc(n ? n : 1);
		memcpy(copy, img, n);
		(void)uki_detect(copy, n);
		e = uki_parse(copy, n, &u);
		if ((n < full && e == LDR_OK && u.sec[UKI_SEC_INITRD].off + u.sec[UKI_SEC_INITRD].raw > n) ||
		    (n == full && e != LDR_OK))
			ok = 0;
		free(copy);
	}
	CHECK(ok, "every prefix");
}

/* random bytes over a good image: whatever is taken lies inside it */
TEST(random_damage)
{
	uint64_t s = 0x5eed0c1a;
	int bad = 0, taken = 0;

	for (int round = 0; round < 4000; round++) {
		struct uki u;
		int flips = 1 + (int)(test_rand(&s) % 8);

		uki_good();
		for (int k = 0; k < flips; k++) {
			/* the headers, mostly */
			uint32_t at = (uint32_t)(test_rand(&s) % (test_rand(&s) & 1 ? 0x400 : img_len));

			img[at] = (uint8_t)test_rand(&s);
		}
		if (uki_parse(img, img_len, &u) != LDR_OK)
			continue;
		taken++;
		for (int k = 0; k < UKI_SEC_COUNT; k++)
			if (u.sec[k].raw > u.sec[k].size || u.sec[k].off > img_len ||
			    img_len - u.sec[k].off < u.sec[k].raw)
				bad++;
	}
	CHECK(bad == 0, "%d sections outside the image", bad);
	CHECK(taken > 0, "some damaged images still parse (%d)", taken);
}

TEST(command_line)
{
	char out[16];
	size_t n = 99;

	CHECK(uki_cmdline((const uint8_t *)"a b\n", 4, out, sizeof(out), &n) == LDR_OK && n == 3 &&
	      strcmp(out, "a b") == 0, "newline dropped");
	CHECK(uki_cmdline((const uint8_t *)"a\tb\r\nc  \n\n", 10, out, sizeof(out), &n) == LDR_OK &&
	      strcmp(out, "a b  c") == 0 && n == 6, "controls are blanks, trailing ones dropped: '%s'", out);
	CHECK(uki_cmdline((const uint8_t *)"ab\0cd", 5, out, sizeof(out), &n) == LDR_OK &&
	      strcmp(out, "ab") == 0, "a NUL ends it");
	CHECK(uki_cmdline((const uint8_t *)"   \n", 4, out, sizeof(out), &n) == LDR_OK && n == 0 &&
	      out[0] == 0, "blank only: empty");
	CHECK(uki_cmdline((const uint8_t *)"caf\xc3\xa9", 5, out, sizeof(out), &n) == LDR_E_UKI_CMDLINE,
	      "not ASCII");
	CHECK(uki_cmdline((const uint8_t *)"0123456789abcde", 15, out, sizeof(out), &n) == LDR_OK &&
	      n == 15, "15 characters fit 16");
	CHECK(uki_cmdline((const uint8_t *)"0123456789abcdef", 16, out, sizeof(out), &n) ==
	      LDR_E_UKI_CMDLINE, "16 do not");
	CHECK(uki_cmdline((const uint8_t *)"0123456789abcde      \n", 22, out, sizeof(out), &n) ==
	      LDR_OK && n == 15, "trailing blanks do not count");
	CHECK(uki_cmdline((const uint8_t *)"x\x7f", 2, out, sizeof(out), &n) == LDR_OK && n == 2,
	      "DEL passes, as in the stub");
}

/* one newc record as the stub writes it, built here from the format */
static size_t newc(uint8_t *p, size_t at, unsigned ino, unsigned mode, const char *name,
		   const void *data, size_t len)
{
	size_t start = at, nl = strlen(name) + 1;
	char h[111];

	snprintf(h, sizeof(h), "070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x", ino,
		 mode, 0, 0, 1, 0, (unsigned)len, 0, 0, 0, 0, (unsigned)nl, 0);
	memcpy(p + at, h, 110);
	memcpy(p + at + 110, name, nl);
	at += 110 + nl;
	while (at % 4)
		p[at++] = 0;
	memcpy(p + at, data, len);
	at += len;
	while (at % 4)
		p[at++] = 0;
	return at - start;
}

TEST(cpio_archive)
{
	/* the trailer: every word 0 but nlink 1 and namesize 11, which the
	 * stub writes with an upper-case B; the name and 4 NULs */
	static const uint32_t tw[13] = { 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 11, 0 };
	uint8_t want[1024], got[1024];
	size_t n = 0;
	uint64_t len;

	memset(want, 0, sizeof(want));
	n += newc(want, n, 1, 040555, ".extra", "", 0);
	n += newc(want, n, 2, 0100444, ".extra/tpm2-pcr-signature.json", "{}\n", 3);
	memcpy(want + n, "070701", 6);
	n += 6;
	for (int i = 0; i < 13; i++, n += 8)
		snprintf((char *)want + n, 9, "%08X", tw[i]);
	memcpy(want + n, "TRAILER!!!\0\0\0\0", 14);
	n += 14;
	len = uki_cpio(UKI_PCRSIG_FILE, "{}\n", 3, NULL);
	CHECK_EQ_U64(len, n, "length");
	memset(got, 0xee, sizeof(got));
	CHECK(uki_cpio(UKI_PCRSIG_FILE, "{}\n", 3, got) == len && memcmp(got, want, n) == 0,
	      "bytes");
	CHECK(n % 4 == 0, "a multiple of 4");
}

TEST(initrd_layout)
{
	static const char sig[] = "{\"sha256\":[]}";
	static const char key[] = "KEY";
	uint8_t *buf, cpio[1024];
	struct uki u;
	uint64_t n, at, c;

	uki_good();
	pe_add(".pcrpkey", 0x3c000, 3, key, 3);
	pe_add(".pcrsig", 0x3d000, (uint32_t)strlen(sig), sig, (uint32_t)strlen(sig));
	CHECK(uki_parse(img, img_len, &u) == LDR_OK, "parsed");
	n = uki_initrd_size(&u);
	buf = malloc(n);
	memset(buf, 0xee, n);
	uki_initrd_build(img, &u, buf);
	/* .initrd (29 bytes), 3 zeros, the signature's archive, the key's */
	CHECK(sizeof(initrd) - 1 == 29 && memcmp(buf, initrd, 29) == 0 && buf[29] == 0 &&
	      buf[30] == 0 && buf[31] == 0, ".initrd first, padded to 4");
	at = 32;
	c = uki_cpio(UKI_PCRSIG_FILE, sig, strlen(sig), cpio);
	CHECK(at + c <= n && memcmp(buf + at, cpio, c) == 0, "then .pcrsig's archive");
	at += c;
	c = uki_cpio(UKI_PCRPKEY_FILE, key, 3, cpio);
	CHECK(at + c == n && memcmp(buf + at, cpio, c) == 0, "then .pcrpkey's, last");
	free(buf);

	/* no .initrd, nothing to hand over: nothing */
	pe_begin();
	pe_add(".sdmagic", 0x3000, sizeof(MAGIC_252), MAGIC_252, sizeof(MAGIC_252));
	pe_add(".linux", 0x30000, 4, "abcd", 4);
	CHECK(uki_parse(img, img_len, &u) == LDR_OK && uki_initrd_size(&u) == 0, "empty");
}

TEST(os_release)
{
	char out[32];
	struct {
		const char *text, *want;
	} c[] = {
		{ "NAME=Debian\nPRETTY_NAME=\"Debian 12\"\n", "Debian 12" },
		{ "NAME='Fedora Linux'\n", "Fedora Linux" },
		{ "PRETTY_NAME=\"\"\nNAME=Arch\n", "Arch" },
		{ "PRETTY_NAME=\"a \\\"q\\\" b\"\n", "a \"q\" b" },
		{ "PRETTY_NAME=caf\xc3\xa9\n", "caf??" },
		{ "PRETTY_NAME=\"CRLF\"\r\nNAME=x\r\n", "CRLF" },
		{ "XPRETTY_NAME=no\nNAME=yes\n", "yes" },
		{ "PRETTY_NAME=0123456789012345678901234567890123456789\n",
		  "0123456789012345678901234567890" },
		{ "ID=debian\n", "" },
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int r = uki_os_name((const uint8_t *)c[i].text, strlen(c[i].text), out, sizeof(out));

		CHECK(r == (c[i].want[0] != 0) && strcmp(out, c[i].want) == 0, "case %zu: '%s'", i,
		      out);
	}
	/* a NUL ends the text (a section's zero padding) */
	CHECK(uki_os_name((const uint8_t *)"NAME=a\0NAME=b", 13, out, sizeof(out)) &&
	      strcmp(out, "a") == 0, "NUL");
}
