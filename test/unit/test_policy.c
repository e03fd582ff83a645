/*
 * test_policy.c - host tests for src/policy.c and the Secure Boot rules of
 * src/options.c: a written policy parses back the same, malformed sections
 * (truncations, bad fields, every single-byte corruption of a good one)
 * are refused or parse to a policy that keeps the rules, the pin decision
 * for each Secure Boot state, and options_merge following the key table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sha256.h"
#include "test.h"

static uint8_t sec[POLICY_SECTION_SIZE];

static void mk_policy(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	p->present = 1;
	p->nfiles = 2;
	p->file[0].kind = POLICY_KERNEL;
	sha256("kernel", 6, p->file[0].sha256);
	strcpy(p->file[0].path, "\\EFI\\kaslr\\vmlinuz-6.1.0-amd64");
	p->file[1].kind = POLICY_INITRD;
	sha256("initrd", 6, p->file[1].sha256);
	strcpy(p->file[1].path, "\\EFI\\kaslr\\initrd.img-6.1.0-amd64");
	p->have_cmdline = 1;
	strcpy(p->cmdline, "console=ttyS0 root=/dev/vda1");
	p->cmdline_len = (uint32_t)strlen(p->cmdline);
	p->allow = OPT_BIT(OPT_K_VERBOSE) | OPT_BIT(OPT_K_MIN);
}

TEST(roundtrip)
{
	struct policy p, q;

	mk_policy(&p);
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_OK, "write");
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_OK, "parse back");
	CHECK(q.present && q.nfiles == 2 && q.allow == p.allow, "fields");
	CHECK(q.cmdline_len == p.cmdline_len && strcmp(q.cmdline, p.cmdline) == 0, "cmdline");
	CHECK(memcmp(q.file[1].sha256, p.file[1].sha256, 32) == 0 &&
	      strcmp(q.file[1].path, p.file[1].path) == 0 && q.file[1].kind == POLICY_INITRD,
	      "initrd pin");
	CHECK(q.used > POLICY_HEADER_SIZE && q.used % 8 == 0, "used %u", q.used);
	/* the section may be just as big as the policy */
	CHECK(policy_parse(sec, q.used, &q) == LDR_OK, "exact length");
	CHECK(policy_parse(sec, q.used - 1, &q) == LDR_E_POLICY_FORMAT, "one byte short");
}

TEST(empty_header)
{
	static const uint8_t empty[POLICY_HEADER_SIZE] = POLICY_EMPTY_INIT;
	struct policy q;

	memset(sec, 0, sizeof(sec));
	memcpy(sec, empty, sizeof(empty));
	q.present = 7;
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_OK && q.present == 0, "empty = no policy");
	CHECK(policy_kernel(&q) == NULL, "no kernel pin");
	CHECK(policy_find(&q, POLICY_KERNEL, "\\x") == NULL, "nothing pinned");
	sec[20] = 1; /* allow bits in an unwritten header */
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_E_POLICY_FORMAT, "empty with allow");
	sec[20] = 0;
	sec[24] = 1; /* records in an unwritten header */
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_E_POLICY_FORMAT, "empty with records");
}

TEST(write_refuses)
{
	struct policy p;

	mk_policy(&p);
	p.allow |= OPT_BIT(OPT_K_SHA256);
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "sha256 cannot be allowed");
	mk_policy(&p);
	p.allow |= OPT_BIT(OPT_K_KERNEL);
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "kernel cannot be allowed");
	mk_policy(&p);
	p.file[1].kind = POLICY_KERNEL;
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "two kernels");
	mk_policy(&p);
	p.nfiles = 1;
	p.file[0].kind = POLICY_INITRD;
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "no kernel");
	mk_policy(&p);
	strcpy(p.file[1].path, "\\efi\\KASLR\\VMLINUZ-6.1.0-amd64");
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "same path twice (FAT case)");
	mk_policy(&p);
	strcpy(p.file[0].path, "EFI\\kaslr\\vmlinuz");
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "relative path");
	mk_policy(&p);
	p.cmdline[3] = '\n';
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "control character");
	mk_policy(&p);
	memset(p.cmdline, 'a', OPT_CMDLINE_MAX - 1);
	p.cmdline[OPT_CMDLINE_MAX - 1] = 0;
	p.cmdline_len = OPT_CMDLINE_MAX - 1;
	CHECK(policy_write(&p, sec, 1024) == LDR_E_POLICY_TOO_BIG, "too big for the section");
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_OK, "fits 8 KiB");
	p.present = 0;
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_E_POLICY_FORMAT, "absent policy");
}

