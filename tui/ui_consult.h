/*
 * ui_consult.h - the consultant inside the live dashboard: its search,
 * its journal, and what the dashboard learns from them each pass of the
 * session loop (ui_session.c calls these; the panes only read u->pc).
 */
#ifndef UI_CONSULT_H
#define UI_CONSULT_H

#include <stdbool.h>
#include <stdio.h>

#include "ui.h"
#include "ui_session.h"

struct jnl_writer;
struct pc_search;

/* How long the program runs before the search starts. */
#define UI_SETTLE_S 0.2

/* A thread or library the dashboard has told the log about, with the
 * retired state it last had (to say "exited", "unloaded"). */
struct ui_seen {
	pc_res_id id;
	bool retired;
};

struct ui_consult {
	struct ui *u;
	struct pc_config *cfg;        /* owned; NULL: no search */
	const struct ui_opts *o;
	struct pc_source *csrc;       /* the consultant's: u->src or the
					 journal's wrapper of it */
	struct jnl_writer *jw;
	char jpath[4096];             /* the journal's file, for the end */
	bool journal_failed;          /* its error is in the log */
	double search_at;             /* monotonic time the search starts */
	double throttle_said;         /* when the log last had slowed/resumed */
	int throttle_quiet;           /* such lines left out since */
	bool failed;                  /* the search could not start */
	size_t nres;                  /* resources the log has seen */
	struct ui_seen *seen;
	size_t nseen, capseen;
};

/* Before the program runs: the metrics, the journal and the consultant
 * (no search yet).  Without a configuration or the runtime library the
 * dashboard shows the program only. */
void ui_consult_open(struct ui *u, struct ui_consult *c);
/* Each pass after src_live_pump: resources, the search (started once
 * the program has run a moment), the journal, the status line. */
void ui_consult_pump(struct ui *u, struct ui_consult *c);
/* The status line's search fields for search s of u->pc (the live and
 * the replay dashboards both show them). */
struct ui_search_status ui_consult_status(const struct ui *u,
					  const struct pc_search *s);
/* Milliseconds until the source's next sample (-1: none), so the loop
 * wakes in time for it. */
int ui_consult_due_ms(const struct ui *u, const struct ui_consult *c);
/* Before a detach: take every instance's code out (the program runs on
 * as it was). */
void ui_consult_stop(struct ui *u, struct ui_consult *c);
/* After the dashboard has closed: the search's findings to f, as batch
 * mode's report begins (nothing when the search never ran). */
void ui_consult_print_findings(struct ui *u, struct ui_consult *c, FILE *f);
/* The journal's end and everything freed; `why` is the end record's
 * reason.  Closes the source (u->src). */
void ui_consult_close(struct ui *u, struct ui_consult *c, const char *why);

#endif
