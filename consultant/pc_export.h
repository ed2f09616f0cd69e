/*
 * pc_export.h - a search's state in files other tools read: the search
 * history graph as Graphviz dot and as JSON, the where axis as JSON, and
 * each metric instance's histogram as CSV.  The formats are documented
 * in docs/export-formats.md; `hunch replay --export-*` writes them (and
 * the dashboard's `E`, tui/ui_export.c, from the same functions).
 */
#ifndef PC_EXPORT_H
#define PC_EXPORT_H

#include <jansson.h>
#include <stdio.h>

#include "hunch_err.h"
#include "pc_search.h"

#define PC_EXPORT_VERSION 1

/* One digraph, a cluster per search; node ids "s<search>n<node>". */
void pc_export_dot(const struct pc_consult *pc, FILE *f);
/* {"schema":"hunch-shg", ...} */
json_t *pc_export_shg_json(const struct pc_consult *pc);
/* {"schema":"hunch-where", ...}: the resource tree, retired ones marked. */
json_t *pc_export_where_json(const struct pc_restree *t);
/* One CSV per metric instance in directory `dir` (created if missing):
 * "<id>_<metric>_<focus>.csv", a row per bucket of its global-phase
 * histogram in use.  Returns the number of files written, or a negative
 * errno with `err` set. */
int pc_export_csv(const struct pc_consult *pc, const char *dir,
		  struct hunch_err *err);
/* The file name pc_export_csv uses for instance `m` (into buf). */
char *pc_export_csv_name(const struct pc_consult *pc,
			 const struct pc_minst *m, char *buf, size_t len);

#endif
