/*
 * wrap.c - the boot-services and runtime-services entries the injector
 * replaces while the loader runs: memory allocation (counted, failed on
 * demand, tracked for leaks), ExitBootServices, TPL, protocol look-ups
 * (handed to proto.c), GetVariable and SetVariable.  Only calls whose return address
 * lies inside the loader image are counted or failed; firmware drivers
 * calling through the same table pass straight through.
 */
#include "inject.h"
#include "serial.h" /* the loader's polled COM1 output, linked in */

EFI_BOOT_SERVICES fi_bs;
EFI_RUNTIME_SERVICES fi_rt;
UINT8 *fi_img_lo, *fi_img_hi;
struct fi_count fi_cnt;
int fi_ebs_failed;

#define FI_TRACK_MAX 1024
#define FI_OWN_MAX 256

/* what the loader holds now: pages (pool == 0) or pool buffers */
static struct fi_alloc {
	UINT64 addr, pages;
	int pool;
} fi_track[FI_TRACK_MAX];
static UINTN fi_ntrack;
static UINT32 fi_track_lost; /* table full: allocations not tracked */

/* pages the injector itself took while the loader ran (map churn, stale keys) */
static struct fi_own {
	EFI_PHYSICAL_ADDRESS addr;
} fi_own[FI_OWN_MAX];
static UINTN fi_nown;

int fi_from_loader(void *ret_addr)
{
	UINT8 *p = ret_addr;

	return p >= fi_img_lo && p < fi_img_hi;
}

void fi_violation(const CHAR8 *why)
{
	UINTN i;

	if (fi_cnt.violations++ == 0) {
		for (i = 0; why[i] && i + 1 < sizeof(fi_cnt.why); i++)
			fi_cnt.why[i] = why[i];
		fi_cnt.why[i] = 0;
	}
}

/* after a failed ExitBootServices only GetMemoryMap and ExitBootServices may be called */
static void fi_after_ebs_check(const CHAR8 *what)
{
	if (fi_ebs_failed)
		fi_violation(what);
}

/* call number n fails under (at, from): at == n, or from on */
static int fi_nth(UINT32 n, UINT32 at, int from)
{
	if (!at)
		return 0;
	return from ? n >= at : n == at;
}

static void fi_track_add(UINT64 addr, UINT64 pages, int pool)
{
	if (fi_ntrack == FI_TRACK_MAX) {
		fi_track_lost++;
		return;
	}
	fi_track[fi_ntrack].addr = addr;
	fi_track[fi_ntrack].pages = pages;
	fi_track[fi_ntrack].pool = pool;
	fi_ntrack++;
}

/* 1 if (addr, pages, pool) was tracked, and drop it */
static int fi_track_drop(UINT64 addr, UINT64 pages, int pool)
{
	UINTN i;

	for (i = 0; i < fi_ntrack; i++)
		if (fi_track[i].addr == addr && fi_track[i].pool == pool &&
		    (pool || fi_track[i].pages == pages)) {
			fi_track[i] = fi_track[--fi_ntrack];
			return 1;
		}
	return 0;
}

void fi_track_reset(void)
{
	fi_ntrack = 0;
	fi_track_lost = 0;
}

void fi_track_leaks(UINTN *ret_pages, UINTN *ret_pool)
{
	UINTN i, pages = 0, pool = 0;

	for (i = 0; i < fi_ntrack; i++)
		if (fi_track[i].pool)
			pool++;
		else
			pages += fi_track[i].pages;
	*ret_pages = pages + fi_track_lost; /* untracked ones count as leaks: no blind spot */
	*ret_pool = pool;
}

EFI_STATUS fi_own_page(EFI_ALLOCATE_TYPE type, EFI_PHYSICAL_ADDRESS *addr)
{
	EFI_STATUS st;

	if (fi_nown == FI_OWN_MAX)
		return EFI_OUT_OF_RESOURCES;
	st = fi_bs.AllocatePages(type, EfiBootServicesData, 1, addr);
	if (!EFI_ERROR(st))
		fi_own[fi_nown++].addr = *addr;
	return st;
}

void fi_own_free_all(void)
{
	while (fi_nown)
		fi_bs.FreePages(fi_own[--fi_nown].addr, 1);
}

EFI_TPL fi_current_tpl(void)
{
	EFI_TPL t = fi_bs.RaiseTPL(TPL_HIGH_LEVEL);

	fi_bs.RestoreTPL(t);
	return t;
}

