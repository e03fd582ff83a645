/*
 * options.c - parsing the loader's options from untrusted text: load options
 * (converted from UCS-2 first) and kaslr.conf.  Both feed one table of keys,
 * so the two syntaxes cannot drift apart; the same table says what each
 * source may change while Secure Boot is in force (options_merge).
 */
#include <stddef.h>
#include <string.h>

#include "options.h"
#include "slot.h"
#include "decompress.h"
#include "sha256.h"

void options_defaults(struct ldr_options *o)
{
	memset(o, 0, sizeof(*o));
	o->min_addr = SLOT_DEFAULT_MIN;
	o->max_kernel = DECOMP_DEFAULT_LIMIT;
}

enum ldr_err options_from_ucs2(const void *bytes, uint64_t nbytes, char *out,
			       size_t cap, size_t *ret_len)
{
	const uint8_t *b = bytes;
	uint64_t nchars = nbytes / 2, i;

	if (cap == 0)
		return LDR_E_INVAL;
	for (i = 0; i < nchars; i++) {
		uint16_t c = (uint16_t)(b[2 * i] | b[2 * i + 1] << 8);

		if (c == 0)
			break;
		if (i >= cap - 1)
			return LDR_E_OPT_TOO_LONG;
		if (c == '\t' || c == '\r' || c == '\n')
			c = ' ';
		if (c < 0x20 || c > 0x7e) {
			*ret_len = (size_t)i;
			return LDR_E_OPT_ENCODING;
		}
		out[i] = (char)c;
	}
	out[i] = 0;
	*ret_len = (size_t)i;
	return LDR_OK;
}

static int opt_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int opt_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

enum ldr_err options_parse_size(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0, mul = 1, base = 10;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (len && base == 10) {
		switch (s[len - 1]) {
		case 'k': case 'K': mul = KIB; len--; break;
		case 'm': case 'M': mul = MIB; len--; break;
		case 'g': case 'G': mul = GIB; len--; break;
		}
	}
	if (i >= len)
		return LDR_E_OPT_VALUE;
	for (; i < len; i++) {
		int d = opt_hexval(s[i]);

		if (d < 0 || (uint64_t)d >= base || v > (UINT64_MAX - (uint64_t)d) / base)
			return LDR_E_OPT_VALUE;
		v = v * base + (uint64_t)d;
	}
	if (v > UINT64_MAX / mul)
		return LDR_E_OPT_VALUE;
	*ret = v * mul;
	return LDR_OK;
}

/* exactly 64 hex digits -> 32 bytes */
static enum ldr_err opt_hex32(const char *s, size_t len, uint8_t out[32])
{
	size_t i;

