/*
 * kaslr-policy - writes the policy into the loader's .kpolicy section
 * before it is signed, and shows what a loader carries.  Built by make from
 * the core's own policy, PE and option code (src/policy.c, src/pe.c,
 * src/options.c), so what it writes is what the loader parses.
 *
 *   kaslr-policy write --loader IN.efi --out OUT.efi
 *                      --kernel ESP_PATH=HOST_FILE [--initrd ESP_PATH=HOST_FILE]...
 *                      [--cmdline TEXT] [--allow KEY]... [--trust pins|shim]
 *   kaslr-policy show IN.efi
 *   kaslr-policy rules [--man]   the table of inputs x Secure Boot
 *   kaslr-policy keys [--man]    the keys, their values, what an unset one reads
 *   kaslr-policy settings [--man] [--loader IN.efi] [--conf FILE]
 *                        [--options TEXT] [--secure-boot]
 *                                the settings text the loader measures
 * The last three print the core's own tables for kaslr.conf(5), whose
 * tables test/doc compares with them (--man: as that page's roff).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "pe.h"
#include "policy.h"
#include "settings.h"
#include "sha256.h"

#define TOOL "kaslr-policy"
#define FILE_MAX (1024ULL * 1024 * 1024)

static void die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, TOOL ": ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(1);
}

static uint8_t *read_all(const char *path, uint64_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	uint64_t len = 0, cap = 0;
	size_t n;

	if (!f)
		die("%s: %s", path, strerror(errno));
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			if (cap > FILE_MAX)
				die("%s: larger than %s", path, "1 GiB");
			buf = realloc(buf, cap);
			if (!buf)
				die("%s: %s", path, "out of memory");
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f))
		die("%s: read error%s", path, "");
	fclose(f);
	*ret_len = len;
	return buf;
}

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* ESP_PATH=HOST_FILE -> a pin: "\EFI\x" form, the file's SHA-256 */
static void add_file(struct policy *p, enum policy_kind kind, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct policy_file *f;
	uint8_t *buf;
	uint64_t len;
	size_t n, o = 0;

	if (!eq || eq == arg || !eq[1])
		die("'%s': want ESP_PATH=HOST_FILE%s", arg, "");
	if (p->nfiles >= POLICY_MAX_FILES)
		die("more than %s files%s", "16", "");
	f = &p->file[p->nfiles++];
	f->kind = kind;
	n = (size_t)(eq - arg);
	if (arg[0] != '/' && arg[0] != '\\')
		f->path[o++] = '\\';
	if (n + o >= sizeof(f->path))
		die("'%s': ESP path too long%s", arg, "");
	for (size_t i = 0; i < n; i++)
		f->path[o++] = arg[i] == '/' ? '\\' : arg[i];
	f->path[o] = 0;
	buf = read_all(eq + 1, &len);
	sha256(buf, len, f->sha256);
	free(buf);
}

static const char *kind_name(enum policy_kind k)
{
	return k == POLICY_KERNEL ? "kernel" : "initrd";
}

