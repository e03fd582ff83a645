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
 * A mark for instruction-counting benchmarks (test/bench/icount.c): one
 * NOP, "nopl 0x4b4c00ID(%rax)", that does nothing on any x86-64 CPU; the
 * counting plugin recognises its bytes and records how many instructions
 * had run when it executed.  IDs: enum log_mark.
 */
#define LOG_MARK(id) __asm__ volatile("nopl %c0(%%rax)" : : "i"(0x4b4c0000 + (id)) : "memory")

/* The marks, in the order a successful boot passes them. */
enum log_mark {
	MARK_START = 1,      /* efi_main entered */
	MARK_OPTIONS,        /* policy, kaslr.conf, load options read */
	MARK_ENTROPY,        /* entropy gathered */
	MARK_READ,           /* kernel file read (and hashed where needed) */
	MARK_UNPACK,         /* kernel decompressed (a native kernel or a bzImage's payload) */
	MARK_PARSE,          /* kernel parsed and laid out */
	MARK_PLACE,          /* placed, copied, relocated */
	MARK_MODULES,        /* modules (Linux: initrds) loaded */
	MARK_HANDOFF,        /* page tables and hand-off data built */
	MARK_JUMP,           /* boot services exited: jumping to the kernel */
	MARK_BZIMAGE,        /* a bzImage's payload decompressed (within MARK_PARSE's step) */
};

/*
 * verbose: "time: <what> N us" since the previous step, from the TSC
 * (its frequency from efi/tsc.c).  Each step also carries its mark.
 */
void log_step_begin(void);
void log_step_at(const CHAR16 *what);
#define log_step(what, mark) do { LOG_MARK(mark); log_step_at(what); } while (0)

/* The EFI status a core error maps to. */
EFI_STATUS log_status_of(enum ldr_err err);

#endif