	if (len != 64)
		return LDR_E_OPT_VALUE;
	for (i = 0; i < 32; i++) {
		int hi = opt_hexval(s[2 * i]), lo = opt_hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return LDR_E_OPT_VALUE;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return LDR_OK;
}

static enum ldr_err opt_copy(char *dst, size_t cap, const char *s, size_t len)
{
	if (len >= cap)
		return LDR_E_OPT_TOO_LONG;
	memcpy(dst, s, len);
	dst[len] = 0;
	return LDR_OK;
}

static void opt_set_bad(struct ldr_options *o, const char *s, size_t len)
{
	if (len > OPT_KEY_MAX)
		len = OPT_KEY_MAX;
	memcpy(o->bad, s, len);
	o->bad[len] = 0;
}

static int opt_key_is(const char *k, size_t klen, const char *name)
{
	return strlen(name) == klen && memcmp(k, name, klen) == 0;
}

/* What a key sets, and how its value is read. */
enum opt_kind {
	OPT_FLAG,    /* alone, or =0 / =1 */
	OPT_KERNEL,  /* kernel=: appended to the list of kernels */
	OPT_CMDLINE, /* cmdline: copied, length kept */
	OPT_HEX32,   /* 64 hex digits; sets a have_ flag too */
	OPT_SIZE,    /* options_parse_size() */
	OPT_SIZE_NZ, /* the same, 0 refused */
	OPT_INITRD,  /* PATH[:sha256=HEX]: appended to the initrd list */
	OPT_MODULE,  /* module=: appended to the list (opt_module()) */
	OPT_PHYS_SLOT, /* kaslr.phys=: struct opt_place (opt_place()) */
	OPT_VIRT_SLOT, /* kaslr.virt=: the same, no above4g, signed offsets */
};

/*
 * How a key's effective value appears in the settings text that is
 * measured (options_settings_text):
 */
enum opt_measure {
	OPT_M_VALUE,  /* as the loader uses it */
	OPT_M_DIGEST, /* as the SHA-256 of its value: the event log is readable */
	OPT_M_PCR12,  /* not here: measured on its own into PCR 12 */
};

/* the hint of LDR_E_OPT_TOO_MANY (include/ldr.h) names the number */
_Static_assert(OPT_MODULES_MAX == 16 && OPT_INITRD_MAX == 8 && OPT_KERNELS_MAX == 4,
	       "LDR_E_OPT_TOO_MANY's hint says 4, 16 and 8");
/* the settings text writes a kernel's place as one digit */
_Static_assert(OPT_KERNELS_MAX <= 9, "kernel.N= has one digit");

/*
 * The one table of keys: how each is read, and what Secure Boot lets an
 * unsigned source (kaslr.conf, load options) do with it.  kaslr.conf(5)'s
 * tables (docs/man/kaslr.conf.5) are this table: build/tools/kaslr-policy
 * keys and rules print it, test/doc/tables.sh compares the two.
 */
static const struct opt_key {
	const char *name;
	enum opt_kind kind;
	size_t off;      /* the field in struct ldr_options */
	size_t have_off; /* OPT_HEX32: its have_ flag */
	enum opt_sb_rule sb;
	const char *risk; /* what it would do that Secure Boot forbids */
	enum opt_measure measure;
} opt_keys[OPT_K_COUNT] = {
	[OPT_K_VERBOSE] = { "verbose", OPT_FLAG, offsetof(struct ldr_options, verbose), 0,
			    OPT_SB_IF_ALLOWED, "prints the kernel's addresses", OPT_M_VALUE },
	[OPT_K_NOKASLR] = { "nokaslr", OPT_FLAG, offsetof(struct ldr_options, nokaslr), 0,
			    OPT_SB_IF_ALLOWED, "turns randomization off", OPT_M_VALUE },
	[OPT_K_KERNEL] = { "kernel", OPT_KERNEL, offsetof(struct ldr_options, kernels), 0,
			   OPT_SB_NEVER, "boots another file", OPT_M_VALUE },
	[OPT_K_CMDLINE] = { "cmdline", OPT_CMDLINE, offsetof(struct ldr_options, cmdline), 0,
			    OPT_SB_IF_ALLOWED, "changes the kernel's command line", OPT_M_PCR12 },
	[OPT_K_SEED] = { "kaslr.seed", OPT_HEX32, offsetof(struct ldr_options, seed),
			 offsetof(struct ldr_options, have_seed), OPT_SB_IF_ALLOWED,
			 "makes the placement predictable", OPT_M_DIGEST },
	[OPT_K_SHA256] = { "sha256", OPT_HEX32, offsetof(struct ldr_options, sha256),
			   offsetof(struct ldr_options, have_sha256), OPT_SB_NEVER,
			   "replaces the pinned hash", OPT_M_VALUE },
	[OPT_K_MIN] = { "kaslr.min", OPT_SIZE, offsetof(struct ldr_options, min_addr), 0,
			OPT_SB_IF_ALLOWED, "narrows the randomization window", OPT_M_VALUE },
	[OPT_K_MAX] = { "kaslr.max", OPT_SIZE, offsetof(struct ldr_options, max_addr), 0,
			OPT_SB_IF_ALLOWED, "narrows the randomization window", OPT_M_VALUE },
	[OPT_K_MAXSIZE] = { "kaslr.maxsize", OPT_SIZE_NZ, offsetof(struct ldr_options, max_kernel),
			    0, OPT_SB_TAKEN, "", OPT_M_VALUE },
	[OPT_K_MODULE] = { "module", OPT_MODULE, offsetof(struct ldr_options, modules), 0,
			   OPT_SB_NEVER, "adds a file the policy does not name", OPT_M_VALUE },
	[OPT_K_INITRD] = { "initrd", OPT_INITRD, offsetof(struct ldr_options, initrd), 0,
			   OPT_SB_NEVER, "adds a file the policy does not name", OPT_M_VALUE },
	[OPT_K_PHYS] = { "kaslr.phys", OPT_PHYS_SLOT, offsetof(struct ldr_options, phys), 0,
			 OPT_SB_IF_ALLOWED, "places the kernel where the input says", OPT_M_VALUE },
	[OPT_K_VIRT] = { "kaslr.virt", OPT_VIRT_SLOT, offsetof(struct ldr_options, virt), 0,
			 OPT_SB_IF_ALLOWED, "places the kernel where the input says", OPT_M_VALUE },
};

const char *options_key_name(enum opt_key_id id)
{
	return (unsigned)id < OPT_K_COUNT ? opt_keys[id].name : "";
}

enum opt_sb_rule options_key_rule(enum opt_key_id id)
{
	return (unsigned)id < OPT_K_COUNT ? opt_keys[id].sb : OPT_SB_NEVER;
}

const char *options_key_risk(enum opt_key_id id)
{
	return (unsigned)id < OPT_K_COUNT ? opt_keys[id].risk : "";
}

enum opt_key_id options_key_find(const char *name, size_t len)
{
	unsigned i;

