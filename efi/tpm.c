/*
 * tpm.c - measurements through EFI_TCG2_PROTOCOL and the copy of the event
 * log Linux expects (efi/tpm.h).  The protocol is looked up once; a
 * firmware without it, or whose TPM is absent, gets no measurement and no
 * message.  Records follow systemd's conventions: the command line as
 * EV_IPL in UTF-16 (so systemd-pcrlock predicts it like systemd-boot's),
 * everything new as EV_EVENT_TAG with a UTF-16 description, an initrd with
 * the tag and text Linux's EFI stub uses.
 */
#include <efi.h>
#include <efilib.h>

#include "tpm.h"
#include "tcg2.h"
#include "tcglog.h"
#include "log.h"
#include "options.h"

/* the event record, header included: the settings text is the largest */
#define TPM_EVENT_MAX (OPT_SETTINGS_MAX + 256)
_Static_assert(TPM_EVENT_MAX >= 2 * OPT_CMDLINE_MAX + 64, "the command line in UTF-16 fits");

static EFI_TCG2_PROTOCOL *tpm_proto;
static int tpm_state; /* 0 not asked, 1 present, -1 absent */
static int tpm_warned;

static EFI_TCG2_PROTOCOL *tpm_get(void)
{
	static EFI_GUID guid = EFI_TCG2_PROTOCOL_GUID;
	EFI_TCG2_BOOT_SERVICE_CAPABILITY cap;
	EFI_TCG2_PROTOCOL *t = NULL;

	if (tpm_state)
		return tpm_state > 0 ? tpm_proto : NULL;
	tpm_state = -1;
	if (EFI_ERROR(uefi_call_wrapper(BS->LocateProtocol, 3, &guid, NULL, (void **)&t)) || !t)
		return NULL;
	SetMem(&cap, sizeof(cap), 0);
	cap.Size = sizeof(cap);
	if (EFI_ERROR(uefi_call_wrapper(t->GetCapability, 2, t, &cap)) || !cap.TPMPresentFlag)
		return NULL;
	tpm_proto = t;
	tpm_state = 1;
	log_info(L"TPM 2.0 present: measuring into PCRs %d, %d, %d", TPM_PCR_POLICY,
		 TPM_PCR_FILES, TPM_PCR_CMDLINE);
	return t;
}

static void tpm_warn(EFI_STATUS st, const CHAR16 *what)
{
	CHAR16 name[64];

	if (tpm_warned++)
		return;
	StatusToString(name, st);
	log_warn(L"TPM: %s failed (%s); booting without this measurement", what, name);
}

/*
 * The one event record: callers write the event data at tpm_rec's Event
 * (at most TPM_EVENT_DATA_MAX bytes), then tpm_extend fills the header.
 */
static UINT8 tpm_rec_buf[TPM_EVENT_MAX];
#define TPM_REC ((EFI_TCG2_EVENT *)tpm_rec_buf)
#define TPM_REC_HDR (sizeof(UINT32) + sizeof(EFI_TCG2_EVENT_HEADER))
#define TPM_EVENT_DATA_MAX (sizeof(tpm_rec_buf) - TPM_REC_HDR)

/* one HashLogExtendEvent: data hashed, the record's evlen bytes of event data */
static int tpm_extend(UINT32 pcr, UINT32 type, const void *data, UINT64 len, UINTN evlen)
{
	EFI_TCG2_EVENT *e = TPM_REC;
	EFI_TCG2_PROTOCOL *t = tpm_get();
	EFI_STATUS st;

	if (!t)
		return 0;
	e->Size = (UINT32)(TPM_REC_HDR + evlen);
	e->Header.HeaderSize = sizeof(EFI_TCG2_EVENT_HEADER);
	e->Header.HeaderVersion = EFI_TCG2_EVENT_HEADER_VERSION;
	e->Header.PCRIndex = pcr;
	e->Header.EventType = type;
	st = uefi_call_wrapper(t->HashLogExtendEvent, 5, t, 0ULL,
			       (EFI_PHYSICAL_ADDRESS)(UINTN)data, len, e);
	if (EFI_ERROR(st)) {
		tpm_warn(st, L"HashLogExtendEvent");
		return -1;
	}
	return 1;
}

/* ASCII -> UTF-16LE bytes into out (cap bytes); returns the bytes written */
static UINTN tpm_utf16(const char *s, UINTN n, UINT8 *out, UINTN cap)
{
	UINTN i;

	for (i = 0; i < n && 2 * i + 2 <= cap; i++) {
		out[2 * i] = (UINT8)s[i];
		out[2 * i + 1] = 0;
	}
	return 2 * i;
}

