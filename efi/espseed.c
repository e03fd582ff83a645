/*
 * espseed.c - \loader\random-seed, LoaderSystemToken and the seeds of an
 * earlier boot stage into the entropy pool; the file rewritten with a
 * fresh value before the kernel runs; the LINUX_EFI_RANDOM_SEED table
 * installed for Linux.  The rules (sizes, crediting, derivations) are
 * src/seed.c's.
 *
 * The file is unauthenticated input: its bytes are hashed into the pool
 * with everything else, so they can add entropy but never replace the
 * firmware's and the CPU's.
 */
#include <efi.h>
#include <efilib.h>

#include "espseed.h"
#include "bli.h"
#include "file.h"
#include "log.h"

#define SEED_FILE_PATH L"\\loader\\random-seed"

#define SEED_TABLE_GUID \
	{ 0x1ce1e5bc, 0x7ceb, 0x42f2, { 0x81, 0xe5, 0x8a, 0xad, 0xf1, 0x80, 0xf5, 0x7b } }

static EFI_GUID seed_table_guid = SEED_TABLE_GUID;
static EFI_GUID seed_bli_guid = BLI_VENDOR_GUID;

static UINT64 seed_file_size; /* 0: no usable file was read */
static uint8_t *seed_prev;    /* an earlier stage's table */
static uint32_t seed_prev_len;
static uint8_t *seed_mine;    /* the table this loader installed */
static int seed_var_set;      /* this loader set LoaderRandomSeed */

/* the attributes systemd-boot gives LoaderRandomSeed: volatile */
#define SEED_VAR_ATTR (EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS)

/*
 * Mix the loader variable name (at most cap bytes) into pool under bit, or
 * under no bit when shorter than credit_min or when attr_want is not 0
 * and its attributes are others; returns its size, 0 when it is absent,
 * too big or there is no memory for it.  *ret_attr: its attributes.
 */
static UINTN seed_var(struct entropy_pool *pool, CHAR16 *name, UINTN cap, uint32_t bit,
		      UINTN credit_min, UINT32 attr_want, UINT32 *ret_attr)
{
	UINTN size = cap;
	UINT32 attr = 0;
	void *buf = AllocatePool(cap);
	EFI_STATUS st;

	*ret_attr = 0;
	if (!buf)
		return 0;
	st = uefi_call_wrapper(RT->GetVariable, 5, name, &seed_bli_guid, &attr, &size, buf);
	if (st == EFI_BUFFER_TOO_SMALL)
		log_warn(L"%s is larger than %d bytes: not used", name, (int)cap);
	if (EFI_ERROR(st) || size > cap)
		size = 0;
	if (attr_want && attr != attr_want)
		bit = 0;
	*ret_attr = attr;
	if (size)
		entropy_add(pool, size >= credit_min ? bit : 0, buf, size);
	ldr_wipe(buf, cap);
	FreePool(buf);
	return size;
}

/* What systemd-boot left: its table (newer), or LoaderRandomSeed (252 and older). */
static void seed_gather_chain(struct entropy_pool *pool)
{
	void *t = NULL;
	UINT32 attr;
	EFI_STATUS st;
	UINTN n;

	if (!EFI_ERROR(LibGetSystemConfigurationTable(&seed_table_guid, &t)) && t) {
		seed_prev = t;
		seed_prev_len = seed_table_len(seed_prev);
		if (seed_prev_len)
			entropy_add(pool, seed_prev_len >= SEED_CHAIN_MIN ? KB_RNG_CHAIN : 0,
				    seed_prev + SEED_TABLE_HDR, seed_prev_len);
		log_info(L"an earlier stage left a %d-byte LINUX_EFI_RANDOM_SEED table",
			 (int)seed_prev_len);
	}
	/* only as systemd-boot leaves it, volatile: a non-volatile one was
	 * planted (root writes one through efivarfs, a firmware shell one
	 * with any bytes) and would count on every boot.  Such a one is mixed
	 * in without counting, and deleted: the loader's own volatile one
	 * then takes its place (seed_table_install) */
	n = seed_var(pool, L"LoaderRandomSeed", SEED_CHAIN_MAX, KB_RNG_CHAIN, SEED_CHAIN_MIN,
		     SEED_VAR_ATTR, &attr);
	if (n && attr != SEED_VAR_ATTR) {
		st = uefi_call_wrapper(RT->SetVariable, 5, L"LoaderRandomSeed", &seed_bli_guid, 0,
				       0, NULL);
		log_warn(L"LoaderRandomSeed has attributes 0x%x, not systemd-boot's 0x%x: not counted as entropy, %s",
			 attr, SEED_VAR_ATTR, EFI_ERROR(st) ? L"and it cannot be deleted" : L"deleted");
	} else if (n) {
		log_info(L"an earlier stage left a %d-byte LoaderRandomSeed", (int)n);
	}
}