	for (i = 0; i < OPT_K_COUNT; i++)
		if (opt_key_is(name, len, opt_keys[i].name))
			break;
	return (enum opt_key_id)i;
}

/* bytes of the field a key sets */
static size_t opt_field_size(const struct opt_key *key)
{
	switch (key->kind) {
	case OPT_FLAG:
		return sizeof(int);
	case OPT_KERNEL:
		return sizeof(((struct ldr_options *)0)->kernels);
	case OPT_CMDLINE:
		return sizeof(((struct ldr_options *)0)->cmdline);
	case OPT_HEX32:
		return 32;
	case OPT_MODULE:
		return sizeof(((struct ldr_options *)0)->modules);
	case OPT_INITRD:
		return sizeof(((struct ldr_options *)0)->initrd);
	case OPT_PHYS_SLOT:
	case OPT_VIRT_SLOT:
		return sizeof(struct opt_place);
	default:
		return sizeof(uint64_t);
	}
}

/* the count that goes with a list key's array */
static uint32_t *opt_list_count(struct ldr_options *o, const struct opt_key *key)
{
	if (key->kind == OPT_MODULE)
		return &o->nmodules;
	if (key->kind == OPT_INITRD)
		return &o->ninitrd;
	if (key->kind == OPT_KERNEL)
		return &o->nkernels;
	return NULL;
}

static int opt_same(const struct ldr_options *a, const struct ldr_options *b,
		    const struct opt_key *key)
{
	if (key->kind == OPT_CMDLINE)
		return a->cmdline_len == b->cmdline_len &&
		       memcmp(a->cmdline, b->cmdline, a->cmdline_len) == 0;
	if (key->kind == OPT_MODULE && a->nmodules != b->nmodules)
		return 0;
	if (key->kind == OPT_INITRD)
		return a->ninitrd == b->ninitrd &&
		       memcmp(a->initrd, b->initrd, a->ninitrd * sizeof(a->initrd[0])) == 0;
	if (key->kind == OPT_KERNEL)
		return a->nkernels == b->nkernels &&
		       memcmp(a->kernels, b->kernels, a->nkernels * sizeof(a->kernels[0])) == 0;
	if (key->kind == OPT_HEX32 &&
	    *(const int *)((const char *)a + key->have_off) !=
	    *(const int *)((const char *)b + key->have_off))
		return 0;
	return memcmp((const char *)a + key->off, (const char *)b + key->off,
		      opt_field_size(key)) == 0;
}

uint32_t options_kernel_count(const struct ldr_options *o)
{
	return o->nkernels ? o->nkernels : 1;
}

const char *options_kernel(const struct ldr_options *o, uint32_t k)
{
	return k < o->nkernels ? o->kernels[k] : "";
}

/* initrds of a kernel the list does not have (a later source named fewer
 * kernels) go: the list's initrds are those of its kernels */
static void opt_drop_orphans(struct ldr_options *o)
{
	uint32_t n = 0, kernels = options_kernel_count(o);

	for (uint32_t i = 0; i < o->ninitrd && i < OPT_INITRD_MAX; i++)
		if (o->initrd[i].kernel < kernels)
			o->initrd[n++] = o->initrd[i];
	o->ninitrd = n;
}

void options_choose_kernel(struct ldr_options *o, uint32_t k)
{
	uint32_t n = 0;

	if (k >= o->nkernels)
		k = 0;
	else if (k)
		memcpy(o->kernels[0], o->kernels[k], sizeof(o->kernels[0]));
	if (o->nkernels)
		o->nkernels = 1;
	for (uint32_t i = 0; i < o->ninitrd && i < OPT_INITRD_MAX; i++) {
		if (o->initrd[i].kernel != k)
			continue;
		o->initrd[n] = o->initrd[i];
		o->initrd[n++].kernel = 0;
	}
	o->ninitrd = n;
}

int options_key_shim(enum opt_key_id id)
{
	return id == OPT_K_KERNEL || id == OPT_K_INITRD;
}

uint32_t options_merge(struct ldr_options *dst, const struct ldr_options *src, int secure,
		       uint32_t allow)
{
	return options_merge_trust(dst, src, secure, allow, OPT_TRUST_PINS);
}

uint32_t options_merge_trust(struct ldr_options *dst, const struct ldr_options *src,
			     int secure, uint32_t allow, enum opt_trust trust)
{
	uint32_t ignored = 0;
	unsigned i;

	for (i = 0; i < OPT_K_COUNT; i++) {
		const struct opt_key *key = &opt_keys[i];
		int taken;

		if (!(src->set & OPT_BIT(i)))
			continue;
		taken = !secure || key->sb == OPT_SB_TAKEN ||
			(key->sb == OPT_SB_IF_ALLOWED && (allow & OPT_BIT(i))) ||
			(trust == OPT_TRUST_SHIM && options_key_shim((enum opt_key_id)i));
		if (!taken) {
			if (!opt_same(dst, src, key))
				ignored |= OPT_BIT(i);
			continue;
		}
		memcpy((char *)dst + key->off, (const char *)src + key->off, opt_field_size(key));
		if (key->kind == OPT_HEX32)
			*(int *)((char *)dst + key->have_off) =
				*(const int *)((const char *)src + key->have_off);
		if (key->kind == OPT_CMDLINE)
			dst->cmdline_len = src->cmdline_len;
		if (opt_list_count(dst, key))
			*opt_list_count(dst, key) = *opt_list_count((struct ldr_options *)src, key);
		dst->set |= OPT_BIT(i);
	}
	opt_drop_orphans(dst);
	return ignored;
}

/* In kaslr.conf these keys take the rest of the line, '#' included. */
static int opt_verbatim(const char *k, size_t klen)
{
	enum opt_key_id id = options_key_find(k, klen);

	return id != OPT_K_COUNT &&
	       (opt_keys[id].kind == OPT_CMDLINE || opt_keys[id].kind == OPT_MODULE);
}

/*
 * PATH[:sha256=HEX], the n bytes at v (FAT forbids ':' in names, so the
 * pin cannot be part of the path): the path into path[OPT_PATH_MAX], the
 * pin into sha256 with *have set.
 */
static enum ldr_err opt_pinned_path(const char *v, size_t n, char *path, int *have,
				    uint8_t sha256[32])
{
	static const char pin[] = ":sha256=";
	const size_t pin_len = sizeof(pin) - 1;
	size_t colon = 0;

	while (colon < n && v[colon] != ':')
		colon++;
	if (colon == 0)
		return LDR_E_OPT_VALUE;
	if (colon < n) {
		if (n - colon < pin_len || memcmp(v + colon, pin, pin_len) != 0)
			return LDR_E_OPT_VALUE;
		if (opt_hex32(v + colon + pin_len, n - colon - pin_len, sha256) != LDR_OK)
			return LDR_E_OPT_HEX;
		*have = 1;
	}
	return opt_copy(path, OPT_PATH_MAX, v, colon);
}

/*
 * One initrd: PATH[:sha256=HEX], appended to the list, for the kernel named
 * last in this parse (the first kernel when none was named yet).
 */
static enum ldr_err opt_initrd(struct ldr_options *o, const char *v, size_t vlen)
{
	struct opt_file *f;
	enum ldr_err err;

