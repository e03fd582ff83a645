/*
 * payload/fgk_main.c - the function-granular KASLR test kernel's own
 * checks, run before the common ones of payload/main.c (entry.S calls
 * fgk_payload_main in this variant; it ends in payload_main).  It calls
 * every generated function by every route, counts how many of its
 * function sections (the generated functions, the dispatcher and the
 * entry point: all it has, payload/fgk.mk) the loader moved away from
 * their link addresses and how many neighbours swapped order, hashes the
 * order, checks that both tables its note declares sorted are sorted and
 * complete, and that the hand-off's function-granular KASLR fields say
 * what it found.  One line on COM1:
 *
 *   fgk: functions=N moved=M inversions=K calls=C tables=2 entries=E sorted=1
 *        order=0x<FNV-1a of the functions' link-relative run-time addresses>
 *        handoff_functions=N handoff_moved=M handoff_millibits=B
 *
 * (one line) or "payload: FAIL fgk_<reason> ..." and QEMU's exit.  The
 * command-line word fgk.expect=moved makes an unshuffled kernel a
 * failure, fgk.expect=linked a shuffled one.
 */
#include <stddef.h>
#include <stdint.h>

#include "kaslr_boot.h"
#include "serial.h"
#include "fgk.h"

#define FGK_EXIT_PORT 0xf4
#define FGK_EXIT_FAIL 0x11     /* QEMU exit status 35 */
#define FGK_MAX       10000    /* fgkgen's limit */
#define FGK_DEPTH     8        /* d = 1..8 reaches every case of the switch */
#define FGK_EXTRA     2        /* function sections besides the generated ones */
#define FGK_SEED_MILLIBITS 256000ULL /* what the loader's 256-bit seed caps the order to */
#define FGK_FNV_OFFSET 0xcbf29ce484222325ULL
#define FGK_FNV_PRIME  0x100000001b3ULL
/* the hand-off's function-granular KASLR block ends here */
#define FGK_HANDOFF_END \
	(offsetof(struct kaslr_boot_info, fgk_entropy_millibits) + sizeof(uint64_t))

void payload_main(const struct kaslr_boot_info *info, uint64_t entry_rsp);
void fgk_payload_main(const struct kaslr_boot_info *info, uint64_t entry_rsp);

static uint8_t fgk_seen[FGK_MAX / 8 + 1];

/* link addresses of the FGK_EXTRA sections (absolute: never relocated) */
static const uint64_t fgk_link_extra[FGK_EXTRA] = {
	(uint64_t)(uintptr_t)fgk_link_direct,
	(uint64_t)(uintptr_t)fgk_link_start,
};

/* the functions note: asks for the shuffle, declares both tables sorted */
__asm__(".pushsection .note.kaslr, \"\", @note\n"
	".balign 4\n"
	".long 6, 8 + 2 * 48, 2\n"          /* namesz, descsz, KASLR_NOTE_FUNCTIONS */
	".asciz \"KASLR\"\n"
	".balign 4\n"
	".long 1, 2\n"                      /* version, ntables */
	"0: .asciz \".fgk_rel\"\n"
	".fill 32 - (. - 0b), 1, 0\n"
	".long 16, 0, 2, 3\n"               /* entsize, key_off, REL32, rel_mask */
	"1: .asciz \".fgk_abs\"\n"
	".fill 32 - (. - 1b), 1, 0\n"
	".long 16, 0, 1, 0\n"               /* entsize, key_off, ABS64, no relative words */
	".popsection\n");

static void fgk_fail(const char *why, uint64_t a, uint64_t b) __attribute__((noreturn));
static void fgk_fail(const char *why, uint64_t a, uint64_t b)
{
	serial_puts("payload: FAIL fgk_");
	serial_puts(why);
	serial_puts(" variant=fgk a=");
	serial_put_hex(a);
	serial_puts(" b=");
	serial_put_hex(b);
	serial_putc('\n');
	io_outb(FGK_EXIT_PORT, FGK_EXIT_FAIL);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* 1 when the command line holds exactly the word "fgk.expect=<value>" */
static int fgk_expect(const struct kaslr_boot_info *info, const char *value)
{
	static const char key[] = "fgk.expect=";
	const char *s = (const char *)(uintptr_t)info->cmdline;
	uint32_t n = info->cmdline_len;

	if (!s)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = 0, k = 0;

		if (i > 0 && s[i - 1] != ' ')
			continue;
		while (key[j] && i + j < n && s[i + j] == key[j])
			j++;
		if (key[j])
			continue;
		while (value[k] && i + j + k < n && s[i + j + k] == value[k])
			k++;
		if (!value[k] && (i + j + k == n || s[i + j + k] == ' '))
			return 1;
	}
	return 0;
}