static EFI_STATUS EFIAPI fi_AllocatePages(EFI_ALLOCATE_TYPE type, EFI_MEMORY_TYPE mt,
					  UINTN pages, EFI_PHYSICAL_ADDRESS *addr)
{
	EFI_STATUS st;
	UINT32 n;

	if (!fi_from_loader(__builtin_return_address(0)))
		return fi_bs.AllocatePages(type, mt, pages, addr);
	fi_after_ebs_check((const CHAR8 *)"AllocatePages after a failed ExitBootServices");
	n = ++fi_cnt.ap;
	fi_trace(type == AllocateAddress ? "AllocatePages(address)" : "AllocatePages", n, pages,
		 __builtin_return_address(0));
	if (type == AllocateAddress) {
		fi_cnt.ap_addr++;
		if (fi_plan.ap_addr && (fi_plan.ap_addr == FI_ALL || fi_cnt.ap_addr <= fi_plan.ap_addr)) {
			fi_cnt.faults++;
			return EFI_NOT_FOUND;
		}
		if (addr && !fi_mmap_allowed(*addr, pages))
			fi_violation((const CHAR8 *)"AllocateAddress outside the free memory of the map it was given");
	}
	if (fi_nth(n, fi_plan.ap_fail, fi_plan.ap_from)) {
		fi_cnt.faults++;
		return EFI_OUT_OF_RESOURCES;
	}
	st = fi_bs.AllocatePages(type, mt, pages, addr);
	if (!EFI_ERROR(st))
		fi_track_add(*addr, pages, 0);
	return st;
}

static EFI_STATUS EFIAPI fi_FreePages(EFI_PHYSICAL_ADDRESS addr, UINTN pages)
{
	if (!fi_from_loader(__builtin_return_address(0)))
		return fi_bs.FreePages(addr, pages);
	fi_after_ebs_check((const CHAR8 *)"FreePages after a failed ExitBootServices");
	fi_cnt.fp++;
	fi_trace("FreePages", fi_cnt.fp, pages, __builtin_return_address(0));
	if (!fi_track_drop(addr, pages, 0)) {
		/* not the loader's: refuse, as firmware would for pages it never
		 * handed out, instead of freeing someone else's memory */
		fi_cnt.badfree++;
		return EFI_NOT_FOUND;
	}
	return fi_bs.FreePages(addr, pages);
}

static EFI_STATUS EFIAPI fi_AllocatePool(EFI_MEMORY_TYPE mt, UINTN size, VOID **buf)
{
	EFI_STATUS st;
	UINT32 n;

	if (!fi_from_loader(__builtin_return_address(0)))
		return fi_bs.AllocatePool(mt, size, buf);
	fi_after_ebs_check((const CHAR8 *)"AllocatePool after a failed ExitBootServices");
	n = ++fi_cnt.pool;
	fi_trace("AllocatePool", n, size, __builtin_return_address(0));
	if (fi_nth(n, fi_plan.pool_fail, fi_plan.pool_from)) {
		fi_cnt.faults++;
		return EFI_OUT_OF_RESOURCES;
	}
	st = fi_bs.AllocatePool(mt, size, buf);
	if (!EFI_ERROR(st))
		fi_track_add((UINT64)(UINTN)*buf, 0, 1);
	return st;
}

static EFI_STATUS EFIAPI fi_FreePool(VOID *buf)
{
	if (!fi_from_loader(__builtin_return_address(0)))
		return fi_bs.FreePool(buf);
	fi_after_ebs_check((const CHAR8 *)"FreePool after a failed ExitBootServices");
	fi_cnt.fpool++;
	fi_trace("FreePool", fi_cnt.fpool, 0, __builtin_return_address(0));
	/* a pool buffer the firmware allocated for the loader (e.g. a handle
	 * buffer) is the loader's to free: pass it on, untracked */
	fi_track_drop((UINT64)(UINTN)buf, 0, 1);
	return fi_bs.FreePool(buf);
}

/* one line on the serial port just before the real ExitBootServices: the
 * loader never comes back to the injector after it */
