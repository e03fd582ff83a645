/*
 * test_settings.c - host tests for src/settings.c: the effective options
 * of a boot as the loader merges its sources - the policy's files and
 * command line, then kaslr.conf, then the load options - against the same
 * merge done step by step with the core's parsers; what Secure Boot
 * ignores and under which trust; the refusals (Secure Boot without a
 * policy, a source that does not parse: which source, which line); the
 * scratch copy wiped after (kaslr.seed is secret).
 */
#include <string.h>

#include "settings.h"
#include "sha256.h"
#include "test.h"

static struct ldr_options o, scratch, want, src;
static struct settings_result r;

static void mk_policy(struct policy *p, int trust_shim)
{
	memset(p, 0, sizeof(*p));
	p->present = 1;
	p->trust_shim = trust_shim;
	p->nfiles = 1;
	p->file[0].kind = POLICY_KERNEL;
	sha256("kernel", 6, p->file[0].sha256);
	strcpy(p->file[0].path, "\\EFI\\kaslr\\vmlinuz");
	p->have_cmdline = 1;
	strcpy(p->cmdline, "root=/dev/vda1");
	p->cmdline_len = (uint32_t)strlen(p->cmdline);
	p->allow = OPT_BIT(OPT_K_MIN);
}

static int zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* the settings text of o, for comparing whole configurations */
static const char *text_of(const struct ldr_options *x)
{
	static char t[2][OPT_SETTINGS_MAX + 1];
	static int k;
	size_t n = 0;

	k ^= 1;
	options_settings_text(x, t[k], OPT_SETTINGS_MAX, &n);
	t[k][n] = 0;
	return t[k];
}

TEST(test_merge_order)
{
	static const char conf[] = "kernel vmlinuz-new\ninitrd a.img\ncmdline quiet\nkaslr.min 64M\n";
	static const char line[] = "nokaslr -- console=ttyS0";
	struct policy p;

	memset(&p, 0, sizeof(p)); /* the build's empty header */
	CHECK(settings_merge(&p, 0, conf, strlen(conf), line, strlen(line), &o, &scratch, &r) ==
		      LDR_OK,
	      "merged");
	options_defaults(&want);
	options_defaults(&src);
	options_parse_config(&src, conf, strlen(conf));
	options_merge(&want, &src, 0, 0);
	options_defaults(&src);
	options_parse_line(&src, line, strlen(line));
	options_merge(&want, &src, 0, 0);
	CHECK(strcmp(text_of(&o), text_of(&want)) == 0, "the same settings as step by step");
	CHECK(strcmp(o.cmdline, "console=ttyS0") == 0 && o.nokaslr && o.min_addr == 64 * MIB,
	      "the load options win over kaslr.conf");
	CHECK(strcmp(o.kernels[0], "vmlinuz-new") == 0 && o.ninitrd == 1, "kaslr.conf's files");
	CHECK(zero(&scratch, sizeof(scratch)), "scratch wiped");
	CHECK(r.ignored[0] == 0 && r.ignored[1] == 0, "nothing ignored without Secure Boot");

	/* no sources: the defaults, and the policy's files and line */
	mk_policy(&p, 0);
	CHECK(settings_merge(&p, 0, NULL, 0, NULL, 0, &o, &scratch, &r) == LDR_OK, "policy alone");
	CHECK(strcmp(o.kernels[0], "\\EFI\\kaslr\\vmlinuz") == 0 && strcmp(o.cmdline, "root=/dev/vda1") == 0,
	      "the policy's kernel and line");
}

TEST(test_secure_boot)
{
	static const char conf[] =
		"kaslr.seed 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
		"kaslr.min 64M\nkernel other\ncmdline evil\n";
	struct policy p;

	mk_policy(&p, 0);
	CHECK(settings_merge(&p, 1, conf, strlen(conf), NULL, 0, &o, &scratch, &r) == LDR_OK,
	      "merged under Secure Boot");
	CHECK(!o.have_seed && strcmp(o.kernels[0], "\\EFI\\kaslr\\vmlinuz") == 0 &&
		      strcmp(o.cmdline, "root=/dev/vda1") == 0,
	      "kaslr.seed, kernel and cmdline ignored");
	CHECK(o.min_addr == 64 * MIB, "kaslr.min taken: the policy allows it");
	CHECK(r.ignored[SETTINGS_CONF] ==
		      (OPT_BIT(OPT_K_SEED) | OPT_BIT(OPT_K_KERNEL) | OPT_BIT(OPT_K_CMDLINE)),
	      "the ignored keys of kaslr.conf: 0x%x", r.ignored[SETTINGS_CONF]);
	CHECK(zero(&scratch, sizeof(scratch)), "the seed's copy wiped");
	/* TRUST=shim takes the kernel named in kaslr.conf */
	mk_policy(&p, 1);
	CHECK(settings_merge(&p, 1, conf, strlen(conf), NULL, 0, &o, &scratch, &r) == LDR_OK &&
		      strcmp(o.kernels[0], "other") == 0,
	      "TRUST=shim: kernel taken");
	/* Secure Boot and no policy: the loader refuses */
	memset(&p, 0, sizeof(p));
	CHECK(settings_merge(&p, 1, NULL, 0, NULL, 0, &o, &scratch, &r) == LDR_E_POLICY_NONE,
	      "no policy under Secure Boot");
}

TEST(test_refusals)
{
	static const char conf[] = "verbose\n# fine\nkaslr.min banana\n";
	static const char line[] = "bogus=1";
	struct policy p;

	memset(&p, 0, sizeof(p));
	CHECK(settings_merge(&p, 0, conf, strlen(conf), NULL, 0, &o, &scratch, &r) ==
		      LDR_E_OPT_VALUE,
	      "bad value in kaslr.conf");
	CHECK(r.bad_source == SETTINGS_CONF && r.bad_line == 3 && strcmp(r.bad, "kaslr.min") == 0,
	      "kaslr.conf line 3, kaslr.min (%u, %s)", r.bad_line, r.bad);
	CHECK(zero(&scratch, sizeof(scratch)), "scratch wiped after an error");
	CHECK(settings_merge(&p, 0, "verbose\n", 8, line, strlen(line), &o, &scratch, &r) ==
		      LDR_E_OPT_UNKNOWN_ARG,
	      "unknown load option");
	CHECK(r.bad_source == SETTINGS_OPTIONS && strcmp(r.bad, "bogus") == 0,
	      "the load options, bogus (%s)", r.bad);
}