static int cmd_write(int argc, char **argv)
{
	static struct policy p;
	const char *in = NULL, *out = NULL;
	struct pe_section s;
	struct policy old;
	uint8_t *img;
	uint64_t len, sig;
	enum ldr_err err;
	FILE *f;

	memset(&p, 0, sizeof(p));
	p.present = 1;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			die("%s needs a value%s", a, "");
		i++;
		if (!strcmp(a, "--loader"))
			in = v;
		else if (!strcmp(a, "--out"))
			out = v;
		else if (!strcmp(a, "--kernel"))
			add_file(&p, POLICY_KERNEL, v);
		else if (!strcmp(a, "--initrd"))
			add_file(&p, POLICY_INITRD, v);
		else if (!strcmp(a, "--cmdline")) {
			size_t n = strlen(v);

			if (n >= OPT_CMDLINE_MAX)
				die("--cmdline: more than %s characters%s", "4095", "");
			memcpy(p.cmdline, v, n + 1);
			p.cmdline_len = (uint32_t)n;
			p.have_cmdline = 1;
		} else if (!strcmp(a, "--trust")) {
			if (strcmp(v, "pins") && strcmp(v, "shim"))
				die("--trust %s: want pins or shim%s", v, "");
			p.trust_shim = !strcmp(v, "shim");
		} else if (!strcmp(a, "--allow")) {
			enum opt_key_id id = options_key_find(v, strlen(v));

			if (id == OPT_K_COUNT)
				die("--allow %s: no such option%s", v, "");
			if (options_key_rule(id) == OPT_SB_NEVER)
				die("--allow %s: no policy can allow it (%s)", v, options_key_risk(id));
			p.allow |= OPT_BIT(id);
		} else {
			die("unknown argument %s%s", a, "");
		}
	}
	if (!in || !out)
		die("write needs --loader IN.efi and --out OUT.efi%s%s", "", "");
	if (!policy_kernel(&p))
		die("write needs exactly one --kernel ESP_PATH=HOST_FILE%s%s", "", "");
	img = read_all(in, &len);
	if (pe_signature_size(img, len, &sig) != LDR_OK)
		die("%s: not a PE32+ image%s", in, "");
	if (sig)
		die("%s is signed: write the policy into the unsigned loader, then sign%s", in, "");
	if (pe_find_section(img, len, PE_VIEW_FILE, POLICY_SECTION, &s) != LDR_OK ||
	    s.size < POLICY_SECTION_SIZE)
		die("%s has no %s section: not this loader's image", in, POLICY_SECTION);
	if (policy_parse(img + s.off, POLICY_SECTION_SIZE, &old) != LDR_OK)
		die("%s: its %s section holds no policy header", in, POLICY_SECTION);
	err = policy_write(&p, img + s.off, POLICY_SECTION_SIZE);
	if (err != LDR_OK)
		die("the policy: %s (%s)", ldr_strerror(err),
		    err == LDR_E_POLICY_FORMAT ? "a path twice, or a path with control characters" :
						  "too long");
	f = fopen(out, "wb");
	if (!f || fwrite(img, 1, len, f) != len || fclose(f) != 0)
		die("%s: %s", out, strerror(errno));
	free(img);
	return 0;
}

static int cmd_show(const char *in)
{
	static struct policy p;
	struct pe_section s;
	uint8_t *img, d[32];
	uint64_t len, sig = 0;
	char h[65];

	img = read_all(in, &len);
	if (pe_find_section(img, len, PE_VIEW_FILE, POLICY_SECTION, &s) != LDR_OK ||
	    s.size < POLICY_SECTION_SIZE)
		die("%s has no %s section", in, POLICY_SECTION);
	if (policy_parse(img + s.off, POLICY_SECTION_SIZE, &p) != LDR_OK)
		die("%s: the policy is malformed (the loader refuses to boot)%s", in, "");
	(void)pe_signature_size(img, len, &sig);
	printf("signed   %s\n", sig ? "yes" : "no");
	if (!p.present) {
		printf("policy   none (the build's empty header)\n");
		free(img);
		return 0;
	}
	for (uint32_t i = 0; i < p.nfiles; i++) {
		hex(p.file[i].sha256, 32, h);
		printf("%s   %s sha256=%s\n", kind_name(p.file[i].kind), p.file[i].path, h);
	}
	if (p.have_cmdline)
		printf("cmdline  %s\n", p.cmdline);
	printf("trust    %s\n", p.trust_shim ? "pins or shim (a kernel shim verifies; initrds measured)" : "pins");
	printf("allow   ");
	for (unsigned k = 0; k < OPT_K_COUNT; k++)
		if (p.allow & OPT_BIT(k))
			printf(" %s", options_key_name((enum opt_key_id)k));
	printf("\n");
	/* what the loader measures into PCR 5 */
	sha256(img + s.off, p.used, d);
	hex(d, 32, h);
	printf("pcr5     sha256=%s (%u bytes)\n", h, p.used);
	free(img);
	return 0;
}

/*
 * Text for a roff page: a backslash doubled as \e, and a line that would
 * start with '.' or '\'' (a request) guarded by \&.
 */
static void man_text(const char *s, size_t n)
{
	if (n && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", stdout);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			fputs("\\e", stdout);
		else if (s[i] == '-')
			fputs("\\-", stdout);
		else
			putchar(s[i]);
	}
}

static void man_str(const char *s)
{
	man_text(s, strlen(s));
}

