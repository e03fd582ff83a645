/*
 * proto.c - the protocols and tables the injector hands the loader in
 * place of the firmware's: EFI_RNG_PROTOCOL (failing, short, constant,
 * without algorithms, absent), GOP (absent, without a mode), the simple
 * file system and its files (volume missing or failing, read errors
 * mid-file, short reads, a size that changed since GetInfo, a byte that
 * reads wrong; open handles counted in every case), EFI_TCG2_PROTOCOL
 * (measurements that report success and append nothing) and the ACPI
 * entries of the configuration table.
 */
#include "inject.h"
#include "tcg2.h"

static EFI_GUID fi_rng_guid = EFI_RNG_PROTOCOL_GUID;
static EFI_GUID fi_gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
static EFI_GUID fi_sfs_guid = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_GUID;
static EFI_GUID fi_info_guid = EFI_FILE_INFO_ID;
static EFI_GUID fi_acpi20_guid = ACPI_20_TABLE_GUID;
static EFI_GUID fi_acpi10_guid = ACPI_TABLE_GUID;
static EFI_GUID fi_tcg2_guid = EFI_TCG2_PROTOCOL_GUID;

static int fi_guid_eq(const EFI_GUID *a, const EFI_GUID *b)
{
	return CompareMem(a, b, sizeof(*a)) == 0;
}

/* ---------------------------------------------------------------- RNG */

static EFI_RNG_PROTOCOL *fi_rng_real;

static EFI_STATUS EFIAPI fi_rng_info(EFI_RNG_PROTOCOL *This, UINTN *size, EFI_RNG_ALGORITHM *list)
{
	(void)This;
	if (fi_plan.rng == FI_RNG_UNSUPPORTED) {
		*size = 0; /* no algorithm at all */
		return EFI_SUCCESS;
	}
	if (fi_rng_real)
		return fi_rng_real->GetInfo(fi_rng_real, size, list);
	return EFI_UNSUPPORTED;
}

static EFI_STATUS EFIAPI fi_rng_get(EFI_RNG_PROTOCOL *This, EFI_RNG_ALGORITHM *alg,
				    UINTN len, UINT8 *out)
{
	UINTN i;

	(void)This;
	switch (fi_plan.rng) {
	case FI_RNG_ERROR:
		fi_cnt.faults++;
		return EFI_DEVICE_ERROR;
	case FI_RNG_UNSUPPORTED:
		fi_cnt.faults++;
		return EFI_UNSUPPORTED;
	case FI_RNG_ZERO:
		fi_cnt.faults++;
		SetMem(out, len, 0);
		return EFI_SUCCESS;
	case FI_RNG_CONSTANT:
		fi_cnt.faults++;
		SetMem(out, len, 0x5a);
		return EFI_SUCCESS;
	case FI_RNG_SHORT: {
		/* success, but only the first 4 bytes written; the rest is
		 * whatever the caller's buffer held */
		UINT32 lo, hi;

		fi_cnt.faults++;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		for (i = 0; i < len && i < 4; i++)
			out[i] = (UINT8)((lo ^ hi) >> (8 * i));
		return EFI_SUCCESS;
	}
	default:
		return fi_rng_real ? fi_rng_real->GetRNG(fi_rng_real, alg, len, out) : EFI_UNSUPPORTED;
	}
}

static EFI_RNG_PROTOCOL fi_rng = { fi_rng_info, fi_rng_get };

/* ---------------------------------------------------------------- GOP */

static EFI_GRAPHICS_OUTPUT_PROTOCOL fi_gop_nomode; /* Mode == NULL */

/* ---------------------------------------------------------------- files */

#define FI_FILES_MAX 32

struct fi_file {
	EFI_FILE_PROTOCOL p; /* first: This points here */
	EFI_FILE_PROTOCOL *real;
	int used, faulty, failed;
	UINT64 pos;
};