/* hand-made malformed sections, each from a good one */
TEST(malformed)
{
	static uint8_t good[POLICY_SECTION_SIZE];
	struct policy p, q;
	struct {
		const char *name;
		unsigned off;
		uint8_t val;
	} cases[] = {
		{ "magic", 0, 'X' },
		{ "version", 8, 2 },
		{ "header size", 10, 33 },
		{ "length past the section", 14, 0xff },
		{ "length below the header", 12, 8 },
		{ "unknown flag", 16, 5 },
		{ "allow never-key", 20, OPT_BIT(OPT_K_KERNEL) },
		{ "allow unknown key", 22, 1 },
		{ "too many records", 24, 200 },
		{ "one record too many", 24, 4 },
		{ "reserved", 28, 1 },
		{ "record type", 32, 9 },
		{ "record zero field", 34, 1 },
		{ "record length past", 38, 0x40 },
		{ "record length short", 36, 20 },
	};
	uint32_t used;

	mk_policy(&p);
	CHECK(policy_write(&p, good, sizeof(good)) == LDR_OK, "write");
	used = good[12] | good[13] << 8;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(sec, good, sizeof(sec));
		sec[cases[i].off] = cases[i].val;
		CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_E_POLICY_FORMAT, "%s", cases[i].name);
	}
	/* a NUL inside a path */
	memcpy(sec, good, sizeof(sec));
	sec[32 + 8 + 32 + 3] = 0;
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_E_POLICY_FORMAT, "NUL in a path");
	/* non-zero padding after the first record */
	memcpy(sec, good, sizeof(sec));
	{
		uint32_t n = sec[36] | sec[37] << 8;

		if (n % 8) {
			sec[32 + 8 + n] = 1;
			CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_E_POLICY_FORMAT, "padding");
		}
	}
	/* every truncation is refused */
	for (uint32_t l = 0; l < used; l++)
		CHECK(policy_parse(good, l, &q) == LDR_E_POLICY_FORMAT, "truncated to %u", l);
	/* every single-byte change inside the used part: refused, or a policy
	 * that still keeps the rules (one kernel, allow without never-keys) */
	for (uint32_t off = 0; off < used; off++) {
		memcpy(sec, good, sizeof(sec));
		sec[off] ^= 0x41;
		if (policy_parse(sec, sizeof(sec), &q) == LDR_OK && q.present) {
			CHECK(policy_kernel(&q) != NULL && !(q.allow & ~policy_allowable()),
			      "corrupt byte %u accepted breaking a rule", off);
		}
	}
}

TEST(find_fat_rules)
{
	struct policy p;

	mk_policy(&p);
	CHECK(policy_find(&p, POLICY_KERNEL, "/efi/KASLR/vmlinuz-6.1.0-amd64") == &p.file[0],
	      "case and slashes as FAT");
	CHECK(policy_find(&p, POLICY_INITRD, "\\EFI\\kaslr\\vmlinuz-6.1.0-amd64") == NULL,
	      "the kernel's pin is not an initrd's");
	CHECK(policy_find(&p, POLICY_KERNEL, "\\EFI\\kaslr\\vmlinuz-6.1.0-amd6") == NULL, "prefix");
	CHECK(policy_find(&p, POLICY_KERNEL, "\\EFI\\kaslr\\vmlinuz-6.1.0-amd64x") == NULL, "longer");
}

