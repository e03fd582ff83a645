/*
 * uki.c - unified kernel images (include/uki.h): the PE section table as
 * systemd-stub sees it, the stub's version, the records it makes in PCR
 * 11, the command line it takes, the initrd with the cpio archives it
 * adds, the os-release name.  What each stub version does is taken from
 * systemd's own sources for it (v252: src/boot/efi/stub.c, pe.c, cpio.c,
 * measure.c); the code is this loader's.
 */
#include <string.h>

#include "uki.h"
#include "sha256.h"

#define UKI_DOS_LFANEW  0x3c
#define UKI_COFF_SIZE   20
#define UKI_SECT_SIZE   40
#define UKI_MAX_SECT    96     /* as the stub: more is not a PE it reads */
#define UKI_MACHINE_X64 0x8664
#define UKI_OPT_MAGIC64 0x20b
#define UKI_OPT_IMAGE   56     /* SizeOfImage */
#define UKI_OPT_HEADERS 60     /* SizeOfHeaders */
#define UKI_OPT_MIN     64     /* through SizeOfHeaders */
#define UKI_OPT_NDIRS   108    /* NumberOfRvaAndSizes */
#define UKI_OPT_CERT    (112 + 4 * 8) /* the certificate table's directory entry */

#define UKI_MAGIC_PREFIX "#### LoaderInfo: systemd-stub "
#define UKI_MAGIC_SUFFIX " ####"

static const char *const uki_names[UKI_SEC_COUNT] = {
	[UKI_SEC_LINUX] = ".linux",
	[UKI_SEC_OSREL] = ".osrel",
	[UKI_SEC_CMDLINE] = ".cmdline",
	[UKI_SEC_INITRD] = ".initrd",
	[UKI_SEC_SPLASH] = ".splash",
	[UKI_SEC_DTB] = ".dtb",
	[UKI_SEC_PCRSIG] = ".pcrsig",
	[UKI_SEC_PCRPKEY] = ".pcrpkey",
};

/*
 * What a stub version measures into PCR 11, in order.  Only versions
 * whose every measurement the loader makes the same way are here:
 * systemd-stub 252 from 252.3 on (252.0-252.2 measured a command line
 * passed in as the raw load options, which the loader has no equal of).
 */
static const uint8_t uki_measured_252[] = {
	UKI_SEC_LINUX, UKI_SEC_OSREL, UKI_SEC_CMDLINE, UKI_SEC_INITRD,
	UKI_SEC_SPLASH, UKI_SEC_DTB, UKI_SEC_PCRPKEY,
};

const char *uki_section_name(enum uki_section_id id)
{
	return (unsigned)id < UKI_SEC_COUNT ? uki_names[id] : "";
}

/* the headers' facts, each checked against the bytes */
struct uki_hdr {
	uint64_t sect;      /* file offset of the section table */
	uint32_t nsect;
	uint32_t machine;
	uint32_t optsize;
	uint64_t opt;       /* file offset of the optional header */
};

/* DOS header, PE signature, COFF header, the section table inside the bytes */
static int uki_table(const uint8_t *b, uint64_t len, struct uki_hdr *h)
{
	uint64_t pe;

	if (!ldr_in_bounds(0, 0x40, len) || b[0] != 'M' || b[1] != 'Z')
		return 0;
	pe = ldr_le32(b + UKI_DOS_LFANEW);
	if (!ldr_in_bounds(pe, 4 + UKI_COFF_SIZE, len) || memcmp(b + pe, "PE\0\0", 4) != 0)
		return 0;
	h->machine = ldr_le16(b + pe + 4);
	h->nsect = ldr_le16(b + pe + 6);
	h->optsize = ldr_le16(b + pe + 20);
	h->opt = pe + 4 + UKI_COFF_SIZE;
	h->sect = h->opt + h->optsize;
	return ldr_in_bounds(h->sect, (uint64_t)h->nsect * UKI_SECT_SIZE, len);
}

