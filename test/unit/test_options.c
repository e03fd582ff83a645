/*
 * test_options.c - host tests for src/options.c: tables of load-option
 * lines, kaslr.conf texts, UCS-2 LoadOptions and size strings with the
 * result each must give, plus load options overriding the config file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "sha256.h"
#include "test.h"

#define HEX_SEQ "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F"
/* the same in lower case, as the settings text writes it */
#define HEX_SHA_LC "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeffe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
#define HEX_SHA "F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFFe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
#define DEF ((uint64_t)-1) /* "the default" in the tables below */

enum opt_src { SRC_LINE, SRC_CONFIG };

struct opt_case {
	const char *name;
	enum opt_src src;
	const char *text;
	size_t len;             /* 0: strlen(text) */
	enum ldr_err want;
	const char *bad;        /* on error: o->bad */
	uint32_t line;          /* on a kaslr.conf error: o->bad_line */
	/* on success (NULL / 0 / DEF: the default) */
	const char *kernel, *kernel2; /* the list's first and second */
	const char *cmdline;
	int verbose, nokaslr, seed, sha;
	uint64_t min, max, maxsize;
};

static const uint8_t seq_bytes[32] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};
static const uint8_t sha_bytes[32] = {
	0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
	0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef,
};

static const struct opt_case cases[] = {
	/* ---- load-option lines: every key ---- */
	{ "empty line", SRC_LINE, "", .want = LDR_OK },
	{ "only spaces", SRC_LINE, "  \t  ", .want = LDR_OK },
	{ "kernel=", SRC_LINE, "kernel=\\boot\\vmlinux", .want = LDR_OK, .kernel = "\\boot\\vmlinux" },
	{ "verbose", SRC_LINE, "verbose", .want = LDR_OK, .verbose = 1 },
	{ "verbose=1", SRC_LINE, "verbose=1", .want = LDR_OK, .verbose = 1 },
	{ "verbose=0", SRC_LINE, "verbose verbose=0", .want = LDR_OK },
	{ "nokaslr", SRC_LINE, "nokaslr", .want = LDR_OK, .nokaslr = 1 },
	{ "nokaslr=1 verbose", SRC_LINE, "nokaslr=1 verbose", .want = LDR_OK, .nokaslr = 1,
	  .verbose = 1 },
	{ "kaslr.seed=", SRC_LINE, "kaslr.seed=" HEX_SEQ, .want = LDR_OK, .seed = 1 },
	{ "sha256=", SRC_LINE, "sha256=" HEX_SHA, .want = LDR_OK, .sha = 1 },
	{ "kaslr.min=32M", SRC_LINE, "kaslr.min=32M", .want = LDR_OK, .min = 32 * MIB },
	{ "kaslr.min=0x2000000", SRC_LINE, "kaslr.min=0x2000000", .want = LDR_OK, .min = 32 * MIB },
	{ "kaslr.min=4096K", SRC_LINE, "kaslr.min=4096K", .want = LDR_OK, .min = 4 * MIB },
	{ "kaslr.max=4G", SRC_LINE, "kaslr.max=4G", .want = LDR_OK, .max = 4 * GIB },
	{ "kaslr.max=decimal", SRC_LINE, "kaslr.max=1073741824", .want = LDR_OK, .max = 1 * GIB },
	{ "kaslr.maxsize=64M", SRC_LINE, "kaslr.maxsize=64m", .want = LDR_OK, .maxsize = 64 * MIB },
	{ "kaslr.maxsize=1g", SRC_LINE, "kaslr.maxsize=1g", .want = LDR_OK, .maxsize = 1 * GIB },
	{ "all keys", SRC_LINE,
	  "kernel=k.elf verbose nokaslr kaslr.seed=" HEX_SEQ " sha256=" HEX_SHA
	  " kaslr.min=2G kaslr.max=0x100000000 kaslr.maxsize=100M -- console=ttyS0 quiet",
	  .want = LDR_OK, .kernel = "k.elf", .cmdline = "console=ttyS0 quiet", .verbose = 1,
	  .nokaslr = 1, .seed = 1, .sha = 1, .min = 2 * GIB, .max = 4 * GIB,
	  .maxsize = 100 * MIB },
	{ "kernel twice: a list, the first tried first", SRC_LINE, "kernel=a.elf kernel=b.elf",
	  .want = LDR_OK, .kernel = "a.elf", .kernel2 = "b.elf" },
	{ "later key wins", SRC_LINE, "kaslr.min=1G kaslr.min=2G", .want = LDR_OK,
	  .min = 2 * GIB },

	/* ---- "--": the rest of the line, trimmed, is the command line ---- */
	{ "-- rest", SRC_LINE, "verbose -- root=/dev/sda1 verbose=5 x=y", .want = LDR_OK,
	  .verbose = 1, .cmdline = "root=/dev/sda1 verbose=5 x=y" },
	{ "-- keeps inner spaces", SRC_LINE, "--   a  b\t  ", .want = LDR_OK, .cmdline = "a  b" },
	{ "-- with nothing", SRC_LINE, "nokaslr --", .want = LDR_OK, .nokaslr = 1 },
	{ "-- keeps # and --", SRC_LINE, "-- a # b -- c", .want = LDR_OK, .cmdline = "a # b -- c" },
	{ "--x is a key", SRC_LINE, "--x", .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "--x" },

	/* ---- image path skipped as the first word ---- */
	{ "image path", SRC_LINE, "\\EFI\\BOOT\\BOOTX64.EFI verbose", .want = LDR_OK, .verbose = 1 },
	{ "shell path", SRC_LINE, "fs0:\\x.efi nokaslr", .want = LDR_OK, .nokaslr = 1 },
	{ "image path only", SRC_LINE, "\\EFI\\kaslr\\loader.efi", .want = LDR_OK },
	{ "image path, leading blank", SRC_LINE, "  loader.Efi\tverbose", .want = LDR_OK,
	  .verbose = 1 },
	{ "image path then --", SRC_LINE, "BOOTX64.EFI -- quiet", .want = LDR_OK,
	  .cmdline = "quiet" },
	{ ".efi second word", SRC_LINE, "verbose \\x.efi", .want = LDR_E_OPT_UNKNOWN_ARG,
	  .bad = "\\x.efi" },
	{ "not .efi", SRC_LINE, "loader.efx verbose", .want = LDR_E_OPT_UNKNOWN_ARG,
	  .bad = "loader.efx" },
	{ ".efi with =", SRC_LINE, "x.efi=1", .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "x.efi" },

	/* ---- separators ---- */
	{ "tabs and newlines", SRC_LINE, "\tverbose\n\nnokaslr\r\nkernel=k\t", .want = LDR_OK,
	  .verbose = 1, .nokaslr = 1, .kernel = "k" },
	{ "NUL ends the line", SRC_LINE, "verbose\0nokaslr", 15, .want = LDR_OK, .verbose = 1 },
	{ "NUL inside a word", SRC_LINE, "kernel=ab\0cd", 12, .want = LDR_OK, .kernel = "ab" },
	{ "NUL ends the -- command line", SRC_LINE, "-- quiet\0junk", 14, .want = LDR_OK,
	  .cmdline = "quiet" },
	{ "config: NUL ends the text", SRC_CONFIG, "cmdline a b\0c\nverbose\n", 20, .want = LDR_OK,
	  .cmdline = "a b" },
	{ "len shorter than text", SRC_LINE, "verbose nokaslr", 7, .want = LDR_OK, .verbose = 1 },

	/* ---- unknown keys and bad values name the key ---- */
	{ "unknown key", SRC_LINE, "verbose frob=1", .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "frob" },
	{ "unknown word", SRC_LINE, "bogus", .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "bogus" },
	{ "key case matters", SRC_LINE, "Verbose", .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "Verbose" },
	{ "long unknown key cut", SRC_LINE, "abcdefghijklmnopqrstuvwxyz0123456789=1",
	  .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "abcdefghijklmnopqrstuvwxyz012345" },
	{ "=value alone", SRC_LINE, "=1", .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "" },
	{ "verbose=2", SRC_LINE, "verbose=2", .want = LDR_E_OPT_VALUE, .bad = "verbose" },
	{ "verbose=", SRC_LINE, "verbose=", .want = LDR_E_OPT_VALUE, .bad = "verbose" },
	{ "nokaslr=yes", SRC_LINE, "nokaslr=yes", .want = LDR_E_OPT_VALUE, .bad = "nokaslr" },
	{ "kernel alone", SRC_LINE, "kernel", .want = LDR_E_OPT_VALUE, .bad = "kernel" },
	{ "kernel=", SRC_LINE, "kernel=", .want = LDR_E_OPT_VALUE, .bad = "kernel" },
	{ "seed 63 digits", SRC_LINE, "kaslr.seed=" HEX_SEQ "0", .want = LDR_E_OPT_HEX,
	  .bad = "kaslr.seed" },
	{ "seed 62 digits", SRC_LINE,
	  "kaslr.seed=000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E",
	  .want = LDR_E_OPT_HEX, .bad = "kaslr.seed" },
	{ "seed non-hex", SRC_LINE,
	  "kaslr.seed=g00102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1",
	  .want = LDR_E_OPT_HEX, .bad = "kaslr.seed" },
	{ "sha256 short", SRC_LINE, "sha256=abcd", .want = LDR_E_OPT_HEX, .bad = "sha256" },
	{ "kaslr.min junk", SRC_LINE, "kaslr.min=16Q", .want = LDR_E_OPT_VALUE, .bad = "kaslr.min" },
	{ "kaslr.max overflow", SRC_LINE, "kaslr.max=17179869184G", .want = LDR_E_OPT_VALUE,
	  .bad = "kaslr.max" },
	{ "kaslr.maxsize=0", SRC_LINE, "kaslr.maxsize=0", .want = LDR_E_OPT_VALUE,
	  .bad = "kaslr.maxsize" },
	{ "kaslr.maxsize=", SRC_LINE, "kaslr.maxsize=", .want = LDR_E_OPT_VALUE,
	  .bad = "kaslr.maxsize" },
	{ "cmdline= on the line", SRC_LINE, "cmdline=quiet", .want = LDR_OK, .cmdline = "quiet" },

	/* ---- kaslr.conf ---- */
	{ "config: all keys", SRC_CONFIG,
	  "# kaslr.conf\n"
	  "kernel \\EFI\\kaslr\\kernel.elf\n"
	  "verbose\n"
	  "nokaslr 1\n"
	  "kaslr.seed " HEX_SEQ "\n"
	  "sha256\t" HEX_SHA "\n"
	  "kaslr.min 0x4000000\n"
	  "kaslr.max 8G\n"
	  "kaslr.maxsize 256M\n"
	  "cmdline console=ttyS0,115200 root=/dev/vda\n",
	  .want = LDR_OK, .kernel = "\\EFI\\kaslr\\kernel.elf", .verbose = 1, .nokaslr = 1,
	  .seed = 1, .sha = 1, .min = 64 * MIB, .max = 8 * GIB, .maxsize = 256 * MIB,
	  .cmdline = "console=ttyS0,115200 root=/dev/vda" },
	{ "config: empty", SRC_CONFIG, "", .want = LDR_OK },
	{ "config: comments and blanks", SRC_CONFIG,
	  "\n\n# only comments\n   # indented\n\t\n#verbose\n", .want = LDR_OK },
	{ "config: CRLF", SRC_CONFIG, "verbose\r\nkernel k.elf\r\ncmdline a b\r\n", .want = LDR_OK,
	  .verbose = 1, .kernel = "k.elf", .cmdline = "a b" },
	{ "config: no final newline", SRC_CONFIG, "nokaslr\nkernel last.elf", .want = LDR_OK,
	  .nokaslr = 1, .kernel = "last.elf" },
	{ "config: trailing comment", SRC_CONFIG, "kernel k.elf   # the kernel\nverbose # loud\n",
	  .want = LDR_OK, .kernel = "k.elf", .verbose = 1 },
	{ "config: comment glued to key", SRC_CONFIG, "verbose#loud\n", .want = LDR_OK,
	  .verbose = 1 },
	{ "config: cmdline keeps #", SRC_CONFIG, "cmdline init=/bin/sh # not a comment  \n",
	  .want = LDR_OK, .cmdline = "init=/bin/sh # not a comment" },
	{ "config: value with spaces", SRC_CONFIG, "kernel \\my kernels\\k 1.elf\n",
	  .want = LDR_OK, .kernel = "\\my kernels\\k 1.elf" },
	{ "config: tabs", SRC_CONFIG, "\tkaslr.min\t\t16M\t\n", .want = LDR_OK, .min = 16 * MIB },
	{ "config: -- is not special", SRC_CONFIG, "-- quiet\n", .want = LDR_E_OPT_UNKNOWN,
	  .bad = "--" },
	{ "config: unknown key", SRC_CONFIG, "verbose\nfrobnicate 3\n", .want = LDR_E_OPT_UNKNOWN,
	  .bad = "frobnicate" },
	{ "config: bare unknown word", SRC_CONFIG, "# x\nfrobnicate\n", .want = LDR_E_OPT_UNKNOWN,
	  .bad = "frobnicate" },
	{ "config: bad value", SRC_CONFIG, "kaslr.max lots\n", .want = LDR_E_OPT_VALUE,
	  .bad = "kaslr.max" },
	{ "config: value only a comment", SRC_CONFIG, "kernel # none\n", .want = LDR_E_OPT_VALUE,
	  .bad = "kernel" },
	{ "config: cmdline empty", SRC_CONFIG, "cmdline\n", .want = LDR_E_OPT_VALUE,
	  .bad = "cmdline" },
	{ "config: verbose 2", SRC_CONFIG, "verbose 2\n", .want = LDR_E_OPT_VALUE, .bad = "verbose",
	  .line = 1 },

	/* ---- what newcomers write ---- */
	{ "config: UTF-8 BOM skipped", SRC_CONFIG, "\xef\xbb\xbfkernel k.elf\nverbose\n",
	  .want = LDR_OK, .kernel = "k.elf", .verbose = 1 },
	{ "config: BOM alone", SRC_CONFIG, "\xef\xbb\xbf", .want = LDR_OK },
	{ "config: BOM not at the start", SRC_CONFIG, "verbose\n\xef\xbb\xbfkernel k\n",
	  .want = LDR_E_OPT_UNKNOWN, .bad = "\xef\xbb\xbfkernel", .line = 2 },
	{ "config: kernel=", SRC_CONFIG, "# mine\nkernel=kernel.elf\n", .want = LDR_E_OPT_CONF_EQUALS,
	  .bad = "kernel=kernel.elf", .line = 2 },
	{ "config: kaslr.min=16M", SRC_CONFIG, "\n\n\nkaslr.min=16M\n",
	  .want = LDR_E_OPT_CONF_EQUALS, .bad = "kaslr.min=16M", .line = 4 },
	{ "config: frob=1 is just unknown", SRC_CONFIG, "frob=1\n", .want = LDR_E_OPT_UNKNOWN,
	  .bad = "frob=1", .line = 1 },
	{ "config: line after blank lines and CRLF", SRC_CONFIG,
	  "verbose\r\n\r\n  \t\n# c\nkaslr.seed 12\r\n", .want = LDR_E_OPT_HEX,
	  .bad = "kaslr.seed", .line = 5 },
	{ "line: kernel argument without --", SRC_LINE, "kernel=k.elf console=ttyS0",
	  .want = LDR_E_OPT_UNKNOWN_ARG, .bad = "console" },
	{ "line: bad seed says the format", SRC_LINE, "kaslr.seed=1234", .want = LDR_E_OPT_HEX,
	  .bad = "kaslr.seed" },
};

