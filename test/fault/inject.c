/*
 * inject.c - a test-only EFI application that runs the real loader under
 * misbehaving firmware.  It reads a fault plan, \fault.plan on its own
 * volume, one case a line:
 *
 *     NAME key=value ... [:: the loader's load options]
 *
 * (keys: test/fault/README), and for each case patches the boot-services
 * and runtime-services tables (wrap.c, mmap.c, proto.c), loads
 * \EFI\kaslr\loader.efi, starts it, puts the tables back, and prints one
 * line on the console (the serial port under QEMU):
 *
 *     fault-result: NAME status=HEX leak_pages=N leak_pool=N badfree=N
 *         files=N map=same|diff:N tpl=ok|bad:NOW/WANT calls=... faults=N violations=N
 *
 * When the loader boots a kernel instead, the injector never runs again:
 * the last thing it says is "fault-ebs: NAME ..." from inside
 * ExitBootServices, and the kernel speaks next.  After the last case it
 * prints "fault-done" and powers the machine off.
 */
#include "inject.h"

#define FI_PLAN_PATH L"\\fault.plan"
#define FI_LOADER_PATH L"\\EFI\\kaslr\\loader.efi"
#define FI_PLAN_MAX (64 * 1024)

struct fi_plan fi_plan;
static CHAR8 fi_text[FI_PLAN_MAX + 1];

static EFI_STATUS fi_read_plan(EFI_HANDLE device, UINTN *ret_len)
{
	EFI_FILE_HANDLE root, fh;
	UINTN len = FI_PLAN_MAX;
	EFI_STATUS st;

	root = LibOpenRoot(device);
	if (!root)
		return EFI_NOT_FOUND;
	st = root->Open(root, &fh, FI_PLAN_PATH, EFI_FILE_MODE_READ, 0);
	root->Close(root);
	if (EFI_ERROR(st))
		return st;
	st = fh->Read(fh, &len, fi_text);
	fh->Close(fh);
	if (EFI_ERROR(st))
		return st;
	fi_text[len] = 0;
	*ret_len = len;
	return EFI_SUCCESS;
}

/* ---------------------------------------------------------------- parsing */

static int fi_word_eq(const CHAR8 *w, UINTN n, const char *s)
{
	UINTN i;

	for (i = 0; i < n; i++)
		if (!s[i] || w[i] != (CHAR8)s[i])
			return 0;
	return s[n] == 0;
}

/* decimal or 0x hex, an optional leading '-'; 1 on success */
static int fi_number(const CHAR8 *v, UINTN n, INT64 *ret)
{
	UINT64 x = 0;
	UINTN i = 0;
	int neg = 0, base = 10;

	if (n && v[0] == '-')
		neg = 1, i = 1;
	if (n - i > 2 && v[i] == '0' && (v[i + 1] == 'x' || v[i + 1] == 'X'))
		base = 16, i += 2;
	if (i == n)
		return 0;
	for (; i < n; i++) {
		CHAR8 c = v[i];
		UINT64 d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return 0;
		x = x * base + d;
	}
	*ret = neg ? -(INT64)x : (INT64)x;
	return 1;
}

/* "K" or "K+" (from call K on) or "all" */
static int fi_count_arg(const CHAR8 *v, UINTN n, UINT32 *ret, int *ret_from)
{
	INT64 x;

	if (fi_word_eq(v, n, "all")) {
		*ret = ret_from ? 1 : FI_ALL;
		if (ret_from)
			*ret_from = 1;
		return 1;
	}
	if (ret_from && n > 1 && v[n - 1] == '+') {
		*ret_from = 1;
		n--;
	}
	if (!fi_number(v, n, &x) || x <= 0 || x > 0x7fffffff)
		return 0;
	*ret = (UINT32)x;
	return 1;
}

static int fi_enum_arg(const CHAR8 *v, UINTN n, const char *const *names, int *ret)
{
	int i;

	for (i = 0; names[i]; i++)
		if (fi_word_eq(v, n, names[i])) {
			*ret = i;
			return 1;
		}
	return 0;
}