TEST(check_digest)
{
	struct policy p, none;
	uint8_t good[32], other[32];
	const char *k = "\\EFI\\kaslr\\vmlinuz-6.1.0-amd64", *i = "\\efi\\kaslr\\initrd.img-6.1.0-amd64";

	mk_policy(&p);
	memset(&none, 0, sizeof(none));
	sha256("kernel", 6, good);
	sha256("kernel!", 7, other);
	/* Secure Boot: only a matching pin */
	CHECK(policy_check_digest(&p, 1, POLICY_KERNEL, k, good, NULL) == LDR_OK, "sb match");
	CHECK(policy_check_digest(&p, 1, POLICY_KERNEL, k, other, NULL) == LDR_E_POLICY_HASH,
	      "sb one byte changed");
	CHECK(policy_check_digest(&p, 1, POLICY_KERNEL, k, other, other) == LDR_E_POLICY_HASH,
	      "sb: sha256= cannot replace the pin");
	CHECK(policy_check_digest(&p, 1, POLICY_KERNEL, "\\EFI\\kaslr\\other", good, good) ==
	      LDR_E_POLICY_UNPINNED, "sb unpinned path");
	CHECK(policy_check_digest(&none, 1, POLICY_KERNEL, k, good, NULL) == LDR_E_POLICY_UNPINNED,
	      "sb no policy");
	sha256("initrd", 6, good);
	CHECK(policy_check_digest(&p, 1, POLICY_INITRD, i, good, NULL) == LDR_OK, "sb initrd");
	CHECK(policy_check_digest(&p, 1, POLICY_INITRD, i, other, NULL) == LDR_E_POLICY_HASH,
	      "sb initrd changed");
	/* without: sha256= wins, else the policy's pin as a default */
	sha256("kernel", 6, good);
	CHECK(policy_check_digest(&p, 0, POLICY_KERNEL, k, other, other) == LDR_OK,
	      "off: sha256= replaces the pin");
	CHECK(policy_check_digest(&p, 0, POLICY_KERNEL, k, good, other) == LDR_E_HASH_MISMATCH,
	      "off: sha256= mismatch");
	CHECK(policy_check_digest(&p, 0, POLICY_INITRD, i, good, other) ==
	      LDR_E_INITRD_HASH_MISMATCH, "off: an initrd's :sha256= mismatch names the initrd");
	CHECK(policy_check_digest(&p, 0, POLICY_KERNEL, k, other, NULL) == LDR_E_POLICY_HASH,
	      "off: the pin as default");
	CHECK(policy_check_digest(&p, 0, POLICY_KERNEL, "\\other", other, NULL) == LDR_OK,
	      "off: unpinned file boots");
	CHECK(policy_check_digest(&none, 0, POLICY_KERNEL, k, other, NULL) == LDR_OK,
	      "off: no policy, no pin: today's behaviour");
	/* a module: no policy names one; its own :sha256= pins it */
	CHECK(policy_check_digest(&p, 1, POLICY_MODULE, k, good, NULL) == LDR_E_POLICY_UNPINNED,
	      "sb: a module is never pinned by the policy, even at the kernel's path");
	CHECK(policy_check_digest(&p, 0, POLICY_MODULE, k, other, NULL) == LDR_OK,
	      "off: a module at the kernel's path is not held to the kernel's pin");
	CHECK(policy_check_digest(&p, 0, POLICY_MODULE, "\\m", good, other) ==
	      LDR_E_MODULE_HASH_MISMATCH, "off: a module's :sha256= mismatch names the module");
	CHECK(policy_check_digest(&p, 0, POLICY_MODULE, "\\m", other, other) == LDR_OK,
	      "off: a module's :sha256= matches");
}

