/*
 * secureboot.c - the firmware side of the embedded policy: the .kpolicy
 * section this image is built with (an empty header until
 * src/tools/kaslr-policy fills it before signing), read back through the
 * loaded image's own PE headers, the Secure Boot state from the global
 * variables, and the gate every booted file passes.
 */
#include <efi.h>
#include <efilib.h>

#include "secureboot.h"
#include "sha256.h"
#include "pe.h"
#include "log.h"
#include "tpm.h"
#include "shim.h"

/* the section the host tool fills in; only ever read through the PE
 * headers, so the compiler cannot fold the build's empty header into code */
__attribute__((section(".kpolicy"), used, aligned(4096)))
static const uint8_t sb_section[POLICY_SECTION_SIZE] = POLICY_EMPTY_INIT;

static struct policy sb_policy;

/* a one-byte global variable; -1 when absent or not one byte */
static int sb_var(CHAR16 *name)
{
	UINT8 v = 0;
	UINTN size = sizeof(v);
	UINT32 attr = 0;
	EFI_STATUS st;

	st = uefi_call_wrapper(RT->GetVariable, 5, name, &EfiGlobalVariable, &attr, &size, &v);
	if (EFI_ERROR(st) || size != 1)
		return -1;
	return v;
}

/* shim's SHIM_LOCK, when shim started the loader (NULL otherwise) */
static const struct shim_lock *shim_find(void)
{
	static EFI_GUID guid = SHIM_LOCK_GUID;
	struct shim_lock *s = NULL;

	if (EFI_ERROR(uefi_call_wrapper(BS->LocateProtocol, 3, &guid, NULL, (void **)&s)) ||
	    !s || !s->verify)
		return NULL;
	return s;
}

EFI_STATUS secureboot_shim_verify(struct loader *L, const void *buf, UINT64 len)
{
	if (!L->secure || !L->shim)
		return EFI_NOT_STARTED;
	if (len > SHIM_VERIFY_MAX)
		return EFI_BAD_BUFFER_SIZE;
	return L->shim->verify((void *)buf, (UINT32)len);
}

EFI_STATUS secureboot_shim_refused(const char *apath, const CHAR16 *path, UINT64 len,
				   EFI_STATUS vst, const CHAR16 *next, int *ret_next)
{
	static const char what[] = "refused by shim: ";
	char text[sizeof(what) + OPT_PATH_MAX];
	UINTN n = sizeof(what) - 1, i;

	CopyMem(text, (void *)what, n);
	for (i = 0; apath[i] && n + 1 < sizeof(text); i++)
		text[n++] = apath[i];
	text[n] = 0;
	tpm_measure_tagged(TPM_PCR_FILES, TPM_TAG_REFUSED, text, text, n);
	if (next) {
		*ret_next = 1;
		log_warn(L"%s: not booted (shim: %r): %a; trying the next kernel, %s", path, vst,
			 ldr_strerror(LDR_E_SHIM_REFUSED), next);
		return EFI_SECURITY_VIOLATION;
	}
	if (vst == EFI_BAD_BUFFER_SIZE)
		return log_ldr(EFI_SECURITY_VIOLATION, LDR_E_SHIM_REFUSED,
			       L"%s: refusing to boot: %ld bytes, more than shim can verify", path,
			       len);
	return log_ldr(EFI_SECURITY_VIOLATION, LDR_E_SHIM_REFUSED,
		       L"%s: refusing to boot (shim: %r)", path, vst);
}

EFI_STATUS secureboot_init(struct loader *L)
{
	const uint8_t *base = L->li->ImageBase;
	struct pe_section s;
	enum ldr_err err;
	int sb = sb_var(L"SecureBoot");

	L->secure_known = sb >= 0;
	L->secure = policy_secure_boot(sb, sb_var(L"SetupMode"));
	L->policy = &sb_policy;
	L->shim = shim_find();
	err = pe_find_section(base, L->li->ImageSize, PE_VIEW_MEMORY, POLICY_SECTION, &s);
	if (err == LDR_OK)
		err = policy_parse(base + s.off, s.size, &sb_policy);
	if (err != LDR_OK)
		return log_ldr(EFI_SECURITY_VIOLATION, err, L"the loader's own %a section",
			       POLICY_SECTION);
	if (L->secure && !sb_policy.present)
		return log_ldr(EFI_SECURITY_VIOLATION, LDR_E_POLICY_NONE, L"refusing to boot");
	if (sb_policy.present)
		tpm_measure_tagged(TPM_PCR_POLICY, TPM_TAG_POLICY, "kaslr-loader policy",
				   base + s.off, sb_policy.used);
	return EFI_SUCCESS;
}

