/*
 * kaslr-pcr - the PCR values of the next boot through kaslr-loader, from
 * this boot's event log and what is now on the ESP, so that a secret can
 * be sealed to them before the boot that proves them (kaslr-pcr(1)).
 * Built by make from the core (src/pcrlog.c sorts the log, src/settings.c
 * merges the configuration as the loader does, src/authenticode.c, the
 * policy, UKI and kernel-format code) and libcrypto for the banks.
 *
 *   kaslr-pcr predict --esp DIR [--eventlog FILE] [--pcrs LIST] [--bank ALG]...
 *                     [--options TEXT] [--format text|tpm2|clevis] [--json]
 *                     [--output FILE]
 *   kaslr-pcr authenticode [--bank ALG] FILE...
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "authenticode.h"
#include "bzimage.h"
#include "decompress.h"
#include "elf_load.h"
#include "linux_boot.h"
#include "options.h"
#include "pcrlog.h"
#include "pe.h"
#include "policy.h"
#include "settings.h"
#include "sha256.h"
#include "tcglog.h"
#include "uki.h"

#define TOOL "kaslr-pcr"
#define FILE_MAX (1024ULL * 1024 * 1024)
#define EVENTLOG_DEFAULT "/sys/kernel/security/tpm0/binary_bios_measurements"
#define KERNEL_DEFAULT "kernel.elf" /* as efi/main.c */
#define CONF_NAME "kaslr.conf"
#define BANKS_MAX 5
#define RECORDS_MAX (4 + 1 + OPT_INITRD_MAX + OPT_MODULES_MAX + UKI_EVENTS_MAX + 4)

/* ------------------------------------------------------------ small helpers */

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, TOOL ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: " TOOL " predict --esp DIR [--eventlog FILE] [--pcrs LIST] [--bank ALG]...\n"
		"                        [--options TEXT] [--format text|tpm2|clevis] [--json]\n"
		"                        [--output FILE]\n"
		"       " TOOL " authenticode [--bank ALG] FILE...\n");
	exit(2);
}