static void fi_ebs_report(void)
{
	serial_puts("fault-ebs: ");
	serial_puts((const char *)fi_plan.name);
	serial_puts(" calls=ap:");
	serial_dec(fi_cnt.ap);
	serial_puts(",pool:");
	serial_dec(fi_cnt.pool);
	serial_puts(",gmm:");
	serial_dec(fi_cnt.gmm);
	serial_puts(",ebs:");
	serial_dec(fi_cnt.ebs);
	/* LoaderRandomSeed deleted by the loader, how many times */
	serial_puts(" seeddel=");
	serial_dec(fi_cnt.seed_del);
	serial_puts(" faults=");
	serial_dec(fi_cnt.faults);
	serial_puts(" violations=");
	serial_dec(fi_cnt.violations);
	if (fi_cnt.violations) {
		serial_puts(":");
		serial_puts((const char *)fi_cnt.why);
	}
	serial_puts("\n");
}

static EFI_STATUS EFIAPI fi_ExitBootServices(EFI_HANDLE image, UINTN key)
{
	EFI_PHYSICAL_ADDRESS a = 0;

	if (!fi_from_loader(__builtin_return_address(0)))
		return fi_bs.ExitBootServices(image, key);
	fi_cnt.ebs++;
	fi_trace("ExitBootServices", fi_cnt.ebs, key, __builtin_return_address(0));
	if (fi_plan.ebs_fail && (fi_plan.ebs_fail == FI_ALL || fi_cnt.ebs <= fi_plan.ebs_fail)) {
		/* as real firmware does when an event allocates in between:
		 * the map changed, so the caller's key is stale for real */
		fi_own_page(AllocateAnyPages, &a);
		fi_cnt.faults++;
		fi_ebs_failed = 1;
		return EFI_INVALID_PARAMETER;
	}
	fi_ebs_report();
	return fi_bs.ExitBootServices(image, key);
}

static EFI_TPL EFIAPI fi_RaiseTPL(EFI_TPL t)
{
	if (fi_from_loader(__builtin_return_address(0))) {
		fi_after_ebs_check((const CHAR8 *)"RaiseTPL after a failed ExitBootServices");
		fi_cnt.tpl++;
	}
	return fi_bs.RaiseTPL(t);
}

static VOID EFIAPI fi_RestoreTPL(EFI_TPL t)
{
	if (fi_from_loader(__builtin_return_address(0))) {
		fi_after_ebs_check((const CHAR8 *)"RestoreTPL after a failed ExitBootServices");
		fi_cnt.tpl++;
	}
	fi_bs.RestoreTPL(t);
}

/* a protocol look-up by the loader: counted, then its answer handed to proto.c */
static EFI_STATUS fi_proto_answer(const CHAR8 *what, EFI_GUID *guid, VOID **iface, EFI_STATUS st)
{
	fi_after_ebs_check(what);
	fi_cnt.proto++;
	if (iface)
		*iface = fi_wrap_protocol(guid, EFI_ERROR(st) ? NULL : *iface, &st);
	return st;
}

static EFI_STATUS EFIAPI fi_HandleProtocol(EFI_HANDLE h, EFI_GUID *guid, VOID **iface)
{
	EFI_STATUS st = fi_bs.HandleProtocol(h, guid, iface);

	if (!fi_from_loader(__builtin_return_address(0)))
		return st;
	return fi_proto_answer((const CHAR8 *)"HandleProtocol after a failed ExitBootServices",
			       guid, iface, st);
}

static EFI_STATUS EFIAPI fi_OpenProtocol(EFI_HANDLE h, EFI_GUID *guid, VOID **iface,
					 EFI_HANDLE agent, EFI_HANDLE ctrl, UINT32 attr)
{
	EFI_STATUS st = fi_bs.OpenProtocol(h, guid, iface, agent, ctrl, attr);

	if (!fi_from_loader(__builtin_return_address(0)))
		return st;
	return fi_proto_answer((const CHAR8 *)"OpenProtocol after a failed ExitBootServices",
			       guid, iface, st);
}

static EFI_STATUS EFIAPI fi_LocateProtocol(EFI_GUID *guid, VOID *reg, VOID **iface)
{
	EFI_STATUS st = fi_bs.LocateProtocol(guid, reg, iface);

	if (!fi_from_loader(__builtin_return_address(0)))
		return st;
	return fi_proto_answer((const CHAR8 *)"LocateProtocol after a failed ExitBootServices",
			       guid, iface, st);
}

