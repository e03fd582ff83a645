/*
 * devpath.h - reading firmware device paths in place: node headers read
 * bytewise (nodes need not be aligned), and the file path of an image.
 * Nothing here allocates, so nothing here can fail half-way the way
 * gnu-efi's DevicePathToStr does when a pool allocation fails.
 */
#ifndef EFI_DEVPATH_H
#define EFI_DEVPATH_H

#include <efi.h>
#include <efilib.h>

/* a device path longer than this many nodes is not walked further */
#define DEVPATH_NODES_MAX 64

static inline UINT8 devpath_type(const UINT8 *n)
{
	return n[0];
}

static inline UINT8 devpath_subtype(const UINT8 *n)
{
	return n[1];
}

static inline UINTN devpath_len(const UINT8 *n)
{
	return (UINTN)n[2] | (UINTN)n[3] << 8;
}

/*
 * The file-path nodes of dp joined with single backslashes
 * ("\EFI\kaslr\kaslr-loader.efi", '/' read as '\'), other nodes skipped,
 * into out (cap CHAR16s, NUL-terminated).  Returns 1, or 0 when dp holds
 * no file path (out is then "") or it does not fit.
 */
int devpath_file_path(const EFI_DEVICE_PATH *dp, CHAR16 *out, UINTN cap);

#endif
