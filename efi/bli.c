/*
 * bli.c - systemd's Boot Loader Interface (systemd.io/BOOT_LOADER_INTERFACE):
 * the volatile variables under vendor GUID 4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
 * that tell the OS which loader booted it, from which ESP, and when.
 *
 * Which variables, and who wins when an earlier stage (systemd-boot, which
 * chainloads us from a Type #1 `efi` entry) has already set them:
 *
 *   variable               value                             if already set
 *   LoaderTimeInitUSec     TSC at our start, in us           kept: it measures the
 *                                                            firmware, and the first
 *                                                            loader saw it end
 *   LoaderTimeExecUSec     TSC just before ExitBootServices  replaced: only the last
 *                                                            stage knows when the
 *                                                            kernel really starts
 *   LoaderInfo             "kaslr-loader <version>"          kept: it names the boot
 *   LoaderImageIdentifier  our path on the ESP               loader the user manages
 *                                                            (bootctl reads these with
 *                                                            its LoaderFeatures and
 *                                                            LoaderEntries)
 *   LoaderDevicePartUUID   GPT partition GUID of our volume  kept: the ESP booted from
 *   LoaderFirmwareInfo     "<vendor> <major>.<minor02>"      kept: same firmware
 *   LoaderFirmwareType     "UEFI <major>.<minor02>"          kept: same firmware
 *   LoaderFeatures         u64 little-endian bit mask:       kept: it describes the
 *                          BLI_FEATURE_RANDOM_SEED only      loader LoaderInfo names
 *
 * This is the rule systemd-stub follows as a second stage (set only what is
 * absent), except for LoaderTimeExecUSec.  systemd-boot 252 sets the two
 * times only on CPUs with an invariant TSC (not QEMU's TCG); when it did
 * not, ours stand in, and "firmware" time then includes systemd-boot's.  Menu variables (LoaderEntries,
 * LoaderConfigTimeout…) belong to a boot menu and StubInfo to systemd-stub;
 * this loader has neither, so it sets none of them, and of the
 * LoaderFeatures bits (systemd's numbering) only the one that is true: it
 * reads \loader\random-seed and passes a seed to the OS (efi/espseed.c).
 * All values but LoaderFeatures are NUL-terminated UCS-2 strings; all
 * variables are volatile (BOOTSERVICE_ACCESS | RUNTIME_ACCESS, no
 * NON_VOLATILE).
 */
#include "bli.h"
#include "devpath.h"
#include "log.h"
#include "tsc.h"

#define BLI_ATTRS (EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS)
#define BLI_PATH_MAX 512
#define BLI_LIST_MAX 256
/* a HD() node's length per the UEFI spec; sizeof() adds tail padding */
#define BLI_HD_NODE_LEN 42


static EFI_GUID bli_guid = BLI_VENDOR_GUID;
static uint64_t bli_tsc_init;

void bli_init_time(void)
{
	if (tsc_present())
		bli_tsc_init = tsc_read();
}

static int bli_present(CHAR16 *name)
{
	UINTN size = 0;
	UINT32 attr = 0;
	EFI_STATUS st;

	st = uefi_call_wrapper(RT->GetVariable, 5, name, &bli_guid, &attr, &size, NULL);
	return st == EFI_BUFFER_TOO_SMALL || st == EFI_SUCCESS;
}

/* Append s to list (cap CHAR16s), space-separated, truncating silently. */
static void bli_list_add(CHAR16 *list, UINTN cap, const CHAR16 *s)
{
	UINTN n = StrLen(list), k = StrLen(s);

	if (n + 1 + k + 1 > cap)
		return;
	list[n++] = L' ';
	CopyMem(list + n, s, (k + 1) * sizeof(CHAR16));
}

struct bli_report {
	CHAR16 set[BLI_LIST_MAX];
	CHAR16 kept[BLI_LIST_MAX];
	CHAR16 failed[BLI_LIST_MAX];
};

/*
 * Set name = the size bytes at value (NULL means "nothing to say", e.g. no
 * GPT partition) unless keep_existing and an earlier stage set it.
 */
static void bli_put_raw(struct bli_report *r, CHAR16 *name, void *value, UINTN size,
			int keep_existing)
{
	EFI_STATUS st;

	if (keep_existing && bli_present(name)) {
		bli_list_add(r->kept, BLI_LIST_MAX, name);
		return;
	}
	if (!value)
		return;
	st = uefi_call_wrapper(RT->SetVariable, 5, name, &bli_guid, BLI_ATTRS, size, value);
	if (EFI_ERROR(st))
		bli_list_add(r->failed, BLI_LIST_MAX, name);
	else
		bli_list_add(r->set, BLI_LIST_MAX, name);
}

/* The same for a NUL-terminated string value. */
static void bli_put(struct bli_report *r, CHAR16 *name, CHAR16 *value, int keep_existing)
{
	bli_put_raw(r, name, value, value ? (StrLen(value) + 1) * sizeof(CHAR16) : 0,
		    keep_existing);
}

