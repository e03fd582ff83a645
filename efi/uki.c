/*
 * uki.c - a unified kernel image named as the kernel (efi/ukiboot.h),
 * booted as systemd-stub would have it but placed by the loader: trust
 * as the stub's firmware would decide it (or the policy's pin), every
 * section taken from the one buffer that was read and verified, PCR 11,
 * PCR 12 and the StubPcr* variables exactly as the image's stub version
 * makes them (include/uki.h has what that is).  The loader's own records
 * stay where they are: its settings in PCR 5, the image file in PCR 9.
 */
#include <efi.h>
#include <efilib.h>

#include "ukiboot.h"
#include "uki.h"
#include "secureboot.h"
#include "sha256.h"
#include "tpm.h"
#include "log.h"
#include "file.h"
#include "zglue.h"
#include "shim.h"
#include "bli.h"

/* the initrd a UKI brings is refused above this (as an initrd= file is) */
#define UKI_INITRD_MAX (2 * GIB)

static struct uki uki;
static int uki_on;
static void *uki_rd;          /* .initrd and the stub's archives (file pages) */
static uint64_t uki_rd_size;
static char uki_os[64];
static int uki_have_os;

int uki_booting(void)
{
	return uki_on;
}

void uki_initrd(const void **ret_buf, uint64_t *ret_len)
{
	*ret_buf = uki_on ? uki_rd : NULL;
	*ret_len = uki_on ? uki_rd_size : 0;
}

const char *uki_os_name_of(void)
{
	return uki_on && uki_have_os ? uki_os : NULL;
}

void uki_release(void)
{
	if (uki_rd)
		file_free(uki_rd, uki_rd_size);
	uki_rd = NULL;
	uki_rd_size = 0;
	/* the next kernel of the list may be no UKI */
	uki_on = 0;
	uki_have_os = 0;
}

/* paths on the ESP are ASCII here (they came from ASCII options) */
static void uki_ascii(const CHAR16 *path, char *out, UINTN cap)
{
	UINTN i;

	for (i = 0; path[i] && i + 1 < cap; i++)
		out[i] = path[i] < 0x80 ? (char)path[i] : '?';
	out[i] = 0;
}

/*
 * The firmware's own verdict on the image's signature (db, dbx, and
 * whatever a shim or other security hook adds): LoadImage from the bytes
 * read, under the file's real device path (the firmware's policy for a
 * file on a disk), never started, unloaded again.  A refusal with
 * EFI_SECURITY_VIOLATION may still leave a handle, which is unloaded.
 */
static EFI_STATUS uki_firmware_verdict(struct loader *L, const CHAR16 *path)
{
	EFI_DEVICE_PATH *dp = FileDevicePath(L->li->DeviceHandle, (CHAR16 *)path);
	EFI_HANDLE h = NULL;
	EFI_STATUS st;

	if (!dp)
		return EFI_OUT_OF_RESOURCES;
	st = uefi_call_wrapper(BS->LoadImage, 6, FALSE, L->image, dp, L->file,
			       (UINTN)L->file_size, &h);
	if (h)
		uefi_call_wrapper(BS->UnloadImage, 1, h);
	FreePool(dp);
	return st;
}

/*
 * May it boot?  As any kernel file: measured into PCR 9, and the pin
 * (sha256=, or the policy's) checked where one applies.  Under Secure
 * Boot a UKI the pin does not admit may still boot on its own signature,
 * as it would through its stub: shim's Verify under a TRUST=shim policy
 * with shim there, the firmware's db and dbx otherwise.  With shim there
 * under Secure Boot the whole file goes to shim's Verify whatever the pin
 * says (a shim 15.x halts in ExitBootServices otherwise); a refusal that
 * counts moves on to next as for any kernel (secureboot_shim_refused).
 */
