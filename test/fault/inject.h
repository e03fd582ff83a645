/*
 * inject.h - the fault injector (a test-only EFI application): the plan of
 * one case, the counters and tables its wrappers keep while the real loader
 * runs, and the functions its files share.
 */
#ifndef FAULT_INJECT_H
#define FAULT_INJECT_H

#include <efi.h>
#include <efilib.h>

/* "every call" for the counted faults */
#define FI_ALL 0xffffffffu

/* descriptors the injector can hold or build (a split map, a snapshot) */
#define FI_DESC_MAX 4096

enum fi_rng_mode { FI_RNG_PASS, FI_RNG_ABSENT, FI_RNG_ERROR, FI_RNG_UNSUPPORTED,
		   FI_RNG_SHORT, FI_RNG_CONSTANT, FI_RNG_ZERO };
enum fi_gop_mode { FI_GOP_PASS, FI_GOP_ABSENT, FI_GOP_NOMODE };
enum fi_acpi_mode { FI_ACPI_PASS, FI_ACPI_NONE, FI_ACPI_V1 };
enum fi_order { FI_ORDER_KEEP, FI_ORDER_REVERSE, FI_ORDER_SHUFFLE };
enum fi_overlap { FI_OVL_NONE, FI_OVL_RESERVED, FI_OVL_DUP, FI_OVL_USED };
enum fi_seedvar { FI_SEEDVAR_NONE, FI_SEEDVAR_NV, FI_SEEDVAR_VOLATILE };
enum fi_tcg2 { FI_TCG2_PASS, FI_TCG2_DUPSKIP, FI_TCG2_SKIP };
/* SetupMode as the loader reads it under sb=1 */
enum fi_setupmode { FI_SETUP_ABSENT, FI_SETUP_BIG, FI_SETUP_0, FI_SETUP_1 };

/* gmm.top= bits: entries where no machine has memory */
#define FI_TOP_PAGE 1
#define FI_TOP_WRAP 2
#define FI_TOP_OVERFLOW 4
#define FI_TOP_MMIO 8
#define FI_TOP_PHYS 16

/* One case: which faults to inject.  Zero means "no fault". */
struct fi_plan {
	CHAR8 name[64];
	/* AllocatePages / AllocatePool: call number *_fail fails; with
	 * *_from set, every call from that one on fails */
	UINT32 ap_fail, pool_fail;
	int ap_from, pool_from;
	UINT32 ap_addr;     /* AllocateAddress refused for the first N calls (FI_ALL) */
	/* GetMemoryMap */
	UINT32 gmm_fail;    /* call number that fails with EFI_DEVICE_ERROR */
	UINT32 gmm_small;   /* the first N calls answer EFI_BUFFER_TOO_SMALL ... */
	UINT32 gmm_grow;    /* ... asking for N more descriptors each time */
	UINT32 gmm_change;  /* N scattered pages allocated before each call */
	UINT32 gmm_dsize;   /* descriptor stride handed out (0: the firmware's) */
	UINT32 gmm_split;   /* split free ranges until the map has N entries */
	UINT32 gmm_unknown; /* relabel half the largest free range with this type */
	UINT32 gmm_version; /* descriptor version handed out (0: the firmware's) */
	int gmm_zero, gmm_top, gmm_order, gmm_overlap;
	/* ExitBootServices fails this many times (FI_ALL: always) */
	UINT32 ebs_fail;
	/* protocols and tables */
	int rng, gop, acpi, var_fail;
	int fs_novol, fs_volerr, fs_infoerr, fs_readerr_set;
	UINT64 fs_readerr;  /* reads stop at this offset, then EFI_DEVICE_ERROR */
	UINT32 fs_short;    /* each Read returns at most this many bytes */
	INT64 fs_size;      /* GetInfo reports the size off by this much */
	CHAR16 fs_file[32]; /* which files get the fs faults (name suffix) */
	UINT32 fs_nth;      /* only the Nth open of such a file (0: every one) */
	UINT64 fs_flip;     /* the byte at this file offset reads inverted ... */
	int fs_flip_set;    /* ... when set */
	/* the variables: LoaderRandomSeed planted before the run (and deleted
	 * after it), SecureBoot read as 1 with SetupMode as fi_setupmode says */
	int seedvar, sb, setupmode;
	int tcg2;           /* enum fi_tcg2: HashLogExtendEvent that appends nothing */
	EFI_TPL tpl;        /* start the loader at this TPL (0: as is) */
	int trace;          /* a serial line per counted call, with its caller */
	/* a LINUX_EFI_RANDOM_SEED table, as an earlier stage leaves it, with
	 * this size field (0: none; at most FI_SEEDTABLE_MAX bytes follow) */
	UINT32 seedtable;
	CHAR16 opts[512];   /* the loader's load options */
};

#define FI_SEEDTABLE_MAX 4096

struct fi_count {
	UINT32 ap, ap_addr, fp, pool, fpool, gmm, ebs, tpl, var, proto;
	UINT32 seed_del;    /* LoaderRandomSeed deleted by the loader */
	UINT32 faults;      /* faults injected */
	UINT32 violations;  /* rules of the UEFI spec or of the map broken */
	UINT32 badfree;     /* FreePages of pages the loader had not allocated */
	CHAR8 why[80];      /* the first violation, in words */
};

/* A map as a plain list (no stride games): what the loader saw last, the
 * snapshots before and after, the mangled copy. */
struct fi_map {
	EFI_MEMORY_DESCRIPTOR *d;
	UINTN n, cap;
};

extern struct fi_plan fi_plan;
extern struct fi_count fi_cnt;
extern EFI_BOOT_SERVICES fi_bs;    /* the firmware's table, saved */
extern EFI_RUNTIME_SERVICES fi_rt; /* likewise */
extern UINT8 *fi_img_lo, *fi_img_hi; /* the loader image, for caller checks */
extern int fi_ebs_failed;

/* wrap.c */
void fi_save(void);
void fi_install(void);
void fi_remove(void);
int fi_from_loader(void *ret_addr);
void fi_violation(const CHAR8 *why);
void fi_track_reset(void);
void fi_track_leaks(UINTN *ret_pages, UINTN *ret_pool);
EFI_STATUS fi_own_page(EFI_ALLOCATE_TYPE type, EFI_PHYSICAL_ADDRESS *addr);
void fi_own_free_all(void);
EFI_TPL fi_current_tpl(void);

/* mmap.c */
EFI_STATUS fi_mmap_init(void);
EFI_STATUS fi_mmap_snapshot(struct fi_map *m);
EFI_STATUS EFIAPI fi_GetMemoryMap(UINTN *size, EFI_MEMORY_DESCRIPTOR *buf, UINTN *key,
				  UINTN *dsize, UINT32 *dver);
int fi_mmap_allowed(UINT64 base, UINT64 pages);
void fi_mmap_reset(void);
extern struct fi_map fi_before, fi_after;
UINTN fi_mmap_diff(const struct fi_map *a, const struct fi_map *b, UINTN *ret_first);

/* proto.c */
void *fi_wrap_protocol(EFI_GUID *guid, void *iface, EFI_STATUS *st);
void fi_proto_reset(void);
UINTN fi_files_open(void);
EFI_STATUS fi_acpi_apply(void);
void fi_acpi_restore(void);

/* a line straight to the UART (efi/serial.c), for the moments the
 * firmware must not be called */
void fi_trace(const char *what, UINT32 n, UINT64 arg, void *ret_addr);

#endif