static int str_eq(const char *got, const char *want)
{
	return strcmp(got, want ? want : "") == 0;
}

static void check_fields(const char *name, const struct ldr_options *o,
			 const struct opt_case *c)
{
	struct ldr_options d;

	options_defaults(&d);
	CHECK_EQ_U64(o->nkernels, c->kernel2 ? 2 : c->kernel ? 1 : 0, "%s: kernels", name);
	CHECK(str_eq(options_kernel(o, 0), c->kernel), "%s: kernel '%s'", name,
	      options_kernel(o, 0));
	CHECK(str_eq(options_kernel(o, 1), c->kernel2), "%s: second kernel '%s'", name,
	      options_kernel(o, 1));
	CHECK(str_eq(o->cmdline, c->cmdline), "%s: cmdline '%s'", name, o->cmdline);
	CHECK_EQ_U64(o->cmdline_len, strlen(o->cmdline), "%s: cmdline_len", name);
	CHECK_EQ_U64(o->verbose, c->verbose, "%s: verbose", name);
	CHECK_EQ_U64(o->nokaslr, c->nokaslr, "%s: nokaslr", name);
	CHECK_EQ_U64(o->have_seed, c->seed, "%s: have_seed", name);
	if (c->seed)
		CHECK(memcmp(o->seed, seq_bytes, 32) == 0, "%s: seed bytes", name);
	CHECK_EQ_U64(o->have_sha256, c->sha, "%s: have_sha256", name);
	if (c->sha)
		CHECK(memcmp(o->sha256, sha_bytes, 32) == 0, "%s: sha256 bytes", name);
	CHECK_EQ_U64(o->min_addr, c->min ? c->min : d.min_addr, "%s: min_addr", name);
	CHECK_EQ_U64(o->max_addr, c->max ? c->max : d.max_addr, "%s: max_addr", name);
	CHECK_EQ_U64(o->max_kernel, c->maxsize ? c->maxsize : d.max_kernel, "%s: max_kernel",
		     name);
}

TEST(test_table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct opt_case *c = &cases[i];
		size_t len = c->len ? c->len : strlen(c->text);
		struct ldr_options o;
		enum ldr_err err;
		char *copy = malloc(len ? len : 1);

		/* an exact-size heap copy: ASan sees any read past len */
		memcpy(copy, c->text, len);
		options_defaults(&o);
		err = c->src == SRC_LINE ? options_parse_line(&o, copy, len)
					 : options_parse_config(&o, copy, len);
		CHECK_EQ_U64(err, c->want, "%s: error", c->name);
		if (err == LDR_OK && c->want == LDR_OK)
			check_fields(c->name, &o, c);
		if (c->want != LDR_OK)
			CHECK(str_eq(o.bad, c->bad), "%s: bad '%s', want '%s'", c->name, o.bad,
			      c->bad ? c->bad : "");
		if (c->want != LDR_OK && c->line)
			CHECK_EQ_U64(o.bad_line, c->line, "%s: line", c->name);
		free(copy);
	}
}

TEST(test_defaults)
{
	struct ldr_options o;

	memset(&o, 0x5a, sizeof(o));
	options_defaults(&o);
	CHECK(o.nkernels == 0 && o.ninitrd == 0 && options_kernel_count(&o) == 1 &&
	      options_kernel(&o, 0)[0] == 0, "defaults: the default kernel alone");
	CHECK(o.cmdline[0] == 0 && o.cmdline_len == 0, "defaults: empty strings");
	CHECK(!o.verbose && !o.nokaslr && !o.have_seed && !o.have_sha256, "defaults: flags off");
	CHECK_EQ_U64(o.min_addr, 16 * MIB, "defaults: kaslr.min");
	CHECK_EQ_U64(o.max_addr, 0, "defaults: kaslr.max");
	CHECK_EQ_U64(o.max_kernel, 512 * MIB, "defaults: kaslr.maxsize");
	CHECK(o.bad[0] == 0, "defaults: bad empty");
}

/* kaslr.min=0 is allowed (the table uses 0 for "default"). */
TEST(test_min_zero)
{
	struct ldr_options o;

	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, "kaslr.min=0", 11), LDR_OK, "kaslr.min=0");
	CHECK_EQ_U64(o.min_addr, 0, "kaslr.min=0 value");
}