	if (o->ninitrd == OPT_INITRD_MAX)
		return LDR_E_OPT_TOO_MANY;
	f = &o->initrd[o->ninitrd];
	memset(f, 0, sizeof(*f));
	err = opt_pinned_path(v, vlen, f->path, &f->have_sha256, f->sha256);
	if (err != LDR_OK)
		return err;
	f->kernel = o->kernels_replace || o->nkernels == 0 ? 0 : o->nkernels - 1;
	o->ninitrd++;
	return LDR_OK;
}

/* One kernel, appended to the list; the first of a parse starts a new list. */
static enum ldr_err opt_kernel(struct ldr_options *o, const char *v, size_t vlen)
{
	enum ldr_err err;

	if (o->kernels_replace) {
		o->nkernels = 0;
		o->kernels_replace = 0;
	}
	if (o->nkernels == OPT_KERNELS_MAX)
		return LDR_E_OPT_TOO_MANY;
	err = opt_copy(o->kernels[o->nkernels], sizeof(o->kernels[0]), v, vlen);
	if (err != LDR_OK)
		return err;
	o->nkernels++;
	return LDR_OK;
}

/*
 * One module: PATH[:sha256=HEX], then after the first ',' or blank (and
 * any blanks) the STRING.  The first module of a load-options line
 * replaces the config file's list.
 */
static enum ldr_err opt_module(struct ldr_options *o, const char *v, size_t vlen)
{
	struct opt_module *m;
	size_t end = 0, s;
	enum ldr_err err;