void seed_gather(struct loader *L, struct entropy_pool *pool)
{
	struct file_failure ff;
	void *buf = NULL;
	UINT64 size = 0, count = 0;
	EFI_TIME now;
	UINT32 attr;
	EFI_STATUS st;

	seed_file_size = 0;
	seed_gather_chain(pool);

	st = file_read(L->li->DeviceHandle, SEED_FILE_PATH, SEED_FILE_MAX, &buf, &size, &ff);
	if (EFI_ERROR(st)) {
		/* no file is the normal case; no file system is the kernel
		 * read's to report */
		if (ff.step > FILE_STEP_OPEN || (ff.step == FILE_STEP_OPEN && st != EFI_NOT_FOUND))
			log_warn(L"%s: %a: not used as entropy", SEED_FILE_PATH,
				 ff.step == FILE_STEP_TOO_BIG ? "larger than 32 KiB" : "unreadable");
		return;
	}
	if (!seed_file_size_ok(size)) {
		log_warn(L"%s: %ld bytes, fewer than %d: not used as entropy", SEED_FILE_PATH,
			 size, (int)SEED_FILE_MIN);
		ldr_wipe(buf, size);
		file_free(buf, size);
		return;
	}
	entropy_add(pool, KB_RNG_SEEDFILE, buf, size);
	ldr_wipe(buf, size);
	file_free(buf, size);
	seed_file_size = size;

	/* as systemd-boot does: the machine's token (a copied disk image
	 * then still differs per machine), the boot's monotonic count and
	 * the time, none of them counted as entropy */
	seed_var(pool, L"LoaderSystemToken", SEED_TOKEN_MAX, 0, 0, 0, &attr);
	if (!EFI_ERROR(uefi_call_wrapper(BS->GetNextMonotonicCount, 1, &count)))
		entropy_add(pool, 0, &count, sizeof(count));
	if (!EFI_ERROR(uefi_call_wrapper(RT->GetTime, 2, &now, NULL)))
		entropy_add(pool, 0, &now, sizeof(now));
}

/* Write len bytes at the start of the seed file; EFI_SUCCESS once flushed. */
static EFI_STATUS seed_write(EFI_HANDLE device, const uint8_t *data, UINTN len)
{
	EFI_FILE_IO_INTERFACE *vol = NULL;
	EFI_FILE_HANDLE root = NULL, fh = NULL;
	UINTN n = len;
	EFI_STATUS st;

	st = uefi_call_wrapper(BS->HandleProtocol, 3, device, &FileSystemProtocol, (void **)&vol);
	if (!EFI_ERROR(st))
		st = uefi_call_wrapper(vol->OpenVolume, 2, vol, &root);
	if (EFI_ERROR(st))
		return st;
	st = uefi_call_wrapper(root->Open, 5, root, &fh, SEED_FILE_PATH,
			       EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE, 0);
	if (!EFI_ERROR(st)) {
		st = uefi_call_wrapper(fh->SetPosition, 2, fh, 0);
		if (!EFI_ERROR(st))
			st = uefi_call_wrapper(fh->Write, 3, fh, &n, (void *)data);
		if (!EFI_ERROR(st) && n != len)
			st = EFI_VOLUME_FULL;
		if (!EFI_ERROR(st))
			st = uefi_call_wrapper(fh->Flush, 1, fh);
		uefi_call_wrapper(fh->Close, 1, fh);
	}
	uefi_call_wrapper(root->Close, 1, root);
	return st;
}