/* the digest is computed only where policy_check_digest could refuse */
TEST(wants_digest)
{
	struct policy p, none;
	uint8_t pin[32] = {1};
	const char *k = "\\EFI\\kaslr\\vmlinuz-6.1.0-amd64", *i = "\\efi\\kaslr\\initrd.img-6.1.0-amd64";

	mk_policy(&p);
	memset(&none, 0, sizeof(none));
	CHECK(!policy_wants_digest(&none, 0, POLICY_KERNEL, k, NULL), "nothing pins: no hash");
	CHECK(!policy_wants_digest(&p, 0, POLICY_KERNEL, "\\other", NULL), "unpinned path: no hash");
	CHECK(!policy_wants_digest(&p, 0, POLICY_INITRD, k, NULL), "the kernel's pin is not an initrd's");
	CHECK(policy_wants_digest(&none, 1, POLICY_KERNEL, k, NULL), "Secure Boot always hashes");
	CHECK(policy_wants_digest(&none, 0, POLICY_KERNEL, k, pin), "sha256= hashes");
	CHECK(policy_wants_digest(&p, 0, POLICY_KERNEL, k, NULL), "the policy's kernel pin");
	CHECK(policy_wants_digest(&p, 0, POLICY_INITRD, i, NULL), "the policy's initrd pin");
	/* every digest passes where none is wanted */
	CHECK(policy_check_digest(&p, 0, POLICY_KERNEL, "\\other", pin, NULL) == LDR_OK,
	      "unwanted digest admits anything");
}

/* one source's parse on top of the policy's defaults, as efi/main.c does */
static uint32_t merge_line(struct ldr_options *o, const char *line, int secure, uint32_t allow)
{
	struct ldr_options src;

	options_defaults(&src);
	if (options_parse_line(&src, line, strlen(line)) != LDR_OK)
		return 0xffffffffu;
	return options_merge(o, &src, secure, allow);
}

