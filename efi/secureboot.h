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

/*
 * shim's Verify on exactly the bytes read (and then measured and used),
 * for every kernel - a unified kernel image's whole file too - under
 * Secure Boot with shim there; EFI_NOT_STARTED otherwise, and
 * EFI_BAD_BUFFER_SIZE, without asking, for more than shim takes.
 */
EFI_STATUS secureboot_shim_verify(struct loader *L, const void *buf, UINT64 len);

/*
 * A kernel that only shim could admit, refused by it (vst: Verify's
 * answer): a record saying so after its measurement in PCR 9 (a boot that
 * goes on to the next kernel then never measures like one that named that
 * kernel alone), and one line - with next (the next kernel's path) a
 * warning, EFI_SECURITY_VIOLATION and *ret_next set; else the error line.
 * apath: path in ASCII, as measured.
 */
EFI_STATUS secureboot_shim_refused(const char *apath, const CHAR16 *path, UINT64 len,
				   EFI_STATUS vst, const CHAR16 *next, int *ret_next);

#endif