static EFI_STATUS uki_trust(struct loader *L, const CHAR16 *path, const CHAR16 *next,
			    int *ret_next)
{
	const uint8_t *pin = L->opt.have_sha256 ? L->opt.sha256 : NULL;
	char apath[OPT_PATH_MAX];
	uint8_t digest[32];
	int want, have, ask_shim = 0;
	enum ldr_err err;
	EFI_STATUS st, vst;

	uki_ascii(path, apath, sizeof(apath));
	want = policy_wants_digest(L->policy, L->secure, POLICY_KERNEL, apath, pin);
	have = tpm_measure_tagged_digest(TPM_PCR_FILES, TPM_TAG_KERNEL, apath, L->file,
					 L->file_size, want ? digest : NULL);
	vst = secureboot_shim_verify(L, L->file, L->file_size);
	if (!want)
		return EFI_SUCCESS;
	if (!have)
		sha256(L->file, L->file_size, digest);
	err = policy_check_trust(L->policy, L->secure, L->shim != NULL, POLICY_KERNEL, apath,
				 digest, pin, &ask_shim);
	if (err == LDR_OK && !ask_shim) {
		log_info(L"%s: sha256 matches its pin", path);
		return EFI_SUCCESS;
	}
	if (err == LDR_OK) {
		if (EFI_ERROR(vst))
			return secureboot_shim_refused(apath, path, L->file_size, vst, next, ret_next);
		log_info(L"%s: signature verified by shim", path);
		return EFI_SUCCESS;
	}
	if (!L->secure)
		return log_ldr(EFI_SECURITY_VIOLATION, err, L"%s: refusing to boot", path);
	st = uki_firmware_verdict(L, path);
	if (EFI_ERROR(st))
		return log_ldr(EFI_SECURITY_VIOLATION, LDR_E_UKI_SIGNATURE,
			       L"%s: refusing to boot (LoadImage: %r)", path, st);
	log_info(L"%s: signature verified by the firmware", path);
	return EFI_SUCCESS;
}

/*
 * A section's bytes in one piece: in the file when all of them are raw
 * bytes there, else a zero-padded copy (*ret_owned: FreePool it).
 */
static EFI_STATUS uki_bytes(struct loader *L, enum uki_section_id id, const uint8_t **ret,
			    void **ret_owned)
{
	const struct uki_section *s = &uki.sec[id];
	void *p = NULL;

	*ret_owned = NULL;
	if (s->raw == s->size) {
		*ret = (const uint8_t *)L->file + s->off;
		return EFI_SUCCESS;
	}
	if (EFI_ERROR(uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, (UINTN)s->size, &p)))
		return log_efi(EFI_OUT_OF_RESOURCES, L"AllocatePool for a UKI section");
	uki_section_copy(L->file, s, p);
	*ret = p;
	*ret_owned = p;
	return EFI_SUCCESS;
}

static void uki_set_pcr_var(CHAR16 *name, UINT32 pcr)
{
	static EFI_GUID guid = BLI_VENDOR_GUID;
	CHAR16 v[4];
	UINTN n = 0;

	/* the PCR's number in decimal, UTF-16 with its NUL, volatile */
	if (pcr >= 10)
		v[n++] = (CHAR16)(L'0' + pcr / 10);
	v[n++] = (CHAR16)(L'0' + pcr % 10);
	v[n++] = 0;
	uefi_call_wrapper(RT->SetVariable, 5, name, &guid,
			  EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS,
			  n * sizeof(CHAR16), v);
}

/* PCR 11: the stub version's records, in its order; then StubPcrKernelImage
 * when every one of them was measured */
static EFI_STATUS uki_measure(struct loader *L)
{
	struct uki_event ev[UKI_EVENTS_MAX];
	size_t n = uki_events(&uki, ev);
	int all = n > 0;

	for (size_t i = 0; i < n; i++) {
		const char *name = uki_section_name((enum uki_section_id)ev[i].sec);
		UINTN nl = strlena((const CHAR8 *)name);
		const uint8_t *p;
		void *owned;
		EFI_STATUS st;
		int m;

		if (!ev[i].data) {
			m = tpm_measure_ipl(UKI_PCR_IMAGE, name, nl, name, nl + 1);
		} else {
			st = uki_bytes(L, (enum uki_section_id)ev[i].sec, &p, &owned);
			if (EFI_ERROR(st))
				return st;
			m = tpm_measure_ipl(UKI_PCR_IMAGE, name, nl, p, uki.sec[ev[i].sec].size);
			if (owned)
				FreePool(owned);
		}
		all = all && m == 1;
	}
	if (all)
		uki_set_pcr_var(L"StubPcrKernelImage", UKI_PCR_IMAGE);
	return EFI_SUCCESS;
}

/*
 * The command line, as the stub decides it: a line passed in (the
 * loader's command line, from its policy, kaslr.conf or load options)
 * wins unless Secure Boot is on and the image has a .cmdline; when taken
 * it is measured into PCR 12 as the stub measures it (UTF-16 with its
 * NUL, hashed and described alike) and StubPcrKernelParameters is set.
 */