/* Lengths at and past the limits. */
TEST(test_too_long)
{
	char *t = malloc(OPT_TEXT_MAX + 2 * OPT_CMDLINE_MAX);
	struct ldr_options o;
	size_t n;

	/* kernel path: OPT_PATH_MAX - 1 fits, OPT_PATH_MAX does not */
	for (int extra = 0; extra < 2; extra++) {
		n = (size_t)sprintf(t, "kernel=");
		memset(t + n, 'k', OPT_PATH_MAX - 1 + extra);
		n += OPT_PATH_MAX - 1 + extra;
		options_defaults(&o);
		CHECK_EQ_U64(options_parse_line(&o, t, n), extra ? LDR_E_OPT_TOO_LONG : LDR_OK,
			     "kernel path of %d", OPT_PATH_MAX - 1 + extra);
		if (extra)
			CHECK(str_eq(o.bad, "kernel"), "long kernel: bad '%s'", o.bad);
		else
			CHECK_EQ_U64(strlen(o.kernels[0]), OPT_PATH_MAX - 1, "long kernel kept");
	}
	/* command line after --: OPT_CMDLINE_MAX - 1 fits */
	for (int extra = 0; extra < 2; extra++) {
		n = (size_t)sprintf(t, "verbose -- ");
		memset(t + n, 'c', OPT_CMDLINE_MAX - 1 + extra);
		n += OPT_CMDLINE_MAX - 1 + extra;
		options_defaults(&o);
		CHECK_EQ_U64(options_parse_line(&o, t, n), extra ? LDR_E_OPT_TOO_LONG : LDR_OK,
			     "-- cmdline of %d", OPT_CMDLINE_MAX - 1 + extra);
		if (extra) {
			CHECK(str_eq(o.bad, "--"), "long cmdline: bad '%s'", o.bad);
		} else {
			CHECK_EQ_U64(o.cmdline_len, OPT_CMDLINE_MAX - 1, "long cmdline length");
			CHECK_EQ_U64(strlen(o.cmdline), o.cmdline_len, "long cmdline strlen");
		}
	}
	/* config cmdline */
	n = (size_t)sprintf(t, "cmdline ");
	memset(t + n, 'c', OPT_CMDLINE_MAX);
	n += OPT_CMDLINE_MAX;
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, t, n), LDR_E_OPT_TOO_LONG, "config cmdline too long");
	CHECK(str_eq(o.bad, "cmdline"), "config long cmdline: bad '%s'", o.bad);
	/* whole text: OPT_TEXT_MAX of blanks is fine, one more byte is not */
	memset(t, ' ', OPT_TEXT_MAX + 1);
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, t, OPT_TEXT_MAX), LDR_OK, "line of OPT_TEXT_MAX");
	CHECK_EQ_U64(options_parse_line(&o, t, OPT_TEXT_MAX + 1), LDR_E_OPT_TOO_LONG,
		     "line over OPT_TEXT_MAX");
	CHECK_EQ_U64(options_parse_config(&o, t, OPT_TEXT_MAX), LDR_OK, "config of OPT_TEXT_MAX");
	CHECK_EQ_U64(options_parse_config(&o, t, OPT_TEXT_MAX + 1), LDR_E_OPT_TOO_LONG,
		     "config over OPT_TEXT_MAX");
	free(t);
}

/* Config first, then the load options on top: the line wins key by key. */
TEST(test_override)
{
	static const char conf[] =
		"kernel \\conf.elf\n"
		"verbose\n"
		"kaslr.min 32M\n"
		"kaslr.maxsize 100M\n"
		"cmdline from=config\n";
	static const char line[] = "\\EFI\\BOOT\\BOOTX64.EFI kernel=\\line.elf verbose=0 "
				   "kaslr.max=2G -- from=line";
	struct ldr_options o;

	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, conf, sizeof(conf) - 1), LDR_OK, "override: config");
	CHECK_EQ_U64(options_parse_line(&o, line, sizeof(line) - 1), LDR_OK, "override: line");
	CHECK(o.nkernels == 1 && str_eq(o.kernels[0], "\\line.elf"), "override: kernel '%s'",
	      o.kernels[0]);
	CHECK_EQ_U64(o.verbose, 0, "override: verbose");
	CHECK_EQ_U64(o.min_addr, 32 * MIB, "override: kaslr.min kept from config");
	CHECK_EQ_U64(o.max_addr, 2 * GIB, "override: kaslr.max from line");
	CHECK_EQ_U64(o.max_kernel, 100 * MIB, "override: kaslr.maxsize kept");
	CHECK(str_eq(o.cmdline, "from=line"), "override: cmdline '%s'", o.cmdline);
	CHECK_EQ_U64(o.cmdline_len, 9, "override: cmdline_len");

	/* a line without "--" leaves the config's command line alone */
	options_defaults(&o);
	options_parse_config(&o, conf, sizeof(conf) - 1);
	CHECK_EQ_U64(options_parse_line(&o, "nokaslr", 7), LDR_OK, "override: nokaslr");
	CHECK(str_eq(o.cmdline, "from=config") && o.cmdline_len == 11 && o.nokaslr && o.verbose,
	      "override: config cmdline kept");
	/* "--" with nothing after it clears the command line */
	CHECK_EQ_U64(options_parse_line(&o, "--", 2), LDR_OK, "override: --");
	CHECK(o.cmdline[0] == 0 && o.cmdline_len == 0, "override: -- clears the cmdline");
}

/* ---- UCS-2 ---- */

struct ucs_case {
	const char *name;
	uint16_t chars[24];
	size_t nchars;     /* code units to encode */
	int odd;           /* add one stray byte */
	size_t cap;
	enum ldr_err want;
	const char *text;  /* on success */
	size_t index;      /* on LDR_E_OPT_ENCODING */
};

#define U(...) { __VA_ARGS__ }, sizeof((uint16_t[]){ __VA_ARGS__ }) / 2

static const struct ucs_case ucs_cases[] = {
	{ "terminated", U('v', 'e', 'r', 'b', 'o', 's', 'e', 0), 0, 64, LDR_OK, "verbose", 0 },
	{ "no terminator", U('n', 'o', 'k', 'a', 's', 'l', 'r'), 0, 64, LDR_OK, "nokaslr", 0 },
	{ "odd byte count", U('a', 'b', 'c'), 1, 64, LDR_OK, "abc", 0 },
	{ "odd, terminated", U('a', 0), 1, 64, LDR_OK, "a", 0 },
	{ "empty", U(0), 0, 64, LDR_OK, "", 0 },
	{ "embedded NUL", U('a', 'b', 0, 'c', 'd', 0), 0, 64, LDR_OK, "ab", 0 },
	{ "NUL then junk", U('x', 0, 0x00e9, 0xffff), 0, 64, LDR_OK, "x", 0 },
	{ "tab CR LF", U('a', '\t', 'b', '\r', '\n', 'c'), 0, 64, LDR_OK, "a b  c", 0 },
	{ "all printable", U(' ', '~', '\\', ':', '=', '#', '-'), 0, 64, LDR_OK, " ~\\:=#-", 0 },
	{ "e acute", U('a', 'b', 'c', 0x00e9, 'd'), 0, 64, LDR_E_OPT_ENCODING, NULL, 3 },
	{ "first char", U(0x263a, 'a'), 0, 64, LDR_E_OPT_ENCODING, NULL, 0 },
	{ "high byte set", U('a', 0x0161), 0, 64, LDR_E_OPT_ENCODING, NULL, 1 },
	{ "surrogate", U('a', 'b', 0xd83d, 0xde00), 0, 64, LDR_E_OPT_ENCODING, NULL, 2 },
	{ "control char", U('a', 0x01), 0, 64, LDR_E_OPT_ENCODING, NULL, 1 },
	{ "escape", U(0x1b, '['), 0, 64, LDR_E_OPT_ENCODING, NULL, 0 },
	{ "DEL", U('a', 'b', 0x7f), 0, 64, LDR_E_OPT_ENCODING, NULL, 2 },
	{ "vertical tab", U(0x0b), 0, 64, LDR_E_OPT_ENCODING, NULL, 0 },
	{ "fits cap exactly", U('1', '2', '3', '4', '5', '6', '7'), 0, 8, LDR_OK, "1234567", 0 },
	{ "fits cap, terminated", U('1', '2', '3', '4', '5', '6', '7', 0, 'x'), 0, 8, LDR_OK,
	  "1234567", 0 },
	{ "one over cap", U('1', '2', '3', '4', '5', '6', '7', '8'), 0, 8, LDR_E_OPT_TOO_LONG,
	  NULL, 0 },
	{ "cap 1", U('a'), 0, 1, LDR_E_OPT_TOO_LONG, NULL, 0 },
	{ "cap 1, empty", U(0), 0, 1, LDR_OK, "", 0 },
};

TEST(test_ucs2)
{
	for (size_t i = 0; i < sizeof(ucs_cases) / sizeof(ucs_cases[0]); i++) {
		const struct ucs_case *c = &ucs_cases[i];
		size_t nbytes = 2 * c->nchars + (size_t)c->odd;
		uint8_t *b = malloc(nbytes ? nbytes : 1);
		char *out = malloc(c->cap);
		size_t len = 12345;
		enum ldr_err err;

		for (size_t k = 0; k < c->nchars; k++) {
			b[2 * k] = (uint8_t)c->chars[k];
			b[2 * k + 1] = (uint8_t)(c->chars[k] >> 8);
		}
		if (c->odd)
			b[nbytes - 1] = 'Z';
		err = options_from_ucs2(b, nbytes, out, c->cap, &len);
		CHECK_EQ_U64(err, c->want, "ucs2 %s: error", c->name);
		if (err == LDR_OK && c->want == LDR_OK) {
			CHECK(strcmp(out, c->text) == 0, "ucs2 %s: '%s'", c->name, out);
			CHECK_EQ_U64(len, strlen(c->text), "ucs2 %s: length", c->name);
		}
		if (c->want == LDR_E_OPT_ENCODING)
			CHECK_EQ_U64(len, c->index, "ucs2 %s: index", c->name);
		free(b);
		free(out);
	}
	/* nbytes 0 and 1: empty text */
	{
		char out[4] = "zzz";
		size_t len = 9;

		CHECK_EQ_U64(options_from_ucs2("v", 1, out, sizeof(out), &len), LDR_OK, "ucs2 1 byte");
		CHECK(out[0] == 0 && len == 0, "ucs2 1 byte: empty");
		CHECK_EQ_U64(options_from_ucs2(NULL, 0, out, sizeof(out), &len), LDR_OK,
			     "ucs2 0 bytes");
		CHECK_EQ_U64(options_from_ucs2("a\0", 2, out, 0, &len), LDR_E_INVAL, "ucs2 cap 0");
	}
	/* the size systemd-boot passes: OPT_TEXT_MAX characters do not fit a
	 * buffer of OPT_TEXT_MAX, OPT_TEXT_MAX - 1 do */
	{
		size_t n = OPT_TEXT_MAX;
		uint8_t *b = malloc(2 * n);
		char *out = malloc(OPT_TEXT_MAX);
		size_t len = 0;

		for (size_t k = 0; k < n; k++) {
			b[2 * k] = 'a';
			b[2 * k + 1] = 0;
		}
		CHECK_EQ_U64(options_from_ucs2(b, 2 * n, out, OPT_TEXT_MAX, &len), LDR_E_OPT_TOO_LONG,
			     "ucs2 OPT_TEXT_MAX chars");
		CHECK_EQ_U64(options_from_ucs2(b, 2 * (n - 1), out, OPT_TEXT_MAX, &len), LDR_OK,
			     "ucs2 OPT_TEXT_MAX - 1 chars");
		CHECK_EQ_U64(len, n - 1, "ucs2 OPT_TEXT_MAX - 1 length");
		free(b);
		free(out);
	}
}

