/*
 * fuzz_options.c - libFuzzer target: the option parsers over untrusted
 * bytes - options_from_ucs2() (the bytes as LoadOptions) and the line
 * parser on its output, options_parse_line() and options_parse_config()
 * on the raw bytes, options_parse_size() on a prefix; abort() when a
 * result breaks an invariant (strings terminated, cmdline_len right,
 * modules, kernels and initrds well formed, no newline in any value), its
 * settings text is not one "key=value" line per setting, an error is not
 * one of the options' own, or options_merge() under Secure Boot lets a
 * parse change what it may not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* no value holds a newline: a settings line is one setting's */
static void check_no_newline(const char *s)
{
	if (strpbrk(s, "\r\n"))
		abort();
}

/*
 * The settings text: the header, then lines "KEY=..." or "KEY.N=..." for
 * a key of the table, as many as there are settings (every key but the
 * command line once, the kernels, modules and initrds one each).
 */
static void check_settings(const struct ldr_options *o)
{
	static char text[OPT_SETTINGS_MAX];
	size_t len = 0, lines = 0, want;
	const char *p, *end;

	if (options_settings_text(o, text, sizeof(text), &len) != LDR_OK || len == 0 ||
	    text[len - 1] != '\n')
		abort();
	want = 1 + OPT_K_COUNT - 4 + options_kernel_count(o) + o->nmodules + o->ninitrd;
	for (p = text; p < text + len; p = end + 1, lines++) {
		size_t k = 0;

		end = memchr(p, '\n', (size_t)(text + len - p));
		if (lines == 0) {
			if ((size_t)(end - p) != strlen(OPT_SETTINGS_HEADER) ||
			    memcmp(p, OPT_SETTINGS_HEADER, (size_t)(end - p)) != 0)
				abort();
			continue;
		}
		while (p + k < end && p[k] != '=')
			k++;
		if (p + k == end)
			abort();
		/* "kernel.N" and "initrd.N" name a place in the list of kernels */
		if (options_key_find(p, k) == OPT_K_COUNT &&
		    (k < 3 || p[k - 2] != '.' || p[k - 1] < '1' || p[k - 1] > '9' ||
		     (options_key_find(p, k - 2) != OPT_K_KERNEL &&
		      options_key_find(p, k - 2) != OPT_K_INITRD)))
			abort();
	}
	if (lines != want)
		abort();
}

static void check_opts(const struct ldr_options *o)
{
	if (!memchr(o->cmdline, 0, sizeof(o->cmdline)) || !memchr(o->bad, 0, sizeof(o->bad)))
		abort();
	/* the kernels: at most OPT_KERNELS_MAX, each a non-empty string;
	 * the initrds each naming one of them */
	if (o->nkernels > OPT_KERNELS_MAX || o->ninitrd > OPT_INITRD_MAX)
		abort();
	for (uint32_t i = 0; i < o->nkernels; i++)
		if (!memchr(o->kernels[i], 0, sizeof(o->kernels[i])) || o->kernels[i][0] == 0)
			abort();
	for (uint32_t i = 0; i < o->ninitrd; i++) {
		const struct opt_file *f = &o->initrd[i];

		if (!memchr(f->path, 0, sizeof(f->path)) || f->path[0] == 0 ||
		    f->kernel >= options_kernel_count(o) || strpbrk(f->path, ":"))
			abort();
		check_no_newline(f->path);
	}
	for (uint32_t i = 0; i < o->nkernels; i++)
		check_no_newline(o->kernels[i]);
	check_no_newline(o->cmdline);
	if (o->cmdline_len != strlen(o->cmdline))
		abort();
	if (o->verbose > 1 || o->nokaslr > 1 || o->have_seed > 1 || o->have_sha256 > 1)
		abort();
	if (o->max_kernel == 0 || (o->set >> OPT_K_COUNT))
		abort();
	if (o->nmodules > OPT_MODULES_MAX)
		abort();
	/* a module's path is non-empty and holds no separator of the syntax */
	for (uint32_t i = 0; i < o->nmodules; i++) {
		const struct opt_module *m = &o->modules[i];

		if (!memchr(m->path, 0, sizeof(m->path)) || !memchr(m->string, 0, sizeof(m->string)))
			abort();
		if (m->path[0] == 0 || strpbrk(m->path, ":, \t\r\n") || m->have_sha256 > 1 ||
		    m->string_len != strlen(m->string))
			abort();
		check_no_newline(m->string);
	}
	check_settings(o);
}