/* does section header s carry this name as the stub compares it: the
 * name's own characters (no NUL), so ".linux" takes ".linux" and ".linuxAB" */
static int uki_name_is(const uint8_t *s, const char *name)
{
	return memcmp(s, name, strlen(name)) == 0;
}

int uki_detect(const void *img, uint64_t len)
{
	const uint8_t *b = img;
	struct uki_hdr h;

	if (!uki_table(b, len, &h))
		return 0;
	for (uint32_t i = 0; i < h.nsect; i++)
		if (uki_name_is(b + h.sect + (uint64_t)i * UKI_SECT_SIZE, uki_names[UKI_SEC_LINUX]))
			return 1;
	return 0;
}

/* [a, a + an) and [c, c + cn) share a byte (no sum can wrap: all < 2^33) */
static int uki_overlap(uint64_t a, uint64_t an, uint64_t c, uint64_t cn)
{
	return an && cn && a < c + cn && c < a + an;
}

/* a section's place in the loaded image: what the firmware writes there
 * (the raw bytes it copies, zeros up to VirtualSize) */
static void uki_footprint(const uint8_t *s, uint64_t *ret_va, uint64_t *ret_len)
{
	uint32_t vsize = ldr_le32(s + 8), rawsize = ldr_le32(s + 16);

	*ret_va = ldr_le32(s + 12);
	*ret_len = vsize ? vsize : rawsize;
}

/*
 * Check the section header at index i, one the loader reads, and fill
 * *ret: its raw data inside the file and clear of the certificate table
 * (the bytes used are signed bytes), its place in the loaded image inside
 * SizeOfImage, past the headers and shared with no other section (the
 * stub would have read what the firmware copied there).
 */
static enum ldr_err uki_section_at(const uint8_t *b, uint64_t len, const struct uki_hdr *h,
				   uint32_t i, uint64_t image, uint64_t headers, uint64_t coff,
				   uint64_t csize, struct uki_section *ret)
{
	const uint8_t *s = b + h->sect + (uint64_t)i * UKI_SECT_SIZE;
	uint32_t vsize = ldr_le32(s + 8), rawsize = ldr_le32(s + 16), rawoff = ldr_le32(s + 20);
	uint64_t va, fl;

	ret->off = rawoff;
	ret->size = vsize;
	ret->raw = vsize < rawsize ? vsize : rawsize;
	if (!ldr_in_bounds(ret->off, ret->raw, len) || uki_overlap(ret->off, ret->raw, coff, csize))
		return LDR_E_UKI_SECTION;
	uki_footprint(s, &va, &fl);
	if (va < headers || va > image || image - va < fl)
		return LDR_E_UKI_SECTION;
	for (uint32_t j = 0; j < h->nsect; j++) {
		uint64_t vb, lb;

		if (j == i)
			continue;
		uki_footprint(b + h->sect + (uint64_t)j * UKI_SECT_SIZE, &vb, &lb);
		if (uki_overlap(va, fl, vb, lb))
			return LDR_E_UKI_OVERLAP;
	}
	return LDR_OK;
}

/* one printable, blank-free version string from v[0..n) into u */
static int uki_set_version(struct uki *u, const uint8_t *v, uint64_t n)
{
	if (n == 0 || n >= sizeof(u->stub_version))
		return 0;
	for (uint64_t i = 0; i < n; i++)
		if (v[i] <= 0x20 || v[i] >= 0x7f)
			return 0;
	memcpy(u->stub_version, v, n);
	u->stub_version[n] = 0;
	return 1;
}