/* UCS-2 straight into the line parser, as efi/main.c does. */
TEST(test_ucs2_then_line)
{
	static const char src[] = "\\EFI\\BOOT\\BOOTX64.EFI\tkaslr.min=64M\r\n-- console=ttyS0";
	uint8_t b[2 * sizeof(src)];
	char text[OPT_TEXT_MAX];
	struct ldr_options o;
	size_t len;

	for (size_t k = 0; k < sizeof(src); k++) {
		b[2 * k] = (uint8_t)src[k];
		b[2 * k + 1] = 0;
	}
	CHECK_EQ_U64(options_from_ucs2(b, sizeof(b), text, sizeof(text), &len), LDR_OK,
		     "ucs2+line: convert");
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, text, len), LDR_OK, "ucs2+line: parse");
	CHECK_EQ_U64(o.min_addr, 64 * MIB, "ucs2+line: kaslr.min");
	CHECK(str_eq(o.cmdline, "console=ttyS0"), "ucs2+line: cmdline '%s'", o.cmdline);
}

/* ---- sizes ---- */

struct size_case {
	const char *s;
	enum ldr_err want;
	uint64_t v;
};

static const struct size_case size_cases[] = {
	{ "0", LDR_OK, 0 },
	{ "1", LDR_OK, 1 },
	{ "123456789", LDR_OK, 123456789 },
	{ "4k", LDR_OK, 4 * KIB },
	{ "4K", LDR_OK, 4 * KIB },
	{ "16M", LDR_OK, 16 * MIB },
	{ "16m", LDR_OK, 16 * MIB },
	{ "3G", LDR_OK, 3 * GIB },
	{ "3g", LDR_OK, 3 * GIB },
	{ "0K", LDR_OK, 0 },
	{ "0x0", LDR_OK, 0 },
	{ "0x1000", LDR_OK, 4 * KIB },
	{ "0X1000", LDR_OK, 4 * KIB },
	{ "0xdeadBEEF", LDR_OK, 0xdeadbeefULL },
	{ "00012", LDR_OK, 12 },
	{ "18446744073709551615", LDR_OK, UINT64_MAX },
	{ "0xffffffffffffffff", LDR_OK, UINT64_MAX },
	{ "17179869183G", LDR_OK, 17179869183ULL * GIB },
	{ "18014398509481983K", LDR_OK, 18014398509481983ULL * KIB },
	{ "18446744073709551616", LDR_E_OPT_VALUE, 0 },
	{ "99999999999999999999", LDR_E_OPT_VALUE, 0 },
	{ "0x10000000000000000", LDR_E_OPT_VALUE, 0 },
	{ "17179869184G", LDR_E_OPT_VALUE, 0 },
	{ "18014398509481984K", LDR_E_OPT_VALUE, 0 },
	{ "", LDR_E_OPT_VALUE, 0 },
	{ "K", LDR_E_OPT_VALUE, 0 },
	{ "M", LDR_E_OPT_VALUE, 0 },
	{ "0x", LDR_E_OPT_VALUE, 0 },
	{ "0xg", LDR_E_OPT_VALUE, 0 },
	{ "0x10M", LDR_E_OPT_VALUE, 0 },
	{ "12a", LDR_E_OPT_VALUE, 0 },
	{ "12KB", LDR_E_OPT_VALUE, 0 },
	{ "16T", LDR_E_OPT_VALUE, 0 },
	{ "-1", LDR_E_OPT_VALUE, 0 },
	{ "+1", LDR_E_OPT_VALUE, 0 },
	{ " 1", LDR_E_OPT_VALUE, 0 },
	{ "1 ", LDR_E_OPT_VALUE, 0 },
	{ "1.5G", LDR_E_OPT_VALUE, 0 },
	{ "1_000", LDR_E_OPT_VALUE, 0 },
};

TEST(test_sizes)
{
	for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		const struct size_case *c = &size_cases[i];
		size_t n = strlen(c->s);
		char *copy = malloc(n ? n : 1);
		uint64_t v = 0xabababab;
		enum ldr_err err;

		memcpy(copy, c->s, n);
		err = options_parse_size(copy, n, &v);
		CHECK_EQ_U64(err, c->want, "size '%s'", c->s);
		if (c->want == LDR_OK)
			CHECK_EQ_U64(v, c->v, "size '%s' value", c->s);
		else
			CHECK_EQ_U64(v, 0xabababab, "size '%s': ret written on error", c->s);
		free(copy);
	}
	/* len, not the NUL, ends the number */
	{
		uint64_t v = 0;

		CHECK_EQ_U64(options_parse_size("16M trailing", 3, &v), LDR_OK, "size by len");
		CHECK_EQ_U64(v, 16 * MIB, "size by len value");
	}
}

/* the messages a newcomer reads, word for word */
TEST(test_messages)
{
	CHECK(strcmp(ldr_strerror(LDR_E_OPT_CONF_EQUALS),
		     "kaslr.conf lines are \"key value\", not key=value") == 0, "key=value in conf");
	CHECK(strcmp(ldr_err_hint_of(LDR_E_OPT_UNKNOWN_ARG),
		     "the kernel's own arguments go after \"--\" (kernel=FILE -- console=ttyS0)") == 0,
	      "missing --");
	CHECK(strcmp(ldr_strerror(LDR_E_OPT_HEX),
		     "bad value: expected exactly 64 hex digits (32 bytes)") == 0, "hex format");
}

/* initrd=PATH[:sha256=HEX], repeatable, in order, from both sources */
TEST(test_initrd)
{
	struct ldr_options o;
	const char *line = "initrd=\\boot\\a.img initrd=b.img:sha256=" HEX_SHA " -- x";
	const char *conf = "initrd \\boot\\one two.img\ninitrd c.img:sha256=" HEX_SHA "\n";

	options_defaults(&o);
	CHECK(options_parse_line(&o, line, strlen(line)) == LDR_OK, "line parses");
	CHECK(o.ninitrd == 2, "two initrds: %u", o.ninitrd);
	CHECK(strcmp(o.initrd[0].path, "\\boot\\a.img") == 0 && !o.initrd[0].have_sha256,
	      "first, unpinned");
	CHECK(strcmp(o.initrd[1].path, "b.img") == 0 && o.initrd[1].have_sha256 &&
	      memcmp(o.initrd[1].sha256, sha_bytes, 32) == 0, "second, pinned");

	options_defaults(&o);
	CHECK(options_parse_config(&o, conf, strlen(conf)) == LDR_OK, "config parses");
	CHECK(o.ninitrd == 2 && strcmp(o.initrd[0].path, "\\boot\\one two.img") == 0 &&
	      strcmp(o.initrd[1].path, "c.img") == 0 && o.initrd[1].have_sha256,
	      "config: in order, spaces kept, pin read");

	options_defaults(&o);
	CHECK(options_parse_line(&o, "initrd=x:sha256=12", 18) == LDR_E_OPT_HEX,
	      "a short pin is a bad pin, not part of the path");
	CHECK(options_parse_line(&o, "initrd=", 7) == LDR_E_OPT_VALUE, "empty");
	CHECK(options_parse_line(&o, "initrd=:sha256=" HEX_SHA, 15 + 64) == LDR_E_OPT_VALUE,
	      "a pin without a path");
	options_defaults(&o);
	for (unsigned i = 0; i < OPT_INITRD_MAX; i++)
		CHECK(options_parse_line(&o, "initrd=i", 8) == LDR_OK, "initrd %u fits", i);
	CHECK(options_parse_line(&o, "initrd=i", 8) == LDR_E_OPT_TOO_MANY, "one too many");
}

/* ---- modules ---- */

struct mod_want {
	const char *path, *string;
	int pin;
};

struct mod_case {
	const char *name;
	enum opt_src src;
	const char *text;
	enum ldr_err want;
	unsigned n;
	struct mod_want m[3];
};

