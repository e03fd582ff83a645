/*
 * test_ebs.c - host tests for src/ebs.c with a fake firmware: refusals
 * that change the map, a map fetch that fails, an on_map that fails, and
 * the refusal that must never turn into success.
 */
#include <string.h>

#include "ebs.h"
#include "test.h"

#define FAKE_INVALID_PARAMETER 0x8000000000000002ULL
#define FAKE_BUFFER_TOO_SMALL  0x8000000000000005ULL

struct fake_fw {
	uint64_t key;          /* the current map's key; bumps when the map changes */
	unsigned refuse;       /* Exit refuses this many calls */
	int map_fail_at;       /* get_map call (1-based) that fails; 0 = none */
	unsigned get_calls, exit_calls;
	uint64_t exit_keys[8]; /* keys Exit was given */
	int exited;            /* Exit succeeded */
};

static uint64_t fake_get_map(void *ctx, struct ebs_map *m)
{
	struct fake_fw *f = ctx;

	f->get_calls++;
	if (f->map_fail_at && (int)f->get_calls == f->map_fail_at)
		return FAKE_BUFFER_TOO_SMALL;
	m->size = 96;
	m->desc_size = 48;
	m->desc_version = 1;
	m->key = f->key;
	return 0;
}

static uint64_t fake_exit(void *ctx, uint64_t key)
{
	struct fake_fw *f = ctx;

	if (f->exit_calls < 8)
		f->exit_keys[f->exit_calls] = key;
	f->exit_calls++;
	if (key != f->key)
		return FAKE_INVALID_PARAMETER;
	if (f->refuse) {
		f->refuse--;
		f->key++; /* firmware allocated something: the map changed */
		return FAKE_INVALID_PARAMETER;
	}
	f->exited = 1;
	return 0;
}

struct seen {
	unsigned calls;
	uint64_t last_key;
	int fail_at;           /* on_map call (1-based) that fails */
};

static enum ldr_err record_map(void *priv, const struct ebs_map *m)
{
	struct seen *s = priv;

	s->calls++;
	s->last_key = m->key;
	if (s->fail_at && (int)s->calls == s->fail_at)
		return LDR_E_MMAP_TOO_BIG;
	return LDR_OK;
}

static enum ldr_err run(struct fake_fw *f, struct seen *s, unsigned tries,
			struct ebs_result *r)
{
	static uint8_t buf[4096];
	struct ebs_firmware fw = { fake_get_map, fake_exit, f };
	struct ebs_map m = { buf, sizeof(buf), 0, 0, 0, 0 };

	return ebs_exit(&fw, &m, tries, record_map, s, r);
}

/* refused 0..3 times, with the map changing each time, then accepted */
TEST(test_refused_then_accepted)
{
	for (unsigned n = 0; n < EBS_MAX_TRIES; n++) {
		struct fake_fw f = { .key = 100, .refuse = n };
		struct seen s = { 0 };
		struct ebs_result r;
		enum ldr_err err = run(&f, &s, EBS_MAX_TRIES, &r);

		CHECK(err == LDR_OK, "%u refusals then success: %d", n, err);
		CHECK(f.exited, "%u: boot services exited", n);
		CHECK_EQ_U64(r.tries, n + 1, "%u: tries", n);
		CHECK_EQ_U64(r.status, 0, "%u: status", n);
		CHECK_EQ_U64(s.calls, n + 1, "%u: on_map once per fetched map", n);
		CHECK_EQ_U64(s.last_key, 100 + n, "%u: on_map saw the final map", n);
		CHECK_EQ_U64(f.exit_keys[n], 100 + n, "%u: Exit got the fresh key", n);
	}
}

/* every try refused: an error carrying Exit's own status, never success */
TEST(test_always_refused)
{
	for (unsigned tries = 1; tries <= EBS_MAX_TRIES; tries++) {
		struct fake_fw f = { .key = 7, .refuse = 1000 };
		struct seen s = { 0 };
		struct ebs_result r;
		enum ldr_err err = run(&f, &s, tries, &r);

		CHECK(err == LDR_E_EBS_REFUSED, "tries=%u: refused, got %d", tries, err);
		CHECK(!f.exited, "tries=%u: never exited", tries);
		CHECK_EQ_U64(f.exit_calls, tries, "tries=%u: Exit calls", tries);
		CHECK_EQ_U64(r.status, FAKE_INVALID_PARAMETER, "tries=%u: Exit's status kept", tries);
		CHECK(!r.map_failed, "tries=%u: not a map failure", tries);
	}
}

/* the map cannot be fetched again after a refusal */
TEST(test_map_fetch_fails)
{
	struct fake_fw f = { .key = 1, .refuse = 1, .map_fail_at = 2 };
	struct seen s = { 0 };
	struct ebs_result r;
	enum ldr_err err = run(&f, &s, EBS_MAX_TRIES, &r);

	CHECK(err == LDR_E_EBS_MAP, "map failure reported: %d", err);
	CHECK(r.map_failed && r.status == FAKE_BUFFER_TOO_SMALL, "its status kept");
	CHECK(!f.exited && f.exit_calls == 1, "no Exit after the failed fetch");

	/* the very first fetch fails: boot services untouched */
	memset(&f, 0, sizeof(f));
	f.map_fail_at = 1;
	memset(&s, 0, sizeof(s));
	err = run(&f, &s, EBS_MAX_TRIES, &r);
	CHECK(err == LDR_E_EBS_MAP && f.exit_calls == 0 && s.calls == 0, "first fetch fails");
}

/* the work on the map fails: its error, and no Exit with that map */
TEST(test_on_map_fails)
{
	struct fake_fw f = { .key = 5, .refuse = 1 };
	struct seen s = { .fail_at = 2 };
	struct ebs_result r;
	enum ldr_err err = run(&f, &s, EBS_MAX_TRIES, &r);

	CHECK(err == LDR_E_MMAP_TOO_BIG, "on_map's error: %d", err);
	CHECK_EQ_U64(f.exit_calls, 1, "Exit only for the first map");
	CHECK(r.map_err == LDR_E_MMAP_TOO_BIG, "reported");
}

TEST(test_bad_arguments)
{
	static uint8_t buf[64];
	struct fake_fw f = { 0 };
	struct ebs_firmware fw = { fake_get_map, fake_exit, &f };
	struct ebs_firmware nofn = { NULL, fake_exit, &f };
	struct ebs_map m = { buf, sizeof(buf), 0, 0, 0, 0 };
	struct seen s = { 0 };

	CHECK(ebs_exit(NULL, &m, 2, record_map, &s, NULL) == LDR_E_INVAL, "no firmware");
	CHECK(ebs_exit(&nofn, &m, 2, record_map, &s, NULL) == LDR_E_INVAL, "no get_map");
	CHECK(ebs_exit(&fw, NULL, 2, record_map, &s, NULL) == LDR_E_INVAL, "no map");
	CHECK(ebs_exit(&fw, &m, 2, NULL, &s, NULL) == LDR_E_INVAL, "no on_map");
	CHECK(ebs_exit(&fw, &m, 0, record_map, &s, NULL) == LDR_E_INVAL, "0 tries");
	CHECK(ebs_exit(&fw, &m, EBS_MAX_TRIES + 1, record_map, &s, NULL) == LDR_E_INVAL,
	      "too many tries");
	CHECK(f.get_calls == 0 && f.exit_calls == 0, "no firmware call on bad arguments");
}
