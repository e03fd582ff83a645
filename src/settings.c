/*
 * settings.c - the effective options of a boot from the policy,
 * kaslr.conf and the load options (include/settings.h), in the loader's
 * order and by its rules (src/options.c's key table).
 */
#include <string.h>

#include "settings.h"

enum ldr_err settings_merge(const struct policy *p, int secure, const char *conf,
			    size_t conf_len, const char *line, size_t line_len,
			    struct ldr_options *o, struct ldr_options *scratch,
			    struct settings_result *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (secure && !p->present)
		return LDR_E_POLICY_NONE;
	options_defaults(o);
	policy_to_options(p, o);
	for (int s = 0; s < SETTINGS_SOURCES; s++) {
		const char *text = s == SETTINGS_CONF ? conf : line;
		size_t len = s == SETTINGS_CONF ? conf_len : line_len;
		enum ldr_err err;

		if (!text)
			continue;
		options_defaults(scratch);
		err = s == SETTINGS_CONF ? options_parse_config(scratch, text, len) :
					   options_parse_line(scratch, text, len);
		if (err != LDR_OK) {
			ret->bad_source = (enum settings_source)s;
			memcpy(ret->bad, scratch->bad, sizeof(ret->bad));
			ret->bad_line = scratch->bad_line;
			ldr_wipe(scratch, sizeof(*scratch));
			return err;
		}
		ret->ignored[s] = options_merge_trust(o, scratch, secure, p->allow,
						      policy_trust(p));
		ldr_wipe(scratch, sizeof(*scratch));
	}
	return LDR_OK;
}