static struct fi_file fi_files[FI_FILES_MAX];
static UINT32 fi_matching_opens; /* opens of files fs.file= names, this case */

struct fi_sfs {
	EFI_SIMPLE_FILE_SYSTEM_PROTOCOL p;
	EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *real;
};

#define FI_SFS_MAX 8
static struct fi_sfs fi_sfs[FI_SFS_MAX];
static UINTN fi_nsfs;

static CHAR16 fi_lower(CHAR16 c)
{
	return c >= L'A' && c <= L'Z' ? c + (L'a' - L'A') : c;
}

/* the files that get the faults: those ending in fs.file=, else any whose name has "kernel" */
static int fi_name_match(const CHAR16 *name)
{
	const CHAR16 *want = fi_plan.fs_file[0] ? fi_plan.fs_file : L"kernel";
	UINTN n = StrLen(name), w = StrLen(want), i, j;

	if (fi_plan.fs_file[0]) {
		if (w > n)
			return 0;
		for (i = 0; i < w; i++)
			if (fi_lower(name[n - w + i]) != fi_lower(want[i]))
				return 0;
		return 1;
	}
	for (i = 0; i + w <= n; i++) {
		for (j = 0; j < w && fi_lower(name[i + j]) == fi_lower(want[j]); j++)
			;
		if (j == w)
			return 1;
	}
	return 0;
}

static EFI_FILE_PROTOCOL *fi_file_wrap(EFI_FILE_PROTOCOL *real, const CHAR16 *name);

static struct fi_file *fi_file_of(EFI_FILE_PROTOCOL *This)
{
	return (struct fi_file *)This;
}

static EFI_STATUS EFIAPI fi_f_open(EFI_FILE_PROTOCOL *This, EFI_FILE_PROTOCOL **ret, CHAR16 *name,
				   UINT64 mode, UINT64 attr)
{
	struct fi_file *f = fi_file_of(This);
	EFI_FILE_PROTOCOL *h = NULL;
	EFI_STATUS st;

	st = f->real->Open(f->real, &h, name, mode, attr);
	if (!EFI_ERROR(st))
		*ret = fi_file_wrap(h, name);
	return st;
}

static EFI_STATUS EFIAPI fi_f_close(EFI_FILE_PROTOCOL *This)
{
	struct fi_file *f = fi_file_of(This);
	EFI_FILE_PROTOCOL *real = f->real;

	f->used = 0;
	return real->Close(real);
}

static EFI_STATUS EFIAPI fi_f_delete(EFI_FILE_PROTOCOL *This)
{
	struct fi_file *f = fi_file_of(This);
	EFI_FILE_PROTOCOL *real = f->real;

	f->used = 0;
	return real->Delete(real);
}

static EFI_STATUS EFIAPI fi_f_read(EFI_FILE_PROTOCOL *This, UINTN *size, VOID *buf)
{
	struct fi_file *f = fi_file_of(This);
	EFI_STATUS st;

	if (f->faulty && fi_plan.fs_readerr_set) {
		if (f->pos >= fi_plan.fs_readerr) {
			fi_cnt.faults++;
			return EFI_DEVICE_ERROR;
		}
		if (*size > fi_plan.fs_readerr - f->pos)
			*size = (UINTN)(fi_plan.fs_readerr - f->pos);
	}
	if (f->faulty && fi_plan.fs_short && *size > fi_plan.fs_short) {
		fi_cnt.faults++;
		*size = fi_plan.fs_short;
	}
	st = f->real->Read(f->real, size, buf);
	if (!EFI_ERROR(st) && f->faulty && fi_plan.fs_flip_set && fi_plan.fs_flip >= f->pos &&
	    fi_plan.fs_flip - f->pos < *size) {
		/* the file's bytes are not what they were when it was pinned */
		((UINT8 *)buf)[fi_plan.fs_flip - f->pos] ^= 0xff;
		fi_cnt.faults++;
	}
	if (!EFI_ERROR(st))
		f->pos += *size;
	return st;
}

