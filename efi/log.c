/*
 * log.c - error and progress lines before ExitBootServices.  Nothing here may
 * run after ExitBootServices: from then on only efi/serial.c speaks.
 */
#include "log.h"
#include "tsc.h"

int log_verbose;

static void log_vline(const CHAR16 *prefix, const CHAR16 *fmt, va_list ap)
{
	Print(L"kaslr-loader: %s", prefix);
	VPrint(fmt, ap);
}

EFI_STATUS log_efi(EFI_STATUS st, const CHAR16 *what)
{
	CHAR16 name[64];

	StatusToString(name, st);
	Print(L"kaslr-loader: error: %s: %s\n", what, name);
	return st;
}

/* What the user can do about a core error, by its class. */
static const CHAR16 *log_hint(enum ldr_err err)
{
	if (err >= LDR_E_TRUNCATED && err <= LDR_E_NOT_RELOCATABLE)
		return L"; kernel= must name an ELF64 x86-64 kernel built as PIE or with --emit-relocs";
	if (err >= LDR_E_GZIP_HEADER && err <= LDR_E_GZIP_TRAILING)
		return L"; the compressed kernel file is damaged or not gzip/zlib: copy it again";
	if (err >= LDR_E_OPT_UNKNOWN && err <= LDR_E_OPT_ENCODING)
		return L"; see README, Options";
	if (err == LDR_E_HASH_MISMATCH)
		return L"; the file changed or sha256= is stale";
	if (err == LDR_E_NOMEM || err == LDR_E_NO_SLOT)
		return L"; give the machine more memory or lower kaslr.min=";
	return L"";
}

EFI_STATUS log_ldr(EFI_STATUS st, enum ldr_err err, const CHAR16 *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(L"error: ", fmt, ap);
	va_end(ap);
	Print(L": %a%s\n", ldr_strerror(err), log_hint(err));
	return st;
}

EFI_STATUS log_fail(EFI_STATUS st, const CHAR16 *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(L"error: ", fmt, ap);
	va_end(ap);
	Print(L"\n");
	return st;
}

void log_warn(const CHAR16 *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(L"warning: ", fmt, ap);
	va_end(ap);
	Print(L"\n");
}

void log_info(const CHAR16 *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	log_vline(L"", fmt, ap);
	va_end(ap);
	Print(L"\n");
}

/*
 * verbose: how long each step took, from the TSC (efi/tsc.c knows its
 * frequency); only done in verbose mode, so a quiet boot pays nothing.
 */
static uint64_t step_tsc_per_us, step_last;

void log_step_begin(void)
{
	if (!log_verbose)
		return;
	step_tsc_per_us = tsc_per_us();
	if (step_tsc_per_us == 0)
		step_tsc_per_us = 1; /* no TSC: the figures are then meaningless */
	step_last = tsc_read();
}

void log_step(const CHAR16 *what)
{
	uint64_t now;

	if (!log_verbose)
		return;
	now = tsc_read();
	log_info(L"time: %s %ld us", what, (now - step_last) / step_tsc_per_us);
	step_last = now;
}

EFI_STATUS log_status_of(enum ldr_err err)
{
	switch (err) {
	case LDR_OK:
		return EFI_SUCCESS;
	case LDR_E_NOMEM:
	case LDR_E_NO_SLOT:
	case LDR_E_VIRT_NO_SLOT:
	case LDR_E_MMAP_TOO_BIG:
		return EFI_OUT_OF_RESOURCES;
	case LDR_E_OPT_UNKNOWN:
	case LDR_E_OPT_VALUE:
	case LDR_E_OPT_TOO_LONG:
	case LDR_E_OPT_ENCODING:
	case LDR_E_INVAL:
		return EFI_INVALID_PARAMETER;
	case LDR_E_HASH_MISMATCH:
		return EFI_SECURITY_VIOLATION;
	case LDR_E_NO_ENTROPY:
		return EFI_NOT_READY;
	case LDR_E_RELOC_TYPE:
	case LDR_E_BAD_MACHINE:
	case LDR_E_BAD_CLASS:
	case LDR_E_BAD_TYPE:
		return EFI_UNSUPPORTED;
	default:
		return EFI_LOAD_ERROR;
	}
}
