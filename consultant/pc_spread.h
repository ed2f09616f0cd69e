/*
 * pc_spread.h - the spread of a hypothesis across the processes of the
 * job: where a node tested on /Process (every process) was refined to
 * each /Process/<pid>, its value in each process (the mean over the
 * experiment's run), and the least, the mean and the most, with the
 * process of each end.  A spread whose most is far above the mean is a
 * load imbalance: one process does (or waits) what the others do not,
 * a finding in its own right as Paradyn's per-process aggregation made
 * it.  Computed from the search graph alone, so a replay of the
 * journal gives the live run's spread.
 */
#ifndef PC_SPREAD_H
#define PC_SPREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "pc_search.h"

/* An imbalance: the most is at least this many times the mean, and
 * the most less the least is at least the node's threshold. */
#define PC_SPREAD_IMBALANCE 1.5

struct pc_spread {
	const struct pc_node *node;   /* the node on /Process */
	size_t nproc;                 /* processes measured */
	double min, mean, max;
	int min_pid, max_pid;
	bool imbalanced;
};

/* The spreads of search s, in node order, into out[max]; their count. */
size_t pc_spread_list(const struct pc_consult *pc, const struct pc_search *s,
		      struct pc_spread *out, size_t max);
/* The report's parts: a JSON array, and the text section (nothing when
 * no node was refined to two processes or more). */
json_t *pc_spread_json(const struct pc_consult *pc,
		       const struct pc_search *s);
void pc_spread_text(const struct pc_consult *pc, const struct pc_search *s,
		    FILE *f);

#endif