static const struct mod_case mod_cases[] = {
	{ "path only", SRC_LINE, "module=\\m1.bin", LDR_OK, 1, { { "\\m1.bin", "", 0 } } },
	{ "path and string", SRC_LINE, "module=m.bin,initrd", LDR_OK, 1,
	  { { "m.bin", "initrd", 0 } } },
	{ "empty string", SRC_LINE, "module=m.bin,", LDR_OK, 1, { { "m.bin", "", 0 } } },
	{ "pinned", SRC_LINE, "module=m.bin:sha256=" HEX_SHA ",a,b=c:d", LDR_OK, 1,
	  { { "m.bin", "a,b=c:d", 1 } } },
	{ "pinned, no string", SRC_LINE, "module=\\d\\m.bin:sha256=" HEX_SHA, LDR_OK, 1,
	  { { "\\d\\m.bin", "", 1 } } },
	{ "a string that looks like a pin is a string", SRC_LINE,
	  "module=m.bin,:sha256=" HEX_SHA, LDR_OK, 1, { { "m.bin", ":sha256=" HEX_SHA, 0 } } },
	{ "repeated, in order", SRC_LINE, "module=a,x verbose module=b,y -- k", LDR_OK, 2,
	  { { "a", "x", 0 }, { "b", "y", 0 } } },
	{ "config: rest of the line, # included", SRC_CONFIG,
	  "module \\m1.bin   my string # not a comment  \n", LDR_OK, 1,
	  { { "\\m1.bin", "my string # not a comment", 0 } } },
	{ "config: pinned, comma", SRC_CONFIG,
	  "module m.bin:sha256=" HEX_SHA ",x y\nmodule n.bin\n", LDR_OK, 2,
	  { { "m.bin", "x y", 1 }, { "n.bin", "", 0 } } },
	{ "empty value", SRC_LINE, "module=", LDR_E_OPT_VALUE, 0, { { 0 } } },
	{ "alone", SRC_LINE, "module", LDR_E_OPT_VALUE, 0, { { 0 } } },
	{ "pin without a path", SRC_LINE, "module=:sha256=" HEX_SHA, LDR_E_OPT_VALUE, 0,
	  { { 0 } } },
	{ "empty path before the string", SRC_LINE, "module=,x", LDR_E_OPT_VALUE, 0, { { 0 } } },
	{ "other hash", SRC_LINE, "module=m.bin:sha1=abcd", LDR_E_OPT_VALUE, 0, { { 0 } } },
	{ "colon in the path", SRC_LINE, "module=fs0:m.bin", LDR_E_OPT_VALUE, 0, { { 0 } } },
	{ "short pin", SRC_LINE, "module=m.bin:sha256=12ab,x", LDR_E_OPT_HEX, 0, { { 0 } } },
	{ "config: nothing", SRC_CONFIG, "module   \n", LDR_E_OPT_VALUE, 0, { { 0 } } },
};

static void check_modules(const char *name, const struct ldr_options *o, const struct mod_case *c)
{
	CHECK_EQ_U64(o->nmodules, c->n, "%s: count", name);
	for (unsigned i = 0; i < c->n && i < o->nmodules; i++) {
		const struct opt_module *m = &o->modules[i];

		CHECK(str_eq(m->path, c->m[i].path), "%s: module %u path '%s'", name, i, m->path);
		CHECK(str_eq(m->string, c->m[i].string), "%s: module %u string '%s'", name, i,
		      m->string);
		CHECK_EQ_U64(m->string_len, strlen(m->string), "%s: module %u string_len", name, i);
		CHECK_EQ_U64(m->have_sha256, c->m[i].pin, "%s: module %u pinned", name, i);
		if (c->m[i].pin)
			CHECK(memcmp(m->sha256, sha_bytes, 32) == 0, "%s: module %u pin bytes", name,
			      i);
	}
}

TEST(test_modules)
{
	for (size_t i = 0; i < sizeof(mod_cases) / sizeof(mod_cases[0]); i++) {
		const struct mod_case *c = &mod_cases[i];
		size_t len = strlen(c->text);
		char *copy = malloc(len ? len : 1);
		struct ldr_options o;
		enum ldr_err err;

		memcpy(copy, c->text, len);
		options_defaults(&o);
		err = c->src == SRC_LINE ? options_parse_line(&o, copy, len)
					 : options_parse_config(&o, copy, len);
		CHECK_EQ_U64(err, c->want, "module %s: error", c->name);
		if (err == LDR_OK)
			check_modules(c->name, &o, c);
		else
			CHECK(str_eq(o.bad, "module"), "module %s: bad '%s'", c->name, o.bad);
		free(copy);
	}
}

/* Load options replace kaslr.conf's modules (all of them), or keep them. */
TEST(test_modules_override)
{
	static const char conf[] = "module a.bin,from-conf\nmodule b.bin\n";
	struct ldr_options o;

	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, conf, sizeof(conf) - 1), LDR_OK, "override: config");
	CHECK_EQ_U64(o.nmodules, 2, "override: two from the config");
	CHECK_EQ_U64(options_parse_line(&o, "verbose -- x", 12), LDR_OK, "override: no module=");
	CHECK_EQ_U64(o.nmodules, 2, "override: a line without module= keeps them");
	CHECK_EQ_U64(options_parse_line(&o, "module=c.bin,l module=d.bin", 27), LDR_OK,
		     "override: module= on the line");
	CHECK(o.nmodules == 2 && str_eq(o.modules[0].path, "c.bin") &&
	      str_eq(o.modules[0].string, "l") && str_eq(o.modules[1].path, "d.bin"),
	      "override: the line's modules replace the config's");
}

/* The limits: 16 modules, strings of 255 characters, paths of 255. */
TEST(test_modules_limits)
{
	char *t = malloc(OPT_TEXT_MAX);
	struct ldr_options o;
	size_t n = 0;

	for (int i = 0; i < OPT_MODULES_MAX; i++)
		n += (size_t)sprintf(t + n, "module=m%d.bin ", i);
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, t, n), LDR_OK, "16 modules");
	CHECK_EQ_U64(o.nmodules, OPT_MODULES_MAX, "16 modules kept");
	n += (size_t)sprintf(t + n, "module=one-more.bin");
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, t, n), LDR_E_OPT_TOO_MANY, "17 modules");
	CHECK(str_eq(o.bad, "module"), "17 modules: bad '%s'", o.bad);

	for (int extra = 0; extra < 2; extra++) {
		n = (size_t)sprintf(t, "module=m.bin,");
		memset(t + n, 's', OPT_MODULE_STRING_MAX - 1 + extra);
		n += OPT_MODULE_STRING_MAX - 1 + extra;
		options_defaults(&o);
		CHECK_EQ_U64(options_parse_line(&o, t, n), extra ? LDR_E_OPT_TOO_LONG : LDR_OK,
			     "module string of %d", OPT_MODULE_STRING_MAX - 1 + extra);
		n = (size_t)sprintf(t, "module=");
		memset(t + n, 'p', OPT_PATH_MAX - 1 + extra);
		n += OPT_PATH_MAX - 1 + extra;
		options_defaults(&o);
		CHECK_EQ_U64(options_parse_line(&o, t, n), extra ? LDR_E_OPT_TOO_LONG : LDR_OK,
			     "module path of %d", OPT_PATH_MAX - 1 + extra);
	}
	free(t);
}

/* ---- the settings text measured into PCR 5 ---- */

static size_t settings(const struct ldr_options *o, char *buf, size_t cap)
{
	size_t len = 0;

	CHECK_EQ_U64(options_settings_text(o, buf, cap, &len), LDR_OK, "settings text");
	buf[len < cap ? len : cap - 1] = 0;
	return len;
}

TEST(test_settings_defaults)
{
	static const char want[] =
		"kaslr-loader settings 1\n"
		"verbose=0\n"
		"nokaslr=0\n"
		"kernel=\n"
		"kaslr.seed=none\n"
		"sha256=none\n"
		"kaslr.min=0x1000000\n"
		"kaslr.max=0x0\n"
		"kaslr.maxsize=0x20000000\n"
		"kaslr.phys=random\n"
		"kaslr.virt=random\n";
	static char buf[OPT_SETTINGS_MAX + 1];
	struct ldr_options o;

	options_defaults(&o);
	settings(&o, buf, sizeof(buf));
	CHECK(str_eq(buf, want), "settings of the defaults:\n%s", buf);
	/* a key set to its default value is the same setting */
	CHECK_EQ_U64(options_parse_line(&o, "kaslr.min=16M verbose=0 -- quiet", 32), LDR_OK,
		     "defaults spelled out");
	settings(&o, buf, sizeof(buf));
	CHECK(str_eq(buf, want), "defaults spelled out, and a command line:\n%s", buf);
}

TEST(test_settings_values)
{
	static const char conf[] =
		"kernel \\EFI\\k.elf\n"
		"nokaslr\n"
		"kaslr.seed 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
		"kaslr.max 0x84000000\n"
		"module a.bin:sha256=" HEX_SHA_LC " one two\n"
		"module b.bin\n"
		"initrd i.img\n";
	static char buf[OPT_SETTINGS_MAX + 1];
	uint8_t seed[32], d[32];
	char seed_hex[65];
	struct ldr_options o;

	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, conf, sizeof(conf) - 1), LDR_OK, "settings conf");
	settings(&o, buf, sizeof(buf));
	/* the seed appears only as its digest */
	for (int i = 0; i < 32; i++)
		seed[i] = (uint8_t)i;
	sha256(seed, 32, d);
	for (int i = 0; i < 32; i++)
		snprintf(seed_hex + 2 * i, 3, "%02x", d[i]);
	CHECK(strstr(buf, "\nkaslr.seed=sha256:") && strstr(buf, seed_hex),
	      "seed as its digest:\n%s", buf);
	CHECK(!strstr(buf, "000102030405"), "the seed itself is not in the text:\n%s", buf);
	CHECK(strstr(buf, "\nnokaslr=1\n") && strstr(buf, "\nkernel=\\EFI\\k.elf\n") &&
	      strstr(buf, "\nkaslr.max=0x84000000\n"), "flags, paths, sizes:\n%s", buf);
	CHECK(strstr(buf, "\nmodule=a.bin:sha256=" HEX_SHA_LC ",one two\nmodule=b.bin,\n"),
	      "modules in order with pin and string:\n%s", buf);
	CHECK(strstr(buf, "\ninitrd=i.img\n"), "initrd:\n%s", buf);
}

/* every key that shapes the boot changes the text; the command line does not */
TEST(test_settings_changes)
{
	static const char *const changes[] = {
		"verbose", "nokaslr", "kernel=x.elf", "kaslr.min=64M", "kaslr.max=132M",
		"kaslr.maxsize=100M", "sha256=" HEX_SHA,
		"kaslr.seed=0000000000000000000000000000000000000000000000000000000000000000",
		"kaslr.seed=0000000000000000000000000000000000000000000000000000000000000001",
		"module=m.bin,b", "module=m.bin,c", "module=m.bin:sha256=" HEX_SHA ",b",
		"initrd=i.img", "initrd=i.img:sha256=" HEX_SHA,
		"kaslr.phys=lowest", "kaslr.phys=0x40000000", "kaslr.virt=highest",
		"kaslr.virt=-16M",
	};
	static char base[OPT_SETTINGS_MAX + 1], buf[OPT_SETTINGS_MAX + 1];
	uint8_t seen[sizeof(changes) / sizeof(changes[0])][32];
	struct ldr_options o;

	options_defaults(&o);
	settings(&o, base, sizeof(base));
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		options_defaults(&o);
		CHECK_EQ_U64(options_parse_line(&o, changes[i], strlen(changes[i])), LDR_OK, "%s",
			     changes[i]);
		settings(&o, buf, sizeof(buf));
		CHECK(!str_eq(buf, base), "'%s' leaves the settings text unchanged", changes[i]);
		sha256(buf, strlen(buf), seen[i]);
		for (size_t j = 0; j < i; j++)
			CHECK(memcmp(seen[i], seen[j], 32) != 0, "'%s' and '%s' give the same text",
			      changes[i], changes[j]);
	}
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, "-- other", 8), LDR_OK, "cmdline");
	settings(&o, buf, sizeof(buf));
	CHECK(str_eq(buf, base), "the command line (PCR 12) is not in the settings text");
}