/* a whole file, or NULL with errno set (ENOENT, EISDIR, EFBIG...) */
static uint8_t *read_file(const char *path, uint64_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	uint64_t len = 0, cap = 0;
	struct stat st;
	size_t n;

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		errno = EISDIR;
		return NULL;
	}
	do {
		if (len == cap) {
			uint8_t *nb;

			cap = cap ? 2 * cap : 1 << 20;
			if (cap > FILE_MAX) {
				free(buf);
				fclose(f);
				errno = EFBIG;
				return NULL;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	*ret_len = len;
	return buf ? buf : malloc(1);
}

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* ------------------------------------------------------------ banks */

static const struct bank {
	const char *name;
	uint16_t alg;
} banks[] = {
	{ "sha1", TCGLOG_ALG_SHA1 },
	{ "sha256", TCGLOG_ALG_SHA256 },
	{ "sha384", TCGLOG_ALG_SHA384 },
	{ "sha512", TCGLOG_ALG_SHA512 },
};

static const struct bank *bank_find(const char *name)
{
	for (size_t i = 0; i < sizeof(banks) / sizeof(banks[0]); i++)
		if (!strcmp(banks[i].name, name))
			return &banks[i];
	return NULL;
}

static const EVP_MD *bank_md(const struct bank *b)
{
	const EVP_MD *md = EVP_get_digestbyname(b->name);

	if (!md)
		die("libcrypto has no %s", b->name);
	return md;
}

/* digest of the pieces (p[i], n[i]) in one bank */
static void digest(const struct bank *b, int count, const void *const *p, const uint64_t *n,
		   uint8_t *out)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned len = 0;

	if (!c || !EVP_DigestInit_ex(c, bank_md(b), NULL))
		die("libcrypto: cannot start %s", b->name);
	for (int i = 0; i < count; i++)
		if (n[i] && !EVP_DigestUpdate(c, p[i], (size_t)n[i]))
			die("libcrypto: %s failed", b->name);
	if (!EVP_DigestFinal_ex(c, out, &len))
		die("libcrypto: %s failed", b->name);
	EVP_MD_CTX_free(c);
}

static void digest1(const struct bank *b, const void *p, uint64_t n, uint8_t *out)
{
	digest(b, 1, &p, &n, out);
}

/* the Authenticode digest of a PE file in one bank */
static enum ldr_err digest_pe(const struct bank *b, const uint8_t *img, uint64_t len,
			      uint8_t *out)
{
	static struct authenticode a;
	const void *p[AUTHENTICODE_RANGES_MAX];
	uint64_t n[AUTHENTICODE_RANGES_MAX];
	enum ldr_err err = authenticode_ranges(img, len, &a);

	if (err != LDR_OK)
		return err;
	for (uint32_t i = 0; i < a.n; i++) {
		p[i] = img + a.r[i].off;
		n[i] = a.r[i].len;
	}
	digest(b, (int)a.n, p, n, out);
	return LDR_OK;
}

static void extend(void *ctx, const uint8_t *pcr, const uint8_t *d, uint8_t *out)
{
	const struct bank *b = ctx;
	const EVP_MD *md = bank_md(b);
	uint64_t sz = (uint64_t)EVP_MD_get_size(md);
	uint8_t old[PCRLOG_DIGEST_MAX];
	const void *p[2] = { old, d };
	uint64_t n[2] = { sz, sz };

	memcpy(old, pcr, sz);
	digest(b, 2, p, n, out);
}

/* ------------------------------------------------------------ the ESP */

static const char *esp_dir;

/*
 * An ESP path ("\EFI\BOOT\x.efi") as a file under esp_dir, found as FAT
 * finds it: each component without regard to case.  Returns 0 with the
 * host path in out, -1 with errno (ENOENT) when a component is missing.
 */
static int esp_find(const char *esp_path, char *out, size_t cap)
{
	char comp[PCRLOG_PATH_MAX];
	const char *p = esp_path;
	size_t n = (size_t)snprintf(out, cap, "%s", esp_dir);

	if (n >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	while (*p) {
		size_t k = 0;
		struct stat st;

		while (*p == '\\' || *p == '/')
			p++;
		if (!*p)
			break;
		while (*p && *p != '\\' && *p != '/' && k + 1 < sizeof(comp))
			comp[k++] = *p++;
		comp[k] = 0;
		if (n + 1 + k + 1 > cap) {
			errno = ENAMETOOLONG;
			return -1;
		}
		out[n] = '/';
		memcpy(out + n + 1, comp, k + 1);
		if (stat(out, &st) != 0) {
			DIR *d;
			struct dirent *de;
			int found = 0;

			out[n] = 0;
			d = opendir(out);
			if (!d) {
				errno = ENOENT;
				return -1;
			}
			while ((de = readdir(d)))
				if (!strcasecmp(de->d_name, comp)) {
					memcpy(comp, de->d_name, k + 1);
					found = 1;
					break;
				}
			closedir(d);
			if (!found) {
				errno = ENOENT;
				return -1;
			}
			out[n] = '/';
			memcpy(out + n + 1, comp, k + 1);
		}
		n += 1 + k;
	}
	return 0;
}

/* an ESP file's bytes, or NULL with a reason in why */
static uint8_t *esp_read(const char *esp_path, uint64_t *ret_len, char *why, size_t cap)
{
	char host[4096];
	uint8_t *b;

	/* a reason cut short is still one */
	if (esp_find(esp_path, host, sizeof(host)) != 0) {
		if (snprintf(why, cap, "%s: not found under %s", esp_path, esp_dir) < 0)
			why[0] = 0;
		return NULL;
	}
	b = read_file(host, ret_len);
	if (!b && snprintf(why, cap, "%s: %s", host, strerror(errno)) < 0)
		why[0] = 0;
	return b;
}

/*
 * The path the loader opens for a file option, as efi/file.c makes it:
 * as given when it starts with '\' or '/', else beside the loader
 * (through the last '\' of its own path); '/' becomes '\'.
 */
static void loader_path_of(const char *loader, const char *name, char *out, size_t cap)
{
	size_t dir = 0;

	if (name[0] == '\\' || name[0] == '/') {
		snprintf(out, cap, "%s", name);
	} else {
		for (size_t i = 0; loader[i]; i++)
			if (loader[i] == '\\')
				dir = i + 1;
		if (dir == 0)
			snprintf(out, cap, "\\%s", name);
		else
			snprintf(out, cap, "%.*s%s", (int)dir, loader, name);
	}
	for (size_t i = 0; out[i]; i++)
		if (out[i] == '/')
			out[i] = '\\';
}

/* ------------------------------------------------------------ what the next boot measures */

/* which PCRs an input decides: the first error for each is kept */
#define M(p) (1u << (p))
#define LOADER_PCRS (M(4) | M(5) | M(9) | M(11) | M(12))
static char *pcr_err[PCRLOG_PCRS];

static void fail_pcrs(uint32_t mask, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (uint32_t p = 0; p < PCRLOG_PCRS; p++)
		if ((mask & M(p)) && !pcr_err[p])
			pcr_err[p] = strdup(msg);
}

/* one record of the next boot, kept as the bytes it hashes (or a PE image) */
struct next_rec {
	uint32_t pcr;
	const uint8_t *data;
	uint64_t len;
	int pe;          /* its Authenticode digest, not a plain one */
	const uint8_t *data2; /* a UKI section's zero padding: len2 zeros after data */
	uint64_t len2;
};

static struct next_rec recs[RECORDS_MAX];
static size_t nrecs;

static void add_rec(uint32_t pcr, const uint8_t *data, uint64_t len, int pe)
{
	if (nrecs == RECORDS_MAX)
		die("more records than %d", RECORDS_MAX);
	recs[nrecs].pcr = pcr;
	recs[nrecs].data = data;
	recs[nrecs].len = len;
	recs[nrecs].pe = pe;
	recs[nrecs].data2 = NULL;
	recs[nrecs].len2 = 0;
	nrecs++;
}

static void *host_alloc(void *ctx, uint64_t size)
{
	(void)ctx;
	return size > FILE_MAX * 2 ? NULL : malloc(size ? size : 1);
}

static void host_free(void *ctx, void *p, uint64_t size)
{
	(void)ctx;
	(void)size;
	free(p);
}

/* Is this kernel file one the Linux protocol boots (efi/linux.c linux_probe)? */
static int kernel_is_linux(const uint8_t *file, uint64_t len, uint64_t limit, int *ret_ok)
{
	static const struct decomp_alloc a = { host_alloc, host_free, NULL, NULL, NULL, NULL };
	struct elf_image elf;
	const uint8_t *img = file;
	void *out = NULL;
	uint64_t ilen = len, cap = 0;
	enum decomp_format fmt;
	int linux = 0;

	*ret_ok = 1;
	if (bzimage_detect(file, len))
		return 1;
	fmt = decomp_detect(file, len);
	if (fmt != DECOMP_NONE) {
		if (decomp_image(file, len, limit, 0, &a, &out, &ilen, &cap) != LDR_OK) {
			*ret_ok = 0;
			return 0;
		}
		img = out;
	}
	if (elf_parse(img, ilen, NULL, &elf) != LDR_OK)
		*ret_ok = 0;
	else
		linux = linux_detect(&elf);
	free(out);
	return linux;
}

/* Does the file on DIR look like shim (an .sbat naming the component "shim")? */
static int is_shim(const uint8_t *img, uint64_t len)
{
	struct pe_section s;

	if (pe_find_section(img, len, PE_VIEW_FILE, ".sbat", &s) != LDR_OK)
		return 0;
	for (uint64_t i = 0; i + 5 <= s.size; i++)
		if ((i == 0 || img[s.off + i - 1] == '\n') && !memcmp(img + s.off + i, "shim,", 5))
			return 1;
	return 0;
}

/* everything the next boot measures, read once (the banks hash it after) */
static struct next {
	struct policy pol;
	struct ldr_options opt, scratch;
	char settings[OPT_SETTINGS_MAX + 1];
	size_t settings_len;
	uint8_t *loader;
	uint64_t loader_len;
	struct pe_section polsec;
	uint8_t cmdline16[2 * OPT_CMDLINE_MAX + 2];
	uint64_t cmdline16_len;
	int shim, secure;
	uint8_t *kernel;
	uint64_t kernel_len;
	struct uki uki;
	int is_uki;
} nx;

/*
 * The gate every file the loader boots passes (efi/secureboot.c
 * policy_check_file, efi/uki.c uki_trust): the digest checked only where
 * a pin or the policy asks for it, then the policy's trust.  *ret_ask_shim:
 * the loader asks shim's Verify about it.
 */
static enum ldr_err gate(enum policy_kind kind, const char *path, const uint8_t *file,
			 uint64_t len, const uint8_t *pin, int *ret_ask_shim)
{
	uint8_t d[32];

	*ret_ask_shim = 0;
	if (!policy_wants_digest(&nx.pol, nx.secure, kind, path, pin))
		return LDR_OK;
	sha256(file, len, d);
	return policy_check_trust(&nx.pol, nx.secure, nx.shim, kind, path, d, pin, ret_ask_shim);
}

static void refused(uint32_t mask, const char *path, enum ldr_err err)
{
	fail_pcrs(mask, "%s: the loader would refuse to boot it: %s", path, ldr_strerror(err));
}

static void gather(const struct pcrlog *l, const char *load_options)
{
	const struct pcrlog_event *le = &l->ev[l->loader];
	char why[1024], path[OPT_PATH_MAX + 8];
	struct settings_result sr;
	uint8_t *conf = NULL;
	uint64_t conf_len = 0;
	int ask = 0, linux_ok = 1, is_linux;
	enum ldr_err err;

	nx.secure = l->secure_boot;
	nx.loader = esp_read(le->path, &nx.loader_len, why, sizeof(why));
	if (!nx.loader) {
		fail_pcrs(LOADER_PCRS, "the loader the log shows started: %s", why);
		return;
	}
	if (pe_find_section(nx.loader, nx.loader_len, PE_VIEW_FILE, POLICY_SECTION, &nx.polsec) !=
		    LDR_OK ||
	    nx.polsec.size < POLICY_SECTION_SIZE ||
	    policy_parse(nx.loader + nx.polsec.off, POLICY_SECTION_SIZE, &nx.pol) != LDR_OK) {
		fail_pcrs(LOADER_PCRS,
			  "%s on %s is not kaslr-loader (no readable %s section), not the loader the log shows",
			  le->path, esp_dir, POLICY_SECTION);
		return;
	}
	/* started by shim: shim's second stage is a file path alone */
	if (le->file_only && l->starter != PCRLOG_NONE) {
		const struct pcrlog_event *se = &l->ev[l->starter];
		uint64_t slen;
		uint8_t *s = se->kind == PCRLOG_IMAGE ? esp_read(se->path, &slen, why, sizeof(why)) :
							 NULL;

		nx.shim = s && is_shim(s, slen);
		free(s);
		if (!nx.shim) {
			fail_pcrs(LOADER_PCRS, "the loader was started by %s, which is not shim on %s: what it measures is not known",
				  se->path[0] ? se->path : "an image without a file", esp_dir);
			return;
		}
	} else if (le->file_only) {
		fail_pcrs(LOADER_PCRS, "the loader's record names no device and no image started it");
		return;
	}

	/* PCR 5: the policy, the settings text (efi/secureboot.c, efi/main.c) */
	loader_path_of(le->path, CONF_NAME, path, sizeof(path));
	{
		char host[4096];

		if (esp_find(path, host, sizeof(host)) == 0) {
			conf = read_file(host, &conf_len);
			if (!conf) {
				fail_pcrs(LOADER_PCRS, "%s: %s", host, strerror(errno));
				return;
			}
			if (conf_len > OPT_TEXT_MAX) {
				fail_pcrs(LOADER_PCRS, "%s: larger than the loader reads (%d bytes)", host,
					  OPT_TEXT_MAX);
				return;
			}
		}
	}
	err = settings_merge(&nx.pol, nx.secure, (const char *)conf, conf_len, load_options,
			     load_options ? strlen(load_options) : 0, &nx.opt, &nx.scratch, &sr);
	free(conf);
	if (err == LDR_E_POLICY_NONE) {
		fail_pcrs(LOADER_PCRS, "Secure Boot is on and %s carries no policy: it would refuse to boot",
			  le->path);
		return;
	}
	if (err != LDR_OK) {
		if (sr.bad_source == SETTINGS_CONF)
			fail_pcrs(LOADER_PCRS, "%s line %u: '%s': %s (the loader would refuse to boot)",
				  path, sr.bad_line, sr.bad, ldr_strerror(err));
		else
			fail_pcrs(LOADER_PCRS, "load options: '%s': %s (the loader would refuse to boot)",
				  sr.bad, ldr_strerror(err));
		return;
	}
	if (options_settings_text(&nx.opt, nx.settings, OPT_SETTINGS_MAX, &nx.settings_len) != LDR_OK)
		die("the settings text is longer than %d bytes", OPT_SETTINGS_MAX);
	if (nx.pol.present)
		add_rec(TPM_PCR_POLICY, nx.loader + nx.polsec.off, nx.pol.used, 0);
	add_rec(TPM_PCR_POLICY, (const uint8_t *)nx.settings, nx.settings_len, 0);

	/* the kernel (efi/main.c read_kernel) */
	loader_path_of(le->path, nx.opt.nkernels ? nx.opt.kernels[0] : KERNEL_DEFAULT, path,
		       sizeof(path));
	nx.kernel = esp_read(path, &nx.kernel_len, why, sizeof(why));
	if (!nx.kernel) {
		fail_pcrs(M(4) | M(9) | M(11) | M(12), "the kernel %s", why);
		return;
	}
	if (nx.kernel_len == 0) {
		fail_pcrs(M(4) | M(9) | M(11) | M(12), "the kernel %s is empty: the loader would refuse it",
			  path);
		return;
	}
	nx.is_uki = uki_detect(nx.kernel, nx.kernel_len);
	add_rec(TPM_PCR_FILES, nx.kernel, nx.kernel_len, 0);
	err = gate(POLICY_KERNEL, path, nx.kernel, nx.kernel_len,
		   nx.opt.have_sha256 ? nx.opt.sha256 : NULL, &ask);
	if (err != LDR_OK && nx.is_uki && nx.secure) {
		/* a UKI no pin admits under Secure Boot: its own signature,
		 * through the firmware's LoadImage, which measures it */
		if (nx.shim) {
			fail_pcrs(M(4), "%s: a unified kernel image that shim's LoadImage verifies is not predicted",
				  path);
			return;
		}
		add_rec(4, nx.kernel, nx.kernel_len, 1);
	} else if (err != LDR_OK) {
		refused(M(4) | M(9) | M(11) | M(12), path, err);
		return;
	}
	if (ask || (nx.secure && nx.shim)) {
		/* shim's Verify measures what it is asked about (its tpm_log_pe),
		 * and under Secure Boot the loader asks it about every kernel
		 * (efi/secureboot.c, check_file), pinned or not; what it cannot
		 * parse as a PE image it refuses unmeasured */
		static struct authenticode a;

		if (authenticode_ranges(nx.kernel, nx.kernel_len, &a) != LDR_OK) {
			if (ask) {
				fail_pcrs(M(4), "%s: not a PE image: shim's Verify would refuse it", path);
				return;
			}
		} else {
			add_rec(4, nx.kernel, nx.kernel_len, 1);
		}
	}

	if (nx.is_uki) {
		/* PCR 11 and the command line as the image's stub (efi/uki.c) */
		struct uki_event ev[UKI_EVENTS_MAX];
		static char line[OPT_CMDLINE_MAX];
		size_t n, ln = 0;
		int given = nx.opt.cmdline_len > 0;

		err = uki_parse(nx.kernel, nx.kernel_len, &nx.uki);
		if (err != LDR_OK) {
			fail_pcrs(M(9) | M(11) | M(12), "%s: %s (the loader would refuse it)", path,
				  ldr_strerror(err));
			return;
		}
		n = uki_events(&nx.uki, ev);
		for (size_t i = 0; i < n; i++) {
			const struct uki_section *s = &nx.uki.sec[ev[i].sec];
			const char *name = uki_section_name((enum uki_section_id)ev[i].sec);

			if (!ev[i].data) {
				add_rec(11, (const uint8_t *)name, strlen(name) + 1, 0);
			} else {
				add_rec(11, nx.kernel + s->off, s->raw, 0);
				recs[nrecs - 1].len2 = s->size - s->raw;
			}
		}
		if (given && nx.secure && nx.uki.sec[UKI_SEC_CMDLINE].size > 0)
			given = 0;
		if (given) {
			err = uki_cmdline((const uint8_t *)nx.opt.cmdline, nx.opt.cmdline_len, line,
					  sizeof(line), &ln);
			if (err != LDR_OK) {
				fail_pcrs(M(12), "the kernel command line: %s", ldr_strerror(err));
				return;
			}
			/* the stub's record: UTF-16 with its NUL */
			for (size_t i = 0; i < ln; i++) {
				nx.cmdline16[2 * i] = (uint8_t)line[i];
				nx.cmdline16[2 * i + 1] = 0;
			}
			nx.cmdline16[2 * ln] = nx.cmdline16[2 * ln + 1] = 0;
			nx.cmdline16_len = 2 * ln + 2;
			add_rec(TPM_PCR_CMDLINE, nx.cmdline16, nx.cmdline16_len, 0);
		}
		is_linux = 1;
	} else {
		nx.cmdline16_len = tcglog_cmdline_event(nx.opt.cmdline, nx.opt.cmdline_len,
							nx.cmdline16, sizeof(nx.cmdline16));
		add_rec(TPM_PCR_CMDLINE, nx.cmdline16, nx.cmdline16_len, 0);
		is_linux = kernel_is_linux(nx.kernel, nx.kernel_len, nx.opt.max_kernel, &linux_ok);
		if (!linux_ok) {
			fail_pcrs(M(9), "%s: neither a bzImage nor an ELF kernel the loader reads", path);
			return;
		}
	}

	/* PCR 9: the initrds (Linux), the modules (a kernel of the loader's
	 * own protocol), in order, each through the same gate */
	if (is_linux && nx.opt.nmodules) {
		fail_pcrs(M(9), "module= given for a Linux kernel: the loader would refuse to boot");
		return;
	}
	for (uint32_t i = 0; is_linux && i < nx.opt.ninitrd; i++) {
		const struct opt_file *f = &nx.opt.initrd[i];
		uint64_t len;
		uint8_t *b;

		if (f->kernel != 0)
			continue; /* another kernel's of the list: the first boots */
		loader_path_of(le->path, f->path, path, sizeof(path));
		b = esp_read(path, &len, why, sizeof(why));
		if (!b) {
			fail_pcrs(M(9), "initrd %s", why);
			return;
		}
		add_rec(TPM_PCR_FILES, b, len, 0);
		err = gate(POLICY_INITRD, path, b, len, f->have_sha256 ? f->sha256 : NULL, &ask);
		if (err != LDR_OK) {
			refused(M(9), path, err);
			return;
		}
	}
	for (uint32_t i = 0; !is_linux && i < nx.opt.nmodules; i++) {
		const struct opt_module *m = &nx.opt.modules[i];
		uint64_t len;
		uint8_t *b;

		loader_path_of(le->path, m->path, path, sizeof(path));
		b = esp_read(path, &len, why, sizeof(why));
		if (!b || len == 0) {
			fail_pcrs(M(9), b ? "module %s is empty: the loader would refuse it" : "module %s",
				  b ? path : why);
			return;
		}
		add_rec(TPM_PCR_FILES, b, len, 0);
		err = gate(POLICY_MODULE, path, b, len, m->have_sha256 ? m->sha256 : NULL, &ask);
		if (err != LDR_OK) {
			refused(M(9), path, err);
			return;
		}
	}
}

/* the records' digests in one bank */
static void records_in(const struct bank *b, struct pcrlog_record *out)
{
	for (size_t i = 0; i < nrecs; i++) {
		out[i].pcr = recs[i].pcr;
		memset(out[i].digest, 0, sizeof(out[i].digest));
		if (recs[i].pe) {
			if (digest_pe(b, recs[i].data, recs[i].len, out[i].digest) != LDR_OK)
				die("a PE image changed while read");
		} else if (recs[i].len2) {
			uint8_t *z = calloc(1, (size_t)recs[i].len2);
			const void *p[2] = { recs[i].data, z };
			uint64_t n[2] = { recs[i].len, recs[i].len2 };

			if (!z)
				die("out of memory");
			digest(b, 2, p, n, out[i].digest);
			free(z);
		} else {
			digest1(b, recs[i].data, recs[i].len, out[i].digest);
		}
	}
}

/* ------------------------------------------------------------ predict */

static uint32_t parse_pcrs(const char *s)
{
	uint32_t mask = 0;
	const char *p = s;

	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p || a >= PCRLOG_PCRS)
			die("--pcrs %s: want PCR numbers 0-23, e.g. 4,5,7,9,12 or 0-7", s);
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			if (end == p + 1 || b >= PCRLOG_PCRS || b < a)
				die("--pcrs %s: want PCR numbers 0-23, e.g. 4,5,7,9,12 or 0-7", s);
			p = end;
		}
		for (unsigned long i = a; i <= b; i++)
			mask |= M(i);
		if (*p == ',')
			p++;
		else if (*p)
			die("--pcrs %s: want PCR numbers 0-23, e.g. 4,5,7,9,12 or 0-7", s);
	}
	if (!mask)
		die("--pcrs: no PCR given");
	return mask;
}

