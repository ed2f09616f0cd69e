/*
 * pc_jpos.h - where each value of a JSON text sits (line, column) by JSON
 * path.  jansson parses and reports syntax errors with a line and column,
 * but its values carry no positions, so semantic errors ("unknown metric
 * at $.hypotheses.CPUbound.metric") need this second, light scan of the
 * same text.  Paths look like $.hypotheses.CPUbound.inputs[1].metric.
 */
#ifndef PC_JPOS_H
#define PC_JPOS_H

#include <stdbool.h>
#include <stddef.h>

struct pc_jpos_ent {
	char *path;
	int line, col;    /* of the member's key, or of an array element */
};

struct pc_jpos {
	struct pc_jpos_ent *e;
	size_t n, cap;
	char stop_path[256];  /* where a syntax error stopped the scan */
};

/* Scan `text`; on a syntax error stop quietly, leaving the path of the
 * innermost value being read in stop_path (jansson gives the message). */
void pc_jpos_scan(struct pc_jpos *jp, const char *text);
bool pc_jpos_find(const struct pc_jpos *jp, const char *path,
		  int *line, int *col);
void pc_jpos_free(struct pc_jpos *jp);

#endif