static EFI_STATUS uki_take_cmdline(struct loader *L, const CHAR16 *path)
{
	static char line[OPT_CMDLINE_MAX];
	static UINT8 wide[2 * OPT_CMDLINE_MAX];
	int given = L->opt.cmdline_len > 0, has = uki.sec[UKI_SEC_CMDLINE].size > 0;
	size_t n = 0;
	enum ldr_err err = LDR_OK;

	if (given && L->secure && has) {
		log_warn(L"%s: command line ignored: Secure Boot is on and the UKI has a .cmdline", path);
		given = 0;
	}
	if (given) {
		err = uki_cmdline((const uint8_t *)L->opt.cmdline, L->opt.cmdline_len, line,
				  sizeof(line), &n);
		if (err != LDR_OK)
			return log_ldr(log_status_of(err), err, L"the kernel command line");
		for (size_t i = 0; i < n; i++) {
			wide[2 * i] = (UINT8)line[i];
			wide[2 * i + 1] = 0;
		}
		wide[2 * n] = wide[2 * n + 1] = 0;
		if (tpm_measure_ipl(UKI_PCR_PARAMS, line, n, wide, 2 * n + 2) == 1)
			uki_set_pcr_var(L"StubPcrKernelParameters", UKI_PCR_PARAMS);
	} else if (has) {
		const uint8_t *p;
		void *owned;
		EFI_STATUS st = uki_bytes(L, UKI_SEC_CMDLINE, &p, &owned);

		if (EFI_ERROR(st))
			return st;
		err = uki_cmdline(p, uki.sec[UKI_SEC_CMDLINE].size, line, sizeof(line), &n);
		if (owned)
			FreePool(owned);
		if (err != LDR_OK)
			return log_ldr(log_status_of(err), err, L"%s: its .cmdline", path);
	}
	CopyMem(L->opt.cmdline, line, n + 1);
	L->opt.cmdline_len = (uint32_t)n;
	return EFI_SUCCESS;
}

/* .linux, copied out: the image the Linux protocol boots (and frees) */
static EFI_STATUS uki_take_linux(struct loader *L, const CHAR16 *path)
{
	const struct uki_section *k = &uki.sec[UKI_SEC_LINUX];
	void *buf;

	if (k->size > LDR_FILE_MAX)
		return loader_too_big(L, path);
	buf = zglue_alloc.alloc(zglue_alloc.ctx, k->size);
	if (!buf)
		return log_efi(EFI_OUT_OF_RESOURCES, L"AllocatePages for the UKI's .linux");
	uki_section_copy(L->file, k, buf);
	L->image_buf = buf;
	L->image_size = k->size;
	L->image_cap = k->size;
	return EFI_SUCCESS;
}

/* .initrd and the stub's cpio archives, built once from the file */
static EFI_STATUS uki_take_initrd(struct loader *L, const CHAR16 *path)
{
	uint64_t n = uki_initrd_size(&uki);
	EFI_STATUS st;

	if (n == 0)
		return EFI_SUCCESS;
	if (n > UKI_INITRD_MAX)
		return log_fail(EFI_BAD_BUFFER_SIZE, L"%s: its .initrd is larger than 2 GiB", path);
	st = file_alloc_pages(n, &uki_rd);
	if (EFI_ERROR(st))
		return log_efi(st, L"AllocatePages for the UKI's .initrd");
	uki_rd_size = n;
	uki_initrd_build(L->file, &uki, uki_rd);
	return EFI_SUCCESS;
}

EFI_STATUS uki_open(struct loader *L, const CHAR16 *path, const CHAR16 *next, int *ret_next)
{
	enum ldr_err err;
	EFI_STATUS st;

	uki_on = 1;
	st = uki_trust(L, path, next, ret_next);
	if (EFI_ERROR(st))
		return st;
	err = uki_parse(L->file, L->file_size, &uki);
	if (err == LDR_E_UKI_STUB_UNKNOWN)
		return log_ldr(EFI_UNSUPPORTED, err, L"%s: systemd-stub %a", path,
			       uki.stub_version);
	if (err != LDR_OK)
		return log_ldr(log_status_of(err), err, L"%s", path);
	LOG_MARK(MARK_READ);
	st = uki_measure(L);
	if (!EFI_ERROR(st))
		st = uki_take_cmdline(L, path);
	if (!EFI_ERROR(st))
		st = uki_take_linux(L, path);
	if (!EFI_ERROR(st))
		st = uki_take_initrd(L, path);
	if (EFI_ERROR(st))
		return st;
	if (uki.sec[UKI_SEC_OSREL].size)
		uki_have_os = uki_os_name((const uint8_t *)L->file + uki.sec[UKI_SEC_OSREL].off,
					  uki.sec[UKI_SEC_OSREL].raw, uki_os, sizeof(uki_os));
	log_info(L"%s: UKI, systemd-stub %a, .linux %ld bytes, .initrd %ld", path,
		 uki.stub_version, uki.sec[UKI_SEC_LINUX].size, uki.sec[UKI_SEC_INITRD].size);
	return EFI_SUCCESS;
}
