/*
 * test.h - the host unit-test harness: one counter pair per program,
 * a CHECK that reports the case name on failure, and a summary line
 * ("RESULT <prog> <passed> <failed>") that test/run-unit.sh adds up.
 *
 * Tests register themselves: TEST(name) { ... } defines a test function and
 * adds it to the program's list before main() runs, in the order written.
 * A test function that is not written with TEST() is a static function
 * nobody calls, which -Wall -Werror refuses to compile: no test can be
 * written and silently never run.  main() is defined here; it runs every
 * registered test, or only those named on its command line.
 * (A program with its own main, such as a corpus checker, defines
 * TEST_OWN_MAIN before including this file.)
 */
#ifndef TEST_H
#define TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* A small deterministic generator for random cases (xorshift64): advances
 * the state at s, which must not be 0, and returns it. */
static inline uint64_t test_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline int test_summary(const char *prog)
{
	printf("RESULT %s %d %d\n", prog, test_passed, test_failed);
	return test_failed ? 1 : 0;
}

#ifndef TEST_OWN_MAIN
struct test_case {
	const char *name;
	void (*fn)(void);
	struct test_case *next;
};

static struct test_case *test_list, **test_list_tail = &test_list;

#define TEST(name)                                                       \
	static void name(void);                                          \
	static struct test_case name##_case_ = { #name, name, NULL };    \
	__attribute__((constructor)) static void name##_register_(void)  \
	{                                                                \
		*test_list_tail = &name##_case_;                         \
		test_list_tail = &name##_case_.next;                     \
	}                                                                \
	static void name(void)

int main(int argc, char **argv)
{
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int ran = 0;

	for (struct test_case *t = test_list; t; t = t->next) {
		int want = argc < 2;

		for (int i = 1; i < argc; i++)
			if (strcmp(argv[i], t->name) == 0)
				want = 1;
		if (!want)
			continue;
		t->fn();
		ran++;
	}
	/* a program that registered nothing, or a name that matched nothing,
	 * is a failure, not a silent pass */
	CHECK(ran > 0, "%s: no test ran", prog);
	return test_summary(prog);
}
#endif

#endif
