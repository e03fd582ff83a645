/*
 * policy.c - the embedded policy's format (include/policy.h): parsing the
 * signed section, writing it (for the host tool; the same rules, so what
 * the tool writes the loader accepts) and the one decision "may this file
 * be booted" that both the kernel and the initrds go through.
 */
#include <string.h>

#include "policy.h"

#define POL_REC_HDR 8

static void pol_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void pol_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t policy_allowable(void)
{
	uint32_t m = 0;

	for (unsigned i = 0; i < OPT_K_COUNT; i++)
		if (options_key_rule((enum opt_key_id)i) != OPT_SB_NEVER)
			m |= OPT_BIT(i);
	return m;
}

static int pol_printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((uint8_t)s[i] < 0x20 || (uint8_t)s[i] > 0x7e)
			return 0;
	return 1;
}

static char pol_fold(char c)
{
	if (c == '/')
		return '\\';
	if (c >= 'A' && c <= 'Z')
		return (char)(c - 'A' + 'a');
	return c;
}

static int pol_same_path(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (pol_fold(*a) != pol_fold(*b))
			return 0;
	return *a == *b;
}

const struct policy_file *policy_find(const struct policy *p, enum policy_kind kind,
				      const char *path)
{
	if (!p->present)
		return NULL;
	for (uint32_t i = 0; i < p->nfiles && i < POLICY_MAX_FILES; i++)
		if (p->file[i].kind == kind && pol_same_path(p->file[i].path, path))
			return &p->file[i];
	return NULL;
}

const struct policy_file *policy_kernel(const struct policy *p)
{
	if (!p->present)
		return NULL;
	for (uint32_t i = 0; i < p->nfiles && i < POLICY_MAX_FILES; i++)
		if (p->file[i].kind == POLICY_KERNEL)
			return &p->file[i];
	return NULL;
}

/* a pinned path: absolute on the ESP, printable, no empty name */
static int pol_path_ok(const char *s, size_t n)
{
	return n >= 2 && n < OPT_PATH_MAX && (s[0] == '\\' || s[0] == '/') &&
	       pol_printable(s, n);
}

/* The rules a present policy keeps, whether parsed or about to be written. */
static enum ldr_err pol_check(const struct policy *p)
{
	uint32_t kernels = 0;

	if (p->allow & ~policy_allowable())
		return LDR_E_POLICY_FORMAT;
	if (p->nfiles > POLICY_MAX_FILES)
		return LDR_E_POLICY_FORMAT;
	for (uint32_t i = 0; i < p->nfiles; i++) {
		const struct policy_file *f = &p->file[i];
		const char *z = memchr(f->path, 0, OPT_PATH_MAX);
		size_t n = z ? (size_t)(z - f->path) : OPT_PATH_MAX;

		if (f->kind != POLICY_KERNEL && f->kind != POLICY_INITRD)
			return LDR_E_POLICY_FORMAT;
		if (!pol_path_ok(f->path, n))
			return LDR_E_POLICY_FORMAT;
		kernels += f->kind == POLICY_KERNEL;
		for (uint32_t j = 0; j < i; j++)
			if (pol_same_path(p->file[j].path, f->path))
				return LDR_E_POLICY_FORMAT;
	}
	if (kernels != 1)
		return LDR_E_POLICY_FORMAT;
	if (p->have_cmdline && (p->cmdline_len >= OPT_CMDLINE_MAX ||
				!pol_printable(p->cmdline, p->cmdline_len)))
		return LDR_E_POLICY_FORMAT;
	return LDR_OK;
}

static enum ldr_err pol_record(struct policy *p, uint16_t type, const uint8_t *d, uint32_t n)
{
	struct policy_file *f;

	switch (type) {
	case POLICY_REC_KERNEL:
	case POLICY_REC_INITRD:
		if (p->nfiles >= POLICY_MAX_FILES || n <= 32 || n - 32 >= OPT_PATH_MAX)
			return LDR_E_POLICY_FORMAT;
		f = &p->file[p->nfiles++];
		f->kind = type == POLICY_REC_KERNEL ? POLICY_KERNEL : POLICY_INITRD;
		memcpy(f->sha256, d, 32);
		memcpy(f->path, d + 32, n - 32);
		f->path[n - 32] = 0;
		/* a NUL inside would shorten the path the checks see */
		if (strlen(f->path) != n - 32)
			return LDR_E_POLICY_FORMAT;
		return LDR_OK;
	case POLICY_REC_CMDLINE:
		if (p->have_cmdline || n >= OPT_CMDLINE_MAX)
			return LDR_E_POLICY_FORMAT;
		memcpy(p->cmdline, d, n);
		p->cmdline[n] = 0;
		p->cmdline_len = n;
		p->have_cmdline = 1;
		return LDR_OK;
	}
	return LDR_E_POLICY_FORMAT;
}