TEST(merge_table)
{
	struct policy p;
	struct ldr_options o;
	uint32_t ign;
	const char *seed = "kaslr.seed=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char line[OPT_PATH_MAX + OPT_CMDLINE_MAX + 16];

	mk_policy(&p);
	/* every key: Secure Boot on, nothing allowed */
	for (unsigned id = 0; id < OPT_K_COUNT; id++) {
		static const char *const word[OPT_K_COUNT] = {
			[OPT_K_VERBOSE] = "verbose", [OPT_K_NOKASLR] = "nokaslr",
			[OPT_K_KERNEL] = "kernel=\\EFI\\evil.elf", [OPT_K_CMDLINE] = "-- init=/bin/sh",
			[OPT_K_SEED] = "", [OPT_K_SHA256] = "",
			[OPT_K_MIN] = "kaslr.min=3G", [OPT_K_MAX] = "kaslr.max=64M",
			[OPT_K_MAXSIZE] = "kaslr.maxsize=64M",
			[OPT_K_MODULE] = "module=\\EFI\\evil.bin",
			[OPT_K_INITRD] = "initrd=\\EFI\\evil.img",
			[OPT_K_PHYS] = "kaslr.phys=lowest", [OPT_K_VIRT] = "kaslr.virt=-16M",
		};
		const char *w = word[id];

		if (id == OPT_K_SEED)
			w = seed;
		if (id == OPT_K_SHA256)
			w = "sha256=" "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
		options_defaults(&o);
		policy_to_options(&p, &o);
		ign = merge_line(&o, w, 1, 0);
		if (options_key_rule((enum opt_key_id)id) == OPT_SB_TAKEN)
			CHECK(ign == 0 && (o.set & OPT_BIT(id)), "%s taken", w);
		else
			CHECK(ign == OPT_BIT(id), "%s ignored under Secure Boot (0x%x)", w, ign);
		/* the same input with Secure Boot off is taken */
		options_defaults(&o);
		policy_to_options(&p, &o);
		CHECK(merge_line(&o, w, 0, 0) == 0 && (o.set & OPT_BIT(id)), "%s taken off", w);
		/* a policy can allow exactly the keys that are not NEVER */
		options_defaults(&o);
		ign = merge_line(&o, w, 1, OPT_BIT(id));
		CHECK((ign == 0) == (options_key_rule((enum opt_key_id)id) != OPT_SB_NEVER),
		      "%s with the policy allowing it", w);
	}
	/* what the kernel gets under Secure Boot: the policy's, untouched */
	options_defaults(&o);
	policy_to_options(&p, &o);
	ign = merge_line(&o, "verbose kernel=\\EFI\\evil.elf nokaslr -- init=/bin/sh", 1, 0);
	CHECK(ign == (OPT_BIT(OPT_K_VERBOSE) | OPT_BIT(OPT_K_KERNEL) | OPT_BIT(OPT_K_NOKASLR) |
		      OPT_BIT(OPT_K_CMDLINE)),
	      "ignored 0x%x", ign);
	CHECK(strcmp(options_kernel(&o, 0), p.file[0].path) == 0 && strcmp(o.cmdline, p.cmdline) == 0 &&
	      o.cmdline_len == p.cmdline_len && !o.nokaslr && !o.verbose, "policy kept");
	/* verbose prints addresses: under Secure Boot only when the policy allows it */
	options_defaults(&o);
	policy_to_options(&p, &o);
	CHECK(merge_line(&o, "verbose", 1, OPT_BIT(OPT_K_VERBOSE)) == 0 && o.verbose,
	      "verbose allowed by the policy");
	/* repeating the policy's own values is no change, so no warning */
	snprintf(line, sizeof(line), "kernel=%s -- %s", p.file[0].path, p.cmdline);
	CHECK(merge_line(&o, line, 1, 0) == 0, "same values are not ignored inputs");
	/* kaslr.conf then load options: the later source wins when off */
	options_defaults(&o);
	policy_to_options(&p, &o);
	{
		struct ldr_options c;
		const char *conf = "kernel other.elf\ncmdline from-conf\n";

		options_defaults(&c);
		CHECK(options_parse_config(&c, conf, strlen(conf)) == LDR_OK, "conf");
		CHECK(options_merge(&o, &c, 0, 0) == 0, "conf merged");
		CHECK(merge_line(&o, "-- from-options", 0, 0) == 0, "options merged");
		CHECK(strcmp(options_kernel(&o, 0), "other.elf") == 0 && strcmp(o.cmdline, "from-options") == 0,
		      "order: policy < kaslr.conf < load options");
	}
	/* an allowed cmdline under Secure Boot */
	options_defaults(&o);
	policy_to_options(&p, &o);
	CHECK(merge_line(&o, "-- quiet", 1, OPT_BIT(OPT_K_CMDLINE)) == 0 &&
	      strcmp(o.cmdline, "quiet") == 0, "allowed cmdline taken");
}

/* TRUST=shim: the flag round-trips, old policies read as before */
TEST(trust_shim_format)
{
	static const uint8_t empty[POLICY_HEADER_SIZE] = POLICY_EMPTY_INIT;
	struct policy p, q;

	mk_policy(&p);
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_OK, "write pins-only");
	CHECK(ldr_le32(sec + 16) == POLICY_F_WRITTEN, "a pins-only policy's flags are as before");
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_OK && !q.trust_shim &&
	      policy_trust(&q) == OPT_TRUST_PINS, "pins only");
	p.trust_shim = 1;
	CHECK(policy_write(&p, sec, sizeof(sec)) == LDR_OK, "write trust shim");
	CHECK(ldr_le32(sec + 16) == (POLICY_F_WRITTEN | POLICY_F_TRUST_SHIM), "flag written");
	CHECK(ldr_le16(sec + 8) == 1, "version stays 1");
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_OK && q.trust_shim &&
	      policy_trust(&q) == OPT_TRUST_SHIM, "parsed back");
	/* an unknown flag bit is still malformed */
	sec[16] |= 4;
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_E_POLICY_FORMAT, "unknown flag");
	/* the build's empty header never trusts shim */
	memset(sec, 0, sizeof(sec));
	memcpy(sec, empty, sizeof(empty));
	sec[16] = POLICY_F_TRUST_SHIM;
	CHECK(policy_parse(sec, sizeof(sec), &q) == LDR_E_POLICY_FORMAT, "empty header + trust");
	memset(&q, 0, sizeof(q));
	q.trust_shim = 1; /* not present: no trust */
	CHECK(policy_trust(&q) == OPT_TRUST_PINS, "absent policy trusts pins");
}

