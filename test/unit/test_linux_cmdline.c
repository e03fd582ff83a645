/*
 * test_linux_cmdline.c - host tests for src/linux_cmdline.c: nokaslr,
 * mem= and memmap= as Linux reads them, what is skipped, and what cannot
 * overflow or wrap.
 */
#include <string.h>

#include "linux_cmdline.h"
#include "test.h"

static struct linux_cmdline_facts scan(const char *s)
{
	struct linux_cmdline_facts f;

	memset(&f, 0xa5, sizeof(f));
	CHECK(linux_cmdline_scan(s, strlen(s), &f) == LDR_OK, "scan '%s'", s);
	return f;
}

TEST(test_nokaslr)
{
	CHECK(scan("console=ttyS0 nokaslr quiet").nokaslr == 1, "nokaslr word");
	CHECK(scan("nokaslr").nokaslr == 1, "alone");
	CHECK(scan("nokaslr=1 xnokaslr nokaslrx").nokaslr == 0, "only the exact word");
	CHECK(scan("root=/dev/sda -- nokaslr").nokaslr == 0, "after -- it is init's");
	CHECK(scan("foo=\"a nokaslr b\"").nokaslr == 0, "inside quotes");
	CHECK(scan("").nokaslr == 0 && scan("").navoid == 0 && scan("").mem_limit == 0, "empty");
}

TEST(test_mem)
{
	CHECK_EQ_U64(scan("mem=4G").mem_limit, 4 * GIB, "mem=4G");
	CHECK_EQ_U64(scan("mem=0x20000000").mem_limit, 512 * MIB, "hex");
	CHECK_EQ_U64(scan("mem=1024m").mem_limit, 1 * GIB, "lower-case suffix");
	CHECK_EQ_U64(scan("mem=3G mem=2G mem=5G").mem_limit, 2 * GIB, "the lowest wins");
	CHECK_EQ_U64(scan("mem=nopentium").mem_limit, 0, "mem=nopentium is no limit");
	CHECK_EQ_U64(scan("mem=").mem_limit, 0, "empty value");
	CHECK_EQ_U64(scan("mem=4Gx").mem_limit, 0, "trailing junk skipped");
	CHECK_EQ_U64(scan("mem=99999999999999999999").mem_limit, 0, "overflow skipped");
	CHECK_EQ_U64(scan("mem=17179869184G").mem_limit, 0, "suffix overflow skipped");
	CHECK_EQ_U64(scan("mem=16E").mem_limit, 0, "2^64 does not fit");
	CHECK_EQ_U64(scan("mem=8E").mem_limit, 8ULL << 60, "8 EiB fits");
}

TEST(test_memmap)
{
	struct linux_cmdline_facts f;

	f = scan("memmap=64M$0x10000000 memmap=16M!1G,8K#0x9f000 memmap=1G@4G");
	CHECK_EQ_U64(f.navoid, 3, "three keep-out ranges");
	CHECK(f.avoid[0].addr == 0x10000000 && f.avoid[0].size == 64 * MIB, "$ range");
	CHECK(f.avoid[1].addr == 1 * GIB && f.avoid[1].size == 16 * MIB, "! range");
	CHECK(f.avoid[2].addr == 0x9f000 && f.avoid[2].size == 8 * KIB, "# range in a list");
	CHECK(f.avoid[0].type == E820_RESERVED && !f.too_many, "reserved, not too many");

	f = scan("memmap=exactmap memmap=100M memmap=1M%0x100-4+1 memmap=$1G memmap=1M$");
	CHECK_EQ_U64(f.navoid, 0, "no keep-out in malformed or non-reserving forms");
	f = scan("memmap=0$1G memmap=1M$1Gjunk");
	CHECK_EQ_U64(f.navoid, 0, "empty size, trailing junk");
	f = scan("memmap=1G$0xfffffffffff00000");
	CHECK(f.navoid == 1 && f.avoid[0].addr + f.avoid[0].size == UINT64_MAX,
	      "a wrapping range is clipped at the top");

	f = scan("memmap=1M$16M,1M$32M,1M$48M,1M$64M,1M$80M,1M$96M,1M$112M,1M$128M,1M$144M");
	CHECK(f.navoid == LINUX_CMDLINE_AVOID_MAX && f.too_many, "more than fit: flagged");
}

TEST(test_bounds)
{
	struct linux_cmdline_facts f;
	const char text[] = "mem=1G nokaslr";

	/* a length that stops inside a word, and a NUL that ends the text */
	CHECK(linux_cmdline_scan(text, 5, &f) == LDR_OK && f.mem_limit == 1 && !f.nokaslr,
	      "mem=1 of mem=1G");
	CHECK(linux_cmdline_scan("mem=2G\0nokaslr", 14, &f) == LDR_OK && !f.nokaslr &&
	      f.mem_limit == 2 * GIB, "NUL ends the text");
	CHECK(linux_cmdline_scan(NULL, 0, &f) == LDR_OK && f.navoid == 0, "NULL, empty");
	CHECK(linux_cmdline_scan(NULL, 3, &f) == LDR_E_INVAL, "NULL with a length");
	CHECK(linux_cmdline_scan(text, sizeof(text), NULL) == LDR_E_INVAL, "no output");
}