	if (o->modules_replace) {
		o->nmodules = 0;
		o->modules_replace = 0;
	}
	if (o->nmodules == OPT_MODULES_MAX)
		return LDR_E_OPT_TOO_MANY;
	while (end < vlen && v[end] != ',' && !opt_is_space(v[end]))
		end++;
	m = &o->modules[o->nmodules];
	memset(m, 0, sizeof(*m));
	err = opt_pinned_path(v, end, m->path, &m->have_sha256, m->sha256);
	if (err != LDR_OK)
		return err;
	s = end < vlen ? end + 1 : end;
	while (s < vlen && opt_is_space(v[s]))
		s++;
	err = opt_copy(m->string, sizeof(m->string), v + s, vlen - s);
	if (err != LDR_OK)
		return err;
	m->string_len = (uint32_t)(vlen - s);
	o->nmodules++;
	return LDR_OK;
}

static const char *const opt_place_names[] = {
	[OPT_PLACE_RANDOM] = "random",
	[OPT_PLACE_LOWEST] = "lowest",
	[OPT_PLACE_HIGHEST] = "highest",
	[OPT_PLACE_ABOVE4G] = "above4g",
};

/*
 * kaslr.phys= (virt 0) or kaslr.virt= (virt 1): a name, or an address /
 * offset as options_parse_size() reads it; an offset may be negative.
 */
static enum ldr_err opt_place(struct opt_place *out, int virt, const char *v, size_t vlen)
{
	uint64_t n;
	int neg = 0;

