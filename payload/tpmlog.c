/*
 * payload/tpmlog.c - reads the TPM event log the loader installed as a
 * configuration table (payload/tpmlog.h) with the loader's own record
 * reader (src/tcglog.c), and prints the records a boot test checks.
 */
#include <stddef.h>
#include <stdint.h>

#include "tpmlog.h"
#include "tcglog.h"
#include "serial.h"

#define TL_ST_NTABLES 104 /* EFI_SYSTEM_TABLE.NumberOfTableEntries */
#define TL_ST_TABLES  112 /* EFI_SYSTEM_TABLE.ConfigurationTable */
#define TL_HDR        9   /* u32 size, u32 final_events_preboot_size, u8 version */

static const uint8_t tl_guid[16] = { /* b7799cb0-eca2-4943-9667-1fae07b747fa */
	0xb0, 0x9c, 0x79, 0xb7, 0xa2, 0xec, 0x43, 0x49,
	0x96, 0x67, 0x1f, 0xae, 0x07, 0xb7, 0x47, 0xfa,
};

static uint32_t tl_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const uint8_t *tl_find(const struct kaslr_boot_info *info)
{
	const uint8_t *st = (const uint8_t *)(uintptr_t)info->efi_system_table;
	uint64_t n, i;
	const uint8_t *t;

	if (!st)
		return NULL;
	n = *(const uint64_t *)(st + TL_ST_NTABLES);
	t = (const uint8_t *)(uintptr_t)*(const uint64_t *)(st + TL_ST_TABLES);
	for (i = 0; i < n && i < 256; i++) {
		const uint8_t *e = t + 24 * i;
		int same = 1;

		for (int k = 0; k < 16; k++)
			same &= e[k] == tl_guid[k];
		if (same)
			return (const uint8_t *)(uintptr_t)*(const uint64_t *)(e + 16);
	}
	return NULL;
}

/* the event data as text: a tagged event's payload, UTF-16 or ASCII */
static void tl_put_desc(const struct tcglog_event *e)
{
	const uint8_t *d = e->data;
	uint32_t n = e->data_len;

	if (e->type == TCG_EV_EVENT_TAG && n >= 8) {
		uint32_t sz = tl_u32(d + 4);

		serial_puts(" tag=");
		serial_put_hex(tl_u32(d));
		d += 8;
		n = sz <= n - 8 ? sz : n - 8;
	}
	/* UTF-16 when every second byte is zero */
	int wide = n >= 2 && n % 2 == 0;
	for (uint32_t i = 1; wide && i < n; i += 2)
		wide = d[i] == 0;
	serial_puts(" desc=");
	for (uint32_t i = 0; i < n; i += wide ? 2 : 1)
		serial_putc(d[i] >= 0x20 && d[i] < 0x7f ? (char)d[i] : '?');
}

int tpmlog_report(const struct kaslr_boot_info *info)
{
	static const char hexd[] = "0123456789abcdef";
	const uint8_t *t = tl_find(info);
	struct tcglog_spec spec;
	struct tcglog_event e;
	uint64_t size, off;
	int records = 1;

	if (!t)
		return 0;
	size = tl_u32(t);
	t += TL_HDR;
	if (tcglog_first(t, size, &spec, &off) != LDR_OK) {
		serial_puts("payload-tpm: malformed first record\n");
		return -1;
	}
	while (off < size) {
		if (tcglog_event(t, size, off, &spec, &e) != LDR_OK) {
			serial_puts("payload-tpm: malformed record at ");
			serial_put_hex(off);
			serial_putc('\n');
			return -1;
		}
		records++;
		off += e.size;
		if ((e.pcr != 5 && e.pcr != 9 && e.pcr != 12) ||
		    (e.type != TCG_EV_EVENT_TAG && e.type != TCG_EV_IPL) || !e.sha256)
			continue;
		serial_puts("payload-tpm: pcr=");
		serial_put_dec(e.pcr);
		serial_puts(" type=");
		serial_put_hex(e.type);
		serial_puts(" sha256=");
		for (int i = 0; i < 32; i++) {
			serial_putc(hexd[e.sha256[i] >> 4]);
			serial_putc(hexd[e.sha256[i] & 15]);
		}
		tl_put_desc(&e);
		serial_putc('\n');
	}
	serial_puts("payload-tpm: records=");
	serial_put_dec((uint64_t)records);
	serial_putc('\n');
	return records;
}