/*
 * What kaslr.conf and the load options may change with Secure Boot off and
 * on, from the one table in src/options.c: Markdown, or with --man the
 * roff table of kaslr.conf(5).
 */
static int cmd_rules(int man)
{
	if (man) {
		printf(".TS\nallbox tab(@);\nlb lb lb\nl l lx.\n");
		printf("input@Secure Boot off@Secure Boot on\n");
	} else {
		printf("| input from kaslr.conf or the load options | Secure Boot off | Secure Boot on |\n");
		printf("| --- | --- | --- |\n");
	}
	for (unsigned k = 0; k < OPT_K_COUNT; k++) {
		enum opt_key_id id = (enum opt_key_id)k;
		const char *name = options_key_name(id), *risk = options_key_risk(id);
		enum opt_sb_rule rule = options_key_rule(id);

		if (man) {
			printf("\\fB");
			man_str(name);
			printf("\\fR%s@taken@", id == OPT_K_CMDLINE ? ", \\fB\\-\\- ...\\fR" : "");
			if (rule == OPT_SB_TAKEN) {
				printf("taken\n");
				continue;
			}
			printf("T{\nignored with a warning (");
			man_str(risk);
			if (rule == OPT_SB_IF_ALLOWED) {
				printf("), unless the policy allows it \\%%(\\fB\\-\\-allow ");
				man_str(name);
				printf("\\fR)\n");
			} else {
				printf("); no policy can allow it%s\n",
				       options_key_shim(id) ? ", but a TRUST=shim policy takes it" : "");
			}
			printf("T}\n");
			continue;
		}
		printf("| `%s%s` | taken | ", id == OPT_K_CMDLINE ? "" : name,
		       id == OPT_K_CMDLINE ? "cmdline` / `-- ..." : "");
		switch (rule) {
		case OPT_SB_TAKEN:
			printf("taken |\n");
			break;
		case OPT_SB_IF_ALLOWED:
			printf("ignored with a warning (%s), unless the policy allows it (`--allow %s`) |\n",
			       risk, name);
			break;
		case OPT_SB_NEVER:
			printf("ignored with a warning (%s); no policy can allow it%s |\n", risk,
			       options_key_shim(id) ? ", but a TRUST=shim policy takes it" : "");
			break;
		}
	}
	if (man)
		printf(".TE\n");
	return 0;
}

/*
 * The value each key of src/options.c's table takes, with an example of
 * the key in kaslr.conf ("key value") and in the load options
 * ("key=value"; the command line after "--").  Every run checks this list
 * against the core: each key has exactly one entry, and each example is
 * accepted by the core's own parser and sets that key alone, so the list
 * cannot drift from the key table unnoticed.
 */
static const struct key_doc {
	const char *name, *value, *conf_ex, *line_ex;
} key_docs[] = {
	{ "verbose", "[0|1]", "verbose", "verbose=1" },
	{ "nokaslr", "[0|1]", "nokaslr 1", "nokaslr" },
	{ "kernel", "PATH", "kernel \\EFI\\kaslr\\vmlinuz", "kernel=vmlinuz" },
	{ "cmdline", "TEXT", "cmdline console=ttyS0 quiet # kept", "-- console=ttyS0 quiet" },
	{ "kaslr.seed", "HEX",
	  "kaslr.seed 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
	  "kaslr.seed=00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF" },
	{ "sha256", "HEX",
	  "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	  "sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "kaslr.min", "SIZE", "kaslr.min 64M", "kaslr.min=0x4000000" },
	{ "kaslr.max", "SIZE", "kaslr.max 4G", "kaslr.max=4096M" },
	{ "kaslr.maxsize", "SIZE", "kaslr.maxsize 256M", "kaslr.maxsize=1G" },
	{ "module", "PATH[:sha256=HEX] [STRING]", "module fs.img root=1", "module=fs.img,root=1" },
	{ "initrd", "PATH[:sha256=HEX]", "initrd initrd.img",
	  "initrd=initrd.img:sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "kaslr.phys", "random|lowest|highest|above4g|ADDR", "kaslr.phys above4g",
	  "kaslr.phys=0x40000000" },
	{ "kaslr.virt", "random|lowest|highest|OFFSET", "kaslr.virt highest", "kaslr.virt=-16M" },
};