/* the largest options fit OPT_SETTINGS_MAX; a smaller buffer is an error */
TEST(test_settings_bounds)
{
	static char buf[OPT_SETTINGS_MAX + 1];
	struct ldr_options o;
	size_t len = 0;

	options_defaults(&o);
	for (unsigned i = 0; i < OPT_KERNELS_MAX; i++)
		memset(o.kernels[i], 'k', sizeof(o.kernels[i]) - 1);
	o.nkernels = OPT_KERNELS_MAX;
	for (unsigned i = 0; i < OPT_MODULES_MAX; i++) {
		memset(o.modules[i].path, 'p', sizeof(o.modules[i].path) - 1);
		memset(o.modules[i].string, 's', sizeof(o.modules[i].string) - 1);
		o.modules[i].string_len = sizeof(o.modules[i].string) - 1;
		o.modules[i].have_sha256 = 1;
	}
	o.nmodules = OPT_MODULES_MAX;
	for (unsigned i = 0; i < OPT_INITRD_MAX; i++) {
		memset(o.initrd[i].path, 'i', sizeof(o.initrd[i].path) - 1);
		o.initrd[i].have_sha256 = 1;
		o.initrd[i].kernel = i % OPT_KERNELS_MAX;
	}
	o.ninitrd = OPT_INITRD_MAX;
	o.have_seed = o.have_sha256 = 1;
	o.max_addr = o.min_addr = o.max_kernel = UINT64_MAX;
	CHECK_EQ_U64(options_settings_text(&o, buf, OPT_SETTINGS_MAX, &len), LDR_OK,
		     "the largest settings fit OPT_SETTINGS_MAX");
	CHECK(len > 12000 && len <= OPT_SETTINGS_MAX, "largest settings: %zu bytes", len);
	buf[len] = 0;
	CHECK(strstr(buf, "kaslr.max=0xffffffffffffffff\n") != NULL, "UINT64_MAX in hex");
	CHECK_EQ_U64(options_settings_text(&o, buf, len - 1, &len), LDR_E_OPT_TOO_LONG,
		     "one byte short");
	CHECK_EQ_U64(options_settings_text(&o, buf, 0, &len), LDR_E_OPT_TOO_LONG, "no room");
}

/* kaslr.phys= / kaslr.virt=: what each value reads as, and back as text */
struct place_case {
	const char *text;
	enum ldr_err want;
	uint32_t pkind, vkind;
	uint64_t pval, vval;
	const char *ptext, *vtext; /* options_place_text() of each; NULL: not checked */
};

static const struct place_case place_cases[] = {
	{ "kaslr.phys=lowest", LDR_OK, OPT_PLACE_LOWEST, 0, 0, 0, "lowest", "random" },
	{ "kaslr.phys=highest kaslr.virt=highest", LDR_OK, OPT_PLACE_HIGHEST, OPT_PLACE_HIGHEST,
	  0, 0, "highest", "highest" },
	{ "kaslr.phys=above4g kaslr.virt=lowest", LDR_OK, OPT_PLACE_ABOVE4G, OPT_PLACE_LOWEST,
	  0, 0, "above4g", "lowest" },
	{ "kaslr.phys=0x40000000", LDR_OK, OPT_PLACE_AT, 0, 0x40000000, 0, "0x40000000", NULL },
	{ "kaslr.phys=1G", LDR_OK, OPT_PLACE_AT, 0, GIB, 0, "0x40000000", NULL },
	{ "kaslr.virt=0x3e00000", LDR_OK, 0, OPT_PLACE_AT, 0, 0x3e00000, NULL, "0x3e00000" },
	{ "kaslr.virt=-16M", LDR_OK, 0, OPT_PLACE_AT, 0, (uint64_t)0 - 16 * MIB, NULL,
	  "-0x1000000" },
	{ "kaslr.virt=-0x1000000", LDR_OK, 0, OPT_PLACE_AT, 0, (uint64_t)0 - 16 * MIB, NULL,
	  "-0x1000000" },
	{ "kaslr.phys=lowest kaslr.phys=random", LDR_OK, OPT_PLACE_RANDOM, 0, 0, 0, "random", NULL },
	{ "kaslr.virt=above4g", LDR_E_OPT_VALUE, 0, 0, 0, 0, NULL, NULL },
	{ "kaslr.phys=-2M", LDR_E_OPT_VALUE, 0, 0, 0, 0, NULL, NULL },
	{ "kaslr.phys=top", LDR_E_OPT_VALUE, 0, 0, 0, 0, NULL, NULL },
	{ "kaslr.phys=", LDR_E_OPT_VALUE, 0, 0, 0, 0, NULL, NULL },
	{ "kaslr.phys", LDR_E_OPT_VALUE, 0, 0, 0, 0, NULL, NULL },
	{ "kaslr.virt=-", LDR_E_OPT_VALUE, 0, 0, 0, 0, NULL, NULL },
	{ "kaslr.phys=0x1ffffffffffffffff", LDR_E_OPT_VALUE, 0, 0, 0, 0, NULL, NULL },
};

TEST(test_place)
{
	for (size_t i = 0; i < sizeof(place_cases) / sizeof(place_cases[0]); i++) {
		const struct place_case *c = &place_cases[i];
		struct ldr_options o;
		char buf[OPT_PLACE_TEXT_MAX];
		enum ldr_err err;

		options_defaults(&o);
		err = options_parse_line(&o, c->text, strlen(c->text));
		CHECK(err == c->want, "%s: err %d, want %d", c->text, err, c->want);
		if (err != LDR_OK) {
			CHECK(strncmp(o.bad, "kaslr.", 6) == 0, "%s: bad '%s'", c->text, o.bad);
			continue;
		}
		CHECK_EQ_U64(o.phys.kind, c->pkind, "%s: phys kind", c->text);
		CHECK_EQ_U64(o.phys.value, c->pval, "%s: phys value", c->text);
		CHECK_EQ_U64(o.virt.kind, c->vkind, "%s: virt kind", c->text);
		CHECK_EQ_U64(o.virt.value, c->vval, "%s: virt value", c->text);
		if (c->ptext) {
			options_place_text(&o.phys, buf, sizeof(buf));
			CHECK(strcmp(buf, c->ptext) == 0, "%s: phys text '%s'", c->text, buf);
		}
		if (c->vtext) {
			options_place_text(&o.virt, buf, sizeof(buf));
			CHECK(strcmp(buf, c->vtext) == 0, "%s: virt text '%s'", c->text, buf);
		}
	}
}

/* The same keys in kaslr.conf; the load options win; under Secure Boot
 * they follow the policy. */
TEST(test_place_merge)
{
	static const char conf[] = "kaslr.phys 0x20000000 # comment\nkaslr.virt highest\n";
	static const char line[] = "kaslr.phys=lowest";
	struct ldr_options dst, src;
	char buf[OPT_PLACE_TEXT_MAX];
	uint32_t ign;

	options_defaults(&src);
	CHECK(options_parse_config(&src, conf, strlen(conf)) == LDR_OK, "conf parses");
	CHECK_EQ_U64(src.phys.kind, OPT_PLACE_AT, "conf phys kind");
	CHECK_EQ_U64(src.phys.value, 0x20000000, "conf phys value");
	CHECK_EQ_U64(src.virt.kind, OPT_PLACE_HIGHEST, "conf virt kind");
	options_defaults(&dst);
	ign = options_merge(&dst, &src, 0, 0);
	CHECK(ign == 0, "nothing ignored without Secure Boot");
	options_defaults(&src);
	CHECK(options_parse_line(&src, line, strlen(line)) == LDR_OK, "line parses");
	options_merge(&dst, &src, 0, 0);
	CHECK_EQ_U64(dst.phys.kind, OPT_PLACE_LOWEST, "load options win");
	CHECK_EQ_U64(dst.virt.kind, OPT_PLACE_HIGHEST, "conf's virt kept");
	options_place_text(&dst.phys, buf, 4);
	CHECK(strcmp(buf, "low") == 0, "text truncated to its buffer: '%s'", buf);

	/* Secure Boot: ignored unless allowed, each on its own bit */
	options_defaults(&dst);
	ign = options_merge(&dst, &src, 1, 0);
	CHECK(ign == OPT_BIT(OPT_K_PHYS), "ignored under Secure Boot: 0x%x", (unsigned)ign);
	CHECK_EQ_U64(dst.phys.kind, OPT_PLACE_RANDOM, "still random");
	ign = options_merge(&dst, &src, 1, OPT_BIT(OPT_K_PHYS));
	CHECK(ign == 0, "allowed by the policy");
	CHECK_EQ_U64(dst.phys.kind, OPT_PLACE_LOWEST, "taken when allowed");
	CHECK(options_key_rule(OPT_K_PHYS) == OPT_SB_IF_ALLOWED &&
	      options_key_rule(OPT_K_VIRT) == OPT_SB_IF_ALLOWED, "rules");
	CHECK(options_key_find("kaslr.virt", 10) == OPT_K_VIRT, "key found");
}

/* ---- the list of kernels (kernel= repeated) ---- */

