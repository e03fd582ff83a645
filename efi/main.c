/*
 * main.c - efi_main: the loader's steps in order (DESIGN.md "What the loader
 * does").  Each step logs its own failure once and returns an EFI status,
 * which goes back to whoever started the loader.
 */
#include <efi.h>
#include <efilib.h>

#include "ldr.h"
#include "decompress.h"
#include "sha256.h"
#include "loader.h"
#include "log.h"
#include "file.h"
#include "rng.h"
#include "zglue.h"
#include "bli.h"
#include "linux_boot.h"

#define CONF_NAME L"kaslr.conf"
#define KERNEL_DEFAULT L"kernel.elf"
/* a kernel file (compressed or not) larger than this is refused unread */
#define KERNEL_FILE_MAX (1 * GIB)

static EFI_STATUS load_config(struct loader *L)
{
	CHAR16 path[OPT_PATH_MAX];
	void *buf = NULL;
	UINT64 size = 0;
	EFI_FILE_HANDLE root;
	EFI_FILE_HANDLE fh = NULL;
	enum ldr_err err;
	EFI_STATUS st;

	st = file_path_beside_image(L->li, CONF_NAME, path, OPT_PATH_MAX);
	if (EFI_ERROR(st))
		return log_efi(st, L"path of kaslr.conf");
	/* absent is fine: probe before file_read, which reports what is missing */
	root = LibOpenRoot(L->li->DeviceHandle);
	if (!root)
		return EFI_SUCCESS;
	st = uefi_call_wrapper(root->Open, 5, root, &fh, path, EFI_FILE_MODE_READ, 0);
	uefi_call_wrapper(root->Close, 1, root);
	if (EFI_ERROR(st))
		return EFI_SUCCESS;
	uefi_call_wrapper(fh->Close, 1, fh);

	st = file_read(L->li->DeviceHandle, path, OPT_TEXT_MAX, &buf, &size);
	if (EFI_ERROR(st))
		return st;
	err = options_parse_config(&L->opt, buf, size);
	file_free(buf, size);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s: key '%a'", path, L->opt.bad);
	return EFI_SUCCESS;
}

static EFI_STATUS load_options(struct loader *L)
{
	static char text[OPT_TEXT_MAX + 1];
	size_t len = 0;
	enum ldr_err err;
	EFI_STATUS st;

	options_defaults(&L->opt);
	st = load_config(L);
	if (EFI_ERROR(st))
		return st;
	if (!L->li->LoadOptions || L->li->LoadOptionsSize == 0)
		return EFI_SUCCESS;
	err = options_from_ucs2(L->li->LoadOptions, L->li->LoadOptionsSize, text,
				sizeof(text), &len);
	if (err == LDR_E_OPT_ENCODING && len == 0) {
		/* binary OptionalData from a Boot#### entry, not text for us */
		log_warn(L"ignoring load options that are not UCS-2 text");
		return EFI_SUCCESS;
	}
	if (err != LDR_OK)
		return log_ldr(EFI_INVALID_PARAMETER, err,
			       L"load options (character %d)", (int)len);
	err = options_parse_line(&L->opt, text, len);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"load options: '%a'", L->opt.bad);
	return EFI_SUCCESS;
}

static EFI_STATUS gather_entropy(struct loader *L)
{
	struct entropy_pool pool;
	EFI_STATUS st;

	entropy_init(&pool);
	st = rng_gather(&pool);
	if (EFI_ERROR(st))
		return log_efi(st, L"gathering entropy (no usable TSC)");
	L->sources = pool.sources;
	if (entropy_finish(&pool, L->pool_seed) != LDR_OK)
		return log_fail(EFI_NOT_READY, L"no entropy source contributed");
	if (L->sources == KB_RNG_RDTSC) {
		L->flags |= KB_FLAG_WEAK_ENTROPY;
		log_warn(L"only RDTSC entropy available (no EFI_RNG_PROTOCOL, no RDRAND): placement is guessable");
	}
	if (L->opt.have_seed) {
		CopyMem(L->seed, L->opt.seed, sizeof(L->seed));
		L->flags |= KB_FLAG_FIXED_SEED;
		log_warn(L"kaslr.seed= given: placement is reproducible, not random");
	} else {
		CopyMem(L->seed, L->pool_seed, sizeof(L->seed));
	}
	if (L->opt.nokaslr) {
		L->flags |= KB_FLAG_NOKASLR;
		log_warn(L"nokaslr: loading at the lowest valid address");
	}
	drbg_init(&L->drbg, L->seed);
	log_info(L"entropy sources:%s%s%s%s",
		 (L->sources & KB_RNG_EFI) ? L" efi-rng" : L"",
		 (L->sources & KB_RNG_RDSEED) ? L" rdseed" : L"",
		 (L->sources & KB_RNG_RDRAND) ? L" rdrand" : L"",
		 (L->sources & KB_RNG_RDTSC) ? L" rdtsc" : L"");
	return EFI_SUCCESS;
}

