/*
 * main.c - efi_main: the loader's steps in order (kaslr-loader(7), BOOT STEPS).
 * Each step reports its own failure once and returns an EFI status, which
 * goes back to whoever started the loader.  No step here knows which boot
 * protocol the kernel speaks: that is behind efi/proto.h.
 */
#include <efi.h>
#include <efilib.h>
#include <string.h>

#include "ldr.h"
#include "decompress.h"
#include "loader.h"
#include "proto.h"
#include "log.h"
#include "file.h"
#include "rng.h"
#include "espseed.h"
#include "zglue.h"
#include "bli.h"
#include "cpuid.h"
#include "secureboot.h"
#include "tpm.h"
#include "uki.h"
#include "ukiboot.h"

#define CONF_NAME L"kaslr.conf"
#define KERNEL_DEFAULT "kernel.elf"


/* the load options' text: kept to be wiped (it may hold kaslr.seed=) */
static char opt_text[OPT_TEXT_MAX + 1];
/* one source's options before they are merged (wiped: kaslr.seed=) */
static struct ldr_options opt_src;

/*
 * Merge one source's options over what the earlier ones set, by the key
 * table's Secure Boot rules (src/options.c); one warning per ignored key.
 */
static void merge_source(struct loader *L, const CHAR16 *source)
{
	uint32_t ignored = options_merge_trust(&L->opt, &opt_src, L->secure, L->policy->allow,
					       policy_trust(L->policy));

	for (unsigned k = 0; k < OPT_K_COUNT; k++)
		if (ignored & OPT_BIT(k))
			log_warn(L"%s: '%a' ignored: Secure Boot is on and it %a", source,
				 options_key_name((enum opt_key_id)k),
				 options_key_risk((enum opt_key_id)k));
	ldr_wipe(&opt_src, sizeof(opt_src));
}

static EFI_STATUS load_config(struct loader *L)
{
	CHAR16 path[OPT_PATH_MAX];
	struct file_failure ff;
	void *buf = NULL;
	UINT64 size = 0;
	enum ldr_err err;
	EFI_STATUS st;

	st = file_path_beside_image(L->li, CONF_NAME, path, OPT_PATH_MAX);
	if (EFI_ERROR(st))
		return log_efi(st, L"path of kaslr.conf");
	st = file_read(L->li->DeviceHandle, path, OPT_TEXT_MAX, &buf, &size, &ff);
	/* no kaslr.conf (or no file system at all) is the normal case */
	if (st == EFI_NOT_FOUND && ff.step <= FILE_STEP_OPEN)
		return EFI_SUCCESS;
	if (EFI_ERROR(st))
		return file_report(st, L"configuration", path, &ff);
	options_defaults(&opt_src);
	err = options_parse_config(&opt_src, buf, size);
	ldr_wipe(buf, size);
	file_free(buf, size);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s line %d: '%a'", path,
			       (int)opt_src.bad_line, opt_src.bad);
	merge_source(L, path);
	return EFI_SUCCESS;
}

static EFI_STATUS load_options(struct loader *L)
{
	size_t len = 0;
	enum ldr_err err;
	EFI_STATUS st;

	/* the embedded policy, then kaslr.conf, then the load options */
	options_defaults(&L->opt);
	policy_to_options(L->policy, &L->opt);
	st = load_config(L);
	if (EFI_ERROR(st))
		return st;
	if (!L->li->LoadOptions || L->li->LoadOptionsSize == 0)
		return EFI_SUCCESS;
	err = options_from_ucs2(L->li->LoadOptions, L->li->LoadOptionsSize, opt_text,
				sizeof(opt_text), &len);
	if (err == LDR_E_OPT_ENCODING && len == 0) {
		/* binary OptionalData from a Boot#### entry, not text for us */
		log_warn(L"ignoring load options that are not UCS-2 text");
		return EFI_SUCCESS;
	}
	if (err != LDR_OK)
		return log_ldr(EFI_INVALID_PARAMETER, err,
			       L"load options (character %d)", (int)len);
	options_defaults(&opt_src);
	err = options_parse_line(&opt_src, opt_text, len);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"load options: '%a'", opt_src.bad);
	merge_source(L, L"load options");
	return EFI_SUCCESS;
}

/*
 * What decides this boot's layout and files, whoever wrote it (policy,
 * kaslr.conf, load options), into PCR 5 on every boot with a TPM.  The
 * command line goes into PCR 12 once the kernel is read (read_kernel): a
 * unified kernel image measures it as its stub would.
 */