/* .sdmagic: "#### LoaderInfo: systemd-stub VERSION ####", NUL or end after */
static int uki_version_sdmagic(struct uki *u, const uint8_t *m, uint64_t n)
{
	size_t pl = strlen(UKI_MAGIC_PREFIX), sl = strlen(UKI_MAGIC_SUFFIX);
	uint64_t i;

	if (n < pl + sl || memcmp(m, UKI_MAGIC_PREFIX, pl) != 0)
		return 0;
	for (i = pl; i + sl <= n; i++)
		if (memcmp(m + i, UKI_MAGIC_SUFFIX, sl) == 0)
			break;
	if (i + sl > n || (i + sl < n && m[i + sl] != 0))
		return 0;
	return uki_set_version(u, m + pl, i - pl);
}

/* .sbat: the line whose first field is "systemd"; its fifth field */
static int uki_version_sbat(struct uki *u, const uint8_t *t, uint64_t n)
{
	uint64_t line = 0;

	while (line < n && t[line]) {
		uint64_t end = line, f[6], nf = 0;

		while (end < n && t[end] && t[end] != '\n')
			end++;
		f[nf++] = line;
		for (uint64_t k = line; k < end && nf < 6; k++)
			if (t[k] == ',')
				f[nf++] = k + 1;
		if (nf == 6 && f[1] - f[0] == 8 && memcmp(t + f[0], "systemd,", 8) == 0)
			return uki_set_version(u, t + f[4], f[5] - 1 - f[4]);
		line = end + 1;
	}
	return 0;
}

/* "252.39-1~deb12u2" -> 252, 39 (digits cut at 6: no overflow) */
static void uki_version_numbers(const char *v, unsigned *ret_major, unsigned *ret_minor)
{
	unsigned x = 0, y = 0, k = 0;

	for (; *v >= '0' && *v <= '9' && k < 6; v++, k++)
		x = x * 10 + (unsigned)(*v - '0');
	if (*v == '.')
		for (v++, k = 0; *v >= '0' && *v <= '9' && k < 6; v++, k++)
			y = y * 10 + (unsigned)(*v - '0');
	*ret_major = x;
	*ret_minor = y;
}

enum ldr_err uki_parse(const void *img, uint64_t len, struct uki *ret)
{
	const uint8_t *b = img;
	int idx[UKI_SEC_COUNT], magic = -1, sbat = -1;
	uint64_t image, headers, coff = 0, csize = 0;
	struct uki_section ms = { 0, 0, 0 }, ss = { 0, 0, 0 };
	struct uki_hdr h;
	unsigned sbat_major = 0, sbat_minor;
	int have_magic = 0, have_sbat = 0;
	enum ldr_err err;