/* Every function returns its id by every route; returns the calls made. */
static uint64_t fgk_check_routes(uint32_t n)
{
	uint64_t calls = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = FGK_ID(i);

		if ((uint64_t)(uintptr_t)fgk_ptr_ro[i] != (uint64_t)(uintptr_t)fgk_ptr_rw[i])
			fgk_fail("pointer_tables", i, (uint64_t)(uintptr_t)fgk_ptr_rw[i]);
		if (fgk_direct(i, 0) != id)
			fgk_fail("direct_call", i, fgk_direct(i, 0));
		if (fgk_ptr_ro[i](0) != id)
			fgk_fail("ro_pointer_call", i, fgk_ptr_ro[i](0));
		if (fgk_ptr_rw[i](0) != id)
			fgk_fail("rw_pointer_call", i, fgk_ptr_rw[i](0));
		calls += 3;
		for (uint64_t d = 1; d <= FGK_DEPTH; d++) {
			if (fgk_ptr_ro[i](d) != id)
				fgk_fail("switch_route", i, d);
			if (fgk_direct(i, d) != id)
				fgk_fail("recursion", i, d);
			calls += 2;
		}
	}
	return calls;
}

static void fgk_seen_clear(void)
{
	for (size_t i = 0; i < sizeof(fgk_seen); i++)
		fgk_seen[i] = 0;
}

/* id < n and not seen before in this table */
static void fgk_seen_add(const char *why, uint64_t id, uint32_t n)
{
	if (id >= n || (fgk_seen[id / 8] >> (id % 8) & 1))
		fgk_fail(why, id, n);
	fgk_seen[id / 8] |= (uint8_t)(1u << (id % 8));
}

/* Both declared tables: one entry per function, keys strictly increasing,
 * every key (and .fgk_rel's second relative word) pointing where it should. */
static uint64_t fgk_check_tables(uint32_t n)
{
	uint64_t na = (uint64_t)(fgk_abs_end - fgk_abs_start);
	uint64_t nr = (uint64_t)(fgk_rel_end - fgk_rel_start), prev = 0;

	if (na != n || nr != n)
		fgk_fail("table_size", na, nr);
	fgk_seen_clear();
	for (uint64_t k = 0; k < na; k++) {
		const struct fgk_abs_entry *e = &fgk_abs_start[k];

		fgk_seen_add("abs_table_ids", e->id, n);
		if (e->addr != (uint64_t)(uintptr_t)fgk_ptr_ro[e->id])
			fgk_fail("abs_table_addr", k, e->addr);
		if (k > 0 && e->addr <= prev)
			fgk_fail("abs_table_unsorted", k, e->addr);
		prev = e->addr;
	}
	fgk_seen_clear();
	for (uint64_t k = 0; k < nr; k++) {
		const struct fgk_rel_entry *e = &fgk_rel_start[k];
		uint64_t fn = (uint64_t)(uintptr_t)&e->fn + (uint64_t)(int64_t)e->fn;
		uint64_t anchor = (uint64_t)(uintptr_t)&e->anchor + (uint64_t)(int64_t)e->anchor;

		fgk_seen_add("rel_table_ids", e->id, n);
		if (fn != (uint64_t)(uintptr_t)fgk_ptr_ro[e->id])
			fgk_fail("rel_table_fn", k, fn);
		if (anchor != (uint64_t)(uintptr_t)&fgk_anchor[e->id] || fgk_anchor[e->id] != e->id)
			fgk_fail("rel_table_anchor", k, anchor);
		if (k > 0 && fn <= prev)
			fgk_fail("rel_table_unsorted", k, fn);
		prev = fn;
	}
	return na + nr;
}