static EFI_STATUS measure_settings(struct loader *L)
{
	static char text[OPT_SETTINGS_MAX + 1];
	size_t len = 0;
	enum ldr_err err;

	err = options_settings_text(&L->opt, text, OPT_SETTINGS_MAX, &len);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"the settings text to measure");
	text[len] = 0;
	tpm_measure_settings(text, len);
	return EFI_SUCCESS;
}

static EFI_STATUS gather_entropy(struct loader *L)
{
	struct entropy_pool pool;
	EFI_STATUS st;

	entropy_init(&pool);
	st = rng_gather(&pool);
	if (EFI_ERROR(st)) {
		ldr_wipe(&pool, sizeof(pool));
		return log_efi(st, L"gathering entropy (no usable TSC)");
	}
	seed_gather(L, &pool);
	L->sources = pool.sources;
	/* entropy_finish wipes the pool's hash state */
	if (entropy_finish(&pool, L->sec.pool_seed) != LDR_OK)
		return log_fail(EFI_NOT_READY, L"no entropy source contributed");
	/* the ESP's seed file counts once a fresh value replaced it */
	L->sources = seed_refresh(L, L->sources);
	if (!seed_strong(L->sources)) {
		L->flags |= KB_FLAG_WEAK_ENTROPY;
		log_warn(L"only RDTSC entropy available (no EFI_RNG_PROTOCOL, no RDRAND, no usable \\loader\\random-seed): placement is guessable and Linux gets no seed it would credit");
	}
	if (L->opt.have_seed) {
		CopyMem(L->sec.seed, L->opt.seed, sizeof(L->sec.seed));
		L->flags |= KB_FLAG_FIXED_SEED;
		log_warn(L"kaslr.seed= given: placement is reproducible, not random");
	} else {
		CopyMem(L->sec.seed, L->sec.pool_seed, sizeof(L->sec.seed));
	}
	if (L->opt.nokaslr) {
		L->flags |= KB_FLAG_NOKASLR;
		log_warn(L"nokaslr: loading at the lowest valid address");
	}
	drbg_init(&L->sec.drbg, L->sec.seed);
	log_info(L"entropy sources:%s%s%s%s%s%s",
		 (L->sources & KB_RNG_EFI) ? L" efi-rng" : L"",
		 (L->sources & KB_RNG_RDSEED) ? L" rdseed" : L"",
		 (L->sources & KB_RNG_RDRAND) ? L" rdrand" : L"",
		 (L->sources & KB_RNG_RDTSC) ? L" rdtsc" : L"",
		 (L->sources & KB_RNG_SEEDFILE) ? L" seed-file" : L"",
		 (L->sources & KB_RNG_CHAIN) ? L" chain" : L"");
	return EFI_SUCCESS;
}

/*
 * UEFI starts images at TPL_APPLICATION.  Started higher, the loader would
 * call ExitBootServices at that TPL, where the firmware's own
 * ExitBootServices notifications (at TPL_CALLBACK and TPL_NOTIFY) cannot
 * run: its runtime drivers would still believe they are at boot time and
 * fault in the kernel's first runtime call.
 */
static EFI_STATUS check_tpl(void)
{
	EFI_TPL old = uefi_call_wrapper(BS->RaiseTPL, 1, TPL_HIGH_LEVEL);

	uefi_call_wrapper(BS->RestoreTPL, 1, old);
	if (old > TPL_APPLICATION)
		return log_fail(EFI_UNSUPPORTED,
				L"started at TPL %d, above TPL_APPLICATION (4): the firmware's ExitBootServices notifications could not run, so the kernel would inherit half-stopped firmware; start the loader from a boot option, a shell or a boot manager",
				(int)old);
	return EFI_SUCCESS;
}

/* From here on the decompressors' stack protector has a real, random canary. */
static void protect_decompressors(struct loader *L)
{
	uint8_t c[32];
	uint64_t canary;

	/* from the pool, not the placement seed: kaslr.seed= is public */
	entropy_derive(L->sec.pool_seed, "zlib stack canary", c);
	CopyMem(&canary, c, sizeof(canary));
	zglue_enter(L->image, canary);
	ldr_wipe(c, sizeof(c));
	ldr_wipe(&canary, sizeof(canary));
}

