/*
 * ebs.h - the last firmware step, ExitBootServices, as a retry loop that
 * the host can drive with a fake firmware.  The firmware calls come in as
 * callbacks; the work that depends on the final memory map (filling the
 * kernel's memory map) is a callback too, run on every map fetched, so
 * that whatever map ExitBootServices accepted is the one the kernel gets.
 *
 *   fetch map (no allocation) -> on_map(map) -> ExitBootServices(key)
 *        ^                                            |
 *        +---- refused (stale key), tries left -------+
 *
 * UEFI 2.10, 7.4: after a refused ExitBootServices only GetMemoryMap, the
 * memory allocation services and ExitBootServices itself may be called, so
 * nothing else happens inside the loop, and a caller whose every try was
 * refused may report only through hardware it drives itself (the serial
 * port) before it frees its memory and returns.
 */
#ifndef EBS_H
#define EBS_H

#include <stdint.h>

#include "ldr.h"

/* the firmware's memory map in caller-provided storage */
struct ebs_map {
	void *buf;
	uint64_t cap;          /* bytes at buf */
	uint64_t size;         /* bytes the firmware wrote */
	uint64_t key;
	uint64_t desc_size;
	uint32_t desc_version;
};

/* firmware statuses pass through as opaque numbers: 0 is success */
struct ebs_firmware {
	/* GetMemoryMap into m->buf (m->cap bytes), setting size, key, desc_* */
	uint64_t (*get_map)(void *ctx, struct ebs_map *m);
	/* ExitBootServices(image, key) */
	uint64_t (*exit)(void *ctx, uint64_t key);
	void *ctx;
};

/* at most this many ExitBootServices calls (Linux's stub makes two) */
#define EBS_MAX_TRIES 4

/* Why ebs_exit() gave up, for the one report line. */
struct ebs_result {
	unsigned tries;        /* ExitBootServices calls made */
	uint64_t status;       /* the last firmware status (0 on success) */
	int map_failed;        /* the last failure was GetMemoryMap, not Exit */
	enum ldr_err map_err;  /* on_map's error, if that stopped the loop */
};

/*
 * Fetch the map, run on_map(priv, m) on it, call ExitBootServices with its
 * key; on refusal fetch again and retry, up to max_tries (1..EBS_MAX_TRIES)
 * ExitBootServices calls.  on_map must not call firmware; it runs again
 * for every map fetched.  *ret (may be NULL) says what happened.
 * Returns LDR_OK once ExitBootServices succeeded (m holds the final map,
 * on_map has seen it); LDR_E_EBS_REFUSED when every try was refused,
 * LDR_E_EBS_MAP when GetMemoryMap failed, on_map's error when it failed,
 * LDR_E_INVAL for missing callbacks or max_tries out of range.  In every
 * error case boot services are either still running (first fetch failed)
 * or partly stopped: the caller must not jump to the kernel.
 */
enum ldr_err ebs_exit(const struct ebs_firmware *fw, struct ebs_map *m, unsigned max_tries,
		      enum ldr_err (*on_map)(void *priv, const struct ebs_map *m), void *priv,
		      struct ebs_result *ret);

#endif