/* The gate for every kind of file; next and ret_next: policy_check_kernel's. */
static EFI_STATUS check_file(struct loader *L, enum policy_kind kind, const CHAR16 *path,
			     const void *buf, UINT64 len, const uint8_t *pin, const CHAR16 *next,
			     int *ret_next)
{
	char apath[OPT_PATH_MAX];
	uint8_t digest[32];
	enum ldr_err err;
	int ask_shim;
	EFI_STATUS vst = EFI_NOT_STARTED;
	UINTN i;

	/* paths on the ESP are ASCII here (they came from ASCII options) */
	for (i = 0; path[i] && i + 1 < sizeof(apath); i++)
		apath[i] = path[i] < 0x80 ? (char)path[i] : '?';
	apath[i] = 0;
	/* hashed only where a pin or the policy can refuse it, and only once:
	 * with a TPM the firmware hashes the file for its measurement, and
	 * that digest (read back from its event log record) is the one
	 * checked; the record is written before the check, so a refused file
	 * is measured too */
	int want = policy_wants_digest(L->policy, L->secure, kind, apath, pin);
	int have;

	if (kind == POLICY_KERNEL)
		have = tpm_measure_tagged_digest(TPM_PCR_FILES, TPM_TAG_KERNEL, apath, buf, len,
						 want ? digest : NULL);
	else if (kind == POLICY_MODULE)
		have = tpm_measure_tagged_digest(TPM_PCR_FILES, TPM_TAG_MODULE, apath, buf, len,
						 want ? digest : NULL);
	else
		have = tpm_measure_tagged_digest(TPM_PCR_FILES, TPM_TAG_INITRD, "Linux initrd", buf,
						 len, want ? digest : NULL);
	/* A shim 15.x built with its own certificate halts the machine in
	 * ExitBootServices unless its second stage called Verify.  So under
	 * Secure Boot, with shim there, every kernel goes to Verify, once, on
	 * these bytes; what shim says counts only where the policy's rules
	 * ask it (below: a kernel no pin admits, under TRUST=shim). */
	if (kind == POLICY_KERNEL)
		vst = secureboot_shim_verify(L, buf, len);
	if (!want)
		return EFI_SUCCESS;
	if (!have)
		sha256(buf, len, digest);
	err = policy_check_trust(L->policy, L->secure, L->shim != NULL, kind, apath, digest, pin,
				 &ask_shim);
	if (err != LDR_OK)
		return log_ldr(EFI_SECURITY_VIOLATION, err, L"%s: refusing to boot", path);
	if (ask_shim) {
		if (EFI_ERROR(vst))
			return secureboot_shim_refused(apath, path, len, vst, next, ret_next);
		log_info(L"%s: signature verified by shim", path);
	} else if (L->secure && L->policy->trust_shim && L->shim && kind == POLICY_INITRD) {
		log_info(L"%s: admitted by the policy's trust in shim, measured", path);
	} else {
		log_info(L"%s: sha256 matches%s", path,
			 have ? L" (the TPM measurement's digest)" : L"");
		if (vst != EFI_NOT_STARTED)
			log_info(L"%s: pinned; shim's Verify said %r (not needed)", path, vst);
	}
	return EFI_SUCCESS;
}

EFI_STATUS policy_check_file(struct loader *L, enum policy_kind kind, const CHAR16 *path,
			     const void *buf, UINT64 len, const uint8_t *pin)
{
	return check_file(L, kind, path, buf, len, pin, NULL, NULL);
}

EFI_STATUS policy_check_kernel(struct loader *L, const CHAR16 *path, const void *buf,
			       UINT64 len, const uint8_t *pin, const CHAR16 *next, int *ret_next)
{
	*ret_next = 0;
	return check_file(L, POLICY_KERNEL, path, buf, len, pin, next, ret_next);
}
