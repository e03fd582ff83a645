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

EFI_STATUS log_ldr(EFI_STATUS st, enum ldr_err err, const CHAR16 *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(L"error: ", fmt, ap);
	va_end(ap);
	if (ldr_err_hint_of(err))
		Print(L": %a; %a\n", ldr_strerror(err), ldr_err_hint_of(err));
	else
		Print(L": %a\n", ldr_strerror(err));
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

void log_note(const CHAR16 *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(L"", fmt, ap);
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

void log_step_at(const CHAR16 *what)
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
	static const EFI_STATUS status[LDR_ERR_COUNT] = {
#define LOG_ERR_STATUS(code, st, msg, hint) [code] = EFI_##st,
		LDR_ERRORS(LOG_ERR_STATUS)
#undef LOG_ERR_STATUS
	};

	if ((unsigned)err >= LDR_ERR_COUNT)
		return EFI_LOAD_ERROR;
	return status[err];
}