/* each kernel's initrds: those after it, the ones before the first its own */
TEST(test_kernel_list)
{
	static const char conf[] =
		"initrd early.img\n"
		"kernel \\EFI\\a\\vmlinuz-20\n"
		"initrd a.img:sha256=" HEX_SHA "\n"
		"kernel vmlinuz-10\n"
		"initrd b1.img\n"
		"initrd b2.img\n"
		"kernel vmlinuz-5\n";
	static const char line[] = "initrd=x kernel=A kernel=B initrd=y -- quiet";
	struct ldr_options o;
	char *t = malloc(OPT_TEXT_MAX);
	size_t n = 0;

	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, conf, sizeof(conf) - 1), LDR_OK, "list: config");
	CHECK(o.nkernels == 3 && options_kernel_count(&o) == 3 &&
	      str_eq(options_kernel(&o, 0), "\\EFI\\a\\vmlinuz-20") &&
	      str_eq(options_kernel(&o, 1), "vmlinuz-10") &&
	      str_eq(options_kernel(&o, 2), "vmlinuz-5") && str_eq(options_kernel(&o, 3), ""),
	      "list: three kernels in order");
	CHECK(o.ninitrd == 4, "list: four initrds (%u)", o.ninitrd);
	CHECK(str_eq(o.initrd[0].path, "early.img") && o.initrd[0].kernel == 0 &&
	      str_eq(o.initrd[1].path, "a.img") && o.initrd[1].kernel == 0 &&
	      o.initrd[1].have_sha256 && str_eq(o.initrd[2].path, "b1.img") &&
	      o.initrd[2].kernel == 1 && str_eq(o.initrd[3].path, "b2.img") &&
	      o.initrd[3].kernel == 1, "list: each initrd with its kernel");
	CHECK(o.set & OPT_BIT(OPT_K_KERNEL) && o.set & OPT_BIT(OPT_K_INITRD), "list: both keys set");

	/* the load options the same way */
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, line, sizeof(line) - 1), LDR_OK, "list: line");
	CHECK(o.nkernels == 2 && str_eq(o.kernels[0], "A") && str_eq(o.kernels[1], "B") &&
	      o.ninitrd == 2 && o.initrd[0].kernel == 0 && o.initrd[1].kernel == 1 &&
	      str_eq(o.cmdline, "quiet"), "list: load options");

	/* choosing a kernel leaves it alone with its own initrds, in order */
	options_defaults(&o);
	options_parse_config(&o, conf, sizeof(conf) - 1);
	options_choose_kernel(&o, 1);
	CHECK(o.nkernels == 1 && str_eq(o.kernels[0], "vmlinuz-10") && o.ninitrd == 2 &&
	      str_eq(o.initrd[0].path, "b1.img") && str_eq(o.initrd[1].path, "b2.img") &&
	      o.initrd[0].kernel == 0 && o.initrd[1].kernel == 0, "choose the second");
	options_defaults(&o);
	options_parse_config(&o, conf, sizeof(conf) - 1);
	options_choose_kernel(&o, 2);
	CHECK(o.nkernels == 1 && str_eq(o.kernels[0], "vmlinuz-5") && o.ninitrd == 0,
	      "choose the third, which has none");
	options_defaults(&o);
	options_parse_config(&o, conf, sizeof(conf) - 1);
	options_choose_kernel(&o, 0);
	CHECK(o.nkernels == 1 && str_eq(o.kernels[0], "\\EFI\\a\\vmlinuz-20") && o.ninitrd == 2,
	      "choose the first");
	/* the default kernel (no kernel= at all) keeps every initrd */
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, "initrd=a initrd=b", 17), LDR_OK, "default");
	options_choose_kernel(&o, 0);
	CHECK(o.nkernels == 0 && o.ninitrd == 2 && options_kernel_count(&o) == 1,
	      "the default kernel and its initrds");

	/* at most OPT_KERNELS_MAX: one more is the one error, naming the key */
	for (int i = 0; i < OPT_KERNELS_MAX; i++)
		n += (size_t)sprintf(t + n, "kernel k%d\n", i);
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, t, n), LDR_OK, "%d kernels", OPT_KERNELS_MAX);
	n += (size_t)sprintf(t + n, "kernel one-more\n");
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, t, n), LDR_E_OPT_TOO_MANY, "one kernel too many");
	CHECK(str_eq(o.bad, "kernel") && o.bad_line == OPT_KERNELS_MAX + 1,
	      "too many kernels: bad '%s' line %u", o.bad, o.bad_line);
	CHECK(strstr(ldr_err_hint_of(LDR_E_OPT_TOO_MANY), "at most 4 kernel=") != NULL,
	      "the hint says how many kernels");
	/* the initrds of all the kernels together: OPT_INITRD_MAX */
	n = 0;
	for (int i = 0; i < OPT_INITRD_MAX + 1; i++)
		n += (size_t)sprintf(t + n, "kernel=k%d initrd=i%d ", i % 2, i);
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, t, n), LDR_E_OPT_TOO_MANY, "too many kernels first");
	n = 0;
	for (int i = 0; i < OPT_INITRD_MAX + 1; i++)
		n += (size_t)sprintf(t + n, i < OPT_KERNELS_MAX ? "kernel=k%d initrd=i%d " :
					    "initrd=i%d%d ", i, i);
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_line(&o, t, n), LDR_E_OPT_TOO_MANY,
		     "nine initrds over four kernels");
	CHECK(str_eq(o.bad, "initrd"), "too many initrds: bad '%s'", o.bad);
	free(t);
}

/*
 * Merging sources: `kernel` and `initrd` are two keys.  A source naming
 * kernels keeps the earlier initrds at their kernel's place (those of a
 * place the new list lacks go); a source naming initrds replaces them all.
 */
TEST(test_kernel_list_merge)
{
	static const char conf[] = "kernel A\ninitrd a\nkernel B\ninitrd b\n";
	struct ldr_options dst, src;
	uint32_t ign;

	options_defaults(&dst);
	options_defaults(&src);
	CHECK(options_parse_config(&src, conf, sizeof(conf) - 1) == LDR_OK, "merge: conf");
	CHECK(options_merge(&dst, &src, 0, 0) == 0, "merge: conf taken");

	/* load options: kernel=X alone -> X with A's initrd, b dropped */
	{
		struct ldr_options d = dst;

		options_defaults(&src);
		options_parse_line(&src, "kernel=X", 8);
		options_merge(&d, &src, 0, 0);
		CHECK(d.nkernels == 1 && str_eq(d.kernels[0], "X") && d.ninitrd == 1 &&
		      str_eq(d.initrd[0].path, "a") && d.initrd[0].kernel == 0,
		      "merge: a new kernel keeps the first kernel's initrds");
	}
	/* kernel=X kernel=Y -> X:a, Y:b */
	{
		struct ldr_options d = dst;

		options_defaults(&src);
		options_parse_line(&src, "kernel=X kernel=Y", 17);
		options_merge(&d, &src, 0, 0);
		CHECK(d.nkernels == 2 && d.ninitrd == 2 && d.initrd[1].kernel == 1 &&
		      str_eq(d.initrd[1].path, "b"), "merge: initrds stay at their place");
	}
	/* initrd=c alone replaces every initrd: A:c, B:none */
	{
		struct ldr_options d = dst;

		options_defaults(&src);
		options_parse_line(&src, "initrd=c", 8);
		options_merge(&d, &src, 0, 0);
		CHECK(d.nkernels == 2 && str_eq(d.kernels[1], "B") && d.ninitrd == 1 &&
		      str_eq(d.initrd[0].path, "c") && d.initrd[0].kernel == 0,
		      "merge: new initrds replace all of them");
	}
	/* Secure Boot, pins only: the list is ignored as a whole (one warning each) */
	{
		struct ldr_options d;

		options_defaults(&d);
		memcpy(d.kernels[0], "\\EFI\\pinned", 12);
		d.nkernels = 1;
		options_defaults(&src);
		options_parse_config(&src, conf, sizeof(conf) - 1);
		ign = options_merge_trust(&d, &src, 1, 0, OPT_TRUST_PINS);
		CHECK(ign == (OPT_BIT(OPT_K_KERNEL) | OPT_BIT(OPT_K_INITRD)) && d.nkernels == 1 &&
		      str_eq(d.kernels[0], "\\EFI\\pinned") && d.ninitrd == 0,
		      "merge: pins only ignores the list");
		ign = options_merge_trust(&d, &src, 1, 0, OPT_TRUST_SHIM);
		CHECK(ign == 0 && d.nkernels == 2 && d.ninitrd == 2, "merge: TRUST=shim takes it");
		/* the same list again is no change, so no warning */
		CHECK(options_merge_trust(&d, &src, 1, 0, OPT_TRUST_PINS) == 0,
		      "merge: the same list is not an ignored input");
	}
}

/* a list of kernels in the settings text: each line names its kernel */
TEST(test_settings_kernel_list)
{
	static const char conf[] = "initrd i0\nkernel \\EFI\\k1\ninitrd i1:sha256=" HEX_SHA
				   "\nkernel k2\nkernel k3\ninitrd i3\n";
	static const char want[] =
		"kaslr-loader settings 1\n"
		"verbose=0\n"
		"nokaslr=0\n"
		"kernel.1=\\EFI\\k1\n"
		"kernel.2=k2\n"
		"kernel.3=k3\n"
		"kaslr.seed=none\n"
		"sha256=none\n"
		"kaslr.min=0x1000000\n"
		"kaslr.max=0x0\n"
		"kaslr.maxsize=0x20000000\n"
		"initrd.1=i0\n"
		"initrd.1=i1:sha256=" HEX_SHA_LC "\n"
		"initrd.3=i3\n"
		"kaslr.phys=random\n"
		"kaslr.virt=random\n";
	static char buf[OPT_SETTINGS_MAX + 1];
	struct ldr_options o;

	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, conf, sizeof(conf) - 1), LDR_OK, "list settings");
	settings(&o, buf, sizeof(buf));
	CHECK(str_eq(buf, want), "the settings of a list:\n%s", buf);
	/* one kernel: exactly the text it always had */
	options_defaults(&o);
	CHECK_EQ_U64(options_parse_config(&o, "initrd a\nkernel k\ninitrd b\n", 27), LDR_OK,
		     "one kernel");
	settings(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "\nkernel=k\n") && strstr(buf, "\ninitrd=a\ninitrd=b\n") &&
	      !strstr(buf, "kernel.") && !strstr(buf, "initrd."), "one kernel as before:\n%s", buf);
}

/*
 * Different effective settings never give the same text, and the same
 * settings always give the same one.  Random options from small alphabets
 * (so that near misses are common: an initrd of another kernel, a kernel
 * list in another order, a path that runs into the next field...) are
 * compared by an encoding of their own, independent of the text's format.
 */