/* the decision: pin OR shim's Verify for a kernel, initrds measured */
TEST(trust_shim_check)
{
	struct policy p;
	uint8_t good[32], other[32];
	const char *k = "\\EFI\\kaslr\\vmlinuz-6.1.0-amd64", *i = "\\efi\\kaslr\\initrd.img-6.1.0-amd64";
	const char *u = "\\EFI\\kaslr\\vmlinuz-6.1.0-99-amd64";
	int ask = 7;

	mk_policy(&p);
	sha256("kernel", 6, good);
	sha256("kernel!", 7, other);
	/* pins-only policy: exactly policy_check_digest, shim or not */
	CHECK(policy_check_trust(&p, 1, 1, POLICY_KERNEL, u, other, NULL, &ask) ==
	      LDR_E_POLICY_UNPINNED && ask == 0, "pins only: unpinned refused with shim");
	CHECK(policy_check_trust(&p, 1, 1, POLICY_KERNEL, k, good, NULL, &ask) == LDR_OK &&
	      ask == 0, "pins only: pin");
	p.trust_shim = 1;
	/* a matching pin needs nobody */
	CHECK(policy_check_trust(&p, 1, 1, POLICY_KERNEL, k, good, NULL, &ask) == LDR_OK &&
	      ask == 0, "pin matches");
	CHECK(policy_check_trust(&p, 1, 0, POLICY_KERNEL, k, good, NULL, &ask) == LDR_OK &&
	      ask == 0, "pin matches, no shim");
	/* otherwise shim decides, when it is there */
	CHECK(policy_check_trust(&p, 1, 1, POLICY_KERNEL, u, other, NULL, &ask) == LDR_OK &&
	      ask == 1, "unpinned: ask shim");
	CHECK(policy_check_trust(&p, 1, 1, POLICY_KERNEL, k, other, NULL, &ask) == LDR_OK &&
	      ask == 1, "pin differs: ask shim");
	CHECK(policy_check_trust(&p, 1, 0, POLICY_KERNEL, u, other, NULL, &ask) ==
	      LDR_E_SHIM_ABSENT && ask == 0, "unpinned, no shim");
	CHECK(policy_check_trust(&p, 1, 0, POLICY_KERNEL, k, other, NULL, &ask) ==
	      LDR_E_SHIM_ABSENT, "pin differs, no shim");
	/* initrds: admitted with shim, pins only without */
	CHECK(policy_check_trust(&p, 1, 1, POLICY_INITRD, "\\EFI\\x.img", other, NULL, &ask) ==
	      LDR_OK && ask == 0, "initrd unpinned, shim");
	CHECK(policy_check_trust(&p, 1, 1, POLICY_INITRD, i, other, NULL, &ask) == LDR_OK &&
	      ask == 0, "initrd pin differs, shim");
	CHECK(policy_check_trust(&p, 1, 0, POLICY_INITRD, "\\EFI\\x.img", other, NULL, &ask) ==
	      LDR_E_POLICY_UNPINNED, "initrd unpinned, no shim");
	/* Secure Boot off: the trust adds nothing, shim is never asked */
	CHECK(policy_check_trust(&p, 0, 1, POLICY_KERNEL, k, other, NULL, &ask) ==
	      LDR_E_POLICY_HASH && ask == 0, "off: pin as default");
	CHECK(policy_check_trust(&p, 0, 1, POLICY_KERNEL, u, other, NULL, &ask) == LDR_OK &&
	      ask == 0, "off: unpinned boots");
}

