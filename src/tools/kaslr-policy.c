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
 *   kaslr-policy rules        the README's table of inputs x Secure Boot
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "policy.h"
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

/* The README's table, from the one table in src/options.c. */
static int cmd_rules(void)
{
	printf("| input from kaslr.conf or the load options | Secure Boot off | Secure Boot on |\n");
	printf("| --- | --- | --- |\n");
	for (unsigned k = 0; k < OPT_K_COUNT; k++) {
		enum opt_key_id id = (enum opt_key_id)k;
		const char *name = options_key_name(id);

		printf("| `%s%s` | taken | ", id == OPT_K_CMDLINE ? "" : name,
		       id == OPT_K_CMDLINE ? "cmdline` / `-- ..." : "");
		switch (options_key_rule(id)) {
		case OPT_SB_TAKEN:
			printf("taken |\n");
			break;
		case OPT_SB_IF_ALLOWED:
			printf("ignored with a warning (%s), unless the policy allows it (`--allow %s`) |\n",
			       options_key_risk(id), name);
			break;
		case OPT_SB_NEVER:
			printf("ignored with a warning (%s); no policy can allow it%s |\n",
			       options_key_risk(id),
			       options_key_shim(id) ? ", but a TRUST=shim policy takes it" : "");
			break;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "write"))
		return cmd_write(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "show"))
		return cmd_show(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "rules"))
		return cmd_rules();
	fprintf(stderr,
		"usage: " TOOL " write --loader IN.efi --out OUT.efi --kernel ESP_PATH=HOST_FILE\n"
		"                    [--initrd ESP_PATH=HOST_FILE]... [--cmdline TEXT] [--allow KEY]...\n"
		"                    [--trust pins|shim]\n"
		"       " TOOL " show IN.efi\n"
		"       " TOOL " rules\n");
	return 2;
}