	memset(out, 0, sizeof(*out));
	for (uint32_t k = 0; k < sizeof(opt_place_names) / sizeof(opt_place_names[0]); k++) {
		if (!opt_key_is(v, vlen, opt_place_names[k]))
			continue;
		if (virt && k == OPT_PLACE_ABOVE4G)
			return LDR_E_OPT_VALUE;
		out->kind = k;
		return LDR_OK;
	}
	if (virt && vlen > 1 && v[0] == '-') {
		neg = 1;
		v++;
		vlen--;
	}
	if (options_parse_size(v, vlen, &n) != LDR_OK)
		return LDR_E_OPT_VALUE;
	out->kind = OPT_PLACE_AT;
	out->value = neg ? 0 - n : n;
	return LDR_OK;
}

void options_place_text(const struct opt_place *p, char *buf, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[OPT_PLACE_TEXT_MAX];
	size_t i = 0, n = 0;
	uint64_t v;

	if (!buf || cap == 0)
		return;
	if (p->kind != OPT_PLACE_AT) {
		const char *name = p->kind < sizeof(opt_place_names) / sizeof(opt_place_names[0])
					   ? opt_place_names[p->kind] : "?";

		while (name[n] && n + 1 < cap) {
			buf[n] = name[n];
			n++;
		}
		buf[n] = 0;
		return;
	}
	v = p->value;
	/* a virtual offset within 2^63 below 0 reads best as negative */
	if (v >> 63) {
		tmp[i++] = '-';
		v = 0 - v;
	}
	tmp[i++] = '0';
	tmp[i++] = 'x';
	{
		char d[16];
		size_t nd = 0;

		do {
			d[nd++] = hex[v & 15];
			v >>= 4;
		} while (v);
		while (nd)
			tmp[i++] = d[--nd];
	}
	for (n = 0; n < i && n + 1 < cap; n++)
		buf[n] = tmp[n];
	buf[n] = 0;
}

/*
 * A newline inside a value would end its line in the settings text early
 * and start another: no parser takes one (kaslr.conf's lines end at '\n'
 * and the load options' words at blanks, but the rule is kept here, where
 * every value passes).
 */
static int opt_has_newline(const char *v, size_t vlen)
{
	return memchr(v, '\n', vlen) || memchr(v, '\r', vlen);
}

/* One key with its value (val NULL when the key stood alone). */
static enum ldr_err opt_apply(struct ldr_options *o, const char *k, size_t klen,
			      const char *v, size_t vlen)
{
	enum opt_key_id id = options_key_find(k, klen);
	const struct opt_key *key;
	char *field;
	enum ldr_err err;
	uint64_t n;

	if (id == OPT_K_COUNT)
		return LDR_E_OPT_UNKNOWN;
	key = &opt_keys[id];
	field = (char *)o + key->off;
	o->set |= OPT_BIT(id); /* on an error the parse fails as a whole */
	if (key->kind == OPT_FLAG) {
		if (v && !(vlen == 1 && (v[0] == '0' || v[0] == '1')))
			return LDR_E_OPT_VALUE;
		*(int *)field = !v || v[0] == '1';
		return LDR_OK;
	}
	if (!v || vlen == 0 || opt_has_newline(v, vlen))
		return LDR_E_OPT_VALUE;
	switch (key->kind) {
	case OPT_KERNEL:
		return opt_kernel(o, v, vlen);
	case OPT_CMDLINE:
		err = opt_copy(field, sizeof(o->cmdline), v, vlen);
		if (err == LDR_OK)
			o->cmdline_len = (uint32_t)vlen;
		return err;
	case OPT_INITRD:
		return opt_initrd(o, v, vlen);
	case OPT_HEX32:
		if (opt_hex32(v, vlen, (uint8_t *)field) != LDR_OK)
			return LDR_E_OPT_HEX;
		*(int *)((char *)o + key->have_off) = 1;
		return LDR_OK;
	case OPT_MODULE:
		return opt_module(o, v, vlen);
	case OPT_PHYS_SLOT:
	case OPT_VIRT_SLOT:
		return opt_place((struct opt_place *)field, key->kind == OPT_VIRT_SLOT, v, vlen);
	default: /* OPT_SIZE, OPT_SIZE_NZ */
		err = options_parse_size(v, vlen, &n);
		if (err != LDR_OK)
			return err;
		if (n == 0 && key->kind == OPT_SIZE_NZ)
			return LDR_E_OPT_VALUE;
		*(uint64_t *)field = n;
		return LDR_OK;
	}
}

/*
 * A NUL ends the text, as it does in options_from_ucs2(): otherwise a "--"
 * or cmdline value would copy bytes past it and cmdline_len would not be
 * strlen(cmdline).
 */
static size_t opt_text_len(const char *s, size_t len)
{
	const char *z = memchr(s, 0, len);

	return z ? (size_t)(z - s) : len;
}

static int opt_is_image_path(const char *w, size_t len)
{
	if (memchr(w, '=', len) || len < 4)
		return 0;
	return w[len - 4] == '.' && (w[len - 3] | 0x20) == 'e' &&
	       (w[len - 2] | 0x20) == 'f' && (w[len - 1] | 0x20) == 'i';
}

static enum ldr_err opt_parse_line(struct ldr_options *o, const char *s, size_t len)
{
	size_t i = 0, words = 0;
	enum ldr_err err;

