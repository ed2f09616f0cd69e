/* main.c - the hunch command line: argument parsing and mode dispatch. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* `hunch NAME ...` where NAME is no command: a program only if it is an
 * existing file named with a path (`hunch ./prog`); a bare word is far
 * more often a mistyped command than a program (`hunch verison`). */
static int not_a_command(int argc, char **argv)
{
	static const struct option cmds[] = {
		{ "run", 0, NULL, 0 }, { "attach", 0, NULL, 0 },
		{ "where", 0, NULL, 0 }, { "check", 0, NULL, 0 },
		{ "points", 0, NULL, 0 }, { "replay", 0, NULL, 0 },
		{ "help", 0, NULL, 0 }, { "version", 0, NULL, 0 },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[1], *near;

	if (strchr(cmd, '/') != NULL && access(cmd, F_OK) == 0)
		return cli_run(argc, argv);
	near = cli_opts_nearest(cmd, cmds);
	fprintf(stderr, "hunch: '%s' is not a hunch command%s%s%s (run, "
		"attach, where, check, points, replay, help, version); to run "
		"a program of that name: hunch run %s\n", cmd,
		near ? "; did you mean '" : "", near ? near : "",
		near ? "'?" : "", cmd);
	return HUNCH_EXIT_USAGE;
}

/* A reader that goes away (`hunch run --batch -- prog 2>&1 | head`)
 * must not kill hunch mid-search: the program would run on with its
 * instrumentation in, and --kill-at-end would not end it.  Writes fail
 * with EPIPE instead, hunch leaves the program as it was told, and the
 * report's writer says that stdout was lost (the journal keeps the
 * search).  Launched programs get SIGPIPE's default back at their
 * exec (eng_launch.c). */
static void live_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (cmd == NULL || strcmp(cmd, "run") == 0 ||
	    strcmp(cmd, "attach") == 0 || cmd[0] == '-' ||
	    (strchr(cmd, '/') != NULL && access(cmd, F_OK) == 0))
		live_signals();

	if (cmd == NULL || strcmp(cmd, "--batch") == 0 ||
	    strcmp(cmd, "--screenshot") == 0)
		return cli_run_demo(argc, argv);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 ||
	    strcmp(cmd, "version") == 0)
		return cli_help_version();
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return cli_help(NULL, stdout);
	if (strcmp(cmd, "help") == 0)
		return cli_help(argc > 2 ? argv[2] : NULL, stdout);
	if (strcmp(cmd, "run") == 0)
		return cli_run(argc - 1, argv + 1);
	if (strcmp(cmd, "attach") == 0)
		return cli_run_attach(argc - 1, argv + 1);
	if (strcmp(cmd, "where") == 0)
		return cli_where(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return cli_check(argc - 1, argv + 1);
	if (strcmp(cmd, "points") == 0)
		return cli_points(argc - 1, argv + 1);
	if (strcmp(cmd, "replay") == 0)
		return cli_replay(argc - 1, argv + 1);
	if (strcmp(cmd, "--") == 0 && argc > 2)
		return cli_run(argc - 1, argv + 1);
	if (cmd[0] != '-')
		return not_a_command(argc, argv);
	return cli_run_demo(argc,
			    argv); /* the demo's options, or their error */
}
