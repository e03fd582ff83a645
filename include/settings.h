/*
 * settings.h - a boot's effective options from its sources, merged as the
 * loader merges them (efi/main.c): the defaults, the embedded policy's
 * files and command line, kaslr.conf, then the load options, each source
 * by the key table's Secure Boot rules under the policy's trust.  The host
 * tools use it to say what a loader, a kaslr.conf and load options make:
 * `kaslr-policy settings` prints the settings text, kaslr-pcr predicts the
 * records of the next boot.
 */
#ifndef SETTINGS_H
#define SETTINGS_H

#include "options.h"
#include "policy.h"

enum settings_source {
	SETTINGS_CONF = 0,    /* kaslr.conf */
	SETTINGS_OPTIONS = 1, /* the load options */
	SETTINGS_SOURCES
};

struct settings_result {
	uint32_t ignored[SETTINGS_SOURCES]; /* OPT_BIT()s each source had ignored */
	enum settings_source bad_source;    /* a parse error: whose */
	char bad[OPT_KEY_MAX + 1];          /* ... the key or value at fault */
	uint32_t bad_line;                  /* ... kaslr.conf's line (1-based) */
};

/*
 * The options in *o for the policy p (its build's empty header when no
 * policy was written) with Secure Boot on or off, kaslr.conf's text conf
 * (NULL: no kaslr.conf) and the load options' text line (NULL: none), as
 * the loader would boot with them.  scratch holds one source at a time and
 * is wiped after (a kaslr.seed= is secret).  Errors: LDR_E_POLICY_NONE
 * (Secure Boot on, no policy: the loader refuses to boot), a parser's
 * error (the loader refuses too; ret says where).
 */
enum ldr_err settings_merge(const struct policy *p, int secure, const char *conf,
			    size_t conf_len, const char *line, size_t line_len,
			    struct ldr_options *o, struct ldr_options *scratch,
			    struct settings_result *ret);

#endif