static void b64url(const uint8_t *d, size_t n, FILE *f)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);

		fputc(t[v >> 18 & 63], f);
		fputc(t[v >> 12 & 63], f);
		if (i + 1 < n)
			fputc(t[v >> 6 & 63], f);
		if (i + 2 < n)
			fputc(t[v & 63], f);
	}
}

enum format { FMT_TEXT, FMT_TPM2, FMT_CLEVIS };

static int cmd_predict(int argc, char **argv)
{
	const char *log_path = EVENTLOG_DEFAULT, *options = NULL, *out_path = NULL;
	const struct bank *bank[BANKS_MAX];
	static uint8_t value[BANKS_MAX][PCRLOG_PCRS][PCRLOG_DIGEST_MAX];
	static struct pcrlog_record rec[RECORDS_MAX];
	uint32_t mask = M(4) | M(5) | M(7) | M(9) | M(12), size[BANKS_MAX];
	int nbank = 0, json = 0, failed = 0;
	enum format fmt = FMT_TEXT;
	struct pcrlog_event *ev;
	struct pcrlog l;
	uint64_t len;
	uint8_t *log;
	size_t cap;
	FILE *out = stdout;
	enum ldr_err err;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		if (!v)
			die("%s needs a value", a);
		i++;
		if (!strcmp(a, "--esp"))
			esp_dir = v;
		else if (!strcmp(a, "--eventlog"))
			log_path = v;
		else if (!strcmp(a, "--pcrs"))
			mask = parse_pcrs(v);
		else if (!strcmp(a, "--options"))
			options = v;
		else if (!strcmp(a, "--output"))
			out_path = v;
		else if (!strcmp(a, "--bank")) {
			if (nbank == BANKS_MAX)
				die("more than %d --bank", BANKS_MAX);
			if (!(bank[nbank++] = bank_find(v)))
				die("--bank %s: want sha1, sha256, sha384 or sha512", v);
		} else if (!strcmp(a, "--format")) {
			if (!strcmp(v, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(v, "tpm2"))
				fmt = FMT_TPM2;
			else if (!strcmp(v, "clevis"))
				fmt = FMT_CLEVIS;
			else
				die("--format %s: want text, tpm2 or clevis", v);
		} else {
			usage();
		}
	}
	if (!esp_dir)
		die("predict needs --esp DIR, the EFI system partition as the next boot finds it");
	if (!nbank)
		bank[nbank++] = bank_find("sha256");
	if (fmt != FMT_TEXT && (nbank != 1 || json))
		die("--format %s takes one --bank and no --json", fmt == FMT_TPM2 ? "tpm2" : "clevis");
	log = read_file(log_path, &len);
	if (!log)
		die("%s: %s (the event log of this boot; --eventlog FILE names another)", log_path,
		    strerror(errno));
	/* a record is at least 12 bytes of header, a digest and a size */
	cap = len / 16 + 1;
	ev = calloc(cap, sizeof(*ev));
	if (!ev)
		die("out of memory");

	for (int b = 0; b < nbank; b++) {
		err = pcrlog_read(log, len, bank[b]->alg, ev, cap, &l);
		if (err == LDR_E_PCRLOG)
			die("%s: %s%s%s", log_path, l.why,
			    strstr(l.why, "bank") ? ": " : "", strstr(l.why, "bank") ? bank[b]->name : "");
		if (err != LDR_OK)
			die("%s: %s", log_path, ldr_strerror(err));
		if ((uint32_t)EVP_MD_get_size(bank_md(bank[b])) != l.size)
			die("%s: its %s digests are %u bytes", log_path, bank[b]->name, l.size);
		size[b] = l.size;
		if (b == 0)
			gather(&l, options);
		/* PCR 4: each image up to the loader, recomputed from its file */
		uint8_t (*now)[PCRLOG_DIGEST_MAX] = calloc(l.nev ? l.nev : 1, PCRLOG_DIGEST_MAX);

		if (!now)
			die("out of memory");
		for (size_t i = 0; i < l.nev; i++) {
			char why[1024];
			uint64_t ilen;
			uint8_t *img;

			if (ev[i].kind != PCRLOG_IMAGE)
				continue;
			img = esp_read(ev[i].path, &ilen, why, sizeof(why));
			if (!img) {
				if (b == 0)
					fail_pcrs(M(4), "an image the log shows started: %s", why);
				continue;
			}
			if (digest_pe(bank[b], img, ilen, now[i]) != LDR_OK) {
				if (b == 0)
					fail_pcrs(M(4), "%s on %s is not a PE image the firmware would start",
						  ev[i].path, esp_dir);
			} else {
				ev[i].now = now[i];
			}
			free(img);
		}
		records_in(bank[b], rec);
		for (uint32_t p = 0; p < PCRLOG_PCRS; p++) {
			size_t at;
			const char *why;

			if (!(mask & M(p)) || pcr_err[p])
				continue;
			err = pcrlog_predict(&l, p, rec, nrecs, extend, (void *)bank[b], value[b][p], &at,
					     &why);
			if (err != LDR_OK) {
				char msg[512];

				snprintf(msg, sizeof(msg), "%s (the record at offset %llu of %s, event type 0x%x)",
					 why, (unsigned long long)l.ev[at].off, log_path, l.ev[at].type);
				pcr_err[p] = strdup(msg);
			}
		}
		free(now);
	}
	/* one line per reason, naming every PCR it leaves unpredicted */
	for (uint32_t p = 0; p < PCRLOG_PCRS; p++) {
		if (!(mask & M(p)) || !pcr_err[p])
			continue;
		fprintf(stderr, TOOL ": PCR %u", p);
		for (uint32_t q = p + 1; q < PCRLOG_PCRS; q++)
			if ((mask & M(q)) && pcr_err[q] && !strcmp(pcr_err[q], pcr_err[p])) {
				fprintf(stderr, ", %u", q);
				free(pcr_err[q]);
				pcr_err[q] = NULL;
			}
		fprintf(stderr, ": %s\n", pcr_err[p]);
		failed = 1;
	}
	if (failed)
		return 1;
	if (out_path && !(out = fopen(out_path, "wb")))
		die("%s: %s", out_path, strerror(errno));
	if (fmt == FMT_TPM2 || fmt == FMT_CLEVIS) {
		static uint8_t all[PCRLOG_PCRS * PCRLOG_DIGEST_MAX];
		size_t n = 0;

		for (uint32_t p = 0; p < PCRLOG_PCRS; p++)
			if (mask & M(p)) {
				memcpy(all + n, value[0][p], size[0]);
				n += size[0];
			}
		if (fmt == FMT_TPM2) {
			fwrite(all, 1, n, out);
		} else {
			b64url(all, n, out);
			fputc('\n', out);
		}
	} else if (json) {
		fputc('{', out);
		for (int b = 0; b < nbank; b++) {
			int first = 1;

			fprintf(out, "%s\"%s\":[", b ? "," : "", bank[b]->name);
			for (uint32_t p = 0; p < PCRLOG_PCRS; p++) {
				char h[2 * PCRLOG_DIGEST_MAX + 1];

				if (!(mask & M(p)))
					continue;
				hex(value[b][p], size[b], h);
				fprintf(out, "%s{\"pcr\":%u,\"hash\":\"%s\"}", first ? "" : ",", p, h);
				first = 0;
			}
			fputc(']', out);
		}
		fputs("}\n", out);
	} else {
		for (int b = 0; b < nbank; b++)
			for (uint32_t p = 0; p < PCRLOG_PCRS; p++) {
				char h[2 * PCRLOG_DIGEST_MAX + 1];

				if (!(mask & M(p)))
					continue;
				hex(value[b][p], size[b], h);
				fprintf(out, "%u:%s=%s\n", p, bank[b]->name, h);
			}
	}
	if (fflush(out) != 0 || (out != stdout && fclose(out) != 0))
		die("%s: %s", out_path ? out_path : "standard output", strerror(errno));
	free(ev);
	free(log);
	return 0;
}