static EFI_STATUS EFIAPI fi_f_write(EFI_FILE_PROTOCOL *This, UINTN *size, VOID *buf)
{
	struct fi_file *f = fi_file_of(This);

	return f->real->Write(f->real, size, buf);
}

static EFI_STATUS EFIAPI fi_f_getpos(EFI_FILE_PROTOCOL *This, UINT64 *pos)
{
	struct fi_file *f = fi_file_of(This);

	return f->real->GetPosition(f->real, pos);
}

static EFI_STATUS EFIAPI fi_f_setpos(EFI_FILE_PROTOCOL *This, UINT64 pos)
{
	struct fi_file *f = fi_file_of(This);
	EFI_STATUS st = f->real->SetPosition(f->real, pos);

	if (!EFI_ERROR(st))
		f->pos = pos;
	return st;
}

static EFI_STATUS EFIAPI fi_f_getinfo(EFI_FILE_PROTOCOL *This, EFI_GUID *type, UINTN *size,
				      VOID *buf)
{
	struct fi_file *f = fi_file_of(This);
	EFI_STATUS st;

	if (f->faulty && fi_plan.fs_infoerr) {
		fi_cnt.faults++;
		return EFI_DEVICE_ERROR;
	}
	st = f->real->GetInfo(f->real, type, size, buf);
	if (!EFI_ERROR(st) && f->faulty && fi_plan.fs_size && fi_guid_eq(type, &fi_info_guid) &&
	    buf && *size >= SIZE_OF_EFI_FILE_INFO) {
		EFI_FILE_INFO *info = buf;

		/* the file changed between this answer and the reads */
		if (fi_plan.fs_size < 0 && (UINT64)-fi_plan.fs_size > info->FileSize)
			info->FileSize = 0;
		else
			info->FileSize += (UINT64)fi_plan.fs_size;
		fi_cnt.faults++;
	}
	return st;
}

static EFI_STATUS EFIAPI fi_f_setinfo(EFI_FILE_PROTOCOL *This, EFI_GUID *type, UINTN size,
				      VOID *buf)
{
	struct fi_file *f = fi_file_of(This);

	return f->real->SetInfo(f->real, type, size, buf);
}

static EFI_STATUS EFIAPI fi_f_flush(EFI_FILE_PROTOCOL *This)
{
	struct fi_file *f = fi_file_of(This);

	return f->real->Flush(f->real);
}

static EFI_FILE_PROTOCOL *fi_file_wrap(EFI_FILE_PROTOCOL *real, const CHAR16 *name)
{
	UINTN i;

	for (i = 0; i < FI_FILES_MAX; i++) {
		struct fi_file *f = &fi_files[i];

		if (f->used)
			continue;
		SetMem(f, sizeof(*f), 0);
		f->p.Revision = EFI_FILE_PROTOCOL_REVISION;
		f->p.Open = fi_f_open;
		f->p.Close = fi_f_close;
		f->p.Delete = fi_f_delete;
		f->p.Read = fi_f_read;
		f->p.Write = fi_f_write;
		f->p.GetPosition = fi_f_getpos;
		f->p.SetPosition = fi_f_setpos;
		f->p.GetInfo = fi_f_getinfo;
		f->p.SetInfo = fi_f_setinfo;
		f->p.Flush = fi_f_flush;
		f->real = real;
		f->used = 1;
		f->faulty = name && fi_name_match(name);
		/* fs.nth=N: only the Nth open of such a file */
		if (f->faulty && fi_plan.fs_nth)
			f->faulty = ++fi_matching_opens == fi_plan.fs_nth;
		return &f->p;
	}
	/* out of wrappers: hand out the real one (not counted) */
	fi_violation((const CHAR8 *)"more than 32 files open at once");
	return real;
}

