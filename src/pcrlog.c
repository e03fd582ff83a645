/*
 * pcrlog.c - the event log of a boot through kaslr-loader, sorted into
 * what an update leaves, what it recomputes and what it replaces, and a
 * PCR's next value from those parts (include/pcrlog.h).  Every length in
 * the log is checked before it is used.
 */
#include <string.h>

#include "pcrlog.h"

#define PL_IMAGE_LOAD_HDR 32  /* UEFI_IMAGE_LOAD_EVENT up to its device path */
#define PL_VAR_HDR        32  /* UEFI_VARIABLE_DATA up to its name */
#define PL_TAG_HDR        8   /* TCG_PCClientTaggedEvent: id, size */
#define PL_DP_END         0x7f
#define PL_DP_MEDIA       0x04
#define PL_DP_FILE        0x04
#define PL_DP_FV_FILE     0x06
#define PL_DP_FV          0x07
#define PL_EVENTS_MAX     100000

/* the firmware's record types an update leaves as they are (the TCG PC
 * Client Platform Firmware Profile's, but for those handled apart) */
static int pl_firmware_type(uint32_t t)
{
	switch (t) {
	case 0x00000000: /* EV_PREBOOT_CERT */
	case 0x00000001: /* EV_POST_CODE */
	case 0x00000004: /* EV_SEPARATOR */
	case 0x00000005: /* EV_ACTION */
	case 0x00000007: /* EV_S_CRTM_CONTENTS */
	case 0x00000008: /* EV_S_CRTM_VERSION */
	case 0x00000009: /* EV_CPU_MICROCODE */
	case 0x0000000a: /* EV_PLATFORM_CONFIG_FLAGS */
	case 0x0000000b: /* EV_TABLE_OF_DEVICES */
	case 0x0000000c: /* EV_COMPACT_HASH */
	case 0x0000000e: /* EV_IPL_PARTITION_DATA */
	case 0x0000000f: /* EV_NONHOST_CODE */
	case 0x00000010: /* EV_NONHOST_CONFIG */
	case 0x00000011: /* EV_NONHOST_INFO */
	case 0x00000012: /* EV_OMIT_BOOT_DEVICE_EVENTS */
	case 0x80000001: /* EV_EFI_VARIABLE_DRIVER_CONFIG */
	case 0x80000002: /* EV_EFI_VARIABLE_BOOT */
	case 0x80000004: /* EV_EFI_BOOT_SERVICES_DRIVER */
	case 0x80000005: /* EV_EFI_RUNTIME_SERVICES_DRIVER */
	case 0x80000006: /* EV_EFI_GPT_EVENT */
	case 0x80000007: /* EV_EFI_ACTION */
	case 0x80000008: /* EV_EFI_PLATFORM_FIRMWARE_BLOB */
	case 0x80000009: /* EV_EFI_HANDOFF_TABLES */
	case 0x8000000a: /* EV_EFI_PLATFORM_FIRMWARE_BLOB2 */
	case 0x8000000b: /* EV_EFI_HANDOFF_TABLES2 */
	case 0x8000000c: /* EV_EFI_VARIABLE_BOOT2 */
	case 0x80000010: /* EV_EFI_HCRTM_EVENT */
	case 0x800000e0: /* EV_EFI_VARIABLE_AUTHORITY */
	case 0x800000e1: /* EV_EFI_SPDM_FIRMWARE_BLOB */
	case 0x800000e2: /* EV_EFI_SPDM_FIRMWARE_CONFIG */
		return 1;
	}
	return 0;
}

/* the PCRs the loader measures into: no earlier stage may have */
static int pl_loader_pcr(uint32_t pcr)
{
	return pcr == TPM_PCR_POLICY || pcr == TPM_PCR_FILES || pcr == 11 ||
	       pcr == TPM_PCR_CMDLINE;
}

