/*
 * err.c - what a one-line error report says about an enum ldr_err: its
 * message and the hint, both from the one table in include/ldr.h.
 */
#include "ldr.h"

static const char *const ldr_err_str[LDR_ERR_COUNT] = {
#define LDR_ERR_STR(code, status, msg, hint) [code] = msg,
	LDR_ERRORS(LDR_ERR_STR)
#undef LDR_ERR_STR
};

static const char *const ldr_err_hint[LDR_ERR_COUNT] = {
#define LDR_ERR_HINT(code, status, msg, hint) [code] = hint,
	LDR_ERRORS(LDR_ERR_HINT)
#undef LDR_ERR_HINT
};

/*
 * The codes' names are for the host's tests and tools only: in the EFI
 * image they would share one string section with the messages, which the
 * linker keeps whole, and cost their bytes with nothing to call them.
 */
#ifndef LDR_EFI
static const char *const ldr_err_names[LDR_ERR_COUNT] = {
#define LDR_ERR_NAME(code, status, msg, hint) [code] = #code,
	LDR_ERRORS(LDR_ERR_NAME)
#undef LDR_ERR_NAME
};
#endif

const char *ldr_strerror(enum ldr_err err)
{
	if ((unsigned)err >= LDR_ERR_COUNT)
		return "unknown error";
	return ldr_err_str[err];
}

const char *ldr_err_hint_of(enum ldr_err err)
{
	if ((unsigned)err >= LDR_ERR_COUNT)
		return NULL;
	return ldr_err_hint[err];
}

#ifndef LDR_EFI
const char *ldr_err_name(enum ldr_err err)
{
	if ((unsigned)err >= LDR_ERR_COUNT)
		return "LDR_E_UNKNOWN";
	return ldr_err_names[err];
}
#endif
