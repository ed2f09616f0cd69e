/*
 * src_live_debug.h - debug files that arrive while the live source runs
 * (internal to src_live.c).
 *
 * An image opened while its debuginfod fetch was under way has only the
 * names the stripped file gives.  Once the fetch ends, the image is
 * opened again (the debug file is now in debuginfod's cache): the
 * functions whose resource changes (a `<module>+0x<offset>` or .dynsym
 * name replaced, a source file gained) are retired under their old path
 * and reported under the new one, and functions the file did not name
 * at all are reported as new.
 */
#ifndef SRC_LIVE_DEBUG_H
#define SRC_LIVE_DEBUG_H

#include <stdbool.h>
#include <stddef.h>

#include "eng_image.h"

/* A function whose resource goes (retired) or comes. */
typedef void (*src_live_debug_func_fn)(void *arg, struct eng_image *img,
				       const struct eng_func *f, bool retired);

/* Has any fetch ended since *gen was last updated?  Updates *gen. */
bool src_live_debug_changed(unsigned *gen);

/* The fuller image of `old` (opened from `path`) if its debuginfod fetch
 * arrived, else NULL.  `fn` (may be NULL) is called, retired, for every
 * function of `old` whose /Code resource (name, source file) the new
 * image does not have, then for every function of the new image that
 * `old` did not have.  The caller keeps `old` open: pointers into it may
 * be held.  (src_live_debug_wait and src_live_debug_note, for the
 * command line and the dashboard, are declared in src_live.h.) */
struct eng_image *src_live_debug_upgrade(const char *path,
					 struct eng_image *old,
					 src_live_debug_func_fn fn, void *arg);

#endif