/* the event data of the last tagged measurement, to find its record again */
static UINTN tpm_tag_evlen; /* its bytes stay at TPM_REC->Event until the next */

int tpm_measure_tagged(UINT32 pcr, UINT32 tag, const char *desc, const void *data, UINT64 len)
{
	TCG_PC_CLIENT_TAGGED_EVENT *te = (TCG_PC_CLIENT_TAGGED_EVENT *)TPM_REC->Event;
	UINTN cap = TPM_EVENT_DATA_MAX - 8, n = 0;

	tpm_tag_evlen = 0;
	if (!tpm_get())
		return 0;
	while (desc[n])
		n++;
	/* Linux's initrd record carries its ASCII text, and so does the
	 * settings record (the text itself); our other records UTF-16.  A
	 * description cut short is only that: the hash covers data. */
	if (tag == TPM_TAG_INITRD || tag == TPM_TAG_SETTINGS || tag == TPM_TAG_REFUSED) {
		n = n < cap ? n : cap;
		CopyMem(te->Event, (void *)desc, n);
	} else {
		n = tpm_utf16(desc, n, te->Event, cap);
	}
	te->EventId = tag;
	te->EventSize = (UINT32)n;
	tpm_tag_evlen = 8 + n;
	return tpm_extend(pcr, TCG_EV_EVENT_TAG, data, len, 8 + n);
}

int tpm_measure_settings(const char *text, UINTN len)
{
	return tpm_measure_tagged(TPM_PCR_POLICY, TPM_TAG_SETTINGS, text, text, len);
}

int tpm_measure_tagged_digest(UINT32 pcr, UINT32 tag, const char *desc, const void *data,
			      UINT64 len, UINT8 ret_sha256[32])
{
	EFI_TCG2_PROTOCOL *t;
	EFI_PHYSICAL_ADDRESS first = 0, last = 0, before = 0;
	BOOLEAN truncated = FALSE;
	struct tcglog_spec spec;
	struct tcglog_event e;
	UINT64 fsize;

	/* where the log ended before: a protocol that says it measured but
	 * appended nothing leaves an older record last, and the one before
	 * may carry the same event data (every initrd's is "Linux initrd") */
	if (ret_sha256 && (t = tpm_get()) != NULL &&
	    EFI_ERROR(uefi_call_wrapper(t->GetEventLog, 5, t, EFI_TCG2_EVENT_LOG_FORMAT_TCG_2,
					&first, &before, &truncated)))
		before = 0;
	if (tpm_measure_tagged(pcr, tag, desc, data, len) != 1 || !ret_sha256 || !before)
		return 0;
	t = tpm_get();
	if (EFI_ERROR(uefi_call_wrapper(t->GetEventLog, 5, t, EFI_TCG2_EVENT_LOG_FORMAT_TCG_2,
					&first, &last, &truncated)) ||
	    !first || last <= first || last <= before || truncated)
		return 0;
	/* firmware memory, each record bounded by TCGLOG_EVENT_MAX; the
	 * record must be the one just written, byte for byte in its event */
	if (tcglog_first(phys_to_ptr(first), TCGLOG_EVENT_MAX, &spec, &fsize) != LDR_OK ||
	    tcglog_event(phys_to_ptr(last), TCGLOG_EVENT_MAX, 0, &spec, &e) != LDR_OK ||
	    !e.sha256 || e.pcr != pcr || e.type != TCG_EV_EVENT_TAG ||
	    e.data_len != tpm_tag_evlen || CompareMem(e.data, TPM_REC->Event, tpm_tag_evlen) != 0)
		return 0;
	CopyMem(ret_sha256, (void *)e.sha256, 32);
	return 1;
}

int tpm_measure_cmdline(const char *cmdline, UINT32 len)
{
	UINT8 *wide = TPM_REC->Event;
	UINTN n;

	if (!tpm_get())
		return 0;
	/* the record's data is what is hashed (src/tcglog.c decides the bytes) */
	n = (UINTN)tcglog_cmdline_event(cmdline, len, wide, TPM_EVENT_DATA_MAX);
	return tpm_extend(TPM_PCR_CMDLINE, TCG_EV_IPL, wide, n, n);
}

int tpm_measure_ipl(UINT32 pcr, const char *desc, UINTN desc_len, const void *data, UINT64 len)
{
	UINTN n;

	if (!tpm_get())
		return 0;
	/* the description in UTF-16 and its NUL, cut to fit (the hash is
	 * over data all the same) */
	n = tpm_utf16(desc, desc_len, TPM_REC->Event, TPM_EVENT_DATA_MAX - 2);
	TPM_REC->Event[n] = 0;
	TPM_REC->Event[n + 1] = 0;
	return tpm_extend(pcr, TCG_EV_IPL, data, len, n + 2);
}