static const CHAR16 bli_hex[] = L"0123456789ABCDEF";

static void bli_put_hex(CHAR16 *out, const UINT8 *b, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		out[2 * i] = bli_hex[b[i] >> 4];
		out[2 * i + 1] = bli_hex[b[i] & 15];
	}
}

/*
 * The GPT partition GUID of the volume the loader was read from, from the
 * HD node of its device path, in the usual text form (upper case, 36
 * characters).  Returns 0 when the volume is not a GPT partition (a
 * superfloppy, an MBR partition, a network boot).
 */
static int bli_part_uuid(EFI_LOADED_IMAGE *li, CHAR16 out[37])
{
	const UINT8 *n = (const UINT8 *)DevicePathFromHandle(li->DeviceHandle);
	UINTN nodes;

	for (nodes = 0; n && nodes < DEVPATH_NODES_MAX; nodes++) {
		UINTN nl = devpath_len(n);

		if (devpath_type(n) == END_DEVICE_PATH_TYPE || nl < 4)
			return 0;
		if (devpath_type(n) == MEDIA_DEVICE_PATH &&
		    devpath_subtype(n) == MEDIA_HARDDRIVE_DP &&
		    nl >= BLI_HD_NODE_LEN) {
			const UINT8 *g = n + offsetof(HARDDRIVE_DEVICE_PATH, Signature);
			UINT8 be[16];

			if (n[offsetof(HARDDRIVE_DEVICE_PATH, MBRType)] !=
				    MBR_TYPE_EFI_PARTITION_TABLE_HEADER ||
			    n[offsetof(HARDDRIVE_DEVICE_PATH, SignatureType)] != SIGNATURE_TYPE_GUID)
				return 0;
			/* EFI_GUID: the first three fields little-endian */
			be[0] = g[3], be[1] = g[2], be[2] = g[1], be[3] = g[0];
			be[4] = g[5], be[5] = g[4], be[6] = g[7], be[7] = g[6];
			CopyMem(be + 8, g + 8, 8);
			bli_put_hex(out, be, 4);
			out[8] = L'-';
			bli_put_hex(out + 9, be + 4, 2);
			out[13] = L'-';
			bli_put_hex(out + 14, be + 6, 2);
			out[18] = L'-';
			bli_put_hex(out + 19, be + 8, 2);
			out[23] = L'-';
			bli_put_hex(out + 24, be + 10, 6);
			out[36] = 0;
			return 1;
		}
		n += nl;
	}
	return 0;
}

void bli_set_variables(EFI_HANDLE image, EFI_LOADED_IMAGE *li)
{
	static struct bli_report r;
	CHAR16 path[BLI_PATH_MAX];
	CHAR16 uuid[37];
	CHAR16 num[24];
	CHAR16 fw[128];
	uint64_t tsc_exec = tsc_present() ? tsc_read() : 0;
	uint64_t per_us, features;

	(void)image;
	SetMem(&r, sizeof(r), 0);

	per_us = tsc_per_us();
	if (per_us) {
		SPrint(num, sizeof(num), L"%ld", tsc_exec / per_us);
		bli_put(&r, L"LoaderTimeExecUSec", num, 0);
		SPrint(num, sizeof(num), L"%ld", bli_tsc_init / per_us);
		bli_put(&r, L"LoaderTimeInitUSec", bli_tsc_init ? num : NULL, 1);
	}
	bli_put(&r, L"LoaderInfo", L"kaslr-loader " BLI_WIDEN(LDR_VERSION), 1);
	bli_put(&r, L"LoaderImageIdentifier",
		devpath_file_path(li->FilePath, path, BLI_PATH_MAX) ? path : NULL, 1);
	bli_put(&r, L"LoaderDevicePartUUID", bli_part_uuid(li, uuid) ? uuid : NULL, 1);
	SPrint(fw, sizeof(fw), L"%s %d.%02d",
	       ST->FirmwareVendor ? ST->FirmwareVendor : L"unknown",
	       (int)(ST->FirmwareRevision >> 16), (int)(ST->FirmwareRevision & 0xffff));
	bli_put(&r, L"LoaderFirmwareInfo", fw, 1);
	SPrint(fw, sizeof(fw), L"UEFI %d.%02d", (int)(ST->Hdr.Revision >> 16),
	       (int)(ST->Hdr.Revision & 0xffff));
	bli_put(&r, L"LoaderFirmwareType", fw, 1);
	/* little-endian, as x86 stores it */
	features = BLI_FEATURE_RANDOM_SEED;
	bli_put_raw(&r, L"LoaderFeatures", &features, sizeof(features), 1);

	if (r.failed[0])
		log_warn(L"could not set boot loader interface variables:%s (the OS will not see them)",
			 r.failed);
	log_info(L"boot loader interface: set%s; kept from an earlier stage%s",
		 r.set[0] ? r.set : L" none", r.kept[0] ? r.kept : L" none");
}
