/*
 * ebs.c - the ExitBootServices retry loop (include/ebs.h).  Kept apart from
 * efi/ so that a fake firmware on the host can refuse, change the map and
 * fail the map fetch at every step.
 */
#include "ebs.h"

enum ldr_err ebs_exit(const struct ebs_firmware *fw, struct ebs_map *m, unsigned max_tries,
		      enum ldr_err (*on_map)(void *priv, const struct ebs_map *m), void *priv,
		      struct ebs_result *ret)
{
	struct ebs_result r = { 0, 0, 0, LDR_OK };
	enum ldr_err err = LDR_E_EBS_REFUSED;

	if (!fw || !fw->get_map || !fw->exit || !m || !on_map || max_tries == 0 ||
	    max_tries > EBS_MAX_TRIES)
		return LDR_E_INVAL;
	while (r.tries < max_tries) {
		r.status = fw->get_map(fw->ctx, m);
		if (r.status != 0) {
			r.map_failed = 1;
			err = LDR_E_EBS_MAP;
			break;
		}
		r.map_err = on_map(priv, m);
		if (r.map_err != LDR_OK) {
			err = r.map_err;
			break;
		}
		r.tries++;
		/* keep ExitBootServices' own status: a later successful map
		 * fetch must never turn a refusal into success */
		r.status = fw->exit(fw->ctx, m->key);
		if (r.status == 0) {
			err = LDR_OK;
			break;
		}
		err = LDR_E_EBS_REFUSED;
	}
	if (ret)
		*ret = r;
	return err;
}
