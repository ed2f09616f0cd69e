/*
 * pc_diff.h - which conclusions differ between two searches of the same
 * data: `hunch replay --set` re-runs the recorded search with other
 * tunables and reports what changed.
 *
 * A conclusion is a node's final truth (true or false; a node never
 * created counts as unknown) and, for a true node, when it became true.
 * Nodes are matched by search id and name (hypothesis and focus).
 */
#ifndef PC_DIFF_H
#define PC_DIFF_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "pc_search.h"

struct pc_change {
	int search;
	char *name;
	enum pc_truth was, now;
	double was_since, now_since;   /* true since (s), NaN otherwise */
	bool not_recorded;             /* `now` side asked for an experiment
					* the journal does not hold */
};

/* Changes from `was` to `now`, in `now`'s node order then `was`'s nodes
 * missing from `now`.  Returns the count; *out is malloc'd. */
size_t pc_diff_conclusions(const struct pc_consult *was,
			   const struct pc_consult *now,
			   struct pc_change **out);
void pc_diff_changes_free(struct pc_change *c, size_t n);
/* The short section batch replay prints. */
void pc_diff_print(const struct pc_change *c, size_t n, FILE *f);
json_t *pc_diff_json(const struct pc_change *c, size_t n);

#endif