/* OPT_TRUST_SHIM takes kernel and initrd, and nothing else, under Secure Boot */
TEST(trust_shim_merge)
{
	struct policy p;
	struct ldr_options o, src;
	const char *line = "kernel=vmlinuz-new initrd=initrd.img-new nokaslr module=m.bin -- init=/bin/sh";
	uint32_t ign;

	mk_policy(&p);
	for (unsigned id = 0; id < OPT_K_COUNT; id++)
		CHECK(options_key_shim((enum opt_key_id)id) ==
		      (id == OPT_K_KERNEL || id == OPT_K_INITRD), "key %u", id);
	options_defaults(&o);
	policy_to_options(&p, &o);
	options_defaults(&src);
	CHECK(options_parse_line(&src, line, strlen(line)) == LDR_OK, "parse");
	ign = options_merge_trust(&o, &src, 1, 0, OPT_TRUST_SHIM);
	CHECK(ign == (OPT_BIT(OPT_K_NOKASLR) | OPT_BIT(OPT_K_MODULE) | OPT_BIT(OPT_K_CMDLINE)),
	      "ignored 0x%x", ign);
	CHECK(strcmp(options_kernel(&o, 0), "vmlinuz-new") == 0 && o.ninitrd == 1 &&
	      strcmp(o.initrd[0].path, "initrd.img-new") == 0, "kernel and initrd taken");
	CHECK(strcmp(o.cmdline, p.cmdline) == 0 && !o.nokaslr && o.nmodules == 0,
	      "the pinned command line kept");
	/* the same line under a pins-only policy changes no file */
	options_defaults(&o);
	policy_to_options(&p, &o);
	ign = options_merge_trust(&o, &src, 1, 0, OPT_TRUST_PINS);
	CHECK((ign & OPT_BIT(OPT_K_KERNEL)) && (ign & OPT_BIT(OPT_K_INITRD)) &&
	      strcmp(options_kernel(&o, 0), p.file[0].path) == 0, "pins: kernel and initrd ignored");
}

/*
 * Secure Boot's state from SecureBoot and SetupMode (-1: absent or not one
 * byte): only SetupMode == 1 lifts the policy; a SetupMode that is missing
 * or malformed, or any value but 1, leaves it enforced.
 */
TEST(secure_boot_state)
{
	static const int vals[] = { -1, 0, 1, 2, 0xff };

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		for (size_t j = 0; j < sizeof(vals) / sizeof(vals[0]); j++) {
			int sb = vals[i], setup = vals[j];

			CHECK(policy_secure_boot(sb, setup) == (sb == 1 && setup != 1),
			      "SecureBoot %d SetupMode %d", sb, setup);
		}
	CHECK(policy_secure_boot(1, -1) == 1, "SetupMode missing: enforced");
	CHECK(policy_secure_boot(1, 0) == 1 && policy_secure_boot(1, 1) == 0 &&
	      policy_secure_boot(0, 0) == 0 && policy_secure_boot(-1, 0) == 0, "the plain cases");
}

/*
 * Under TRUST=shim only a kernel (through shim's Verify) and an initrd
 * (measured) get in without a pin: a module keeps its refusal, and is never
 * handed to Verify, whatever the Secure Boot state and shim's presence.
 */