static EFI_STATUS EFIAPI fi_SetVariable(CHAR16 *name, EFI_GUID *guid, UINT32 attr,
					UINTN size, VOID *data)
{
	EFI_STATUS st;
	int seed;

	if (!fi_from_loader(__builtin_return_address(0)))
		return fi_rt.SetVariable(name, guid, attr, size, data);
	fi_after_ebs_check((const CHAR8 *)"SetVariable after a failed ExitBootServices");
	fi_cnt.var++;
	if (fi_plan.var_fail) {
		fi_cnt.faults++;
		return EFI_OUT_OF_RESOURCES;
	}
	st = fi_rt.SetVariable(name, guid, attr, size, data);
	seed = StrCmp(name, L"LoaderRandomSeed") == 0;
	if (seed && (size == 0 || attr == 0) && !EFI_ERROR(st))
		fi_cnt.seed_del++;
	return st;
}

/*
 * sb=1: SecureBoot reads as 1, and SetupMode as setupmode= says: absent,
 * four bytes (no one-byte variable), or the one byte 0 or 1.  Everything
 * else, and every caller but the loader, reads the firmware's.
 */
static EFI_STATUS EFIAPI fi_GetVariable(CHAR16 *name, EFI_GUID *guid, UINT32 *attr,
					UINTN *size, VOID *data)
{
	static EFI_GUID global = EFI_GLOBAL_VARIABLE;
	UINT8 v;

	if (!fi_from_loader(__builtin_return_address(0)) || !fi_plan.sb ||
	    CompareMem(guid, &global, sizeof(global)) != 0)
		return fi_rt.GetVariable(name, guid, attr, size, data);
	if (StrCmp(name, L"SecureBoot") == 0) {
		v = 1;
	} else if (StrCmp(name, L"SetupMode") == 0) {
		fi_cnt.faults++;
		if (fi_plan.setupmode == FI_SETUP_ABSENT)
			return EFI_NOT_FOUND;
		if (fi_plan.setupmode == FI_SETUP_BIG) {
			if (*size < 4) {
				*size = 4;
				return EFI_BUFFER_TOO_SMALL;
			}
			SetMem(data, 4, 0);
			*size = 4;
			return EFI_SUCCESS;
		}
		v = fi_plan.setupmode == FI_SETUP_1;
	} else {
		return fi_rt.GetVariable(name, guid, attr, size, data);
	}
	if (*size < 1) {
		*size = 1;
		return EFI_BUFFER_TOO_SMALL;
	}
	*(UINT8 *)data = v;
	*size = 1;
	if (attr)
		*attr = EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS;
	return EFI_SUCCESS;
}

static void fi_table_crc(EFI_TABLE_HEADER *h)
{
	UINT32 crc = 0;

	h->CRC32 = 0;
	fi_bs.CalculateCrc32(h, h->HeaderSize, &crc);
	h->CRC32 = crc;
}

/* the firmware's tables as they are: fi_bs and fi_rt are the way to the real services */
void fi_save(void)
{
	fi_bs = *BS;
	fi_rt = *RT;
}

void fi_install(void)
{
	fi_save();
	BS->AllocatePages = fi_AllocatePages;
	BS->FreePages = fi_FreePages;
	BS->AllocatePool = fi_AllocatePool;
	BS->FreePool = fi_FreePool;
	BS->GetMemoryMap = fi_GetMemoryMap;
	BS->ExitBootServices = fi_ExitBootServices;
	BS->RaiseTPL = fi_RaiseTPL;
	BS->RestoreTPL = fi_RestoreTPL;
	BS->HandleProtocol = fi_HandleProtocol;
	BS->OpenProtocol = fi_OpenProtocol;
	BS->LocateProtocol = fi_LocateProtocol;
	fi_table_crc(&BS->Hdr);
	RT->SetVariable = fi_SetVariable;
	RT->GetVariable = fi_GetVariable;
	fi_table_crc(&RT->Hdr);
}

void fi_remove(void)
{
	*BS = fi_bs;
	*RT = fi_rt;
}

/* trace=1: "fault-trace: WHAT #N arg=X at=OFFSET" (OFFSET into the loader
 * image, which is its link address: addr2line -e build/loader.so OFFSET) */
void fi_trace(const char *what, UINT32 n, UINT64 arg, void *ret_addr)
{
	if (!fi_plan.trace)
		return;
	serial_puts("fault-trace: ");
	serial_puts(what);
	serial_puts(" #");
	serial_dec(n);
	serial_puts(" arg=");
	serial_hex(arg);
	serial_puts(" at=");
	serial_hex((UINT64)((UINT8 *)ret_addr - fi_img_lo));
	serial_puts("\n");
}