	memset(ret, 0, sizeof(*ret));
	if (!uki_table(b, len, &h) || h.machine != UKI_MACHINE_X64 || h.nsect == 0 ||
	    h.nsect > UKI_MAX_SECT || h.optsize < UKI_OPT_MIN ||
	    ldr_le16(b + h.opt) != UKI_OPT_MAGIC64)
		return LDR_E_UKI_HEADERS;
	image = ldr_le32(b + h.opt + UKI_OPT_IMAGE);
	headers = ldr_le32(b + h.opt + UKI_OPT_HEADERS);
	if (h.optsize >= UKI_OPT_CERT + 8 && ldr_le32(b + h.opt + UKI_OPT_NDIRS) > 4) {
		coff = ldr_le32(b + h.opt + UKI_OPT_CERT);
		csize = ldr_le32(b + h.opt + UKI_OPT_CERT + 4);
	}
	/* the stub's rule: each known name matched by its own characters,
	 * the last matching header in the table wins */
	for (int k = 0; k < UKI_SEC_COUNT; k++)
		idx[k] = -1;
	for (uint32_t i = 0; i < h.nsect; i++) {
		const uint8_t *s = b + h.sect + (uint64_t)i * UKI_SECT_SIZE;

		for (int k = 0; k < UKI_SEC_COUNT; k++)
			if (uki_name_is(s, uki_names[k]))
				idx[k] = (int)i;
		if (memcmp(s, ".sdmagic", 8) == 0)
			magic = (int)i;
		if (memcmp(s, ".sbat\0\0\0", 8) == 0)
			sbat = (int)i;
	}
	for (int k = 0; k < UKI_SEC_COUNT; k++) {
		/* VirtualSize 0: absent, as the stub has it */
		if (idx[k] < 0 || ldr_le32(b + h.sect + (uint64_t)idx[k] * UKI_SECT_SIZE + 8) == 0)
			continue;
		err = uki_section_at(b, len, &h, (uint32_t)idx[k], image, headers, coff, csize,
				     &ret->sec[k]);
		if (err != LDR_OK)
			return err;
	}
	if (ret->sec[UKI_SEC_LINUX].size == 0)
		return LDR_E_UKI_NO_LINUX;
	/* the version: .sdmagic, else .sbat; the two must not disagree */
	if (magic >= 0) {
		err = uki_section_at(b, len, &h, (uint32_t)magic, image, headers, coff, csize, &ms);
		if (err != LDR_OK)
			return err;
		have_magic = uki_version_sdmagic(ret, b + ms.off, ms.raw);
	}
	if (sbat >= 0) {
		struct uki tmp;

		err = uki_section_at(b, len, &h, (uint32_t)sbat, image, headers, coff, csize, &ss);
		if (err != LDR_OK)
			return err;
		memset(&tmp, 0, sizeof(tmp));
		have_sbat = uki_version_sbat(&tmp, b + ss.off, ss.raw);
		if (have_sbat) {
			uki_version_numbers(tmp.stub_version, &sbat_major, &sbat_minor);
			if (!have_magic)
				memcpy(ret->stub_version, tmp.stub_version, sizeof(tmp.stub_version));
		}
	}
	if (!have_magic && !have_sbat)
		return LDR_E_UKI_NO_STUB;
	uki_version_numbers(ret->stub_version, &ret->stub_major, &ret->stub_minor);
	ret->stub_known = ret->stub_major == 252 && ret->stub_minor >= 3 &&
			  (!have_sbat || sbat_major == ret->stub_major);
	return ret->stub_known ? LDR_OK : LDR_E_UKI_STUB_UNKNOWN;
}

void uki_section_copy(const void *img, const struct uki_section *s, uint8_t *out)
{
	memcpy(out, (const uint8_t *)img + s->off, s->raw);
	memset(out + s->raw, 0, s->size - s->raw);
}

size_t uki_events(const struct uki *u, struct uki_event *ev)
{
	size_t n = 0;

	if (!u->stub_known)
		return 0;
	for (size_t i = 0; i < sizeof(uki_measured_252); i++) {
		uint8_t k = uki_measured_252[i];

		if (u->sec[k].size == 0)
			continue;
		ev[n].sec = k;
		ev[n++].data = 0;
		ev[n].sec = k;
		ev[n++].data = 1;
	}
	return n;
}

void uki_pcr11(const void *img, const struct uki *u, uint8_t ret[32])
{
	static const uint8_t zeros[4096];
	struct uki_event ev[UKI_EVENTS_MAX];
	size_t n = uki_events(u, ev);
	uint8_t d[32], both[64];

	memset(both, 0, 32);
	for (size_t i = 0; i < n; i++) {
		const char *name = uki_names[ev[i].sec];
		const struct uki_section *s = &u->sec[ev[i].sec];
		struct sha256_ctx c;

		if (!ev[i].data) {
			sha256(name, strlen(name) + 1, d);
		} else {
			sha256_init(&c);
			sha256_update(&c, (const uint8_t *)img + s->off, s->raw);
			for (uint64_t z = s->size - s->raw; z;) {
				uint64_t k = z < sizeof(zeros) ? z : sizeof(zeros);

				sha256_update(&c, zeros, k);
				z -= k;
			}
			sha256_final(&c, d);
		}
		memcpy(both + 32, d, 32);
		sha256(both, sizeof(both), both);
	}
	memcpy(ret, both, 32);
}

