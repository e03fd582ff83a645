/*
 * payload/efivars.c - calls into the firmware's runtime services after
 * ExitBootServices (physical mode: SetVirtualAddressMap is never called) to
 * read back the Boot Loader Interface variables the loader set, through the
 * page tables the loader built, unchanged.  Firmware
 * code uses the Microsoft x64 calling convention, so the one call goes
 * through an ms_abi function pointer; GCC then keeps the stack 16-byte
 * aligned and reserves the callee's 32-byte home area.
 */
#include <stddef.h>
#include <stdint.h>

#include "efivars.h"
#include "cpu.h"
#include "serial.h"

#define EV_ST_SIGNATURE   0x5453595320494249ULL /* "IBI SYST" */
#define EV_RT_SIGNATURE   0x56524553544e5552ULL /* "RUNTSERV" */
#define EV_ST_RT_OFF      88 /* EFI_SYSTEM_TABLE.RuntimeServices */
#define EV_RT_GETVAR_OFF  72 /* EFI_RUNTIME_SERVICES.GetVariable */
#define EV_RT_DATA        6  /* EfiRuntimeServicesData */
#define EV_VALUE_MAX      512
#define EV_SUCCESS        0

typedef uint64_t (__attribute__((ms_abi)) *ev_get_variable)(
	const uint16_t *name, const void *guid, uint32_t *attr, uint64_t *size, void *data);

struct ev_guid {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
};

static const struct ev_guid ev_loader_guid = {
	0x4a67b082, 0x0a4c, 0x41cf, { 0xb6, 0xc7, 0x44, 0x0b, 0x29, 0xbb, 0x8c, 0x4f }
};

struct ev_var {
	const char *name;
	const uint16_t *wname;
};

static const struct ev_var ev_vars[] = {
	{ "LoaderInfo", u"LoaderInfo" },
	{ "LoaderTimeInitUSec", u"LoaderTimeInitUSec" },
	{ "LoaderTimeExecUSec", u"LoaderTimeExecUSec" },
	{ "LoaderImageIdentifier", u"LoaderImageIdentifier" },
	{ "LoaderDevicePartUUID", u"LoaderDevicePartUUID" },
	{ "LoaderFirmwareInfo", u"LoaderFirmwareInfo" },
	{ "LoaderFirmwareType", u"LoaderFirmwareType" },
};

static uint16_t ev_buf[EV_VALUE_MAX / 2];

/*
 * The loader promises that runtime services can be called through its
 * identity map as it is: GetVariable's own code must be executable there
 * and the pages the firmware marks as runtime data must not be.  Nothing
 * is changed in the tables.  Returns 1, or 0 after printing why not.
 */
static int ev_runtime_mapped(const struct kaslr_boot_info *info, uint64_t fn)
{
	const uint8_t *m = (const uint8_t *)(uintptr_t)info->efi_mmap;
	struct cpu_walk w;
	int no_nx = (info->flags & KB_FLAG_NO_NX) != 0;

	if (!cpu_translate(fn, &w) || w.nx) {
		serial_puts("payload-bli: GetVariable's code is not executable\n");
		return 0;
	}
	if (!m || info->efi_desc_size < 32 || !cpu_mapped(info->efi_mmap, info->efi_mmap_size))
		return 0;
	for (uint64_t off = 0; info->efi_mmap_size - off >= info->efi_desc_size;
	     off += info->efi_desc_size) {
		uint32_t type = *(const uint32_t *)(m + off);
		uint64_t phys = *(const uint64_t *)(m + off + 8);

		if (type == EV_RT_DATA && !no_nx && (!cpu_translate(phys, &w) || !w.nx)) {
			serial_puts("payload-bli: runtime data mapped executable\n");
			return 0;
		}
	}
	return 1;
}

int efivars_bli_count(const struct kaslr_boot_info *info)
{
	uint64_t st = info->efi_system_table, rt;
	ev_get_variable get;
	int found = 0;

	if (cpu_read_cr4() & CPU_CR4_LA57)
		return 0;
	if (!st || !cpu_mapped(st, EV_ST_RT_OFF + 8) ||
	    *(const volatile uint64_t *)(uintptr_t)st != EV_ST_SIGNATURE)
		return 0;
	rt = *(const volatile uint64_t *)(uintptr_t)(st + EV_ST_RT_OFF);
	if (!rt || !cpu_mapped(rt, EV_RT_GETVAR_OFF + 8) ||
	    *(const volatile uint64_t *)(uintptr_t)rt != EV_RT_SIGNATURE)
		return 0;
	get = (ev_get_variable)(uintptr_t)*(const volatile uint64_t *)(uintptr_t)(rt + EV_RT_GETVAR_OFF);
	if (!ev_runtime_mapped(info, (uint64_t)(uintptr_t)get))
		return 0;

	for (size_t i = 0; i < sizeof(ev_vars) / sizeof(ev_vars[0]); i++) {
		uint64_t size = sizeof(ev_buf) - 2;
		uint32_t attr = 0;

		if (get(ev_vars[i].wname, &ev_loader_guid, &attr, &size, ev_buf) != EV_SUCCESS)
			continue;
		found++;
		serial_puts("payload-bli: ");
		serial_puts(ev_vars[i].name);
		serial_putc('=');
		for (uint64_t k = 0; k < size / 2 && ev_buf[k]; k++)
			serial_putc(ev_buf[k] >= 0x20 && ev_buf[k] < 0x7f ? (char)ev_buf[k] : '?');
		serial_puts(attr & 1 ? " nv=1\n" : " nv=0\n");
	}
	/* a u64 bit mask, not text; not one of the seven counted */
	uint64_t size = 8, features = 0;
	uint32_t attr = 0;
	if (get(u"LoaderFeatures", &ev_loader_guid, &attr, &size, &features) == EV_SUCCESS &&
	    size == 8) {
		serial_puts("payload-bli: LoaderFeatures=");
		serial_put_hex(features);
		serial_puts(attr & 1 ? " nv=1\n" : " nv=0\n");
	}
	return found;
}