static EFI_STATUS EFIAPI fi_sfs_open(EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *This, EFI_FILE_PROTOCOL **root)
{
	struct fi_sfs *s = (struct fi_sfs *)This;
	EFI_FILE_PROTOCOL *h = NULL;
	EFI_STATUS st;

	if (fi_plan.fs_volerr) {
		fi_cnt.faults++;
		return EFI_NO_MEDIA;
	}
	st = s->real->OpenVolume(s->real, &h);
	if (!EFI_ERROR(st))
		*root = fi_file_wrap(h, NULL);
	return st;
}

static void *fi_sfs_wrap(EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *real)
{
	UINTN i;

	for (i = 0; i < fi_nsfs; i++)
		if (fi_sfs[i].real == real)
			return &fi_sfs[i].p;
	if (fi_nsfs == FI_SFS_MAX)
		return real;
	fi_sfs[fi_nsfs].p.Revision = real->Revision;
	fi_sfs[fi_nsfs].p.OpenVolume = fi_sfs_open;
	fi_sfs[fi_nsfs].real = real;
	return &fi_sfs[fi_nsfs++].p;
}

UINTN fi_files_open(void)
{
	UINTN i, n = 0;

	for (i = 0; i < FI_FILES_MAX; i++)
		n += fi_files[i].used != 0;
	return n;
}

/* ---------------------------------------------------------------- TCG2 */

/*
 * tcg2=skip: every HashLogExtendEvent of the loader reports success and
 * neither extends nor logs; tcg2=dupskip: only one whose event (PCR, type,
 * event data) is the same as the one before it, as when a firmware drops
 * the second of two initrds' records.  GetCapability and GetEventLog pass
 * through to the real protocol.
 */
static EFI_TCG2_PROTOCOL *fi_tcg2_real;
static UINT8 fi_tcg2_last[512];
static UINT32 fi_tcg2_last_size;

static EFI_STATUS EFIAPI fi_tcg2_cap(EFI_TCG2_PROTOCOL *This, EFI_TCG2_BOOT_SERVICE_CAPABILITY *cap)
{
	(void)This;
	return fi_tcg2_real->GetCapability(fi_tcg2_real, cap);
}

static EFI_STATUS EFIAPI fi_tcg2_log(EFI_TCG2_PROTOCOL *This, UINT32 format,
				     EFI_PHYSICAL_ADDRESS *first, EFI_PHYSICAL_ADDRESS *last,
				     BOOLEAN *truncated)
{
	(void)This;
	return fi_tcg2_real->GetEventLog(fi_tcg2_real, format, first, last, truncated);
}

static EFI_STATUS EFIAPI fi_tcg2_extend(EFI_TCG2_PROTOCOL *This, UINT64 flags,
					EFI_PHYSICAL_ADDRESS data, UINT64 len, EFI_TCG2_EVENT *e)
{
	int same = e->Size == fi_tcg2_last_size && e->Size <= sizeof(fi_tcg2_last) &&
		   CompareMem(e, fi_tcg2_last, e->Size) == 0;

	(void)This;
	if (fi_plan.tcg2 == FI_TCG2_SKIP || (fi_plan.tcg2 == FI_TCG2_DUPSKIP && same)) {
		fi_cnt.faults++;
		return EFI_SUCCESS;
	}
	fi_tcg2_last_size = e->Size <= sizeof(fi_tcg2_last) ? e->Size : 0;
	if (fi_tcg2_last_size)
		CopyMem(fi_tcg2_last, e, e->Size);
	return fi_tcg2_real->HashLogExtendEvent(fi_tcg2_real, flags, data, len, e);
}

static EFI_TCG2_PROTOCOL fi_tcg2;

/* ---------------------------------------------------------------- dispatch */