/* the path of kernel k of the list (0: the first, or the default) */
static EFI_STATUS kernel_path(struct loader *L, uint32_t k, CHAR16 *path, UINTN cap)
{
	const char *name = options_kernel(&L->opt, k);
	EFI_STATUS st;

	st = file_path_of_option(L->li, name[0] ? name : KERNEL_DEFAULT, path, cap);
	if (EFI_ERROR(st))
		return log_efi(st, L"kernel path too long");
	return EFI_SUCCESS;
}

EFI_STATUS loader_too_big(const struct loader *L, const CHAR16 *path)
{
	return log_ldr(EFI_LOAD_ERROR, LDR_E_DECOMP_TOO_BIG,
		       L"%s: more than %ld bytes (raise kaslr.maxsize=)", path, L->opt.max_kernel);
}

/*
 * Read the kernel file, check its pinned hash, decompress it if it is.
 * next: the path of the kernel to try when shim refuses this one (NULL:
 * none), *ret_next set when that is why it was not booted.
 */
static EFI_STATUS read_kernel(struct loader *L, const CHAR16 *path, const CHAR16 *next,
			      int *ret_next)
{
	static int cmdline_measured;
	struct file_failure ff;
	enum decomp_format fmt;
	enum ldr_err err;
	EFI_STATUS st;

	*ret_next = 0;
	st = file_read(L->li->DeviceHandle, path, LDR_FILE_MAX, &L->file, &L->file_size, &ff);
	if (EFI_ERROR(st))
		return file_report(st, L"kernel", path, &ff);
	if (L->file_size == 0)
		return log_ldr(EFI_LOAD_ERROR, LDR_E_EMPTY_FILE, L"kernel %s", path);
	/* a unified kernel image: its trust, measurements and sections (efi/uki.c) */
	if (uki_detect(L->file, L->file_size))
		return uki_open(L, path, next, ret_next);
	/* once: a kernel shim refused leaves the line measured for the next */
	if (!cmdline_measured)
		tpm_measure_cmdline(L->opt.cmdline, L->opt.cmdline_len);
	cmdline_measured = 1;

	/* the bytes hashed (and measured) are the bytes used: no second read */
	st = policy_check_kernel(L, path, L->file, L->file_size,
				 L->opt.have_sha256 ? L->opt.sha256 : NULL, next, ret_next);
	if (EFI_ERROR(st))
		return st;
	LOG_MARK(MARK_READ);

	L->image_buf = L->file;
	L->image_size = L->file_size;
	fmt = decomp_detect(L->file, L->file_size);
	if (fmt != DECOMP_NONE) {
		void *out;
		uint64_t len, cap;

		log_info(L"%s: decompressing %ld bytes (%a)", path, L->file_size,
			 decomp_format_name(fmt));
		err = decomp_image(L->file, L->file_size, L->opt.max_kernel, 0, &zglue_alloc,
				   &out, &len, &cap);
		if (err == LDR_E_DECOMP_TOO_BIG)
			return loader_too_big(L, path);
		if (err != LDR_OK)
			return log_ldr(log_status_of(err), err, L"%s", path);
		L->image_buf = out;
		L->image_size = len;
		L->image_cap = cap;
		log_info(L"%s: %ld bytes decompressed", path, len);
	}
	return EFI_SUCCESS;
}

/* The protocol that recognises the kernel parses and lays it out. */
static EFI_STATUS load_kernel(struct loader *L, const CHAR16 *path)
{
	EFI_STATUS st;

	L->proto = proto_for(L);
	st = L->proto->load(L);
	if (EFI_ERROR(st))
		return st;
	/* the one line of a quiet boot: what, from where - never where to */
	if (L->opt.nmodules)
		log_note(L"loading %s (%s kernel) and %d module%s", path, L->proto->name,
			 (int)L->opt.nmodules, L->opt.nmodules == 1 ? L"" : L"s");
	else if (uki_os_name_of())
		log_note(L"loading %s (%a, %s kernel)", path, uki_os_name_of(), L->proto->name);
	else
		log_note(L"loading %s (%s kernel)", path, L->proto->name);
	log_info(L"%s: %s kernel, %d segments, %ld bytes at the slot", path, L->proto->name,
		 L->elf.nseg, L->layout.size);
	return EFI_SUCCESS;
}

/* The kernel file and the decompressed image, once copied into place. */
static void release_image(struct loader *L)
{
	if (L->image_buf && L->image_buf != L->file)
		zglue_alloc.free(zglue_alloc.ctx, L->image_buf, L->image_cap);
	L->image_buf = NULL;
	file_free(L->file, L->file_size);
	L->file = NULL;
	uki_release();
}

