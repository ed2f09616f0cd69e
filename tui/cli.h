/*
 * cli.h - the hunch commands (main.c dispatches to these).
 *
 * Exit codes (documented in README): a command that ran returns 0; usage
 * errors 1; a target that could not be run or attached 2; a batch search
 * that could not test a top-level hypothesis 3 (incomplete).  `hunch run`
 * passes on the program's own exit status (128+N when killed by signal N)
 * so that hunch can stand in for the program in scripts.
 */
#ifndef CLI_H
#define CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "cli_quote.h"

#define HUNCH_EXIT_OK     0
#define HUNCH_EXIT_USAGE  1
#define HUNCH_EXIT_TARGET 2
/* Batch mode (and its replay): the search ran, but a top-level
 * hypothesis could not be tested (pc_report_incomplete). */
#define HUNCH_EXIT_INCOMPLETE 3

int cli_where(int argc, char **argv);
int cli_points(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_run_attach(int argc, char **argv);
int cli_run_demo(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_replay(int argc, char **argv);
/* Help (cli_help.c): a command's help (NULL: hunch's) on `out`; 1 for
 * a command that does not exist.  cli_help_usage: hunch's, on stderr. */
int cli_help(const char *cmd, FILE *out);
int cli_help_version(void);
/* A parser's unknown option (cli_opts.c): named, with the nearest long
 * option in `opts`; cli_opts_error after getopt_long returned '?' or
 * ':' (optstring starting "+:", opterr 0).  Both return
 * HUNCH_EXIT_USAGE. */
int cli_opts_unknown(const char *cmd, const char *arg,
		     const struct option *opts);
int cli_opts_error(const char *cmd, int c, char **argv,
		   const struct option *opts);
/* The name in opts nearest arg (its dashes and =value ignored) when
 * near enough to be a slip of the keyboard, else NULL. */
const char *cli_opts_nearest(const char *arg, const struct option *opts);
/* The hypotheses files in c and how c differs from the shipped
 * defaults (pc_config_diff_summary), or NULL when the shipped file cannot be
 * read (cli_check.c). */
struct pc_config;
json_t *cli_check_config_summary(const struct pc_config *c);
/* The journals in dir (NULL: the default journal directory), newest
 * first, on stdout (cli_journals.c). */
int cli_journals_list(const char *dir);

/* Hypotheses (cli_check.c): the shipped default.json, and a merged
 * configuration (defaults, XDG user file, `user_file`, --set values);
 * messages go to stderr, returns HUNCH_EXIT_OK or HUNCH_EXIT_USAGE. */
struct pc_config;
const char *cli_check_hypotheses_path(void);
int cli_check_load_config(const char *user_file, const char *const *sets,
		    size_t nsets, struct pc_config **out);

/* Paths of the runtime library and the demo program: the build tree next
 * to the hunch executable first, then the installed locations; the
 * environment variables HUNCH_RTLIB and HUNCH_DEMO override both.
 * Return NULL (with a message on stderr) when not found. */
const char *cli_paths_rtlib(void);
const char *cli_paths_demo(void);

void cli_help_usage(void);

#endif