int pcrlog_devpath_file(const uint8_t *dp, uint64_t len, char *out, size_t cap, int *ret_other,
			int *ret_fv)
{
	uint64_t off = 0;
	size_t n = 0;
	int other = 0, fv = 0, have = 0;

	if (cap == 0)
		return 0;
	out[0] = 0;
	while (ldr_in_bounds(off, 4, len)) {
		uint8_t type = dp[off], sub = dp[off + 1];
		uint64_t nl = ldr_le16(dp + off + 2);

		if (type == PL_DP_END || nl < 4 || !ldr_in_bounds(off, nl, len))
			break;
		if (type != PL_DP_MEDIA || sub != PL_DP_FILE) {
			other = 1;
			if (type == PL_DP_MEDIA && (sub == PL_DP_FV_FILE || sub == PL_DP_FV))
				fv = 1;
			off += nl;
			continue;
		}
		for (uint64_t i = 4; i + 1 < nl; i += 2) {
			uint16_t c = ldr_le16(dp + off + i);

			if (c == 0)
				break;
			if (c == '/')
				c = '\\';
			/* one separator between nodes, none doubled */
			if (c == '\\' && n > 0 && out[n - 1] == '\\')
				continue;
			if (i == 4 && c != '\\' && (n == 0 || out[n - 1] != '\\')) {
				if (n + 2 > cap)
					goto too_long;
				out[n++] = '\\';
			}
			if (n + 2 > cap)
				goto too_long;
			out[n++] = c < 0x80 ? (char)c : '?';
			if (c != '\\')
				have = 1;
		}
		off += nl;
	}
	out[n] = 0;
	*ret_other = other;
	*ret_fv = fv;
	if (!have)
		out[0] = 0;
	return have;
too_long:
	out[0] = 0;
	*ret_other = other;
	*ret_fv = fv;
	return 0;
}

/* an image record's device path, into e->path and e->file_only */
static int pl_image(struct pcrlog_event *e, int *ret_fv)
{
	uint64_t dpl;
	int other = 0;

	*ret_fv = 0;
	e->path[0] = 0;
	if (e->data_len < PL_IMAGE_LOAD_HDR)
		return 0;
	dpl = ldr_le64(e->data + 24);
	if (!ldr_in_bounds(PL_IMAGE_LOAD_HDR, dpl, e->data_len))
		return 0;
	if (!pcrlog_devpath_file(e->data + PL_IMAGE_LOAD_HDR, dpl, e->path, sizeof(e->path),
				 &other, ret_fv))
		return 0;
	e->file_only = !other;
	return 1;
}

/* SecureBoot's value from an EV_EFI_VARIABLE_DRIVER_CONFIG record, -1: another variable */
static int pl_secure_boot(const struct pcrlog_event *e)
{
	static const char name[] = "SecureBoot";
	uint64_t nlen, dlen;

	if (e->data_len < PL_VAR_HDR)
		return -1;
	nlen = ldr_le64(e->data + 16);
	dlen = ldr_le64(e->data + 24);
	if (nlen != sizeof(name) - 1 || !ldr_in_bounds(PL_VAR_HDR, 2 * nlen, e->data_len) ||
	    !ldr_in_bounds(PL_VAR_HDR + 2 * nlen, dlen, e->data_len))
		return -1;
	for (uint64_t i = 0; i < nlen; i++)
		if (ldr_le16(e->data + PL_VAR_HDR + 2 * i) != (uint8_t)name[i])
			return -1;
	return dlen == 1 && e->data[PL_VAR_HDR + 2 * nlen] == 1;
}

