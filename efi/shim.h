/*
 * shim.h - the SHIM_LOCK protocol shim installs before it starts its
 * second stage (gnu-efi does not declare it).  Only Verify is used: given
 * a PE image's bytes, it says whether shim's own rules (MOK list, shim's
 * built-in certificate, db, dbx and MokListX) admit its signature; SBAT is
 * optional there.  With Secure Boot off in shim's view it admits anything.
 *
 * Facts taken from shim 16.1 (not its text): the GUID below; the interface
 * is three function pointers in this order (Verify, then a hash and a
 * PE-context helper this loader never calls); Verify(buffer, size) takes
 * a 32-bit size (a negative INT32 is refused) and is declared WITHOUT
 * EFIAPI - shim is built with GCC's default x86-64 calling convention -
 * so it is called as System V, not as a firmware (Microsoft ABI) service.
 */
#ifndef EFI_SHIM_H
#define EFI_SHIM_H

#include <efi.h>

#define SHIM_LOCK_GUID \
	{ 0x605dab50, 0xe046, 0x4300, { 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 } }

struct shim_lock {
	EFI_STATUS (__attribute__((sysv_abi)) *verify)(void *buffer, UINT32 size);
	void *hash;    /* not used */
	void *context; /* not used */
};

/* the largest buffer Verify takes (its size must fit an INT32) */
#define SHIM_VERIFY_MAX 0x7fffffffULL

#endif
