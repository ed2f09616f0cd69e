/*
 * cli_help.c - the help of hunch and of each subcommand.
 *
 * `hunch --help`, `hunch help`, `hunch CMD --help`, `hunch CMD -h` and
 * `hunch help CMD` print to stdout and exit 0, so that `| less` works;
 * a usage error prints the short usage to stderr instead.  The full
 * reference is the man page (docs/man/hunch.1.scd); these texts name
 * every option the parsers take, which tests/cli/test-cli-conventions.sh
 * checks against the sources and the man page.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hunch_config.h"

static const char usage_text[] =
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
"       hunch replay [--batch] [--report F] [--set NAME=VALUE]... JOURNAL|DIR\n"
"                                      replay a recorded search, or list\n"
"                                      the journals in DIR\n"
"       hunch help [COMMAND]           this help, or a command's\n"
"       hunch version                  hunch's version (also -V, --version)\n"
"\n"
"`hunch ./prog ARGS` (an existing file) is `hunch run ./prog ARGS`; any\n"
"other program is named after `run` (or `--`): `hunch run ls -l`.\n"
"`hunch COMMAND --help` describes a command; `man hunch` has it all.\n";

static const char session_text[] =
"options of run and attach (and of the demo):\n"
"  -w, --where          print the where axis once the program is stopped\n"
"  -v, --verbose        report threads and libraries as they come and go;\n"
"                       in batch mode, print every search event on stderr\n"
"  -n, --no-rtlib       do not load the runtime library into the program\n"
"  -s, --seconds N      attach: stay attached N seconds (default 0)\n"
"      --batch          no dashboard, even on a terminal\n"
"      --screenshot F   dashboard: save the last screen as text in F\n"
"                       (S saves the screen at any time)\n"
"  -h, --help           this help\n"
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
"  --kill-at-end        kill a launched program (and its children) when\n"
"                       the search stops (default: wait for it to finish)\n"
"  --follow, --no-follow  follow child processes (fork, vfork) as\n"
"                       /Process/<pid>, or not (default: launched: yes,\n"
"                       attached: no)\n"
"  --tree               attach: the process and all its descendants\n"
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
"its journal exits 3 too).\n";

struct cmd_help {
	const char *name;
	const char *synopsis;
	const char *body;      /* NULL: the session options */
};

static const struct cmd_help helps[] = {
	{ "run", "usage: hunch run [options] [--] PROGRAM [ARGS...]\n"
	  "Run PROGRAM under hunch: the dashboard on a terminal, the where\n"
	  "axis or (with --batch) the search's report otherwise.\n\n", NULL },
	{ "attach", "usage: hunch attach [options] PID\n"
	  "Attach to the running process PID (ptrace; root, or the same user\n"
	  "with kernel.yama.ptrace_scope 0); detach leaves it as it was.\n\n",
	  NULL },
	{ "demo", "usage: hunch [options]\n"
	  "With no program, hunch runs its bundled demo: three planted\n"
	  "problems (CPU, a contended mutex, 1-byte writes) to find.\n\n",
	  NULL },
	{ "where", "usage: hunch where [options] PROGRAM | --pid PID\n",
	  "Print the where axis (functions, threads, objects, files) of a\n"
	  "program file, or of a running process, and exit.\n\n"
	  "  -t, --tree              as an indented tree\n"
	  "  -H, --hierarchy NAME    only one hierarchy (Code, Process,\n"
	  "                          SyncObject, Files)\n"
	  "  -p, --pid PID           a running process (attached, then left)\n"
	  "  -w, --debuginfod-wait S wait at most S seconds (default 120) for\n"
	  "                          debug files from $DEBUGINFOD_URLS\n"
	  "  -h, --help              this help\n" },
	{ "check", "usage: hunch check [--list] [--set NAME=VALUE]... [FILE...]\n",
	  "Validate hypotheses files on top of the shipped defaults (and the\n"
	  "user file in $XDG_CONFIG_HOME/hunch) without running anything;\n"
	  "exit status 0 when valid, 1 otherwise.\n\n"
	  "  --list              list every tunable with its value and range\n"
	  "  --set NAME=VALUE    check a tunable's value (repeatable)\n"
	  "  -h, --help          this help\n" },
	{ "points", "usage: hunch points [--all|--refused] PROGRAM [FUNCTION...]\n",
	  "The instrumentation points of a program's functions and, for each,\n"
	  "whether hunch can patch it and why not.\n\n"
	  "  -a, --all        every point of every function\n"
	  "  -r, --refused    only the points hunch refuses, with the reason\n"
	  "  -h, --help       this help\n" },
	{ "replay", "usage: hunch replay [options] JOURNAL | DIRECTORY\n",
	  "Replay a journaled search (.jsonl, or .jsonl.gz) with no program:\n"
	  "the dashboard on a terminal with time controls, else the report.\n"
	  "Given a directory, or nothing (the default journal directory),\n"
	  "list the journals there, newest first by when each search\n"
	  "started (UTC; a file whose header cannot be read, by its file\n"
	  "time, which its line says).\n\n"
	  "  --batch                    print the report, even on a terminal\n"
	  "  --report FILE              also write the JSON report\n"
	  "  --set NAME=VALUE           replay with this tunable (what-if);\n"
	  "                             the changed conclusions are listed\n"
	  "  --export-dot FILE          the search history graph as Graphviz\n"
	  "  --export-shg-json FILE     the search history graph as JSON\n"
	  "  --export-where-json FILE   the where axis as JSON\n"
	  "  --export-csv DIR           one CSV per metric instance\n"
	  "  -h, --help                 this help\n" },
	{ "help", "usage: hunch help [COMMAND]\n",
	  "Print hunch's help, or COMMAND's.\n" },
	{ "version", "usage: hunch version\n",
	  "Print hunch's version (also: hunch --version, hunch -V).\n" },
};

void cli_help_usage(void)
{
	fputs(usage_text, stderr);
}

int cli_help(const char *cmd, FILE *out)
{
	if (cmd == NULL) {
		fputs(usage_text, out);
		return HUNCH_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
		if (strcmp(helps[i].name, cmd) != 0)
			continue;
		fputs(helps[i].synopsis, out);
		fputs(helps[i].body ? helps[i].body : session_text, out);
		return HUNCH_EXIT_OK;
	}
	fprintf(stderr, "hunch help: no command '%s'; the commands: run, "
		"attach, where, check, points, replay, help, version\n", cmd);
	return HUNCH_EXIT_USAGE;
}

int cli_help_version(void)
{
	printf("hunch %s\n", HUNCH_VERSION);
	return HUNCH_EXIT_OK;
}