enum ldr_err uki_cmdline(const uint8_t *s, uint64_t len, char *out, size_t cap,
			 size_t *ret_len)
{
	uint64_t end = 0, i;

	/* controls become blanks and trailing blanks go: the line ends after
	 * its last character above 0x20 */
	for (i = 0; i < len && s[i]; i++) {
		if (s[i] >= 0x80)
			return LDR_E_UKI_CMDLINE;
		if (s[i] > 0x20)
			end = i + 1;
	}
	if (cap == 0 || end > cap - 1)
		return LDR_E_UKI_CMDLINE;
	for (i = 0; i < end; i++)
		out[i] = s[i] < 0x20 ? ' ' : (char)s[i];
	out[end] = 0;
	*ret_len = (size_t)end;
	return LDR_OK;
}

/* ---- the stub's cpio archives (newc), byte for byte */

#define UKI_CPIO_HDR 110 /* "070701" and 13 words of 8 hex digits */

/* the archive's closing record, as the stub writes it (upper-case B) */
static const char uki_cpio_trailer[] =
	"070701" "00000000" "00000000" "00000000" "00000000" "00000001" "00000000"
	"00000000" "00000000" "00000000" "00000000" "00000000" "0000000B" "00000000"
	"TRAILER!!!\0\0\0";
_Static_assert(sizeof(uki_cpio_trailer) == 124, "the trailer with its padding");

static uint8_t *uki_cpio_word(uint8_t *p, uint32_t v)
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 7; i >= 0; i--, v >>= 4)
		p[i] = (uint8_t)hex[v & 0xf];
	return p + 8;
}

static void uki_cpio_header(uint8_t *p, uint32_t ino, uint32_t mode, uint32_t size,
			    uint32_t namesize)
{
	const uint32_t w[13] = { ino, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, namesize, 0 };

	memcpy(p, "070701", 6);
	p += 6;
	for (int i = 0; i < 13; i++)
		p = uki_cpio_word(p, w[i]);
}

/* the directory record's length, and the file record's before its data */
static uint64_t uki_cpio_dir_len(void)
{
	return ldr_align_up(UKI_CPIO_HDR + strlen(UKI_EXTRA_DIR) + 1, 4);
}

static uint64_t uki_cpio_file_len(const char *name)
{
	return ldr_align_up(UKI_CPIO_HDR + strlen(UKI_EXTRA_DIR) + 1 + strlen(name) + 1, 4);
}

/*
 * The archive's records around its data: the directory .extra (inode 1,
 * mode 040555), the file .extra/NAME (inode 2, 0100444, len bytes), the
 * trailer; every record padded to 4 bytes with NULs.  The data's place is
 * left zeroed.  Returns the archive's length.
 */
static uint64_t uki_cpio_frame(const char *name, uint64_t len, uint8_t *out)
{
	uint64_t d = uki_cpio_dir_len(), f = uki_cpio_file_len(name), dl = strlen(UKI_EXTRA_DIR);
	uint64_t total = d + f + ldr_align_up(len, 4) + sizeof(uki_cpio_trailer);
	uint8_t *p;

	if (!out)
		return total;
	memset(out, 0, total);
	uki_cpio_header(out, 1, 040555, 0, (uint32_t)dl + 1);
	memcpy(out + UKI_CPIO_HDR, UKI_EXTRA_DIR, dl);
	p = out + d;
	uki_cpio_header(p, 2, 0100444, (uint32_t)len, (uint32_t)(dl + strlen(name) + 2));
	memcpy(p + UKI_CPIO_HDR, UKI_EXTRA_DIR, dl);
	p[UKI_CPIO_HDR + dl] = '/';
	memcpy(p + UKI_CPIO_HDR + dl + 1, name, strlen(name));
	memcpy(out + total - sizeof(uki_cpio_trailer), uki_cpio_trailer,
	       sizeof(uki_cpio_trailer));
	return total;
}