static const char *const fi_rng_names[] = { "pass", "absent", "error", "unsupported",
					    "short", "constant", "zero", NULL };
static const char *const fi_gop_names[] = { "pass", "absent", "nomode", NULL };
static const char *const fi_acpi_names[] = { "pass", "none", "v1", NULL };
static const char *const fi_order_names[] = { "keep", "reverse", "shuffle", NULL };
static const char *const fi_overlap_names[] = { "none", "reserved", "dup", "used", NULL };
static const char *const fi_tpl_names[] = { "application", "callback", "notify", NULL };
static const char *const fi_seedvar_names[] = { "none", "nv", "volatile", NULL };
static const char *const fi_tcg2_names[] = { "pass", "dupskip", "skip", NULL };
static const char *const fi_setup_names[] = { "absent", "big", "0", "1", NULL };

/* one key=value; 1 if understood */
static int fi_key(const CHAR8 *k, UINTN kn, const CHAR8 *v, UINTN vn)
{
	struct fi_plan *p = &fi_plan;
	INT64 x = 0;
	int e, num = fi_number(v, vn, &x);
	UINTN i;

#define KEY(s) fi_word_eq(k, kn, s)
#define U32(field) (num && x >= 0 && x <= 0x7fffffff ? (p->field = (UINT32)x, 1) : 0)
	if (KEY("ap.fail"))
		return fi_count_arg(v, vn, &p->ap_fail, &p->ap_from);
	if (KEY("pool.fail"))
		return fi_count_arg(v, vn, &p->pool_fail, &p->pool_from);
	if (KEY("ap.addr"))
		return fi_count_arg(v, vn, &p->ap_addr, NULL);
	if (KEY("ebs.fail"))
		return fi_count_arg(v, vn, &p->ebs_fail, NULL);
	if (KEY("gmm.fail"))
		return U32(gmm_fail);
	if (KEY("gmm.small"))
		return U32(gmm_small);
	if (KEY("gmm.grow"))
		return U32(gmm_grow);
	if (KEY("gmm.change"))
		return U32(gmm_change);
	if (KEY("gmm.dsize"))
		return U32(gmm_dsize);
	if (KEY("gmm.split"))
		return num && x > 0 && x <= FI_DESC_MAX ? (p->gmm_split = (UINT32)x, 1) : 0;
	if (KEY("gmm.unknown"))
		return num && x > 0 && x <= 0xffffffffLL ? (p->gmm_unknown = (UINT32)x, 1) : 0;
	if (KEY("gmm.version"))
		return U32(gmm_version);
	if (KEY("gmm.zero"))
		return num ? (p->gmm_zero = x != 0, 1) : 0;
	if (KEY("gmm.top"))
		return num && x > 0 && x < 32 ? (p->gmm_top = (int)x, 1) : 0;
	if (KEY("gmm.order"))
		return fi_enum_arg(v, vn, fi_order_names, &p->gmm_order);
	if (KEY("gmm.overlap"))
		return fi_enum_arg(v, vn, fi_overlap_names, &p->gmm_overlap);
	if (KEY("rng"))
		return fi_enum_arg(v, vn, fi_rng_names, &p->rng);
	if (KEY("gop"))
		return fi_enum_arg(v, vn, fi_gop_names, &p->gop);
	if (KEY("acpi"))
		return fi_enum_arg(v, vn, fi_acpi_names, &p->acpi);
	if (KEY("var.fail"))
		return num ? (p->var_fail = x != 0, 1) : 0;
	if (KEY("fs.novol"))
		return num ? (p->fs_novol = x != 0, 1) : 0;
	if (KEY("fs.volerr"))
		return num ? (p->fs_volerr = x != 0, 1) : 0;
	if (KEY("fs.infoerr"))
		return num ? (p->fs_infoerr = x != 0, 1) : 0;
	if (KEY("fs.readerr"))
		return num && x >= 0 ? (p->fs_readerr = (UINT64)x, p->fs_readerr_set = 1) : 0;
	if (KEY("fs.short"))
		return num && x > 0 ? U32(fs_short) : 0;
	if (KEY("fs.size"))
		return num ? (p->fs_size = x, 1) : 0;
	if (KEY("fs.file")) {
		if (vn == 0 || vn + 1 > sizeof(p->fs_file) / sizeof(CHAR16))
			return 0;
		for (i = 0; i < vn; i++)
			p->fs_file[i] = v[i];
		p->fs_file[vn] = 0;
		return 1;
	}
	if (KEY("fs.nth"))
		return num && x > 0 ? U32(fs_nth) : 0;
	if (KEY("fs.flip"))
		return num && x >= 0 ? (p->fs_flip = (UINT64)x, p->fs_flip_set = 1) : 0;
	if (KEY("seedvar"))
		return fi_enum_arg(v, vn, fi_seedvar_names, &p->seedvar);
	if (KEY("tcg2"))
		return fi_enum_arg(v, vn, fi_tcg2_names, &p->tcg2);
	if (KEY("sb"))
		return num && x == 1 ? (p->sb = 1) : 0;
	if (KEY("setupmode"))
		return fi_enum_arg(v, vn, fi_setup_names, &p->setupmode);
	if (KEY("seedtable"))
		return num && x >= 0 && x <= FI_SEEDTABLE_MAX ? (p->seedtable = (UINT32)x, 1) : 0;
	if (KEY("trace"))
		return num ? (p->trace = x != 0, 1) : 0;
	if (KEY("tpl")) {
		static const EFI_TPL levels[] = { TPL_APPLICATION, TPL_CALLBACK, TPL_NOTIFY };

		if (!fi_enum_arg(v, vn, fi_tpl_names, &e))
			return 0;
		p->tpl = levels[e];
		return 1;
	}
#undef KEY
#undef U32
	return 0;
}