static EFI_STATUS read_kernel(struct loader *L, CHAR16 *path, UINTN cap)
{
	CHAR16 name[OPT_PATH_MAX];
	enum ldr_err err;
	UINTN i;
	EFI_STATUS st;

	if (L->opt.kernel[0]) {
		for (i = 0; L->opt.kernel[i] && i + 1 < OPT_PATH_MAX; i++)
			name[i] = (CHAR16)L->opt.kernel[i];
		name[i] = 0;
	} else {
		StrCpy(name, KERNEL_DEFAULT);
	}
	st = file_path_beside_image(L->li, name, path, cap);
	if (EFI_ERROR(st))
		return log_efi(st, L"kernel path too long");
	st = file_read(L->li->DeviceHandle, path, KERNEL_FILE_MAX, &L->file, &L->file_size);
	if (EFI_ERROR(st))
		return st;
	if (L->file_size == 0)
		return log_fail(EFI_LOAD_ERROR, L"%s is empty", path);

	if (L->opt.have_sha256) {
		uint8_t digest[32];

		sha256(L->file, L->file_size, digest);
		if (CompareMem(digest, L->opt.sha256, 32) != 0)
			return log_ldr(EFI_SECURITY_VIOLATION, LDR_E_HASH_MISMATCH,
				       L"%s: refusing to boot", path);
		log_info(L"%s: sha256 matches", path);
	}

	L->elf_buf = L->file;
	L->elf_size = L->file_size;
	if (decomp_detect(L->file, L->file_size) != DECOMP_NONE) {
		void *out;
		uint64_t len, cap2;

		log_info(L"%s: decompressing %ld bytes (%a)", path, L->file_size,
			 decomp_format_name(decomp_detect(L->file, L->file_size)));
		err = decomp_image(L->file, L->file_size, L->opt.max_kernel, 0, &zglue_alloc,
				   &out, &len, &cap2);
		if (err == LDR_E_DECOMP_TOO_BIG)
			return log_ldr(EFI_LOAD_ERROR, err,
				       L"%s: more than %ld bytes (raise kaslr.maxsize=)",
				       path, L->opt.max_kernel);
		if (err != LDR_OK)
			return log_ldr(log_status_of(err), err, L"%s", path);
		L->elf_buf = out;
		L->elf_size = len;
		L->elf_cap = cap2;
		log_info(L"%s: %ld bytes decompressed", path, len);
	}
	return EFI_SUCCESS;
}

static EFI_STATUS parse_kernel(struct loader *L, const CHAR16 *path)
{
	struct elf_limits lim = elf_default_limits();
	enum ldr_err err;

	err = elf_parse(L->elf_buf, L->elf_size, &lim, &L->elf);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s is not a loadable kernel", path);
	if (L->elf.reloc_kind == ELF_RELOC_NONE)
		return log_fail(EFI_UNSUPPORTED,
				L"%s carries no relocations, so it cannot be moved: link it with -pie or --emit-relocs",
				path);
	L->load_size = L->elf.load_size;
	if (linux_detect(&L->elf)) {
		/* Linux mode: boot protocol, Linux's virtual window, 2 MiB slot */
		L->linux_mode = 1;
		L->load_size = linux_slot_size(&L->elf);
		log_info(L"%s: Linux vmlinux, link base 0x%lx", path, L->elf.link_vbase);
	}
	log_info(L"%s: %a kernel, %d segments, %ld bytes loaded", path,
		 L->elf.type == 3 ? "ET_DYN" : "ET_EXEC", L->elf.nseg, L->load_size);
	return EFI_SUCCESS;
}

static void release(struct loader *L)
{
	if (L->elf_buf && L->elf_buf != L->file)
		zglue_alloc.free(zglue_alloc.ctx, L->elf_buf, L->elf_cap);
	L->elf_buf = NULL;
	file_free(L->file, L->file_size);
	L->file = NULL;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	static struct loader loader;
	struct loader *L = &loader;
	CHAR16 path[OPT_PATH_MAX];
	EFI_STATUS st;

	bli_init_time(); /* first: LoaderTimeInitUSec is "when the loader started" */
	InitializeLib(image, systab);
	L->image = image;
	st = uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol,
			       (void **)&L->li);
	if (EFI_ERROR(st))
		return log_efi(st, L"HandleProtocol(LoadedImage)");

	st = load_options(L);
	if (EFI_ERROR(st))
		return st;
	log_verbose = L->opt.verbose;
	log_step_begin();

	st = gather_entropy(L);
	if (EFI_ERROR(st))
		return st;
	log_step(L"entropy");
	/* from here libz's stack protector has a real, random canary */
	{
		uint8_t c[32];
		uint64_t canary;

		/* from the pool, not the placement seed: kaslr.seed= is public */
		entropy_derive(L->pool_seed, "zlib stack canary", c);
		CopyMem(&canary, c, sizeof(canary));
		zglue_enter(image, canary);
	}

	st = read_kernel(L, path, OPT_PATH_MAX);
	if (!EFI_ERROR(st)) {
		log_step(L"read and decompress");
		st = parse_kernel(L, path);
	}
	if (!EFI_ERROR(st)) {
		log_step(L"parse");
		st = place_kernel(L);
	}
	if (!EFI_ERROR(st)) {
		log_step(L"place, copy and relocate");
		/* the inflated image was copied into place; drop the sources */
		release(L);
		st = handoff_boot(L); /* returns only on failure */
		uefi_call_wrapper(BS->FreePages, 2, L->phys_base,
				  EFI_SIZE_TO_PAGES(L->load_size));
	}
	release(L);
	zglue_leave();
	return st;
}