/* Function section k of n + FGK_EXTRA: its run-time and link address. */
static void fgk_section(uint32_t k, uint32_t n, uint64_t *ret_rt, uint64_t *ret_link)
{
	if (k < n) {
		*ret_rt = (uint64_t)(uintptr_t)fgk_ptr_ro[k];
		*ret_link = fgk_link[k];
	} else {
		*ret_rt = k == n ? (uint64_t)(uintptr_t)fgk_direct : (uint64_t)(uintptr_t)_start;
		*ret_link = fgk_link_extra[k - n];
	}
}

/* FNV-1a over the eight bytes of v */
static uint64_t fgk_fnv(uint64_t h, uint64_t v)
{
	for (unsigned b = 0; b < 8; b++) {
		h ^= (v >> (8 * b)) & 0xff;
		h *= FGK_FNV_PRIME;
	}
	return h;
}

/* The hand-off's fields agree with what the kernel found about itself:
 * with KB_FLAG_FGKASLR the same counts, the entropy capped by the seed;
 * without it, all zero and nothing moved. */
static void fgk_check_handoff(const struct kaslr_boot_info *info, uint32_t nsec, uint64_t moved)
{
	if (info->size < FGK_HANDOFF_END)
		fgk_fail("handoff_size", info->size, FGK_HANDOFF_END);
	if (!(info->flags & KB_FLAG_FGKASLR)) {
		if (moved != 0 || info->fgk_functions || info->fgk_moved || info->fgk_perm_millibits ||
		    info->fgk_entropy_millibits)
			fgk_fail("handoff_unflagged", moved, info->fgk_moved);
		return;
	}
	if (info->fgk_functions != nsec)
		fgk_fail("handoff_functions", info->fgk_functions, nsec);
	if (info->fgk_moved != moved)
		fgk_fail("handoff_moved", info->fgk_moved, moved);
	if (info->fgk_perm_millibits == 0 ||
	    info->fgk_entropy_millibits != (info->fgk_perm_millibits < FGK_SEED_MILLIBITS ?
					    info->fgk_perm_millibits : FGK_SEED_MILLIBITS))
		fgk_fail("handoff_entropy", info->fgk_perm_millibits, info->fgk_entropy_millibits);
}

void fgk_payload_main(const struct kaslr_boot_info *info, uint64_t entry_rsp)
{
	uint32_t n = fgk_count, nsec = fgk_count + FGK_EXTRA;
	uint64_t moved = 0, inversions = 0, calls, entries, order = FGK_FNV_OFFSET;

	serial_init();
	if (info->magic != KB_MAGIC)   /* payload_main says what is wrong */
		payload_main(info, entry_rsp);
	if (n < 2 || n > FGK_MAX)
		fgk_fail("count", n, FGK_MAX);
	for (uint32_t k = 0; k < nsec; k++) {
		uint64_t rt, link;

		fgk_section(k, n, &rt, &link);
		/* the build links them in id order: checked, not assumed */
		if (k + 1 < n && fgk_link[k] >= fgk_link[k + 1])
			fgk_fail("link_order", k, fgk_link[k]);
		moved += rt - info->virt_offset != link;
		order = fgk_fnv(order, rt - info->virt_offset);
		if (k + 1 < n && rt > (uint64_t)(uintptr_t)fgk_ptr_ro[k + 1])
			inversions++;
	}
	calls = fgk_check_routes(n);
	entries = fgk_check_tables(n);
	fgk_check_handoff(info, nsec, moved);
	if (fgk_expect(info, "moved") && (moved == 0 || inversions == 0))
		fgk_fail("not_shuffled", moved, inversions);
	if (fgk_expect(info, "linked") && moved != 0)
		fgk_fail("shuffled", moved, inversions);
	serial_puts("fgk: functions=");
	serial_put_dec(nsec);
	serial_puts(" moved=");
	serial_put_dec(moved);
	serial_puts(" inversions=");
	serial_put_dec(inversions);
	serial_puts(" calls=");
	serial_put_dec(calls);
	serial_puts(" tables=2 entries=");
	serial_put_dec(entries);
	serial_puts(" sorted=1 order=");
	serial_put_hex(order);
	serial_puts(" handoff_functions=");
	serial_put_dec(info->fgk_functions);
	serial_puts(" handoff_moved=");
	serial_put_dec(info->fgk_moved);
	serial_puts(" handoff_millibits=");
	serial_put_dec(info->fgk_entropy_millibits);
	serial_putc('\n');
	payload_main(info, entry_rsp);
}