uint32_t seed_refresh(struct loader *L, uint32_t sources)
{
	uint8_t *next;
	uint32_t credited;
	EFI_STATUS st = EFI_OUT_OF_RESOURCES;

	if (!seed_file_size)
		return sources;
	next = AllocatePool(seed_file_size);
	if (next) {
		seed_file_next(L->sec.pool_seed, next, seed_file_size);
		st = seed_write(L->li->DeviceHandle, next, seed_file_size);
		ldr_wipe(next, seed_file_size);
		FreePool(next);
	}
	credited = seed_credit_file(sources, !EFI_ERROR(st), L->secure);
	if (EFI_ERROR(st))
		log_warn(L"%s could not be rewritten (%r): not counted as entropy", SEED_FILE_PATH, st);
	else if (!(credited & KB_RNG_SEEDFILE))
		log_warn(L"%s not counted as entropy: Secure Boot is on and nothing else strong contributed",
			 SEED_FILE_PATH);
	else
		log_info(L"%s: %ld bytes mixed in and rewritten", SEED_FILE_PATH, seed_file_size);
	return credited;
}

void seed_table_install(struct loader *L)
{
	uint8_t s[SEED_TABLE_LEN];
	EFI_STATUS st;

	if (!seed_strong(L->sources)) {
		/* an earlier stage's seed too short to count: Linux would
		 * credit it all the same */
		if (seed_prev)
			uefi_call_wrapper(BS->InstallConfigurationTable, 2, &seed_table_guid, NULL);
		return;
	}
	/* as the EFI stub and systemd-boot allocate it: ACPI reclaim memory,
	 * which Linux leaves alone until it has read the table */
	st = uefi_call_wrapper(BS->AllocatePool, 3, EfiACPIReclaimMemory,
			       SEED_TABLE_HDR + SEED_TABLE_LEN, (void **)&seed_mine);
	if (EFI_ERROR(st)) {
		seed_mine = NULL;
		log_warn(L"no memory for the LINUX_EFI_RANDOM_SEED table (%r)", st);
		return;
	}
	seed_for_os(L->sec.pool_seed, s);
	seed_table_fill(seed_mine, s);
	ldr_wipe(s, sizeof(s));
	st = uefi_call_wrapper(BS->InstallConfigurationTable, 2, &seed_table_guid, seed_mine);
	if (EFI_ERROR(st)) {
		ldr_wipe(seed_mine, SEED_TABLE_HDR + SEED_TABLE_LEN);
		uefi_call_wrapper(BS->FreePool, 1, seed_mine);
		seed_mine = NULL;
		log_warn(L"cannot install the LINUX_EFI_RANDOM_SEED table (%r)", st);
		return;
	}
	/* the earlier stage's seed is in the pool; nobody else may read it */
	if (seed_prev && seed_prev_len)
		ldr_wipe(seed_prev + SEED_TABLE_HDR, seed_prev_len);
	log_info(L"LINUX_EFI_RANDOM_SEED table installed (%d bytes)", (int)SEED_TABLE_LEN);

	/* systemd 252's userspace credits this variable (and bootctl says
	 * "Passed to OS" by it), as systemd-boot 252 sets it: volatile, a
	 * seed of its own, replacing an earlier stage's */
	entropy_derive(L->sec.pool_seed, "LoaderRandomSeed variable", s);
	st = uefi_call_wrapper(RT->SetVariable, 5, L"LoaderRandomSeed", &seed_bli_guid,
			       EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS,
			       sizeof(s), s);
	ldr_wipe(s, sizeof(s));
	seed_var_set = !EFI_ERROR(st);
	if (EFI_ERROR(st))
		log_warn(L"cannot set LoaderRandomSeed (%r)", st);
}

void seed_table_remove(void)
{
	if (seed_var_set)
		uefi_call_wrapper(RT->SetVariable, 5, L"LoaderRandomSeed", &seed_bli_guid,
				  EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS,
				  0, NULL);
	seed_var_set = 0;
	if (!seed_mine)
		return;
	uefi_call_wrapper(BS->InstallConfigurationTable, 2, &seed_table_guid, NULL);
	ldr_wipe(seed_mine, SEED_TABLE_HDR + SEED_TABLE_LEN);
	uefi_call_wrapper(BS->FreePool, 1, seed_mine);
	seed_mine = NULL;
}