/*
 * The kernels of the list in order, until one passes the gate: the next
 * is tried only when shim refused the one before (efi/secureboot.c says
 * when that can happen: a TRUST=shim policy under Secure Boot).  The one
 * read stays in L, and L->opt keeps it alone, with its initrds.
 */
static EFI_STATUS read_kernels(struct loader *L, CHAR16 *path)
{
	static CHAR16 next[OPT_PATH_MAX];
	uint32_t k, n = options_kernel_count(&L->opt);
	int again = 0;
	EFI_STATUS st;

	st = kernel_path(L, 0, path, OPT_PATH_MAX);
	for (k = 0; !EFI_ERROR(st); k++) {
		if (k + 1 < n) {
			st = kernel_path(L, k + 1, next, OPT_PATH_MAX);
			if (EFI_ERROR(st))
				return st;
		}
		st = read_kernel(L, path, k + 1 < n ? next : NULL, &again);
		if (!EFI_ERROR(st)) {
			options_choose_kernel(&L->opt, k);
			return EFI_SUCCESS;
		}
		if (!again)
			return st;
		release_image(L);
		CopyMem(path, next, sizeof(next));
		st = EFI_SUCCESS;
	}
	return st;
}

void loader_wipe_secrets(struct loader *L)
{
	ldr_wipe(&L->sec, sizeof(L->sec));
	ldr_wipe(L->opt.seed, sizeof(L->opt.seed));
	ldr_wipe(opt_text, sizeof(opt_text));
	ldr_wipe(&opt_src, sizeof(opt_src));
	zglue_wipe();
}

static struct loader loader;

void loader_wipe_all(struct loader *L)
{
	loader_wipe_secrets(L);
	ldr_wipe(L, sizeof(*L));
}

/* a decompressor's stack check failed: the loader exits from there */
static void main_abort_wipe(void)
{
	loader_wipe_secrets(&loader);
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	struct loader *L = &loader;
	CHAR16 *path = L->kernel_path;
	EFI_STATUS st;

	LOG_MARK(MARK_START);
	bli_init_time(); /* first: LoaderTimeInitUSec is "when the loader started" */
	zglue_abort_hook = main_abort_wipe;
	InitializeLib(image, systab);
	L->image = image;
	st = uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol,
			       (void **)&L->li);
	if (EFI_ERROR(st))
		return log_efi(st, L"HandleProtocol(LoadedImage)");
	st = check_tpl();
	if (EFI_ERROR(st))
		return st;
	L->phys_limit = cpuid_phys_limit();

	st = secureboot_init(L);
	if (!EFI_ERROR(st))
		st = load_options(L);
	if (!EFI_ERROR(st)) {
		log_verbose = L->opt.verbose;
		if (L->secure)
			log_info(L"Secure Boot is on: booting only what the embedded policy pins");
		st = measure_settings(L);
		LOG_MARK(MARK_OPTIONS);
	}
	if (!EFI_ERROR(st)) {
		log_step_begin();
		st = gather_entropy(L);
	}
	if (EFI_ERROR(st))
		goto out;
	log_step(L"entropy", MARK_ENTROPY);
	protect_decompressors(L);

	st = read_kernels(L, path);
	if (!EFI_ERROR(st)) {
		log_step(L"read and decompress", MARK_UNPACK);
		st = load_kernel(L, path);
	}
	if (!EFI_ERROR(st)) {
		log_step(L"parse", MARK_PARSE);
		st = place_kernel(L);
	}
	if (!EFI_ERROR(st)) {
		log_step(L"place, copy and relocate", MARK_PLACE);
		/* The image was copied into place.  Its sources (file, decoded
		 * image) stay allocated until a failure gives them back below: on
		 * success they reach the kernel as EfiLoaderData, free memory to
		 * it, and FreePages would cost the firmware thousands of
		 * instructions per page for nothing.  The file's own bytes are
		 * zeroed (eight bytes a store): a word in them that happens to
		 * equal this boot's base must not read as one left behind. */
		memset(L->file, 0, L->file_size);
		st = modules_load(L);
		if (!EFI_ERROR(st)) {
			log_step(L"modules", MARK_MODULES);
			st = handoff_boot(L); /* returns only on failure */
			if (L->boot_services_gone) {
				zglue_leave(); /* a register, no firmware call */
				goto out; /* nothing may be given back now */
			}
			modules_release(L);
		}
		place_release(L);
	}
	release_image(L);
	zglue_leave();
out:
	loader_wipe_secrets(L);
	return st;
}