TEST(trust_shim_module)
{
	struct policy p;
	uint8_t d[32], pin[32];
	int ask;

	mk_policy(&p);
	p.trust_shim = 1;
	sha256("module", 6, d);
	sha256("other", 5, pin);
	for (int secure = 0; secure < 2; secure++)
		for (int shim = 0; shim < 2; shim++)
			for (int pinned = 0; pinned < 2; pinned++) {
				enum ldr_err err;

				ask = 7;
				err = policy_check_trust(&p, secure, shim, POLICY_MODULE,
							 "\\EFI\\kaslr\\m.bin", d,
							 pinned ? pin : NULL, &ask);
				CHECK(ask == 0, "module (secure %d shim %d pin %d): sent to Verify",
				      secure, shim, pinned);
				if (secure)
					CHECK(err == LDR_E_POLICY_UNPINNED,
					      "module under Secure Boot (shim %d pin %d): %d", shim,
					      pinned, err);
				else
					CHECK(err == (pinned ? LDR_E_MODULE_HASH_MISMATCH : LDR_OK),
					      "module, Secure Boot off (shim %d pin %d): %d", shim,
					      pinned, err);
			}
	/* and the kinds that do come in, for contrast */
	CHECK(policy_check_trust(&p, 1, 1, POLICY_KERNEL, "\\EFI\\k", d, NULL, &ask) == LDR_OK &&
	      ask == 1, "a kernel goes to Verify");
	CHECK(policy_check_trust(&p, 1, 1, POLICY_INITRD, "\\EFI\\i", d, NULL, &ask) == LDR_OK &&
	      ask == 0, "an initrd is measured");
}

/*
 * policy_wants_digest against policy_check_digest (and policy_check_trust),
 * over every Secure Boot state, policy (none, pins only, TRUST=shim), kind,
 * path (pinned, unpinned), file pin (none, right, wrong) and shim: when no
 * digest is wanted, any digest is accepted - the loader does not hash a
 * file it would not refuse, and never skips one it would.
 */
TEST(wants_implies_accepts)
{
	static const enum policy_kind kinds[] = { POLICY_KERNEL, POLICY_INITRD, POLICY_MODULE };
	struct policy pol[3];
	uint8_t digests[3][32], own[32];
	size_t skipped = 0;

	memset(&pol[0], 0, sizeof(pol[0]));
	mk_policy(&pol[1]);
	mk_policy(&pol[2]);
	pol[2].trust_shim = 1;
	sha256("kernel", 6, digests[0]); /* the kernel's pin */
	sha256("initrd", 6, digests[1]); /* the initrd's pin */
	sha256("neither", 7, digests[2]);
	sha256("own", 3, own);
	for (int secure = 0; secure < 2; secure++)
		for (size_t pi = 0; pi < 3; pi++)
			for (size_t ki = 0; ki < 3; ki++)
				for (int pinned = 0; pinned < 2; pinned++)
					for (int opin = 0; opin < 3; opin++) {
						const struct policy *p = &pol[pi];
						enum policy_kind kind = kinds[ki];
						const char *path = !pinned ? "\\EFI\\other" :
							kind == POLICY_INITRD ? pol[1].file[1].path :
							pol[1].file[0].path;
						const uint8_t *pin = opin == 0 ? NULL :
							opin == 1 ? own : digests[2];

						if (policy_wants_digest(p, secure, kind, path, pin))
							continue;
						skipped++;
						for (size_t d = 0; d < 3; d++) {
							int ask = 0;

							CHECK(policy_check_digest(p, secure, kind, path,
										  digests[d], pin) == LDR_OK,
							      "not wanted, refused: secure %d policy %zu kind %d pinned %d pin %d digest %zu",
							      secure, pi, kind, pinned, opin, d);
							for (int shim = 0; shim < 2; shim++)
								CHECK(policy_check_trust(p, secure, shim, kind,
											 path, digests[d], pin,
											 &ask) == LDR_OK && !ask,
								      "not wanted, trust refused: secure %d policy %zu kind %d pinned %d pin %d digest %zu shim %d",
								      secure, pi, kind, pinned, opin, d, shim);
						}
					}
	/* the only files left unhashed: Secure Boot off, no pin of any kind */
	CHECK(skipped > 0, "some file is left unhashed (%zu)", skipped);
}
