/*
 * log.h - the loader's voice before ExitBootServices: one line per event on
 * ConOut (which OVMF mirrors to the serial port).  Errors are logged once, at
 * the point that knows the context, and the status is returned in the same
 * statement: `return log_efi(st, L"GetMemoryMap");`.
 */
#ifndef EFI_LOG_H
#define EFI_LOG_H

#include <efi.h>
#include <efilib.h>
#include "ldr.h"

extern int log_verbose;

/* Print "kaslr-loader: error: <what>: <status name>" and return st. */
EFI_STATUS log_efi(EFI_STATUS st, const CHAR16 *what);

/* Print "kaslr-loader: error: <fmt…>: <ldr_strerror(err)>" and return st. */
EFI_STATUS log_ldr(EFI_STATUS st, enum ldr_err err, const CHAR16 *fmt, ...);

/* Print "kaslr-loader: error: <fmt…>" and return st. */
EFI_STATUS log_fail(EFI_STATUS st, const CHAR16 *fmt, ...);

/*
 * "kaslr-loader: warning: …" always; "kaslr-loader: …" always (log_note:
 * the one line a quiet boot prints, which must hold no address) or only in
 * verbose mode (log_info).
 */
void log_warn(const CHAR16 *fmt, ...);
void log_note(const CHAR16 *fmt, ...);
void log_info(const CHAR16 *fmt, ...);

/*
 * verbose: "time: <what> N us" since the previous step, from the TSC
 * (its frequency from efi/tsc.c).
 */
void log_step_begin(void);
void log_step(const CHAR16 *what);

/* The EFI status a core error maps to. */
EFI_STATUS log_status_of(enum ldr_err err);

#endif