/* parse line [s, s + n) into fi_plan; 0 and a message on a bad key */
static int fi_parse(const CHAR8 *s, UINTN n, UINTN lineno)
{
	UINTN i = 0, j, w = 0;

	SetMem(&fi_plan, sizeof(fi_plan), 0);
	while (i < n) {
		UINTN start, eq;

		while (i < n && s[i] == ' ')
			i++;
		if (i == n)
			break;
		start = i;
		while (i < n && s[i] != ' ')
			i++;
		if (w++ == 0) {
			for (j = 0; j < i - start && j + 1 < sizeof(fi_plan.name); j++)
				fi_plan.name[j] = s[start + j];
			fi_plan.name[j] = 0;
			continue;
		}
		if (i - start == 2 && s[start] == ':' && s[start + 1] == ':') {
			while (i < n && s[i] == ' ')
				i++;
			for (j = 0; i + j < n && j + 1 < sizeof(fi_plan.opts) / sizeof(CHAR16); j++)
				fi_plan.opts[j] = s[i + j];
			fi_plan.opts[j] = 0;
			break;
		}
		for (eq = start; eq < i && s[eq] != '='; eq++)
			;
		if (eq == i || !fi_key(s + start, eq - start, s + eq + 1, i - eq - 1)) {
			CHAR8 word[64];

			for (j = 0; j < i - start && j + 1 < sizeof(word); j++)
				word[j] = s[start + j];
			word[j] = 0;
			Print(L"fault-plan-error: line %d: '%a'\n", (int)lineno, word);
			return 0;
		}
	}
	return 1;
}

/* ---------------------------------------------------------------- one case */

static void fi_print_desc(const CHAR16 *what, const struct fi_map *m, UINTN i)
{
	if (i < m->n)
		Print(L"fault-mapdiff: %a %s #%d type=%d start=%lx pages=%lx\n", fi_plan.name, what,
		      (int)i, m->d[i].Type, m->d[i].PhysicalStart, m->d[i].NumberOfPages);
	else
		Print(L"fault-mapdiff: %a %s #%d none\n", fi_plan.name, what, (int)i);
}

/*
 * seedtable=N: install a LINUX_EFI_RANDOM_SEED table whose size field says
 * N, followed by N varied bytes, as systemd-boot leaves one for the next
 * stage; it stays installed for the kernel, as a chainloaded loader would
 * find it.  Before the map snapshot, so the pool it takes is not the
 * loader's.
 */