/* key_docs' entry for a key of the core's table, checked as said above */
static const struct key_doc *key_doc(enum opt_key_id id)
{
	static struct ldr_options o;
	const char *name = options_key_name(id);
	const struct key_doc *d = NULL;

	for (size_t i = 0; i < sizeof(key_docs) / sizeof(key_docs[0]); i++) {
		if (options_key_find(key_docs[i].name, strlen(key_docs[i].name)) == OPT_K_COUNT)
			die("key list: '%s' is no key of the core's table (src/options.c)%s",
			    key_docs[i].name, "");
		if (!strcmp(key_docs[i].name, name))
			d = &key_docs[i];
	}
	if (!d)
		die("key list: the core's key '%s' has no entry here (src/tools/kaslr-policy.c)%s",
		    name, "");
	options_defaults(&o);
	if (options_parse_config(&o, d->conf_ex, strlen(d->conf_ex)) != LDR_OK ||
	    o.set != OPT_BIT(id))
		die("key list: the core's parser does not read '%s' as %s in kaslr.conf",
		    d->conf_ex, name);
	options_defaults(&o);
	if (options_parse_line(&o, d->line_ex, strlen(d->line_ex)) != LDR_OK ||
	    o.set != OPT_BIT(id))
		die("key list: the core's parser does not read '%s' as %s in the load options",
		    d->line_ex, name);
	return d;
}

/*
 * What a key reads in the settings text when nothing sets it, from the
 * core's own text of the defaults: the value of its "key=value" line, or
 * why it has none (the command line is PCR 12's; a list has a line per
 * item).
 */
static void key_unset(enum opt_key_id id, char *out, size_t cap)
{
	static struct ldr_options o;
	static char text[OPT_SETTINGS_MAX + 1];
	const char *name = options_key_name(id);
	size_t len = 0, n = strlen(name);

	options_defaults(&o);
	if (options_settings_text(&o, text, OPT_SETTINGS_MAX, &len) != LDR_OK)
		die("the settings text of the defaults%s%s", "", "");
	text[len] = 0;
	for (char *l = text; *l; l = strchr(l, '\n') + 1) {
		size_t ll = (size_t)(strchr(l, '\n') - l);

		if (ll > n && !memcmp(l, name, n) && l[n] == '=') {
			snprintf(out, cap, "%.*s", (int)(ll - n - 1), l + n + 1);
			if (!*out)
				snprintf(out, cap, "(empty)");
			return;
		}
	}
	snprintf(out, cap, "%s", id == OPT_K_CMDLINE ? "(PCR 12)" : "(no line)");
}

static int cmd_keys(int man)
{
	char unset[OPT_PATH_MAX + 64];
	int w[2] = { 3, 5 };

	for (unsigned k = 0; k < OPT_K_COUNT; k++) {
		const struct key_doc *d = key_doc((enum opt_key_id)k);
		int n[2] = { (int)strlen(d->name), (int)strlen(d->value) };

		for (int c = 0; c < 2; c++)
			w[c] = n[c] > w[c] ? n[c] : w[c];
	}
	if (man)
		printf(".TS\ntab(@) nokeep;\nlb lb lb\nl l l.\nkey@value@unset\n_\n");
	else
		printf("%-*s  %-*s  %s\n", w[0], "key", w[1], "value", "unset");
	for (unsigned k = 0; k < OPT_K_COUNT; k++) {
		const struct key_doc *d = key_doc((enum opt_key_id)k);

		key_unset((enum opt_key_id)k, unset, sizeof(unset));
		if (!man) {
			printf("%-*s  %-*s  %s\n", w[0], d->name, w[1], d->value, unset);
			continue;
		}
		printf("\\fB");
		man_str(d->name);
		printf("\\fR@");
		man_str(d->value);
		printf("@");
		man_str(unset);
		printf("\n");
	}
	if (man)
		printf(".TE\n");
	return 0;
}

/*
 * The settings text the loader measures into PCR 5, computed as efi/main.c
 * does (src/settings.c): the defaults, the policy of a loader image,
 * kaslr.conf, then the load options, each merged by the key table's
 * Secure Boot rules.
 */
