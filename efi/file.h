/*
 * file.h - reading files from the volume the loader itself was started from.
 */
#ifndef EFI_FILE_H
#define EFI_FILE_H

#include <efi.h>
#include <efilib.h>

/*
 * Read the whole of PATH (a volume-relative path, "\dir\name") from the file
 * system on DEVICE into freshly allocated pages.  Files larger than max_size
 * are refused before anything is read.  On success *ret_buf and *ret_size hold the
 * data (free with file_free()).  Errors are logged here with the path.
 */
EFI_STATUS file_read(EFI_HANDLE device, const CHAR16 *path, UINT64 max_size,
		     void **ret_buf, UINT64 *ret_size);
void file_free(void *buf, UINT64 size);

/* Pages for buffers the loader itself owns (EfiLoaderData). */
EFI_STATUS file_alloc_pages(UINT64 size, void **ret_buf);

/*
 * The directory of the running image's own path ("\EFI\BOOT\"), joined with
 * NAME, into out (cap CHAR16s).  NAME starting with '\' is taken as is.
 */
EFI_STATUS file_path_beside_image(EFI_LOADED_IMAGE *li, const CHAR16 *name,
				  CHAR16 *out, UINTN cap);

#endif