static void check_err(enum ldr_err err, const struct ldr_options *o)
{
	switch (err) {
	case LDR_OK: case LDR_E_OPT_UNKNOWN: case LDR_E_OPT_UNKNOWN_ARG:
	case LDR_E_OPT_CONF_EQUALS: case LDR_E_OPT_VALUE: case LDR_E_OPT_HEX:
	case LDR_E_OPT_TOO_LONG: case LDR_E_OPT_TOO_MANY:
		break;
	default:
		abort();
	}
	/* a bad value always names its (known, non-empty) key */
	if (err == LDR_E_OPT_VALUE && o->bad[0] == 0)
		abort();
	check_opts(o);
}

/* decimal digits only: compare with a reference conversion */
static void check_size(const uint8_t *s, size_t n)
{
	uint64_t v = 0, ref = 0;
	int ovf = 0, digits = n > 0;
	enum ldr_err err = options_parse_size((const char *)s, n, &v);

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			digits = 0;
			break;
		}
		if (ref > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			ovf = 1;
		ref = ref * 10 + (uint64_t)(s[i] - '0');
	}
	if (digits && (ovf ? err != LDR_E_OPT_VALUE : err != LDR_OK || v != ref))
		abort();
	if (err != LDR_OK && err != LDR_E_OPT_VALUE)
		abort();
}

/*
 * Secure Boot with a policy that allows nothing: merging any parse leaves
 * every field an unsigned source may not change as it was.
 */
static void check_merge(const struct ldr_options *src)
{
	static struct ldr_options d, before;

	options_defaults(&d);
	memcpy(d.kernels[0], "\\EFI\\pinned.elf", 16);
	d.nkernels = 1;
	memcpy(d.cmdline, "pinned", 7);
	d.cmdline_len = 6;
	before = d;
	(void)options_merge(&d, src, 1, 0);
	if (memcmp(d.kernels, before.kernels, sizeof(d.kernels)) != 0 ||
	    d.nkernels != before.nkernels || d.ninitrd != 0 ||
	    d.cmdline_len != before.cmdline_len || strcmp(d.cmdline, before.cmdline) != 0 ||
	    d.nokaslr || d.have_seed || d.have_sha256 || d.min_addr != before.min_addr ||
	    d.max_addr != before.max_addr)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[OPT_TEXT_MAX];
	struct ldr_options o;
	size_t len = (size_t)-1;
	enum ldr_err err;
	char *raw;

	/* exact-size copy: ASan sees any read past size */
	raw = malloc(size ? size : 1);
	memcpy(raw, data, size);

	err = options_from_ucs2(raw, size, text, sizeof(text), &len);
	if (err == LDR_OK) {
		if (len >= sizeof(text) || len != strlen(text) || len > size / 2)
			abort();
		for (size_t i = 0; i < len; i++)
			if (text[i] < 0x20 || text[i] > 0x7e)
				abort();
		options_defaults(&o);
		check_err(options_parse_line(&o, text, len), &o);
	} else if (err == LDR_E_OPT_ENCODING) {
		if (len >= size / 2)
			abort();
	} else if (err != LDR_E_OPT_TOO_LONG) {
		abort();
	}

	options_defaults(&o);
	check_err(options_parse_line(&o, raw, size), &o);
	options_defaults(&o);
	err = options_parse_config(&o, raw, size);
	check_err(err, &o);
	check_merge(&o);
	/* load options on top of the config, as the loader does */
	check_err(options_parse_line(&o, raw, size < 64 ? size : 64), &o);

	check_size(data, size < 24 ? size : 24);
	free(raw);
	return 0;
}