enum ldr_err policy_parse(const uint8_t *buf, uint64_t len, struct policy *ret)
{
	static struct policy p;
	uint32_t used, flags, nrec, off, i;
	enum ldr_err err;

	memset(&p, 0, sizeof(p));
	if (!ldr_in_bounds(0, POLICY_HEADER_SIZE, len) || memcmp(buf, POLICY_MAGIC, 8) != 0 ||
	    ldr_le16(buf + 8) != POLICY_VERSION || ldr_le16(buf + 10) != POLICY_HEADER_SIZE)
		return LDR_E_POLICY_FORMAT;
	used = ldr_le32(buf + 12);
	flags = ldr_le32(buf + 16);
	p.allow = ldr_le32(buf + 20);
	nrec = ldr_le32(buf + 24);
	if (used < POLICY_HEADER_SIZE || used > len ||
	    (flags & ~(POLICY_F_WRITTEN | POLICY_F_TRUST_SHIM)) ||
	    ldr_le32(buf + 28) != 0)
		return LDR_E_POLICY_FORMAT;
	p.used = used;
	p.trust_shim = (flags & POLICY_F_TRUST_SHIM) != 0;
	if (!(flags & POLICY_F_WRITTEN)) {
		/* the build's empty header, and nothing else */
		if (used != POLICY_HEADER_SIZE || nrec != 0 || p.allow != 0 || p.trust_shim)
			return LDR_E_POLICY_FORMAT;
		memcpy(ret, &p, sizeof(p));
		return LDR_OK;
	}
	if (nrec > POLICY_MAX_FILES + 1)
		return LDR_E_POLICY_FORMAT;
	off = POLICY_HEADER_SIZE;
	for (i = 0; i < nrec; i++) {
		uint32_t n, padded;

		if (!ldr_in_bounds(off, POL_REC_HDR, used) || ldr_le16(buf + off + 2) != 0)
			return LDR_E_POLICY_FORMAT;
		n = ldr_le32(buf + off + 4);
		if (!ldr_in_bounds(off + POL_REC_HDR, n, used))
			return LDR_E_POLICY_FORMAT;
		err = pol_record(&p, ldr_le16(buf + off), buf + off + POL_REC_HDR, n);
		if (err != LDR_OK)
			return err;
		/* n < used <= len fits 32 bits, so the padding does not wrap */
		padded = (uint32_t)ldr_align_up((uint64_t)n, 8);
		if (!ldr_in_bounds(off + POL_REC_HDR, padded, used))
			return LDR_E_POLICY_FORMAT;
		for (uint32_t k = n; k < padded; k++)
			if (buf[off + POL_REC_HDR + k] != 0)
				return LDR_E_POLICY_FORMAT;
		off += POL_REC_HDR + padded;
	}
	if (off != used)
		return LDR_E_POLICY_FORMAT;
	p.present = 1;
	err = pol_check(&p);
	if (err != LDR_OK)
		return err;
	memcpy(ret, &p, sizeof(p));
	return LDR_OK;
}

/* one record at *off; LDR_E_POLICY_TOO_BIG when it does not fit */
static enum ldr_err pol_put_rec(uint8_t *buf, uint64_t cap, uint64_t *off, uint16_t type,
				const void *a, uint32_t an, const void *b, uint32_t bn)
{
	uint64_t n = (uint64_t)an + bn, padded = ldr_align_up(n, 8);

	if (!ldr_in_bounds(*off, POL_REC_HDR + padded, cap))
		return LDR_E_POLICY_TOO_BIG;
	pol_put16(buf + *off, type);
	pol_put32(buf + *off + 4, (uint32_t)n);
	if (an)
		memcpy(buf + *off + POL_REC_HDR, a, an);
	if (bn)
		memcpy(buf + *off + POL_REC_HDR + an, b, bn);
	*off += POL_REC_HDR + padded;
	return LDR_OK;
}

enum ldr_err policy_write(const struct policy *p, uint8_t *buf, uint64_t cap)
{
	uint64_t off = POLICY_HEADER_SIZE;
	uint32_t nrec = 0;
	enum ldr_err err;