uint64_t uki_cpio(const char *name, const void *data, uint64_t len, uint8_t *out)
{
	uint64_t n = uki_cpio_frame(name, len, out);

	if (out && len)
		memcpy(out + uki_cpio_dir_len() + uki_cpio_file_len(name), data, len);
	return n;
}

/* the sections the stub hands on in cpio archives, in its order */
static const struct {
	uint8_t sec;
	const char *file;
} uki_extra[] = {
	{ UKI_SEC_PCRSIG, UKI_PCRSIG_FILE },
	{ UKI_SEC_PCRPKEY, UKI_PCRPKEY_FILE },
};

uint64_t uki_initrd_size(const struct uki *u)
{
	uint64_t n = ldr_align_up(u->sec[UKI_SEC_INITRD].size, 4);

	for (size_t i = 0; i < sizeof(uki_extra) / sizeof(uki_extra[0]); i++)
		if (u->sec[uki_extra[i].sec].size)
			n += uki_cpio_frame(uki_extra[i].file, u->sec[uki_extra[i].sec].size, NULL);
	return n;
}

void uki_initrd_build(const void *img, const struct uki *u, uint8_t *out)
{
	const struct uki_section *r = &u->sec[UKI_SEC_INITRD];
	uint64_t off = ldr_align_up(r->size, 4);

	/* the stub's own order: the image's initrd first (microcode must lead) */
	if (r->size)
		uki_section_copy(img, r, out);
	memset(out + r->size, 0, off - r->size);
	for (size_t i = 0; i < sizeof(uki_extra) / sizeof(uki_extra[0]); i++) {
		const struct uki_section *s = &u->sec[uki_extra[i].sec];
		uint64_t n;

		if (!s->size)
			continue;
		n = uki_cpio_frame(uki_extra[i].file, s->size, out + off);
		uki_section_copy(img, s, out + off + uki_cpio_dir_len() +
					 uki_cpio_file_len(uki_extra[i].file));
		off += n;
	}
}

/* ---- os-release */

/* the value after KEY= on the line [p, end): unquoted into out */
static size_t uki_osrel_value(const uint8_t *p, const uint8_t *end, char *out, size_t cap)
{
	uint8_t q = 0;
	size_t n = 0;

	if (p < end && (*p == '"' || *p == '\''))
		q = *p++;
	for (; p < end && n + 1 < cap; p++) {
		uint8_t c = *p;

		if (q && c == q)
			break;
		if (q == '"' && c == '\\' && p + 1 < end)
			c = *++p;
		out[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	/* an unquoted value loses its trailing blanks */
	while (!q && n && out[n - 1] == ' ')
		n--;
	out[n] = 0;
	return n;
}

/* KEY=VALUE on one of the lines of s[0..len) (up to a NUL): 1 when out
 * holds a value that is not empty */
static int uki_osrel_find(const uint8_t *s, uint64_t len, const char *key, char *out,
			  size_t cap)
{
	size_t kl = strlen(key);
	uint64_t i = 0;

	while (i < len && s[i]) {
		uint64_t e = i;

		while (e < len && s[e] && s[e] != '\n' && s[e] != '\r')
			e++;
		if (e - i > kl && memcmp(s + i, key, kl) == 0 && s[i + kl] == '=' &&
		    uki_osrel_value(s + i + kl + 1, s + e, out, cap))
			return 1;
		i = e < len && s[e] ? e + 1 : e;
	}
	return 0;
}

int uki_os_name(const uint8_t *s, uint64_t len, char *out, size_t cap)
{
	if (cap == 0)
		return 0;
	if (uki_osrel_find(s, len, "PRETTY_NAME", out, cap) ||
	    uki_osrel_find(s, len, "NAME", out, cap))
		return 1;
	out[0] = 0;
	return 0;
}