	if (len > OPT_TEXT_MAX)
		return LDR_E_OPT_TOO_LONG;
	len = opt_text_len(s, len);
	o->modules_replace = 1;
	o->kernels_replace = 1;
	while (i < len) {
		size_t w, wl, eq;

		while (i < len && opt_is_space(s[i]))
			i++;
		if (i >= len || s[i] == 0)
			break;
		w = i;
		while (i < len && s[i] && !opt_is_space(s[i]))
			i++;
		wl = i - w;
		if (wl == 2 && s[w] == '-' && s[w + 1] == '-') {
			/* the rest, trimmed, is the kernel's command line */
			size_t e = len;

			while (i < len && opt_is_space(s[i]))
				i++;
			while (e > i && (opt_is_space(s[e - 1]) || s[e - 1] == 0))
				e--;
			err = opt_has_newline(s + i, e - i) ? LDR_E_OPT_VALUE :
				opt_copy(o->cmdline, sizeof(o->cmdline), s + i, e - i);
			if (err != LDR_OK) {
				opt_set_bad(o, "--", 2);
				return err;
			}
			o->cmdline_len = (uint32_t)(e - i);
			o->set |= OPT_BIT(OPT_K_CMDLINE);
			return LDR_OK;
		}
		if (words++ == 0 && opt_is_image_path(s + w, wl))
			continue;
		for (eq = 0; eq < wl && s[w + eq] != '='; eq++)
			;
		err = eq < wl ? opt_apply(o, s + w, eq, s + w + eq + 1, wl - eq - 1)
			      : opt_apply(o, s + w, wl, NULL, 0);
		if (err != LDR_OK) {
			opt_set_bad(o, s + w, eq);
			o->bad_line = 0;
			/* most likely a kernel argument missing its "--" */
			return err == LDR_E_OPT_UNKNOWN ? LDR_E_OPT_UNKNOWN_ARG : err;
		}
	}
	return LDR_OK;
}

/* a kernel list this parse started may be shorter than the initrds' (also
 * when the parse failed part way: the list's rules hold in every outcome) */
enum ldr_err options_parse_line(struct ldr_options *o, const char *s, size_t len)
{
	enum ldr_err err = opt_parse_line(o, s, len);

	opt_drop_orphans(o);
	return err;
}

/* "kernel=x" written in kaslr.conf: a known key followed by '=' */
static int opt_conf_equals(const char *k, size_t kl)
{
	const char *eq = memchr(k, '=', kl);

	if (!eq)
		return 0;
	return options_key_find(k, (size_t)(eq - k)) != OPT_K_COUNT;
}

static enum ldr_err opt_parse_config(struct ldr_options *o, const char *s, size_t len)
{
	size_t i = 0;
	uint32_t line = 0;
	enum ldr_err err;

	if (len > OPT_TEXT_MAX)
		return LDR_E_OPT_TOO_LONG;
	len = opt_text_len(s, len);
	o->kernels_replace = 1;
	/* a UTF-8 byte-order mark, as some Windows editors write one */
	if (len >= 3 && (uint8_t)s[0] == 0xef && (uint8_t)s[1] == 0xbb && (uint8_t)s[2] == 0xbf)
		i = 3;
	while (i < len) {
		size_t k, kl, v, e, l0 = i;

		/* count the lines the blank run crosses, then this one */
		while (i < len && opt_is_space(s[i]))
			i++;
		for (size_t c = l0; c < i; c++)
			line += s[c] == '\n';
		k = i;
		while (i < len && s[i] != '\n')
			i++;
		e = i; /* end of this line */
		if (k == e || s[k] == '#')
			continue;
		for (kl = 0; k + kl < e && !opt_is_space(s[k + kl]) && s[k + kl] != '#'; kl++)
			;
		v = k + kl;
		while (v < e && (s[v] == ' ' || s[v] == '\t'))
			v++;
		/* comments end the value, except in cmdline and module */
		if (!opt_verbatim(s + k, kl)) {
			size_t c;

			for (c = v; c < e && s[c] != '#'; c++)
				;
			e = c;
		}
		while (e > v && opt_is_space(s[e - 1]))
			e--;
		err = opt_apply(o, s + k, kl, v < e ? s + v : NULL, e - v);
		if (err == LDR_E_OPT_UNKNOWN && opt_conf_equals(s + k, kl))
			err = LDR_E_OPT_CONF_EQUALS;
		if (err != LDR_OK) {
			opt_set_bad(o, s + k, kl);
			o->bad_line = line + 1;
			return err;
		}
	}
	return LDR_OK;
}

enum ldr_err options_parse_config(struct ldr_options *o, const char *s, size_t len)
{
	enum ldr_err err = opt_parse_config(o, s, len);