/* what a record is to the prediction, given where the loader's image is */
static void pl_classify(struct pcrlog *l, size_t i)
{
	struct pcrlog_event *e = &l->ev[i];
	int fv = 0, after = i > l->loader;

	if (e->type == TCG_EV_NO_ACTION) {
		e->kind = PCRLOG_SKIP;
		return;
	}
	if (e->type == TCG_EV_EFI_BOOT_SERVICES_APP) {
		int file = pl_image(e, &fv);

		if (e->pcr != 4) {
			e->kind = PCRLOG_UNKNOWN;
			e->why = "an image record outside PCR 4";
		} else if (after) {
			/* shim's Verify of a kernel, or the firmware's LoadImage
			 * the loader asked of a unified kernel image */
			e->kind = PCRLOG_LOADER;
		} else if (file) {
			e->kind = PCRLOG_IMAGE;
		} else if (fv) {
			e->kind = PCRLOG_REPLAY; /* built into the firmware */
		} else {
			e->kind = PCRLOG_UNKNOWN;
			e->why = "an image started from neither a file nor the firmware";
		}
		return;
	}
	if (e->type == TCG_EV_EVENT_TAG || e->type == TCG_EV_IPL) {
		if (!pl_loader_pcr(e->pcr)) {
			e->kind = PCRLOG_REPLAY; /* e.g. shim's MOK lists in PCR 14 */
		} else if (!after) {
			e->kind = PCRLOG_UNKNOWN;
			e->why = "another boot stage measured into this PCR before the loader";
		} else if (e->type == TCG_EV_IPL ?
				   e->pcr == TPM_PCR_CMDLINE || e->pcr == 11 :
				   (e->pcr == TPM_PCR_POLICY &&
				    (e->tag == TPM_TAG_POLICY || e->tag == TPM_TAG_SETTINGS)) ||
				   (e->pcr == TPM_PCR_FILES &&
				    (e->tag == TPM_TAG_KERNEL || e->tag == TPM_TAG_INITRD ||
				     e->tag == TPM_TAG_MODULE))) {
			e->kind = PCRLOG_LOADER;
		} else {
			e->kind = PCRLOG_UNKNOWN;
			e->why = "a record the loader does not make";
		}
		return;
	}
	if (pl_firmware_type(e->type)) {
		e->kind = PCRLOG_REPLAY;
		return;
	}
	e->kind = PCRLOG_UNKNOWN;
	e->why = "an event type the prediction does not know";
}

static enum ldr_err pl_fail(struct pcrlog *l, const char *why)
{
	l->why = why;
	return LDR_E_PCRLOG;
}

enum ldr_err pcrlog_read(const uint8_t *log, uint64_t len, uint16_t alg,
			 struct pcrlog_event *ev, size_t cap, struct pcrlog *ret)
{
	static const char locality[] = "StartupLocality"; /* with its NUL: 16 bytes */
	struct tcglog_spec spec;
	struct tcglog_event te;
	uint64_t off;
	uint32_t bank;
	size_t n = 0, first = PCRLOG_NONE;
	struct pcrlog l;

