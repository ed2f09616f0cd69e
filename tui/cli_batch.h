/*
 * cli_batch.h - batch mode: the consultant's search over a launched or
 * attached program with no terminal; progress on stderr, the report on
 * stdout and, with --report, as JSON.
 */
#ifndef CLI_BATCH_H
#define CLI_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "pc_phase_at.h"
#include "pc_source.h"

struct pc_config;
struct out_fwd;

#define CLI_BATCH_MAX_SETS 64

struct batch_opts {
	const char *report;        /* --report FILE: the JSON report */
	double time_limit;         /* --time-limit S; < 0: none */
	const char *hypotheses;    /* --hypotheses FILE */
	const char *sets[CLI_BATCH_MAX_SETS];  /* --set NAME=VALUE */
	size_t nsets;
	const char *journal;       /* --journal FILE */
	bool no_journal;
	bool kill_at_end;          /* launched: kill instead of letting it
				      finish */
	struct pc_phase_at phases; /* --phase-at S: current phases */
	bool verbose;              /* -v: the search's event log on stderr
				      (always in the journal) */
};

struct batch_target {
	const char *label;         /* for messages and the report */
	char *const *argv;         /* launched: its argv; attached: NULL */
	pid_t pid;
	int sigfd;                 /* hunch's signals (SIGINT, ...) */
	struct out_fwd *fwd;       /* launched: its output's copies for
				      the journal, or NULL */
};

/* Search `live` (stopped: just launched or attached) until the search
 * has nothing left to test, the time limit, the target's end or a
 * signal to hunch; print the report; leave the program as asked.
 * Closes `live` and frees `cfg`.  Returns hunch's exit status. */
int cli_batch_search(struct pc_source *live, struct pc_config *cfg,
		     const struct batch_opts *o,
		     const struct batch_target *t);

#endif
