/*
 * pc_untested.h - which experiments (hypothesis x focus) a search could
 * not test, and why: the source refused to enable them, the cost limit
 * did not allow them, their metric never had a value, or the target, the
 * caller or the phase ended the search before they concluded.
 *
 * A node not tested is neither true nor false: nothing is known of it.
 * The reports list these apart (docs/report-schema.md, `not_tested`) and
 * a search with a top-level hypothesis not tested is *incomplete*, never
 * "no bottleneck found"; the dashboard's `d` shows the reason.  The kind
 * is an enum with one message per kind; the detail is the text the
 * source (or the search) gave, kept as it was.
 */
#ifndef PC_UNTESTED_H
#define PC_UNTESTED_H

#include <stdbool.h>
#include <stddef.h>

#include "pc_search.h"

enum pc_untested {
	PC_UNTESTED_NONE,          /* tested, still being tested, or no
				      longer wanted (no true parent) */
	PC_UNTESTED_REFUSED,       /* the source could not enable it */
	PC_UNTESTED_COST,          /* the cost limit did not allow it */
	PC_UNTESTED_NO_DATA,       /* enabled, but an input never had a
				      value */
	PC_UNTESTED_TARGET_ENDED,  /* the target ended first */
	PC_UNTESTED_STOPPED,       /* the search was stopped first (time
				      limit) */
	PC_UNTESTED_PHASE_ENDED,   /* its phase ended first */
	PC_UNTESTED_NKINDS
};

/* Why node n of search s was not tested, PC_UNTESTED_NONE if it was (or
 * still is being tested, or is no longer wanted).  `stop` is the caller's
 * reason for stopping the search ("time limit"), NULL if it did not.
 * The detail (the source's reason for a refused enable, the predicted
 * cost, the input without data, how the target ended) goes to
 * detail[len], "" when there is none. */
enum pc_untested pc_untested_why(const struct pc_consult *pc,
				 const struct pc_search *s,
				 const struct pc_node *n, const char *stop,
				 char *detail, size_t len);
/* The kind's JSON name ("refused", "cost_limit", "no_data",
 * "target_ended", "stopped", "phase_ended") and its message for people
 * ("the source could not enable it", ...). */
const char *pc_untested_key(enum pc_untested k);
const char *pc_untested_message(enum pc_untested k);

/* A top-level node: a hypothesis the search starts with, at the top
 * focus (a child of the root, not virtual). */
bool pc_untested_top_level(const struct pc_search *s,
			   const struct pc_node *n);
/* The nodes of s not tested, top-level ones first, then by id; returns
 * how many were stored in out (at most max). */
size_t pc_untested_list(const struct pc_consult *pc,
			const struct pc_search *s, const char *stop,
			const struct pc_node **out, size_t max);
/* How many top-level nodes of s were not tested (the search is
 * incomplete when any was), and how many are still being tested (not
 * concluded yet: only while the search runs). */
int pc_untested_top(const struct pc_consult *pc, const struct pc_search *s,
		    const char *stop, int *running);

#endif