	if (!p->present || pol_check(p) != LDR_OK)
		return LDR_E_POLICY_FORMAT;
	if (cap < POLICY_HEADER_SIZE || cap > UINT32_MAX)
		return LDR_E_POLICY_TOO_BIG;
	memset(buf, 0, cap);
	for (uint32_t i = 0; i < p->nfiles; i++) {
		const struct policy_file *f = &p->file[i];

		err = pol_put_rec(buf, cap, &off,
				  f->kind == POLICY_KERNEL ? POLICY_REC_KERNEL : POLICY_REC_INITRD,
				  f->sha256, 32, f->path, (uint32_t)strlen(f->path));
		if (err != LDR_OK)
			return err;
		nrec++;
	}
	if (p->have_cmdline) {
		err = pol_put_rec(buf, cap, &off, POLICY_REC_CMDLINE, p->cmdline, p->cmdline_len,
				  NULL, 0);
		if (err != LDR_OK)
			return err;
		nrec++;
	}
	memcpy(buf, POLICY_MAGIC, 8);
	pol_put16(buf + 8, POLICY_VERSION);
	pol_put16(buf + 10, POLICY_HEADER_SIZE);
	pol_put32(buf + 12, (uint32_t)off);
	pol_put32(buf + 16, POLICY_F_WRITTEN | (p->trust_shim ? POLICY_F_TRUST_SHIM : 0));
	pol_put32(buf + 20, p->allow);
	pol_put32(buf + 24, nrec);
	return LDR_OK;
}

enum ldr_err policy_check_digest(const struct policy *p, int secure, enum policy_kind kind,
				 const char *path, const uint8_t digest[32],
				 const uint8_t *override)
{
	const struct policy_file *pin = policy_find(p, kind, path);

	if (secure) {
		if (!pin)
			return LDR_E_POLICY_UNPINNED;
		return memcmp(pin->sha256, digest, 32) == 0 ? LDR_OK : LDR_E_POLICY_HASH;
	}
	if (override && memcmp(override, digest, 32) != 0)
		return kind == POLICY_INITRD ? LDR_E_INITRD_HASH_MISMATCH :
		       kind == POLICY_MODULE ? LDR_E_MODULE_HASH_MISMATCH : LDR_E_HASH_MISMATCH;
	if (override)
		return LDR_OK;
	if (pin && memcmp(pin->sha256, digest, 32) != 0)
		return LDR_E_POLICY_HASH;
	return LDR_OK;
}

int policy_wants_digest(const struct policy *p, int secure, enum policy_kind kind,
			const char *path, const uint8_t *override)
{
	return secure || override || policy_find(p, kind, path) != NULL;
}

enum ldr_err policy_check_trust(const struct policy *p, int secure, int shim,
				enum policy_kind kind, const char *path,
				const uint8_t digest[32], const uint8_t *override, int *ask_shim)
{
	enum ldr_err err = policy_check_digest(p, secure, kind, path, digest, override);

	*ask_shim = 0;
	if (err == LDR_OK || !secure || !p->present || !p->trust_shim)
		return err;
	/* only a kernel (shim's Verify) and an initrd (measured) come in
	 * through the trust in shim; anything else - a module, which no
	 * policy names - keeps the pin's error and never reaches Verify */
	if (kind == POLICY_INITRD)
		return shim ? LDR_OK : err; /* measured, as GRUB with shim does */
	if (kind != POLICY_KERNEL)
		return err;
	if (!shim)
		return LDR_E_SHIM_ABSENT;
	*ask_shim = 1;
	return LDR_OK;
}

int policy_secure_boot(int secure_boot, int setup_mode)
{
	return secure_boot == 1 && setup_mode != 1;
}

enum opt_trust policy_trust(const struct policy *p)
{
	return p->present && p->trust_shim ? OPT_TRUST_SHIM : OPT_TRUST_PINS;
}

void policy_to_options(const struct policy *p, struct ldr_options *o)
{
	const struct policy_file *k = policy_kernel(p);

	if (!k)
		return;
	memcpy(o->kernels[0], k->path, sizeof(o->kernels[0]));
	o->nkernels = 1;
	o->set |= OPT_BIT(OPT_K_KERNEL);
	/* the initrds, in the policy's order; their pins stay in the policy */
	o->ninitrd = 0;
	for (uint32_t i = 0; i < p->nfiles && o->ninitrd < OPT_INITRD_MAX; i++) {
		if (p->file[i].kind != POLICY_INITRD)
			continue;
		memset(&o->initrd[o->ninitrd], 0, sizeof(o->initrd[0]));
		memcpy(o->initrd[o->ninitrd].path, p->file[i].path, sizeof(o->initrd[0].path));
		o->ninitrd++;
	}
	if (o->ninitrd)
		o->set |= OPT_BIT(OPT_K_INITRD);
	if (p->have_cmdline) {
		memcpy(o->cmdline, p->cmdline, p->cmdline_len + 1);
		o->cmdline_len = p->cmdline_len;
		o->set |= OPT_BIT(OPT_K_CMDLINE);
	}
}
