/*
 * file.h - reading files from the volume the loader itself was started from.
 */
#ifndef EFI_FILE_H
#define EFI_FILE_H

#include <efi.h>
#include <efilib.h>

/* Which step of file_read() failed. */
enum file_step {
	FILE_STEP_VOLUME,    /* the loader's own volume has no file system */
	FILE_STEP_OPEN,      /* Open (EFI_NOT_FOUND: no such file) */
	FILE_STEP_INFO,      /* GetInfo */
	FILE_STEP_DIRECTORY, /* the path names a directory */
	FILE_STEP_TOO_BIG,   /* larger than the caller's limit */
	FILE_STEP_ALLOC,     /* AllocatePages for the contents */
	FILE_STEP_READ,      /* Read returned an error */
	FILE_STEP_SHORT,     /* Read returned less than the size promised */
};

struct file_failure {
	enum file_step step;
	UINT64 size;         /* the size GetInfo reported, once known */
	UINT64 done;         /* bytes read before the failure */
	UINT64 limit;        /* the caller's max_size */
};

/*
 * Read the whole of PATH (a volume-relative path, "\dir\name") from the file
 * system on DEVICE into freshly allocated pages.  Files larger than max_size
 * are refused before anything is read.  On success *ret_buf and *ret_size
 * hold the data (free with file_free()).  Prints nothing (except verbose
 * progress): on failure *ret_fail (may be NULL) says which step failed, for
 * the caller's report, and nothing is left allocated.
 */
EFI_STATUS file_read(EFI_HANDLE device, const CHAR16 *path, UINT64 max_size,
		     void **ret_buf, UINT64 *ret_size, struct file_failure *ret_fail);

/*
 * Report a file_read() failure in one line that names what the file was
 * for (L"kernel", L"kaslr.conf") and its path; returns st.
 */
EFI_STATUS file_report(EFI_STATUS st, const CHAR16 *what, const CHAR16 *path,
		       const struct file_failure *f);

void file_free(void *buf, UINT64 size);

/* Pages for buffers the loader itself owns (EfiLoaderData). */
EFI_STATUS file_alloc_pages(UINT64 size, void **ret_buf);

/*
 * The directory of the running image's own path ("\EFI\BOOT\"), joined with
 * NAME, into out (cap CHAR16s).  NAME starting with '\' is taken as is.
 * The directory is read from li's device path on the first call only.
 */
EFI_STATUS file_path_beside_image(EFI_LOADED_IMAGE *li, const CHAR16 *name,
				  CHAR16 *out, UINTN cap);

/* The same for an option's ASCII path (kernel=, module=). */
EFI_STATUS file_path_of_option(EFI_LOADED_IMAGE *li, const char *name, CHAR16 *out, UINTN cap);

#endif
