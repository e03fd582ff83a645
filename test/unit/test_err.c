/*
 * test_err.c - host tests for src/err.c: every code of the one error table
 * has its own name, a message, and a hint that is either absent or says
 * something; codes outside the table are reported, not indexed.
 */
#include <string.h>

#include "ldr.h"
#include "test.h"

TEST(test_every_code)
{
	for (int c = 0; c < LDR_ERR_COUNT; c++) {
		const char *name = ldr_err_name((enum ldr_err)c);
		const char *msg = ldr_strerror((enum ldr_err)c);
		const char *hint = ldr_err_hint_of((enum ldr_err)c);

		CHECK(name && strncmp(name, "LDR_", 4) == 0, "code %d has a name", c);
		CHECK(msg && msg[0], "code %d (%s) has a message", c, name);
		CHECK(!hint || strlen(hint) > 8, "code %d (%s): hint absent or real", c, name);
		int dup = -1;

		for (int d = 0; d < c; d++)
			if (strcmp(name, ldr_err_name((enum ldr_err)d)) == 0 ||
			    strcmp(msg, ldr_strerror((enum ldr_err)d)) == 0)
				dup = d;
		CHECK(dup < 0, "codes %d and %d share a name or message", dup, c);
	}
	CHECK(strcmp(ldr_err_name(LDR_OK), "LDR_OK") == 0, "LDR_OK's name");
	CHECK(strcmp(ldr_err_name(LDR_E_BAD_MAGIC), "LDR_E_BAD_MAGIC") == 0, "a name");
}

TEST(test_out_of_range)
{
	CHECK(strcmp(ldr_strerror(LDR_ERR_COUNT), "unknown error") == 0, "count itself");
	CHECK(strcmp(ldr_strerror((enum ldr_err)-1), "unknown error") == 0, "negative");
	CHECK(ldr_err_hint_of(LDR_ERR_COUNT) == NULL, "no hint out of range");
	CHECK(strcmp(ldr_err_name(LDR_ERR_COUNT), "LDR_E_UNKNOWN") == 0, "name out of range");
}