static void fi_seedtable(void)
{
	static EFI_GUID g = { 0x1ce1e5bc, 0x7ceb, 0x42f2,
			      { 0x81, 0xe5, 0x8a, 0xad, 0xf1, 0x80, 0xf5, 0x7b } };
	UINT8 *t = NULL;
	UINT32 n = fi_plan.seedtable, i;

	if (!n || EFI_ERROR(BS->AllocatePool(EfiACPIReclaimMemory, 4 + n, (void **)&t)))
		return;
	CopyMem(t, &n, 4);
	for (i = 0; i < n; i++)
		t[4 + i] = (UINT8)(i * 37 + 5);
	if (EFI_ERROR(BS->InstallConfigurationTable(&g, t)))
		FreePool(t);
}

/*
 * seedvar=nv|volatile: LoaderRandomSeed as someone left it before the
 * loader runs - non-volatile, as root can plant one through efivarfs or a
 * shell with any bytes, or volatile, as systemd-boot 252 sets it.  32
 * fixed bytes; set before the map snapshot, deleted after the run (a boot
 * that ends with the kernel never gets there).
 */
static EFI_GUID fi_bli_guid = { 0x4a67b082, 0x0a4c, 0x41cf,
				{ 0xb6, 0xc7, 0x44, 0x0b, 0x29, 0xbb, 0x8c, 0x4f } };

static void fi_seedvar(int plant)
{
	UINT8 v[32];
	UINT32 attr = EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS;
	UINTN i;

	if (fi_plan.seedvar == FI_SEEDVAR_NONE)
		return;
	if (!plant) {
		RT->SetVariable(L"LoaderRandomSeed", &fi_bli_guid, 0, 0, NULL);
		return;
	}
	if (fi_plan.seedvar == FI_SEEDVAR_NV)
		attr |= EFI_VARIABLE_NON_VOLATILE;
	for (i = 0; i < sizeof(v); i++)
		v[i] = (UINT8)(0x5a ^ i);
	if (EFI_ERROR(RT->SetVariable(L"LoaderRandomSeed", &fi_bli_guid, attr, sizeof(v), v)))
		Print(L"fault-setup: %a: LoaderRandomSeed could not be planted\n", fi_plan.name);
}