/* ------------------------------------------------------------ authenticode */

static int cmd_authenticode(int argc, char **argv)
{
	const struct bank *b = bank_find("sha256");
	int i = 2, rc = 0;

	if (i + 1 < argc && !strcmp(argv[i], "--bank")) {
		if (!(b = bank_find(argv[i + 1])))
			die("--bank %s: want sha1, sha256, sha384 or sha512", argv[i + 1]);
		i += 2;
	}
	if (i == argc)
		usage();
	for (; i < argc; i++) {
		uint8_t d[PCRLOG_DIGEST_MAX];
		char h[2 * PCRLOG_DIGEST_MAX + 1];
		uint64_t len;
		uint8_t *img = read_file(argv[i], &len);

		if (!img) {
			fprintf(stderr, TOOL ": %s: %s\n", argv[i], strerror(errno));
			rc = 1;
			continue;
		}
		if (digest_pe(b, img, len, d) != LDR_OK) {
			fprintf(stderr, TOOL ": %s: %s\n", argv[i], ldr_strerror(LDR_E_PE_FORMAT));
			rc = 1;
		} else {
			hex(d, (size_t)EVP_MD_get_size(bank_md(b)), h);
			printf("%s  %s\n", h, argv[i]);
		}
		free(img);
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "predict"))
		return cmd_predict(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "authenticode"))
		return cmd_authenticode(argc, argv);
	usage();
	return 2;
}
