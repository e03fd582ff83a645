/*
 * tcglog.c - reading records of the TCG2 event log (include/tcglog.h).  The
 * log comes from firmware; every length is checked against the bytes given
 * before it is used.  No libc: the test kernel links this file too.
 */
#include "tcglog.h"

#define TL_SPEC_SIG     "Spec ID Event03"
#define TL_SPEC_SIG_LEN 16 /* with its NUL */
#define TL_FIRST_HDR    32 /* pcr, type, sha1[20], event size */
#define TL_SPEC_FIXED   (TL_SPEC_SIG_LEN + 4 + 4 + 4) /* sig, class, versions, nalg */

static int tl_same(const uint8_t *a, const char *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i] != (uint8_t)b[i])
			return 0;
	return 1;
}

enum ldr_err tcglog_first(const uint8_t *log, uint64_t len, struct tcglog_spec *ret_spec,
			  uint64_t *ret_size)
{
	struct tcglog_spec spec;
	const uint8_t *ev;
	uint32_t n;

	if (!ldr_in_bounds(0, TL_FIRST_HDR, len))
		return LDR_E_TCGLOG;
	n = ldr_le32(log + 28);
	if (n > TCGLOG_EVENT_MAX || !ldr_in_bounds(TL_FIRST_HDR, n, len) || n < TL_SPEC_FIXED)
		return LDR_E_TCGLOG;
	ev = log + TL_FIRST_HDR;
	if (ldr_le32(log + 4) != TCG_EV_NO_ACTION || !tl_same(ev, TL_SPEC_SIG, TL_SPEC_SIG_LEN))
		return LDR_E_TCGLOG;
	spec.nalg = ldr_le32(ev + TL_SPEC_FIXED - 4);
	if (spec.nalg == 0 || spec.nalg > TCGLOG_MAX_ALGS ||
	    !ldr_in_bounds(TL_SPEC_FIXED, (uint64_t)spec.nalg * 4, n))
		return LDR_E_TCGLOG;
	for (uint32_t i = 0; i < TCGLOG_MAX_ALGS; i++)
		spec.alg[i] = spec.size[i] = 0;
	for (uint32_t i = 0; i < spec.nalg; i++) {
		spec.alg[i] = ldr_le16(ev + TL_SPEC_FIXED + 4 * i);
		spec.size[i] = ldr_le16(ev + TL_SPEC_FIXED + 4 * i + 2);
		if (spec.size[i] == 0 || spec.size[i] > 64)
			return LDR_E_TCGLOG;
	}
	*ret_spec = spec;
	*ret_size = TL_FIRST_HDR + (uint64_t)n;
	return LDR_OK;
}

enum ldr_err tcglog_event(const uint8_t *log, uint64_t len, uint64_t off,
			  const struct tcglog_spec *spec, struct tcglog_event *ret)
{
	struct tcglog_event e;
	uint64_t p;
	uint32_t count, n;

	if (!ldr_in_bounds(off, 12, len))
		return LDR_E_TCGLOG;
	e.sha256 = 0;
	for (uint32_t i = 0; i < TCGLOG_MAX_ALGS; i++)
		e.digest[i] = 0;
	e.pcr = ldr_le32(log + off);
	e.type = ldr_le32(log + off + 4);
	count = ldr_le32(log + off + 8);
	if (count == 0 || count > spec->nalg)
		return LDR_E_TCGLOG;
	p = off + 12;
	for (uint32_t i = 0; i < count; i++) {
		uint16_t alg;
		uint32_t k;

		if (!ldr_in_bounds(p, 2, len))
			return LDR_E_TCGLOG;
		alg = ldr_le16(log + p);
		for (k = 0; k < spec->nalg && spec->alg[k] != alg; k++)
			;
		if (k == spec->nalg || !ldr_in_bounds(p + 2, spec->size[k], len))
			return LDR_E_TCGLOG;
		if (alg == TCGLOG_ALG_SHA256 && spec->size[k] == 32)
			e.sha256 = log + p + 2;
		e.digest[k] = log + p + 2;
		p += 2 + (uint64_t)spec->size[k];
	}
	if (!ldr_in_bounds(p, 4, len))
		return LDR_E_TCGLOG;
	n = ldr_le32(log + p);
	p += 4;
	if (n > TCGLOG_EVENT_MAX || !ldr_in_bounds(p, n, len))
		return LDR_E_TCGLOG;
	e.data = log + p;
	e.data_len = n;
	e.size = p + n - off;
	*ret = e;
	return LDR_OK;
}

uint64_t tcglog_cmdline_event(const char *line, uint64_t len, uint8_t *out, uint64_t cap)
{
	uint64_t i;

	for (i = 0; i < len && 2 * i + 2 <= cap; i++) {
		out[2 * i] = (uint8_t)line[i];
		out[2 * i + 1] = 0;
	}
	return 2 * i;
}