static void fi_run(EFI_HANDLE self, EFI_DEVICE_PATH *dp)
{
	EFI_HANDLE child = NULL;
	EFI_LOADED_IMAGE *cli = NULL;
	EFI_STATUS st, ret;
	EFI_TPL tpl0, want, now, old = 0;
	UINTN diff, first, leak_pages, leak_pool, files;
	CHAR16 tpl_word[32], map_word[32];

	Print(L"fault-begin: %a\n", fi_plan.name);
	SetMem(&fi_cnt, sizeof(fi_cnt), 0);
	fi_track_reset();
	fi_mmap_reset();
	fi_proto_reset();
	fi_ebs_failed = 0;
	fi_seedtable();
	fi_seedvar(1);

	st = fi_mmap_snapshot(&fi_before);
	if (!EFI_ERROR(st))
		st = BS->LoadImage(FALSE, self, dp, NULL, 0, &child);
	if (!EFI_ERROR(st))
		st = BS->HandleProtocol(child, &LoadedImageProtocol, (void **)&cli);
	if (EFI_ERROR(st)) {
		Print(L"fault-result: %a injector-error=%lx\n", fi_plan.name, st);
		return;
	}
	if (fi_plan.opts[0]) {
		cli->LoadOptions = fi_plan.opts;
		cli->LoadOptionsSize = (UINT32)((StrLen(fi_plan.opts) + 1) * sizeof(CHAR16));
	}
	fi_img_lo = cli->ImageBase;
	fi_img_hi = fi_img_lo + cli->ImageSize;

	tpl0 = fi_current_tpl();
	want = fi_plan.tpl ? fi_plan.tpl : tpl0;
	fi_install();
	st = fi_acpi_apply();
	if (fi_plan.tpl)
		old = fi_bs.RaiseTPL(fi_plan.tpl);
	ret = EFI_ERROR(st) ? st : fi_bs.StartImage(child, NULL, NULL);
	/* back at the TPL it was started at: anything else is the loader's doing */
	now = fi_current_tpl();
	if (now > want)
		fi_bs.RestoreTPL(want);
	else if (now < want)
		fi_bs.RaiseTPL(want);
	if (fi_plan.tpl)
		fi_bs.RestoreTPL(old);
	fi_acpi_restore();
	fi_remove();

	fi_own_free_all();
	fi_track_leaks(&leak_pages, &leak_pool);
	files = fi_files_open();
	st = fi_mmap_snapshot(&fi_after);
	diff = EFI_ERROR(st) ? 1 : fi_mmap_diff(&fi_before, &fi_after, &first);
	if (diff)
		SPrint(map_word, sizeof(map_word), L"diff:%d", (int)diff);
	else
		StrCpy(map_word, L"same");
	if (now == want)
		StrCpy(tpl_word, L"ok");
	else
		SPrint(tpl_word, sizeof(tpl_word), L"bad:%d/%d", (int)now, (int)want);
	Print(L"fault-result: %a status=%lx leak_pages=%d leak_pool=%d badfree=%d files=%d "
	      L"map=%s tpl=%s calls=ap:%d,pool:%d,gmm:%d,ebs:%d,tpl:%d,var:%d,proto:%d "
	      L"faults=%d violations=%d\n",
	      fi_plan.name, ret, (int)leak_pages, (int)leak_pool, (int)fi_cnt.badfree, (int)files,
	      map_word, tpl_word, fi_cnt.ap, fi_cnt.pool, fi_cnt.gmm,
	      fi_cnt.ebs, fi_cnt.tpl, fi_cnt.var, fi_cnt.proto, fi_cnt.faults, fi_cnt.violations);
	if (fi_cnt.violations)
		Print(L"fault-violation: %a %a\n", fi_plan.name, fi_cnt.why);
	if (diff && !EFI_ERROR(st)) {
		fi_print_desc(L"before", &fi_before, first);
		fi_print_desc(L"after", &fi_after, first);
	}
	fi_seedvar(0);
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	EFI_LOADED_IMAGE *li = NULL;
	EFI_DEVICE_PATH *dp;
	UINTN len = 0, i, start, lineno = 0, ncases = 0;
	EFI_STATUS st;

	InitializeLib(image, systab);
	fi_save();
	/* the boot manager's 5-minute watchdog would reset a long plan */
	BS->SetWatchdogTimer(0, 0, 0, NULL);
	st = BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li);
	if (!EFI_ERROR(st))
		st = fi_read_plan(li->DeviceHandle, &len);
	if (EFI_ERROR(st)) {
		Print(L"fault-plan-error: cannot read %s (%r)\n", FI_PLAN_PATH, st);
		return st;
	}
	dp = FileDevicePath(li->DeviceHandle, FI_LOADER_PATH);
	st = dp ? fi_mmap_init() : EFI_OUT_OF_RESOURCES;
	if (EFI_ERROR(st)) {
		Print(L"fault-plan-error: injector setup (%r)\n", st);
		return st;
	}
	for (i = 0; i < len; i++)
		ncases += fi_text[i] == '\n';
	Print(L"fault-plan: %d lines\n", (int)ncases);
	for (start = 0; start < len; start = i + 1) {
		UINTN end;

		for (i = start; i < len && fi_text[i] != '\n'; i++)
			;
		lineno++;
		for (end = i; end > start && (fi_text[end - 1] == '\r' || fi_text[end - 1] == ' '); end--)
			;
		if (end == start || fi_text[start] == '#')
			continue;
		if (!fi_parse(fi_text + start, end - start, lineno))
			break;
		fi_run(image, dp);
	}
	Print(L"fault-done\n");
	RT->ResetSystem(EfiResetShutdown, EFI_SUCCESS, 0, NULL);
	return EFI_SUCCESS;
}