	opt_drop_orphans(o);
	return err;
}

/*
 * The settings text: a bounded writer that remembers running out of room
 * (one check at the end instead of one per piece).
 */
struct opt_text {
	char *p;
	size_t len, cap;
	int overflow;
};

static void ot_put(struct opt_text *t, const char *s, size_t n)
{
	if (t->overflow || n > t->cap - t->len) {
		t->overflow = 1;
		return;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
}

static void ot_str(struct opt_text *t, const char *s)
{
	ot_put(t, s, strlen(s));
}

static void ot_hex(struct opt_text *t, const uint8_t *b, size_t n)
{
	static const char digit[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		char h[2] = { digit[b[i] >> 4], digit[b[i] & 15] };

		ot_put(t, h, 2);
	}
}

/* lower-case hex without leading zeros: 0x0, 0x1000000 */
static void ot_u64(struct opt_text *t, uint64_t v)
{
	char d[16];
	int n = 0;

	do {
		d[15 - n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	ot_str(t, "0x");
	ot_put(t, d + 16 - n, (size_t)n);
}

/* "KEY=", or with place 1..9 "KEY.PLACE=" */
static void ot_key(struct opt_text *t, const char *name, uint32_t place)
{
	char d[2] = { '.', (char)('0' + place) };

	ot_str(t, name);
	if (place)
		ot_put(t, d, 2);
	ot_str(t, "=");
}

/* PATH, then ":sha256=HEX" when pinned */
static void ot_file(struct opt_text *t, const char *path, int have, const uint8_t sha[32])
{
	ot_str(t, path);
	if (have) {
		ot_str(t, ":sha256=");
		ot_hex(t, sha, 32);
	}
}

enum ldr_err options_settings_text(const struct ldr_options *o, char *out, size_t cap,
				   size_t *ret_len)
{
	struct opt_text t = { out, 0, cap, 0 };

	ot_str(&t, OPT_SETTINGS_HEADER "\n");
	for (unsigned i = 0; i < OPT_K_COUNT; i++) {
		const struct opt_key *key = &opt_keys[i];
		const char *field = (const char *)o + key->off;
		uint32_t n;

		if (key->measure == OPT_M_PCR12)
			continue;
		switch (key->kind) {
		case OPT_MODULE: /* one line per module, in order */
			for (n = 0; n < o->nmodules; n++) {
				const struct opt_module *m = &o->modules[n];

				ot_str(&t, key->name);
				ot_str(&t, "=");
				ot_file(&t, m->path, m->have_sha256, m->sha256);
				ot_str(&t, ",");
				ot_put(&t, m->string, m->string_len);
				ot_str(&t, "\n");
			}
			continue;
		case OPT_INITRD: /* one line per initrd, each kernel's in order */
			for (uint32_t k = 0; k < options_kernel_count(o); k++)
				for (n = 0; n < o->ninitrd && n < OPT_INITRD_MAX; n++) {
					if (o->initrd[n].kernel != k)
						continue;
					ot_key(&t, key->name, o->nkernels > 1 ? k + 1 : 0);
					ot_file(&t, o->initrd[n].path, o->initrd[n].have_sha256,
						o->initrd[n].sha256);
					ot_str(&t, "\n");
				}
			continue;
		case OPT_KERNEL: /* "kernel=" the default, or one line per kernel */
			for (n = 0; n < options_kernel_count(o); n++) {
				ot_key(&t, key->name, o->nkernels > 1 ? n + 1 : 0);
				ot_str(&t, options_kernel(o, n));
				ot_str(&t, "\n");
			}
			continue;
		default:
			break;
		}
		ot_str(&t, key->name);
		ot_str(&t, "=");
		switch (key->kind) {
		case OPT_FLAG:
			ot_str(&t, *(const int *)field ? "1" : "0");
			break;
		case OPT_HEX32:
			if (!*(const int *)((const char *)o + key->have_off)) {
				ot_str(&t, "none");
			} else if (key->measure == OPT_M_DIGEST) {
				uint8_t d[SHA256_DIGEST_SIZE];

				sha256(field, 32, d);
				ot_str(&t, "sha256:");
				ot_hex(&t, d, sizeof(d));
			} else {
				ot_hex(&t, (const uint8_t *)field, 32);
			}
			break;
		case OPT_PHYS_SLOT:
		case OPT_VIRT_SLOT: { /* as the option reads: "random" when not set */
			char place[OPT_PLACE_TEXT_MAX];

			options_place_text((const struct opt_place *)field, place, sizeof(place));
			ot_str(&t, place);
			break;
		}
		default: /* OPT_SIZE, OPT_SIZE_NZ */
			ot_u64(&t, *(const uint64_t *)field);
			break;
		}
		ot_str(&t, "\n");
	}
	if (t.overflow)
		return LDR_E_OPT_TOO_LONG;
	*ret_len = t.len;
	return LDR_OK;
}