/* the bytes of the final-events table's records (Linux skips them in the copy) */
static UINT64 tpm_final_preboot(const struct tcglog_spec *spec)
{
	static EFI_GUID fg = EFI_TCG2_FINAL_EVENTS_TABLE_GUID;
	EFI_TCG2_FINAL_EVENTS_TABLE *ft = NULL;
	struct tcglog_event e;
	UINT64 off = 0, i;

	if (EFI_ERROR(LibGetSystemConfigurationTable(&fg, (void **)&ft)) || !ft)
		return 0;
	for (i = 0; i < ft->NumberOfEvents; i++) {
		/* firmware memory: each record is bounded by TCGLOG_EVENT_MAX */
		if (tcglog_event(ft->Event + off, TCGLOG_EVENT_MAX, 0, spec, &e) != LDR_OK)
			return 0;
		off += e.size;
	}
	return off;
}

/* the table tpm_install_linux_event_log installed, until the kernel has it */
static EFI_GUID tpm_linux_log_guid = LINUX_EFI_TPM_EVENT_LOG_GUID;
static LINUX_EFI_TPM_EVENTLOG *tpm_linux_log;

void tpm_remove_linux_event_log(void)
{
	if (!tpm_linux_log)
		return;
	uefi_call_wrapper(BS->InstallConfigurationTable, 2, &tpm_linux_log_guid, NULL);
	uefi_call_wrapper(BS->FreePool, 1, tpm_linux_log);
	tpm_linux_log = NULL;
}

void tpm_install_linux_event_log(void)
{
	EFI_TCG2_PROTOCOL *t = tpm_get();
	EFI_PHYSICAL_ADDRESS first = 0, last = 0;
	BOOLEAN truncated = FALSE;
	LINUX_EFI_TPM_EVENTLOG *tbl = NULL;
	struct tcglog_spec spec;
	struct tcglog_event e;
	UINT64 size = 0, fsize = 0, lsize;
	EFI_STATUS st;

	if (!t)
		return;
	st = uefi_call_wrapper(t->GetEventLog, 5, t, EFI_TCG2_EVENT_LOG_FORMAT_TCG_2, &first,
			       &last, &truncated);
	if (EFI_ERROR(st) || !first) {
		tpm_warn(EFI_ERROR(st) ? st : EFI_NOT_FOUND, L"GetEventLog");
		return;
	}
	if (tcglog_first(phys_to_ptr(first), TCGLOG_EVENT_MAX, &spec, &fsize) != LDR_OK) {
		tpm_warn(EFI_COMPROMISED_DATA, L"reading the event log's first record");
		return;
	}
	if (last && last > first) {
		if (tcglog_event(phys_to_ptr(last), TCGLOG_EVENT_MAX, 0, &spec, &e) != LDR_OK) {
			tpm_warn(EFI_COMPROMISED_DATA, L"reading the event log's last record");
			return;
		}
		lsize = e.size;
		size = last - first + lsize;
	} else {
		size = fsize;
	}
	if (size > 64 * MIB) {
		tpm_warn(EFI_BAD_BUFFER_SIZE, L"sizing the event log");
		return;
	}
	/* ACPI reclaim memory: the kernel keeps it (e820 "ACPI data") */
	st = uefi_call_wrapper(BS->AllocatePool, 3, EfiACPIReclaimMemory,
			       sizeof(*tbl) + size, (void **)&tbl);
	if (EFI_ERROR(st)) {
		tpm_warn(st, L"AllocatePool for the event log copy");
		return;
	}
	tbl->Size = (UINT32)size;
	tbl->FinalEventsPrebootSize = (UINT32)tpm_final_preboot(&spec);
	tbl->Version = EFI_TCG2_EVENT_LOG_FORMAT_TCG_2;
	CopyMem(tbl->Log, phys_to_ptr(first), size);
	st = uefi_call_wrapper(BS->InstallConfigurationTable, 2, &tpm_linux_log_guid, tbl);
	if (EFI_ERROR(st)) {
		uefi_call_wrapper(BS->FreePool, 1, tbl);
		tpm_warn(st, L"InstallConfigurationTable for the event log");
		return;
	}
	tpm_linux_log = tbl;
	log_info(L"TPM event log for the kernel: %ld bytes%s", size,
		 truncated ? L" (firmware truncated it)" : L"");
}