	memset(&l, 0, sizeof(l));
	l.ev = ev;
	l.loader = l.starter = l.settings = PCRLOG_NONE;
	*ret = l;
	if (tcglog_first(log, len, &spec, &off) != LDR_OK)
		return LDR_E_TCGLOG;
	for (bank = 0; bank < spec.nalg && spec.alg[bank] != alg; bank++)
		;
	if (bank == spec.nalg || spec.size[bank] > PCRLOG_DIGEST_MAX)
		return pl_fail(ret, "the log has no such PCR bank");
	l.alg = alg;
	l.size = spec.size[bank];
	while (off < len) {
		struct pcrlog_event *e;

		if (n == cap || tcglog_event(log, len, off, &spec, &te) != LDR_OK)
			return LDR_E_TCGLOG;
		e = &ev[n];
		memset(e, 0, sizeof(*e));
		e->pcr = te.pcr;
		e->type = te.type;
		e->off = off;
		e->digest = te.digest[bank];
		e->data = te.data;
		e->data_len = te.data_len;
		if (te.type == TCG_EV_EVENT_TAG && te.data_len >= PL_TAG_HDR)
			e->tag = ldr_le32(te.data);
		off += te.size;
		if (te.type == TCG_EV_NO_ACTION) {
			if (te.pcr == 0 && te.data_len == sizeof(locality) + 1 &&
			    memcmp(te.data, locality, sizeof(locality)) == 0)
				l.locality = te.data[sizeof(locality)];
		} else if (!e->digest) {
			/* every extended record carries every bank's digest */
			return LDR_E_TCGLOG;
		}
		if (te.pcr >= PCRLOG_PCRS)
			return LDR_E_TCGLOG;
		if (te.pcr == 7 && te.type == TCG_EV_EFI_VARIABLE_DRIVER_CONFIG &&
		    pl_secure_boot(e) >= 0)
			l.secure_boot = pl_secure_boot(e);
		if (te.pcr == TPM_PCR_POLICY && te.type == TCG_EV_EVENT_TAG &&
		    (e->tag == TPM_TAG_SETTINGS || e->tag == TPM_TAG_POLICY)) {
			if (e->tag == TPM_TAG_SETTINGS) {
				if (l.settings != PCRLOG_NONE) {
					*ret = l;
					return pl_fail(ret, "the loader ran more than once in this boot");
				}
				l.settings = n;
			}
			if (first == PCRLOG_NONE)
				first = n;
		}
		n++;
	}
	l.nev = n;
	if (l.settings == PCRLOG_NONE) {
		*ret = l;
		return pl_fail(ret, "the log holds no kaslr-loader settings record: this boot did not go through kaslr-loader (with a TPM)");
	}
	for (size_t i = 0; i < first; i++)
		if (ev[i].pcr == 4 && ev[i].type == TCG_EV_EFI_BOOT_SERVICES_APP) {
			l.starter = l.loader;
			l.loader = i;
		}
	if (l.loader == PCRLOG_NONE) {
		*ret = l;
		return pl_fail(ret, "the log holds no PCR 4 record of the image that ran the loader");
	}
	for (size_t i = 0; i < n; i++)
		pl_classify(&l, i);
	*ret = l;
	return LDR_OK;
}

enum ldr_err pcrlog_predict(const struct pcrlog *l, uint32_t pcr,
			    const struct pcrlog_record *rec, size_t nrec, pcrlog_extend_fn extend,
			    void *ctx, uint8_t *out, size_t *ret_event, const char **ret_why)
{
	size_t last_old = PCRLOG_NONE;
	int placed = 0;

	*ret_event = PCRLOG_NONE;
	*ret_why = NULL;
	if (pcr >= PCRLOG_PCRS)
		return LDR_E_INVAL;
	/* the reset value: PCR 0 from the locality of TPM2_Startup, the
	 * dynamic-launch PCRs 17-22 all ones, the rest zeros */
	memset(out, pcr >= 17 && pcr <= 22 ? 0xff : 0, l->size);
	if (pcr == 0)
		out[l->size - 1] = l->locality;
	for (size_t i = 0; i < l->nev; i++)
		if (l->ev[i].pcr == pcr && l->ev[i].kind == PCRLOG_LOADER)
			last_old = i;
	for (size_t i = 0; i <= l->nev; i++) {
		const struct pcrlog_event *e = i < l->nev ? &l->ev[i] : NULL;

		if (e && e->pcr != pcr)
			continue;
		if (!placed && (!e || i > l->loader)) {
			for (size_t k = 0; k < nrec; k++)
				if (rec[k].pcr == pcr)
					extend(ctx, out, rec[k].digest, out);
			placed = 1;
		}
		if (!e)
			break;
		switch (e->kind) {
		case PCRLOG_SKIP:
		case PCRLOG_LOADER:
			break;
		case PCRLOG_REPLAY:
			if (i > l->loader && last_old != PCRLOG_NONE && i < last_old) {
				*ret_event = i;
				*ret_why = "a firmware record between the loader's own: its place in the next boot is unknown";
				return LDR_E_PCRLOG;
			}
			extend(ctx, out, e->digest, out);
			break;
		case PCRLOG_IMAGE:
			if (!e->now) {
				*ret_event = i;
				*ret_why = "an image whose file was not found again";
				return LDR_E_PCRLOG;
			}
			extend(ctx, out, e->now, out);
			break;
		case PCRLOG_UNKNOWN:
			*ret_event = i;
			*ret_why = e->why;
			return LDR_E_PCRLOG;
		}
	}
	return LDR_OK;
}
