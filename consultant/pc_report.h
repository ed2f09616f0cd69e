/*
 * pc_report.h - what a search concluded, as batch mode prints it: the
 * bottlenecks (the most refined true experiments, each with its evidence
 * and the chain of refinements that led there), what it could not test
 * and why (pc_untested.h), and every node of every search with its final
 * state.  JSON (schema: docs/report-schema.md) and
 * human text come from the same model.
 */
#ifndef PC_REPORT_H
#define PC_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "pc_search.h"

#define PC_REPORT_SCHEMA_VERSION 8

struct pc_report_meta {
	const char *target;   /* command line or program path */
	int pid;              /* 0 when unknown */
	const char *mode;     /* "run", "attach", "replay", "sim" */
	const char *stop;     /* why the search stopped, when the caller
				 stopped it ("time limit"); NULL otherwise */
	const json_t *config; /* the hypotheses files loaded and how they
			       * differ from the shipped defaults
			       * (pc_config_diff_summary), or NULL */
};

/* The most refined true experiments of a search: true, not virtual, and
 * no child true.  Returns how many were stored in `out` (at most max),
 * ordered by the time they became true. */
size_t pc_report_bottlenecks(const struct pc_consult *pc,
			     const struct pc_search *s,
			     const struct pc_node **out, size_t max);
/* True nodes shed (or skipped) for cost after they tested true and not
 * measured since: listed apart from the bottlenecks, same order. */
size_t pc_report_unconfirmed(const struct pc_consult *pc,
			     const struct pc_search *s,
			     const struct pc_node **out, size_t max);

/* The result of search s, as the reports say it (in buf[len]):
 * "incomplete: N hypotheses could not be tested" while any top-level
 * hypothesis was not tested (pc_untested.h), else "bottleneck: " and the
 * lead finding's line (pc_findings_text_line: "bottleneck: 1 thread uses
 * 0.98 CPUs computing, in `f` (loop.py:4)"),
 * "not concluded yet: N hypotheses still being tested" (a snapshot of a
 * running search), or "no bottleneck found" (every top-level hypothesis
 * tested, none true).  stop: as pc_report_meta's. */
const char *pc_report_result(const struct pc_consult *pc,
			     const struct pc_search *s, const char *stop,
			     char *buf, size_t len);
/* How many top-level hypotheses of the global phase were not tested:
 * the search is incomplete when any was (batch mode's exit status). */
int pc_report_incomplete(const struct pc_consult *pc,
			 const struct pc_report_meta *m);

json_t *pc_report_json(const struct pc_consult *pc,
		       const struct pc_report_meta *m);
/* What a node is doing, in one word: virtual, active, pending, queued,
 * skipped, failed, inactive or "never run" (the reports' and exports'
 * word for it). */
const char *pc_report_node_state(const struct pc_node *n);


int pc_report_write_json(const struct pc_consult *pc,
			 const struct pc_report_meta *m, FILE *f);
void pc_report_text(const struct pc_consult *pc,
		    const struct pc_report_meta *m, FILE *f);

#endif
