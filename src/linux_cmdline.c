/*
 * linux_cmdline.c - placement facts from Linux's command line
 * (include/linux_cmdline.h).  The text is untrusted: every number is
 * parsed with overflow checks and every range clipped.
 */
#include <string.h>

#include "linux_cmdline.h"

/* Linux's memparse: a number (0x hex, 0 octal, decimal) and a suffix. */
static int lc_memparse(const char *s, size_t len, size_t *ret_used, uint64_t *ret)
{
	uint64_t v = 0, base = 10;
	size_t i = 0, digits = 0;
	unsigned shift = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len >= 1 && s[0] == '0') {
		base = 8;
	}
	for (; i < len; i++, digits++) {
		char c = s[i];
		uint64_t d;

		if (c >= '0' && c <= '9')
			d = (uint64_t)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (uint64_t)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (uint64_t)(c - 'A' + 10);
		else
			break;
		if (d >= base || v > (UINT64_MAX - d) / base)
			return 0;
		v = v * base + d;
	}
	if (digits == 0)
		return 0;
	if (i < len) {
		switch (s[i] | 0x20) {
		case 'k': shift = 10; break;
		case 'm': shift = 20; break;
		case 'g': shift = 30; break;
		case 't': shift = 40; break;
		case 'p': shift = 50; break;
		case 'e': shift = 60; break;
		}
		if (shift)
			i++;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return 0;
	*ret = v << shift;
	*ret_used = i;
	return 1;
}

/* one memmap= element: SIZE followed by $, ! or # and ADDR, nothing else */
static void lc_memmap_one(const char *s, size_t len, struct linux_cmdline_facts *f)
{
	uint64_t size, addr;
	size_t used, used2;

	if (!lc_memparse(s, len, &used, &size) || used >= len)
		return;
	if (s[used] != '$' && s[used] != '!' && s[used] != '#')
		return; /* @ (usable), % (retyped), exactmap: no keep-out */
	if (!lc_memparse(s + used + 1, len - used - 1, &used2, &addr) ||
	    used2 != len - used - 1 || size == 0)
		return;
	if (f->navoid == LINUX_CMDLINE_AVOID_MAX) {
		f->too_many = 1;
		return;
	}
	if (size > UINT64_MAX - addr)
		size = UINT64_MAX - addr; /* clipped at the top */
	f->avoid[f->navoid].addr = addr;
	f->avoid[f->navoid].size = size;
	f->avoid[f->navoid].type = E820_RESERVED;
	f->avoid[f->navoid++].flags = 0;
}

static int lc_key(const char *w, size_t wl, const char *key, size_t *ret_vlen)
{
	size_t kl = strlen(key);

	if (wl < kl || memcmp(w, key, kl) != 0)
		return 0;
	*ret_vlen = wl - kl;
	return 1;
}

static void lc_word(const char *w, size_t wl, struct linux_cmdline_facts *f)
{
	size_t vl, used;
	uint64_t v;

	if (wl == 7 && memcmp(w, "nokaslr", 7) == 0) {
		f->nokaslr = 1;
	} else if (lc_key(w, wl, "mem=", &vl)) {
		/* mem=nopentium and other words are no limit */
		if (lc_memparse(w + 4, vl, &used, &v) && used == vl && v &&
		    (f->mem_limit == 0 || v < f->mem_limit))
			f->mem_limit = v;
	} else if (lc_key(w, wl, "memmap=", &vl)) {
		const char *p = w + 7, *end = w + wl;

		while (p < end) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			const char *e = c ? c : end;

			lc_memmap_one(p, (size_t)(e - p), f);
			p = c ? c + 1 : end;
		}
	}
}

enum ldr_err linux_cmdline_scan(const char *s, size_t len, struct linux_cmdline_facts *ret)
{
	struct linux_cmdline_facts f;
	const char *z;
	size_t i = 0;

	if ((!s && len) || !ret)
		return LDR_E_INVAL;
	memset(&f, 0, sizeof(f));
	if (s && (z = memchr(s, 0, len)) != NULL)
		len = (size_t)(z - s);
	while (i < len) {
		size_t w;
		int quoted = 0;

		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
			i++;
		w = i;
		/* a word ends at a blank outside double quotes (Linux's next_arg) */
		while (i < len && (quoted || (s[i] != ' ' && s[i] != '\t' && s[i] != '\n'))) {
			if (s[i] == '"')
				quoted = !quoted;
			i++;
		}
		if (i == w)
			break;
		if (i - w == 2 && s[w] == '-' && s[w + 1] == '-')
			break; /* the rest is init's */
		lc_word(s + w, i - w, &f);
	}
	*ret = f;
	return LDR_OK;
}
