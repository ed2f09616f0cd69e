/*
 * eng_sym_debuginfod.h - debug files fetched from debuginfod servers in
 * the background (elfutils' libdebuginfod), by build-id.
 *
 * When DEBUGINFOD_URLS is set and an image has no local debug file,
 * eng_image_open asks for it here and returns at once without it: the
 * download runs in one helper thread, so the caller's poll loop never
 * waits on the network.  The file lands in debuginfod's own cache
 * ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client), where the
 * next eng_image_open finds it without any network.  Callers learn that
 * a fetch finished from the generation counter (or eng_sym_debug_arrived
 * on an image) and reopen the image to gain its names.
 */
#ifndef ENG_SYM_DEBUGINFOD_H
#define ENG_SYM_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>

/* DEBUGINFOD_URLS is set and not empty. */
bool eng_sym_debuginfod_enabled(void);

/* Bumped each time a fetch ends (with a file or not): compare with the
 * last value seen to know when to look at the images again. */
unsigned eng_sym_debuginfod_generation(void);


/* Wait until no fetch is pending: 0, or -ETIMEDOUT after timeout_ms
 * (for command-line tools only; never from a search loop). */
int eng_sym_debuginfod_wait(int timeout_ms);

/* Take the oldest progress message ("fetching debug info for ... from
 * debuginfod", "... done"), without "hunch: "; true if there was one. */
bool eng_sym_debuginfod_note(char *buf, size_t len);

/* Engine-internal (eng_sym_debug.c). */
enum eng_sym_debuginfod_state {
	ENG_DEBUGINFOD_NONE,     /* never asked */
	ENG_DEBUGINFOD_PENDING,  /* queued or downloading */
	ENG_DEBUGINFOD_DONE,     /* the file is in the cache */
	ENG_DEBUGINFOD_FAILED,   /* no server had it, or an error */
};
enum eng_sym_debuginfod_state eng_sym_debuginfod_state(const char *build_id);
/* Path of a debug file already fetched for this build-id (this run, or
 * an earlier one through the cache), malloc'd, or NULL.  No network. */
char *eng_sym_debuginfod_cached(const char *build_id);
/* Start fetching in the background (once per build-id); `path` is the
 * file it is for, named in the progress messages. */
void eng_sym_debuginfod_request(const char *build_id, const char *path);

#endif