static int cmd_settings(int argc, char **argv)
{
	static struct ldr_options o, src;
	static struct policy p;
	static char text[OPT_SETTINGS_MAX + 1];
	const char *loader = NULL, *conf = NULL, *line = NULL;
	struct settings_result r;
	uint8_t *cbuf = NULL;
	uint64_t clen = 0;
	int man = 0, secure = 0;
	size_t len = 0;
	enum ldr_err err;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--man")) {
			man = 1;
			continue;
		}
		if (!strcmp(a, "--secure-boot")) {
			secure = 1;
			continue;
		}
		if (i + 1 >= argc)
			die("%s needs a value%s", a, "");
		if (!strcmp(a, "--loader"))
			loader = argv[++i];
		else if (!strcmp(a, "--conf"))
			conf = argv[++i];
		else if (!strcmp(a, "--options"))
			line = argv[++i];
		else
			die("unknown argument %s%s", a, "");
	}
	memset(&p, 0, sizeof(p));
	if (loader) {
		struct pe_section s;
		uint64_t ilen;
		uint8_t *img = read_all(loader, &ilen);

		if (pe_find_section(img, ilen, PE_VIEW_FILE, POLICY_SECTION, &s) != LDR_OK ||
		    s.size < POLICY_SECTION_SIZE)
			die("%s has no %s section", loader, POLICY_SECTION);
		if (policy_parse(img + s.off, POLICY_SECTION_SIZE, &p) != LDR_OK)
			die("%s: the policy is malformed (the loader refuses to boot)%s", loader, "");
		free(img);
	}
	if (conf)
		cbuf = read_all(conf, &clen);
	err = settings_merge(&p, secure, (const char *)cbuf, clen, line, line ? strlen(line) : 0,
			     &o, &src, &r);
	free(cbuf);
	if (err == LDR_E_POLICY_NONE)
		die("Secure Boot is on and the loader carries no policy: it refuses to boot%s%s", "", "");
	if (err != LDR_OK) {
		fprintf(stderr, TOOL ": %s", r.bad_source == SETTINGS_CONF ? conf : "load options");
		if (r.bad_source == SETTINGS_CONF)
			fprintf(stderr, " line %u", r.bad_line);
		fprintf(stderr, ": '%s': %s (the loader refuses to boot)\n", r.bad, ldr_strerror(err));
		return 1;
	}
	for (int s = 0; s < SETTINGS_SOURCES; s++)
		for (unsigned k = 0; k < OPT_K_COUNT; k++)
			if (r.ignored[s] & OPT_BIT(k))
				fprintf(stderr, TOOL ": %s: '%s' ignored: Secure Boot is on and it %s\n",
					s == SETTINGS_CONF ? conf : "load options",
					options_key_name((enum opt_key_id)k),
					options_key_risk((enum opt_key_id)k));
	if (options_settings_text(&o, text, OPT_SETTINGS_MAX, &len) != LDR_OK)
		die("the settings text is longer than %s%s", "16 KiB", "");
	if (!man) {
		fwrite(text, 1, len, stdout);
		return 0;
	}
	printf(".RS\n.nf\n");
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - (text + i)) : len - i;

		man_text(text + i, ll);
		printf("\n");
		i += ll + 1;
	}
	printf(".fi\n.RE\n");
	return 0;
}

int main(int argc, char **argv)
{
	int man = argc == 3 && !strcmp(argv[2], "--man");

	if (argc >= 2 && !strcmp(argv[1], "write"))
		return cmd_write(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "show"))
		return cmd_show(argv[2]);
	if ((argc == 2 || man) && !strcmp(argv[1], "rules"))
		return cmd_rules(man);
	if ((argc == 2 || man) && !strcmp(argv[1], "keys"))
		return cmd_keys(man);
	if (argc >= 2 && !strcmp(argv[1], "settings"))
		return cmd_settings(argc, argv);
	fprintf(stderr,
		"usage: " TOOL " write --loader IN.efi --out OUT.efi --kernel ESP_PATH=HOST_FILE\n"
		"                    [--initrd ESP_PATH=HOST_FILE]... [--cmdline TEXT] [--allow KEY]...\n"
		"                    [--trust pins|shim]\n"
		"       " TOOL " show IN.efi\n"
		"       " TOOL " rules [--man]\n"
		"       " TOOL " keys [--man]\n"
		"       " TOOL " settings [--man] [--loader IN.efi] [--conf FILE] [--options TEXT]\n"
		"                    [--secure-boot]\n");
	return 2;
}
