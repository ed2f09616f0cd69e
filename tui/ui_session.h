/*
 * ui_session.h - what the command line needs of the dashboard.
 *
 * `hunch run`, `hunch attach` and the demo open the dashboard when
 * stdin and stdout are a terminal and --batch is not given (ui_session_wanted);
 * otherwise the command line keeps its plain session (cli_run.c).
 */
#ifndef UI_SESSION_H
#define UI_SESSION_H

#include <stdbool.h>

#include <jansson.h>
#include <sys/types.h>

/* Returned when the terminal cannot be used (unknown TERM): the caller
 * runs the plain session instead. */
#define UI_FALLBACK (-1000)

struct pc_config;

struct ui_opts {
	const char *label;       /* program name for the status line */
	const char *rtlib;       /* NULL: no runtime library */
	const char *screenshot;  /* --screenshot FILE, or NULL */
	/* The search (taken over and freed by the dashboard); NULL: the
	 * dashboard shows the program without a search. */
	struct pc_config *cfg;
	const char *journal;     /* --journal FILE, or NULL: the default */
	bool no_journal;         /* --no-journal */
	const char *report;      /* --report FILE: the JSON report at the end */
	const char *const *argv; /* launched: for the journal's header */
	/* The hypotheses files loaded and how they differ from the shipped
	 * defaults (cli_check_config_summary): the journal's header and the
	 * printed report say it; the caller keeps it. */
	json_t *config;
	int follow;              /* children: 0 the default, -1 no, 1 yes */
	bool tree;               /* attach: the process's descendants too */
};

bool ui_session_wanted(bool batch);
/* Launch argv under the dashboard; returns hunch's exit status (the
 * program's, as `hunch run` does) or UI_FALLBACK. */
int ui_session_launch(char *const *argv, const struct ui_opts *o);
/* Attach to pid; returns 0, HUNCH_EXIT_TARGET, or UI_FALLBACK. */
int ui_session_attach(pid_t pid, const struct ui_opts *o);

#endif
