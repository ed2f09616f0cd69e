/*
 * mt_util.h - helpers for the metric compiler's tests: the launched
 * target of tests/tgt.h with a metric compiler on it; drive its phases
 * by lines, sample.
 */
#ifndef MT_UTIL_H
#define MT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eng_metric.h"
#include "tgt.h"

struct mt {
	struct tgt tg;          /* the launched target (tests/tgt.h) */
	struct eng_metric *m;
};

/* Launch `path` stopped at main.  0 or -1 (with a diagnostic). */
int mt_launch(struct mt *t, const char *path);
/* Send "cmd\n" (resuming a stopped target first). */
int mt_start(struct mt *t, const char *cmd);
/* Wait (ms) for an output line equal to `line`, sampling meanwhile. */
int mt_wait(struct mt *t, const char *line, int ms);
/* Send "cmd\n", wait (ms) for "ok cmd", tick the sampler; 0 or -1. */
int mt_phase(struct mt *t, const char *cmd, int ms);
/* The first output line starting with `prefix`, or NULL. */
const char *mt_line(const struct mt *t, const char *prefix);
void mt_pump(struct mt *t, int ms);
int mt_quit(struct mt *t);
void mt_fini(struct mt *t);
/* Code bytes of every function of the executable equal the file's? */
size_t mt_code_mismatches(struct mt *t);
/* The same for named functions of a loaded library ("libc.so.6"). */
size_t mt_lib_mismatches(struct mt *t, const char *lib,
			 const char *const *names, size_t n);
/* Runtime address of a data symbol of the executable (0 if none). */
uint64_t mt_data(struct mt *t, const char *name);
int64_t mt_value(struct mt *t, struct eng_minst *mi);

#endif
