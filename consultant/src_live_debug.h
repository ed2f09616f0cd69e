/*
 * src_live_debug.h - debug files that arrive while the live source runs
 * (internal to src_live.c).
 *
 * An image opened while its debuginfod fetch was under way has only the
 * names the stripped file gives.  Once the fetch ends, the image is
 * opened again (the debug file is now in debuginfod's cache) and the
 * functions it names that the first image did not are reported as new
 * resources.  Resources already reported under the first image's names
 * (`<module>+0x<offset>`, or none) stay as they are.
 */
#ifndef SRC_LIVE_DEBUG_H
#define SRC_LIVE_DEBUG_H

#include <stdbool.h>
#include <stddef.h>

#include "eng_symbols.h"

typedef void (*sld_func_fn)(void *arg, struct eng_image *img,
			    const struct eng_func *f);

/* Has any fetch ended since *gen was last updated?  Updates *gen. */
bool sld_changed(unsigned *gen);

/* The fuller image of `old` (opened from `path`) if its debuginfod fetch
 * arrived, else NULL.  `fn` (may be NULL) is called for every function
 * of the new image that `old` did not have under that name at that
 * address.  The caller keeps `old` open: pointers into it may be held. */
struct eng_image *sld_upgrade(const char *path, struct eng_image *old,
			      sld_func_fn fn, void *arg);

/* Wait up to timeout_ms for every fetch to end (command-line use). */
int sld_wait(int timeout_ms);

/* The oldest progress message of the fetches. */
bool sld_note(char *buf, size_t len);

#endif
