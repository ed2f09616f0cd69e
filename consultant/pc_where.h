/*
 * pc_where.h - filling the where axis from discoveries (see pc_source.h).
 *
 * Paths follow DESIGN §3:
 *   /Code/<module>/<source file or "<unknown>">/<function>
 *   /Process/<pid>/<tid>:<start function>   (or just <tid> if unknown)
 *   /SyncObject/<class>/<name>
 *   /Files/<path>
 */
#ifndef PC_WHERE_H
#define PC_WHERE_H

#include "pc_res.h"
#include "pc_source.h"

#define PC_UNKNOWN_SRCFILE "<unknown>"

/* Add (or retire) the resource a discovery describes; returns its id. */
pc_res_id pc_where_apply(struct pc_restree *t, const struct pc_discovery *d);

/* Callback form, for pc_source_ops.poll_resources (arg = the tree). */
void pc_where_apply_cb(void *tree, const struct pc_discovery *d);

/* The thread resource of (pid, tid), or PC_RES_NONE. */
pc_res_id pc_where_thread(const struct pc_restree *t, int pid, int tid);

#endif
