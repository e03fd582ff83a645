/*
 * devpath.c - the file path of a device path, read in place
 * (efi/devpath.h).
 */
#include "devpath.h"

int devpath_file_path(const EFI_DEVICE_PATH *dp, CHAR16 *out, UINTN cap)
{
	const UINT8 *n = (const UINT8 *)dp;
	UINTN len = 0, i, k, nodes;

	if (cap == 0)
		return 0;
	out[0] = 0;
	for (nodes = 0; n && nodes < DEVPATH_NODES_MAX; nodes++) {
		UINTN nl = devpath_len(n);

		if (devpath_type(n) == END_DEVICE_PATH_TYPE || nl < 4)
			break;
		if (devpath_type(n) == MEDIA_DEVICE_PATH &&
		    devpath_subtype(n) == MEDIA_FILEPATH_DP) {
			for (i = 4; i + 1 < nl; i += 2) {
				CHAR16 c = (CHAR16)(n[i] | n[i + 1] << 8);

				if (c == 0)
					break;
				if (c == L'/')
					c = L'\\';
				/* one separator between nodes, none doubled */
				if (c == L'\\' && len > 0 && out[len - 1] == L'\\')
					continue;
				if (i == 4 && c != L'\\' && (len == 0 || out[len - 1] != L'\\')) {
					if (len + 2 > cap) {
						out[0] = 0;
						return 0;
					}
					out[len++] = L'\\';
				}
				if (len + 2 > cap) {
					out[0] = 0;
					return 0;
				}
				out[len++] = c;
			}
		}
		n += nl;
	}
	out[len] = 0;
	for (k = 0; k < len; k++)
		if (out[k] != L'\\')
			return 1;
	out[0] = 0;
	return 0;
}
