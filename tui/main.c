/* main.c - the hunch command line: argument parsing and mode dispatch. */
#include "cli.h"
#include "hunch_config.h"

#include <stdio.h>
#include <string.h>

void cli_usage(void)
{
	fputs(
"usage: hunch [--batch [batch options]] [--screenshot F]\n"
"                                      run the bundled demo; with --batch,\n"
"                                      hunt its bottlenecks and report\n"
"       hunch run [options] [--] PROGRAM [ARGS...]\n"
"                                      run PROGRAM under hunch\n"
"       hunch attach [options] PID     attach to a running process\n"
"       hunch where [--tree] [--hierarchy NAME] [--debuginfod-wait S]\n"
"                   PROGRAM | --pid PID print the where axis\n"
"       hunch check [--list] [--set NAME=VALUE]... [FILE...]\n"
"                                      validate hypotheses files\n"
"       hunch points [--all|--refused] PROGRAM [FUNCTION...]\n"
"                                      instrumentation points and verdicts\n"
"       hunch replay [--batch] [--report F] [--set NAME=VALUE]... JOURNAL\n"
"                                      replay a recorded search (--export-dot,\n"
"                                      --export-shg-json, --export-where-json F,\n"
"                                      --export-csv DIR)\n"
"\n"
"options of run and attach:\n"
"  --where          print the where axis once the program is stopped\n"
"  --verbose, -v    report threads and libraries as they come and go;\n"
"                   with --batch, the search's event log on stderr\n"
"  --no-rtlib       do not load the runtime library into the program\n"
"  --seconds N      attach: stay attached N seconds (default 0)\n"
"  --batch          no dashboard, even on a terminal\n"
"  --screenshot F   dashboard: save the last screen as text in F\n"
"                   (S saves the screen at any time)\n"
"\n"
"batch mode (--batch): the Performance Consultant searches the program;\n"
"a line per new finding and progress on stderr, the report on stdout:\n"
"  --report FILE        also write the report as JSON (docs/report-schema.md)\n"
"  --time-limit S       stop the search after S seconds\n"
"  --hypotheses FILE    hypotheses and metrics on top of the defaults\n"
"  --set NAME=VALUE     set a tunable (repeatable; hunch check --list)\n"
"  --journal FILE       journal the search there (default: a file in\n"
"                       $XDG_STATE_HOME/hunch/journals)\n"
"  --no-journal         no journal\n"
"  --kill-at-end        kill a launched program when the search stops\n"
"                       (default: wait for it to finish)\n"
"  --phase-at S         start a current phase after S seconds of search\n"
"                       (repeatable); the search runs at least until then\n"
"\n"
"On a terminal, run, attach and the demo open the dashboard (? lists\n"
"its keys); with --batch, or when stdout is not a terminal, they print.\n"
"\n"
"exit status: run passes on the program's status (128+N if killed by\n"
"signal N); otherwise 0 done, 1 usage error, 2 the program could not be\n"
"run or attached.  With --batch: 0 the search completed (whatever the\n"
"program's status; the report says how it ended), 1 usage or setup\n"
"error (options, hypotheses, report file), 2 the program could not be\n"
"run or attached, 3 the search is incomplete: a top-level hypothesis\n"
"could not be tested (the report lists it and why; replay --batch of\n"
"its journal exits 3 too).\n", stderr);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (cmd == NULL || strcmp(cmd, "--batch") == 0 ||
	    strcmp(cmd, "--screenshot") == 0)
		return cli_demo(argc, argv);
	if (strcmp(cmd, "--version") == 0) {
		printf("hunch %s\n", HUNCH_VERSION);
		return HUNCH_EXIT_OK;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		cli_usage();
		return HUNCH_EXIT_OK;
	}
	if (strcmp(cmd, "run") == 0)
		return cli_run(argc - 1, argv + 1);
	if (strcmp(cmd, "attach") == 0)
		return cli_attach(argc - 1, argv + 1);
	if (strcmp(cmd, "where") == 0)
		return cli_where(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return cli_check(argc - 1, argv + 1);
	if (strcmp(cmd, "points") == 0)
		return cli_points(argc - 1, argv + 1);
	if (strcmp(cmd, "replay") == 0)
		return cli_replay(argc - 1, argv + 1);
	if (cmd[0] != '-')  /* hunch PROGRAM ARGS... is hunch run */
		return cli_run(argc, argv);
	fprintf(stderr, "hunch: unknown option '%s'\n", cmd);
	cli_usage();
	return HUNCH_EXIT_USAGE;
}