void *fi_wrap_protocol(EFI_GUID *guid, void *iface, EFI_STATUS *st)
{
	if (fi_guid_eq(guid, &fi_rng_guid) && fi_plan.rng != FI_RNG_PASS) {
		if (fi_plan.rng == FI_RNG_ABSENT) {
			fi_cnt.faults++;
			*st = EFI_NOT_FOUND;
			return NULL;
		}
		/* wrap the firmware's, or stand in where it has none */
		fi_rng_real = iface;
		*st = EFI_SUCCESS;
		return &fi_rng;
	}
	if (fi_guid_eq(guid, &fi_gop_guid) && fi_plan.gop != FI_GOP_PASS) {
		fi_cnt.faults++;
		if (fi_plan.gop == FI_GOP_ABSENT) {
			*st = EFI_NOT_FOUND;
			return NULL;
		}
		*st = EFI_SUCCESS;
		return &fi_gop_nomode;
	}
	if (fi_guid_eq(guid, &fi_tcg2_guid) && fi_plan.tcg2 != FI_TCG2_PASS && iface) {
		fi_tcg2_real = iface;
		fi_tcg2 = *fi_tcg2_real;
		fi_tcg2.GetCapability = fi_tcg2_cap;
		fi_tcg2.GetEventLog = fi_tcg2_log;
		fi_tcg2.HashLogExtendEvent = fi_tcg2_extend;
		return &fi_tcg2;
	}
	if (fi_guid_eq(guid, &fi_sfs_guid)) {
		if (fi_plan.fs_novol) {
			fi_cnt.faults++;
			*st = EFI_UNSUPPORTED;
			return NULL;
		}
		if (iface)
			return fi_sfs_wrap(iface);
	}
	return iface;
}

void fi_proto_reset(void)
{
	fi_rng_real = NULL;
	SetMem(fi_files, sizeof(fi_files), 0);
	fi_nsfs = 0;
	fi_matching_opens = 0;
	fi_tcg2_real = NULL;
	fi_tcg2_last_size = 0;
}

/* ---------------------------------------------------------------- ACPI */

#define FI_CT_MAX 64
static EFI_CONFIGURATION_TABLE fi_ct[FI_CT_MAX];
static EFI_CONFIGURATION_TABLE *fi_ct_saved;
static UINTN fi_ct_n_saved;

static void fi_st_crc(void)
{
	UINT32 crc = 0;

	ST->Hdr.CRC32 = 0;
	fi_bs.CalculateCrc32(ST, ST->Hdr.HeaderSize, &crc);
	ST->Hdr.CRC32 = crc;
}

/* acpi=none drops both ACPI entries; acpi=v1 offers the RSDP only under the 1.0 GUID */
EFI_STATUS fi_acpi_apply(void)
{
	UINTN i, n = 0;

	if (fi_plan.acpi == FI_ACPI_PASS)
		return EFI_SUCCESS;
	if (ST->NumberOfTableEntries > FI_CT_MAX)
		return EFI_BUFFER_TOO_SMALL;
	fi_ct_saved = ST->ConfigurationTable;
	fi_ct_n_saved = ST->NumberOfTableEntries;
	for (i = 0; i < fi_ct_n_saved; i++) {
		EFI_CONFIGURATION_TABLE t = fi_ct_saved[i];
		int acpi20 = fi_guid_eq(&t.VendorGuid, &fi_acpi20_guid);
		int acpi10 = fi_guid_eq(&t.VendorGuid, &fi_acpi10_guid);

		if ((acpi20 || acpi10) && fi_plan.acpi == FI_ACPI_NONE)
			continue;
		if (acpi20)
			t.VendorGuid = fi_acpi10_guid;
		fi_ct[n++] = t;
	}
	ST->ConfigurationTable = fi_ct;
	ST->NumberOfTableEntries = n;
	fi_st_crc();
	fi_cnt.faults++;
	return EFI_SUCCESS;
}

void fi_acpi_restore(void)
{
	if (!fi_ct_saved)
		return;
	ST->ConfigurationTable = fi_ct_saved;
	ST->NumberOfTableEntries = fi_ct_n_saved;
	fi_st_crc();
	fi_ct_saved = NULL;
}
