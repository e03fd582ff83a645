/*
 * test.h - the host unit-test harness: one counter pair per program,
 * a CHECK that reports the case name on failure, and a summary line
 * ("RESULT <prog> <passed> <failed>") that test/run-unit.sh adds up.
 */
#ifndef TEST_H
#define TEST_H

#include <stdio.h>

static int test_passed, test_failed;

#define CHECK(cond, ...)                                                 \
	do {                                                             \
		if (cond) {                                              \
			test_passed++;                                   \
		} else {                                                 \
			test_failed++;                                   \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);      \
			printf(__VA_ARGS__);                             \
			printf("  [%s]\n", #cond);                       \
		}                                                        \
	} while (0)

#define CHECK_EQ_U64(a, b, ...)                                          \
	do {                                                             \
		unsigned long long check_a_ = (unsigned long long)(a);   \
		unsigned long long check_b_ = (unsigned long long)(b);   \
		CHECK(check_a_ == check_b_, __VA_ARGS__);                \
		if (check_a_ != check_b_)                                \
			printf("     got 0x%llx, want 0x%llx\n", check_a_, check_b_); \
	} while (0)

static inline int test_summary(const char *prog)
{
	printf("RESULT %s %d %d\n", prog, test_passed, test_failed);
	return test_failed ? 1 : 0;
}

#endif
