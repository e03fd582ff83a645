/*
 * espseed.h - the firmware side of seeds that outlive a boot or come from an
 * earlier stage (rules in include/seed.h): systemd's \loader\random-seed
 * on the loader's volume, the LoaderSystemToken variable, the seed
 * systemd-boot leaves (LINUX_EFI_RANDOM_SEED table, or the LoaderRandomSeed
 * variable of systemd-boot 252 and older), and the table this loader
 * installs for Linux.
 */
#ifndef EFI_ESPSEED_H
#define EFI_ESPSEED_H

#include <efi.h>

#include "loader.h"
#include "seed.h"

/*
 * Mix into pool (before entropy_finish): an earlier stage's seed
 * (KB_RNG_CHAIN when at least 32 bytes; the LoaderRandomSeed variable
 * only with systemd-boot's attributes, boot-service and runtime access
 * and volatile - any other is mixed in uncounted and deleted, with a
 * warning), \loader\random-seed when its size
 * is within systemd-boot's limits (KB_RNG_SEEDFILE, credited only once
 * seed_refresh rewrote it), LoaderSystemToken, the monotonic count and
 * the time (uncredited).  Never fails: a file or variable that cannot be
 * used is a warning, or nothing when it is simply absent.
 */
void seed_gather(struct loader *L, struct entropy_pool *pool);

/*
 * After entropy_finish: rewrite \loader\random-seed (same size) with a
 * value derived from L->sec.pool_seed, and return sources with the file
 * credited or not (seed_credit_file).  No file: sources unchanged.
 */
uint32_t seed_refresh(struct loader *L, uint32_t sources);

/*
 * For Linux, just before ExitBootServices: with a strong pool, install a
 * LINUX_EFI_RANDOM_SEED table holding a fresh seed derived from the pool
 * (an earlier stage's table is replaced, its bytes wiped), and set the
 * volatile LoaderRandomSeed variable to another (what systemd 252's
 * userspace credits, replacing systemd-boot 252's); with a weak
 * one, remove an earlier stage's table that was too short to count, so
 * that Linux credits nothing.  Never fails: trouble is a warning.
 */
void seed_table_install(struct loader *L);

/* Undo seed_table_install (the boot failed before ExitBootServices):
 * the table and LoaderRandomSeed go. */
void seed_table_remove(void);

#endif