#define INJ_N 12000

struct inj {
	uint8_t text_sha[32];
	char canon[2048];
};

static void inj_put(char *c, size_t *n, const char *s, size_t len)
{
	/* every piece length-prefixed: the encoding is unambiguous */
	*n += (size_t)snprintf(c + *n, 2048 - *n, "%zu:", len);
	memcpy(c + *n, s, len);
	*n += len;
	c[*n] = 0;
}

/* the options that shape the boot (not the command line), by their meaning */
static void inj_canon(const struct ldr_options *o, char *c)
{
	size_t n = 0;
	char num[96];

	c[0] = 0;
	for (uint32_t k = 0; k < options_kernel_count(o); k++) {
		inj_put(c, &n, options_kernel(o, k), strlen(options_kernel(o, k)));
		for (uint32_t i = 0; i < o->ninitrd; i++) {
			const struct opt_file *f = &o->initrd[i];

			if (f->kernel != k)
				continue;
			inj_put(c, &n, f->path, strlen(f->path));
			inj_put(c, &n, (const char *)f->sha256, f->have_sha256 ? 32 : 0);
		}
		inj_put(c, &n, "|", 1);
	}
	for (uint32_t i = 0; i < o->nmodules; i++) {
		const struct opt_module *m = &o->modules[i];

		inj_put(c, &n, m->path, strlen(m->path));
		inj_put(c, &n, m->string, m->string_len);
		inj_put(c, &n, (const char *)m->sha256, m->have_sha256 ? 32 : 0);
	}
	snprintf(num, sizeof(num), "%d %d %llx %llx %llx %u %llx %u %llx", o->verbose, o->nokaslr,
		 (unsigned long long)o->min_addr, (unsigned long long)o->max_addr,
		 (unsigned long long)o->max_kernel, o->phys.kind,
		 (unsigned long long)o->phys.value, o->virt.kind,
		 (unsigned long long)o->virt.value);
	inj_put(c, &n, num, strlen(num));
	inj_put(c, &n, (const char *)o->seed, o->have_seed ? 32 : 0);
	inj_put(c, &n, (const char *)o->sha256, o->have_sha256 ? 32 : 0);
}

static const char *const inj_paths[] = { "k", "kk", "k,", "k=a", "i:" };

static void inj_random(struct ldr_options *o, uint64_t *r)
{
	options_defaults(o);
	o->nkernels = (uint32_t)(test_rand(r) % (OPT_KERNELS_MAX + 1));
	for (uint32_t k = 0; k < o->nkernels; k++)
		strcpy(o->kernels[k], inj_paths[test_rand(r) % 3]);
	o->ninitrd = (uint32_t)(test_rand(r) % 4);
	for (uint32_t i = 0; i < o->ninitrd; i++) {
		struct opt_file *f = &o->initrd[i];

		strcpy(f->path, inj_paths[test_rand(r) % 2]);
		f->kernel = (uint32_t)(test_rand(r) % options_kernel_count(o));
		f->have_sha256 = test_rand(r) % 4 == 0;
		if (f->have_sha256)
			memset(f->sha256, 0xa0 + (int)(test_rand(r) % 2), 32);
	}
	o->nmodules = (uint32_t)(test_rand(r) % 3);
	for (uint32_t i = 0; i < o->nmodules; i++) {
		struct opt_module *m = &o->modules[i];

		strcpy(m->path, inj_paths[test_rand(r) % 2]);
		strcpy(m->string, inj_paths[test_rand(r) % 5]);
		m->string_len = (uint32_t)strlen(m->string);
	}
	o->verbose = test_rand(r) % 8 == 0;
	o->have_seed = test_rand(r) % 8 == 0;
	if (o->have_seed)
		memset(o->seed, (int)(test_rand(r) % 2), 32);
	if (test_rand(r) % 8 == 0)
		o->min_addr = 0x10000000;
	if (test_rand(r) % 8 == 0) {
		o->phys.kind = OPT_PLACE_AT;
		o->phys.value = test_rand(r) % 2 ? 0x1000000 : 0x2000000;
	}
}

static int inj_cmp(const void *a, const void *b)
{
	const struct inj *x = a, *y = b;
	int c = memcmp(x->text_sha, y->text_sha, 32);

	return c ? c : strcmp(x->canon, y->canon);
}

static int inj_cmp_canon(const void *a, const void *b)
{
	const struct inj *x = a, *y = b;
	int c = strcmp(x->canon, y->canon);

	return c ? c : memcmp(x->text_sha, y->text_sha, 32);
}

TEST(test_settings_injective)
{
	static char buf[OPT_SETTINGS_MAX + 1];
	struct inj *v = calloc(INJ_N, sizeof(*v));
	struct ldr_options o;
	uint64_t r = 0x5e771465;
	size_t clash = 0, same = 0, texts = 1;

	for (size_t i = 0; i < INJ_N; i++) {
		size_t len = settings((inj_random(&o, &r), &o), buf, sizeof(buf));

		sha256(buf, len, v[i].text_sha);
		inj_canon(&o, v[i].canon);
	}
	/* equal texts: equal options */
	qsort(v, INJ_N, sizeof(*v), inj_cmp);
	for (size_t i = 1; i < INJ_N; i++) {
		if (memcmp(v[i].text_sha, v[i - 1].text_sha, 32) != 0) {
			texts++;
			continue;
		}
		if (strcmp(v[i].canon, v[i - 1].canon) != 0)
			clash++;
	}
	CHECK(clash == 0, "%zu pairs of different settings with the same text", clash);
	/* equal options: equal texts (however the initrds were listed) */
	qsort(v, INJ_N, sizeof(*v), inj_cmp_canon);
	for (size_t i = 1; i < INJ_N; i++) {
		if (strcmp(v[i].canon, v[i - 1].canon) != 0)
			continue;
		same++;
		CHECK(memcmp(v[i].text_sha, v[i - 1].text_sha, 32) == 0,
		      "the same settings, two texts");
	}
	/* the sample is one where a clash could show: many repeats, many texts */
	CHECK(same > 1000 && texts > 2000, "%zu repeats, %zu texts", same, texts);
	free(v);
}

/*
 * No value a parser accepts holds a newline ('\n' or '\r'): a line of the
 * settings text is one key's.  Every key, in both syntaxes, with the
 * newline inside, first and last; then random texts.
 */
static int opts_have_newline(const struct ldr_options *o)
{
	const char *s[2 + OPT_KERNELS_MAX + OPT_INITRD_MAX + 2 * OPT_MODULES_MAX];
	size_t n = 0;

	s[n++] = o->cmdline;
	for (uint32_t i = 0; i < o->nkernels; i++)
		s[n++] = o->kernels[i];
	for (uint32_t i = 0; i < o->ninitrd; i++)
		s[n++] = o->initrd[i].path;
	for (uint32_t i = 0; i < o->nmodules; i++) {
		s[n++] = o->modules[i].path;
		s[n++] = o->modules[i].string;
	}
	for (size_t i = 0; i < n; i++)
		if (strpbrk(s[i], "\r\n"))
			return 1;
	return 0;
}

TEST(test_newline_refused)
{
	static const char *const keys[] = { "kernel", "initrd", "module", "cmdline", "kaslr.min" };
	static const char *const nl[] = { "\r", "\n" };
	char t[128];
	struct ldr_options o;
	uint64_t r = 0x6e65776c;
	enum ldr_err err;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		for (size_t c = 0; c < 2; c++)
			for (int where = 0; where < 3; where++) {
				const char *v = where == 0 ? "a%sb" : where == 1 ? "%sab" : "ab%s";
				char val[16];
				int len;

				snprintf(val, sizeof(val), v, nl[c]);
				/* kaslr.conf: a '\n' ends the line (the rest is another
				 * line); a '\r' inside the value is refused */
				len = snprintf(t, sizeof(t), "%s %s\n", keys[k], val);
				options_defaults(&o);
				err = options_parse_config(&o, t, (size_t)len);
				CHECK(err != LDR_OK || !opts_have_newline(&o),
				      "config %s %d %zu: a newline taken", keys[k], where, c);
				if (c == 0 && where == 0)
					CHECK(err == LDR_E_OPT_VALUE && str_eq(o.bad, keys[k]),
					      "config %s: a CR inside refused (%d, '%s')", keys[k],
					      err, o.bad);
				/* load options: key=value, and the -- command line */
				len = snprintf(t, sizeof(t), "%s=%s", keys[k], val);
				options_defaults(&o);
				err = options_parse_line(&o, t, (size_t)len);
				CHECK(err != LDR_OK || !opts_have_newline(&o),
				      "line %s %d %zu: a newline taken", keys[k], where, c);
				len = snprintf(t, sizeof(t), "-- %s", val);
				options_defaults(&o);
				err = options_parse_line(&o, t, (size_t)len);
				CHECK(err != LDR_OK || !opts_have_newline(&o),
				      "line -- %d %zu: a newline taken", where, c);
				if (where == 0)
					CHECK(err == LDR_E_OPT_VALUE && str_eq(o.bad, "--"),
					      "line: -- a newline b refused (%d, '%s')", err, o.bad);
			}
	/* random texts over the characters that matter */
	for (int i = 0; i < 20000; i++) {
		static const char *const words[] = {
			"kernel", "initrd", "module", "cmdline", "verbose", "--", "=", " ", "\t",
			"\r", "\n", "#", ":", ",", "a", "b\\c", "\r\n",
		};
		size_t n = 0;
		int w = 1 + (int)(test_rand(&r) % 12);

		while (w-- > 0) {
			const char *s = words[test_rand(&r) % (sizeof(words) / sizeof(words[0]))];
			size_t l = strlen(s);

			if (n + l >= sizeof(t))
				break;
			memcpy(t + n, s, l);
			n += l;
		}
		options_defaults(&o);
		if (options_parse_config(&o, t, n) == LDR_OK)
			CHECK(!opts_have_newline(&o), "config text %d: a newline in a value", i);
		options_defaults(&o);
		if (options_parse_line(&o, t, n) == LDR_OK)
			CHECK(!opts_have_newline(&o), "line text %d: a newline in a value", i);
	}
}
