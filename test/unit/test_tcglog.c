/*
 * test_tcglog.c - host tests for src/tcglog.c on a hand-built TCG2 event
 * log: the Spec ID record and two crypto-agile records (SHA-1 + SHA-256)
 * are read with the right sizes, digests and data; every truncation and a
 * digest algorithm the Spec ID event does not list are refused.
 */
#include <stdint.h>
#include <string.h>

#include "tcglog.h"
#include "test.h"

static uint8_t log_buf[512];
static size_t log_len;

static void put32(uint32_t v)
{
	for (int i = 0; i < 4; i++)
		log_buf[log_len++] = (uint8_t)(v >> (8 * i));
}

static void put16(uint16_t v)
{
	log_buf[log_len++] = (uint8_t)v;
	log_buf[log_len++] = (uint8_t)(v >> 8);
}

static void put(const void *p, size_t n)
{
	memcpy(log_buf + log_len, p, n);
	log_len += n;
}

/* first record: EV_NO_ACTION with "Spec ID Event03", SHA-1 and SHA-256 */
static size_t mk_log(void)
{
	static const uint8_t zero[32];
	size_t first;

	log_len = 0;
	put32(0);
	put32(TCG_EV_NO_ACTION);
	put(zero, 20);
	put32(16 + 4 + 4 + 4 + 8 + 1);
	put("Spec ID Event03", 16);
	put32(0);            /* platform class */
	put32(0x00000200);   /* versions, uintn size */
	put32(2);
	put16(0x0004);
	put16(20);
	put16(TCGLOG_ALG_SHA256);
	put16(32);
	log_buf[log_len++] = 0; /* vendor info size */
	first = log_len;
	/* PCR 9, tagged, both digests, 6 bytes of data */
	put32(9);
	put32(TCG_EV_EVENT_TAG);
	put32(2);
	put16(0x0004);
	memset(log_buf + log_len, 0x11, 20);
	log_len += 20;
	put16(TCGLOG_ALG_SHA256);
	memset(log_buf + log_len, 0x22, 32);
	log_len += 32;
	put32(6);
	put("abcdef", 6);
	/* PCR 12, EV_IPL, SHA-256 only, no data */
	put32(12);
	put32(TCG_EV_IPL);
	put32(1);
	put16(TCGLOG_ALG_SHA256);
	memset(log_buf + log_len, 0x33, 32);
	log_len += 32;
	put32(0);
	return first;
}

TEST(walk)
{
	struct tcglog_spec spec;
	struct tcglog_event e;
	uint64_t first = 0;
	size_t want_first = mk_log();

	CHECK(tcglog_first(log_buf, log_len, &spec, &first) == LDR_OK, "first");
	CHECK(first == want_first && spec.nalg == 2 && spec.size[1] == 32, "spec");
	CHECK(tcglog_event(log_buf, log_len, first, &spec, &e) == LDR_OK, "event 1");
	CHECK(e.pcr == 9 && e.type == TCG_EV_EVENT_TAG && e.data_len == 6 &&
	      memcmp(e.data, "abcdef", 6) == 0 && e.sha256 && e.sha256[0] == 0x22 &&
	      e.size == 12 + 22 + 34 + 4 + 6, "event 1 fields");
	CHECK(tcglog_event(log_buf, log_len, first + e.size, &spec, &e) == LDR_OK, "event 2");
	CHECK(e.pcr == 12 && e.type == TCG_EV_IPL && e.data_len == 0 && e.sha256[31] == 0x33 &&
	      first + (12 + 22 + 34 + 4 + 6) + e.size == log_len, "event 2 fields");
}

TEST(refused)
{
	struct tcglog_spec spec;
	struct tcglog_event e;
	uint64_t first = 0, l;

	mk_log();
	CHECK(tcglog_first(log_buf, log_len, &spec, &first) == LDR_OK, "first");
	for (l = 0; l < first; l++)
		CHECK(tcglog_first(log_buf, l, &spec, &first) == LDR_E_TCGLOG, "first cut to %llu",
		      (unsigned long long)l);
	CHECK(tcglog_first(log_buf, log_len, &spec, &first) == LDR_OK, "first again");
	for (l = first; l < log_len - 50; l++)
		CHECK(tcglog_event(log_buf, l, first, &spec, &e) == LDR_E_TCGLOG, "event cut to %llu",
		      (unsigned long long)l);
	log_buf[first + 12] = 0x0c; /* SHA-384: not in the Spec ID event */
	CHECK(tcglog_event(log_buf, log_len, first, &spec, &e) == LDR_E_TCGLOG, "unlisted algorithm");
	mk_log();
	log_buf[first + 8] = 3; /* more digests than algorithms */
	CHECK(tcglog_event(log_buf, log_len, first, &spec, &e) == LDR_E_TCGLOG, "digest count");
	mk_log();
	log_buf[32] = 'X';
	CHECK(tcglog_first(log_buf, log_len, &spec, &first) == LDR_E_TCGLOG, "signature");
}
