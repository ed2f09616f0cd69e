/*
 * pc_focus.h - a focus: one resource per hierarchy (/Code, /Process,
 * /SyncObject, /Files); a hierarchy's root means "not constrained".
 * Written </Code/a.out/x.c/f,/Process/42,/SyncObject,/Files>.
 */
#ifndef PC_FOCUS_H
#define PC_FOCUS_H

#include <stdbool.h>
#include <stddef.h>

#include "pc_config.h"
#include "pc_res.h"
#include "pc_source.h"

struct pc_focus {
	pc_res_id r[PC_NHIER];
};

/* The top-level focus: every hierarchy's root. */
void pc_focus_top(const struct pc_restree *t, struct pc_focus *f);
bool pc_focus_eq(const struct pc_focus *a, const struct pc_focus *b);
void pc_focus_paths(const struct pc_restree *t, const struct pc_focus *f,
		    struct pc_src_focus *out);
/* "</Code,/Process,/SyncObject,/Files>" into buf. */
char *pc_focus_name(const struct pc_restree *t, const struct pc_focus *f,
		    char *buf, size_t len);

#endif
