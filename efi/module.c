/*
 * module.c - the module= files a kernel of this loader's protocol gets:
 * each is read from the loader's volume, checked against its :sha256= pin
 * and measured into PCR 9 by the gate every booted file passes
 * (policy_check_file, efi/secureboot.h; the bytes hashed are the bytes
 * used), and copied to its own random
 * page-aligned place (efi/place.c, place_blob), all before anything is
 * handed over.  The protocol lists them (efi/native.c).
 */
#include "loader.h"
#include "proto.h"
#include "log.h"
#include "file.h"
#include "secureboot.h"

/* Read, check and place module i; logs its own failure. */
static EFI_STATUS module_load_one(struct loader *L, uint32_t i)
{
	const struct opt_module *om = &L->opt.modules[i];
	CHAR16 path[OPT_PATH_MAX], what[OPT_PATH_MAX + 8];
	struct file_failure ff;
	void *buf = NULL;
	UINT64 size = 0;
	uint64_t addr;
	EFI_STATUS st;

	st = file_path_of_option(L->li, om->path, path, OPT_PATH_MAX);
	if (EFI_ERROR(st))
		return log_efi(st, L"module path too long");
	st = file_read(L->li->DeviceHandle, path, LDR_FILE_MAX, &buf, &size, &ff);
	if (EFI_ERROR(st))
		return file_report(st, L"module", path, &ff);
	SPrint(what, sizeof(what), L"module %s", path);
	if (size == 0) {
		st = log_fail(EFI_LOAD_ERROR, L"%s is empty", what);
		goto out;
	}
	/* the gate every booted file passes: its pin, then PCR 9; the bytes
	 * hashed are the bytes handed over */
	st = policy_check_file(L, POLICY_MODULE, path, buf, size,
			       om->have_sha256 ? om->sha256 : NULL);
	if (EFI_ERROR(st))
		goto out;
	st = place_blob(L, size, 0, LDR_EFI_MT_MODULE, what, &addr, NULL);
	if (EFI_ERROR(st))
		goto out;
	CopyMem(phys_to_ptr(addr), buf, size);
	/* the rest of the last page: no stale bytes */
	SetMem((uint8_t *)phys_to_ptr(addr) + size, ldr_align_up(size, PAGE_SIZE) - size, 0);
	L->mods[L->nmods].addr = addr;
	L->mods[L->nmods].size = size;
	L->nmods++;
out:
	file_free(buf, size);
	return st;
}

EFI_STATUS modules_load(struct loader *L)
{
	EFI_STATUS st;
	uint32_t i;

	L->nmods = 0;
	if (L->opt.nmodules == 0)
		return EFI_SUCCESS;
	if (!L->proto->modules)
		return log_fail(EFI_UNSUPPORTED,
				L"module= given, but %s is a %s kernel, which takes no modules",
				L->kernel_path, L->proto->name);
	for (i = 0; i < L->opt.nmodules; i++) {
		st = module_load_one(L, i);
		if (EFI_ERROR(st)) {
			modules_release(L);
			return st;
		}
	}
	return EFI_SUCCESS;
}

void modules_release(struct loader *L)
{
	while (L->nmods) {
		L->nmods--;
		uefi_call_wrapper(BS->FreePages, 2, L->mods[L->nmods].addr,
				  EFI_SIZE_TO_PAGES(L->mods[L->nmods].size));
	}
}
