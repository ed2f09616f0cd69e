/*
 * pc_config_diff.h - how a loaded configuration differs from the shipped
 * defaults: the lines `hunch check`, the reports and the journal header
 * show, so that a run under a user's overlay never passes for a run
 * under the defaults.
 */
#ifndef PC_CONFIG_DIFF_H
#define PC_CONFIG_DIFF_H

#include <stddef.h>

#include <jansson.h>

#include "pc_config.h"

typedef void (*pc_config_diff_fn)(void *arg, const char *line);

/* Calls fn once per difference between c and `shipped` (the shipped
 * file loaded alone), in a stable order (tunables, hypotheses, metrics,
 * constraints, lists, each in c's order): "tunable PC_CPUThreshold =
 * 0.4 (shipped: 0.2)", "hypothesis HotSpin: new, defined in FILE:LINE".
 * Returns the number of differences; fn may be NULL to count them. */
size_t pc_config_diff(const struct pc_config *c,
		      const struct pc_config *shipped, pc_config_diff_fn fn,
		      void *arg);

/* The same as JSON for the journal header and the reports:
 * {"files": [every file loaded, in order], "differs": [the lines]}. */
json_t *pc_config_diff_summary(const struct pc_config *c,
			  const struct pc_config *shipped);
/* One line for a report: "the shipped defaults (FILE)", or "FILE, FILE
 * (N differences from the shipped defaults)"; NULL for no summary. */
char *pc_config_diff_summary_line(const json_t *summary);

#endif
