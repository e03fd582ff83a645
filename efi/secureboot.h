/*
 * secureboot.h - Secure Boot state and the policy embedded in the loader's
 * own image (include/policy.h): read once at start, then every file the
 * loader boots goes through policy_check_file().
 */
#ifndef EFI_SECUREBOOT_H
#define EFI_SECUREBOOT_H

#include "loader.h"
#include "policy.h"

/*
 * Is Secure Boot in force (SecureBoot=1 and SetupMode=0), and what policy
 * does this image carry?  Sets L->secure and L->policy; measures a present
 * policy into PCR 5.  Refuses (one line, EFI_SECURITY_VIOLATION) a
 * malformed policy section, and a missing policy under Secure Boot.
 */
EFI_STATUS secureboot_init(struct loader *L);

/*
 * The one gate for a file about to be booted: buf[0..len) is exactly the
 * bytes that will be used (decompressed, copied, handed over).  Hashes
 * them, checks the pin the Secure Boot state requires (policy_check_digest
 * in src/policy.c), and measures them into PCR 9.  Logs its refusal once.
 * For an initrd: kind POLICY_INITRD, before its bytes are handed over; for
 * a module= file POLICY_MODULE (measured with its path, tagged as a module).
 * pin is the file's own :sha256= (or sha256=) from kaslr.conf or the load
 * options, or NULL; it counts only without Secure Boot.
 */
EFI_STATUS policy_check_file(struct loader *L, enum policy_kind kind, const CHAR16 *path,
			     const void *buf, UINT64 len, const uint8_t *pin);

/*
 * policy_check_file for a kernel of the list.  Under Secure Boot with shim
 * there, the kernel's bytes always go to shim's Verify (once): a shim 15.x
 * halts in ExitBootServices otherwise; its verdict counts only for a
 * kernel no pin admits under a TRUST=shim policy.  When shim refuses such
 * a kernel: a record in PCR 9 after the kernel's own ("refused by shim:
 * PATH"), then with next (the path of the next kernel to try) one warning
 * line, EFI_SECURITY_VIOLATION and *ret_next set; without, the one error
 * line.  *ret_next is 0 on every other outcome.
 */
EFI_STATUS policy_check_kernel(struct loader *L, const CHAR16 *path, const void *buf,
			       UINT64 len, const uint8_t *pin, const CHAR16 *next, int *ret_next);

#endif
