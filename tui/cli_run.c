/*
 * cli_run.c - `hunch run`, `hunch attach` and the demo: a session that
 * launches or attaches, keeps the where axis current while the program
 * runs, and leaves the program correct however hunch ends.
 *
 * One thread, one loop (DESIGN §1): a signalfd carries SIGCHLD (ptrace
 * events) and the signals that end hunch (SIGINT, SIGTERM, SIGHUP); on
 * the latter hunch detaches cleanly, so the program runs on untouched.
 */
#include "cli.h"
#include "clock_mono.h"
#include "sigtick.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cli_batch.h"
#include "out_forward.h"
#include "pc_config.h"
#include "pc_where.h"
#include "src_live.h"
#include "ui_session.h"

struct session_opts {
	bool rtlib;          /* load libhunchrt.so into the target */
	bool where;          /* print the where axis when stopped */
	bool verbose;        /* report threads and libraries as they come */
	double seconds;      /* attach: stay this long (<0: until it ends) */
	const char *label;   /* program name for messages */
	bool batch;          /* never the dashboard */
	const char *screenshot;  /* dashboard: save the last screen here */
	struct batch_opts bo;    /* --batch: the search's options */
	int follow;          /* children: 0 the default, -1 no, 1 yes */
	bool tree;           /* attach: the process's descendants too */
};

struct session {
	struct pc_source *src;
	struct pc_restree *tree;
	const struct session_opts *o;
	struct src_live_status st;
	int sigfd;
	int ended_by_signal;  /* hunch's own SIGINT/SIGTERM/SIGHUP, or 0 */
};

/* Blocked and read from a signalfd by the loop.  The engine resets the
 * mask in launched children, so programs see their usual signals. */
static const int run_signals[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };

/* Apply a discovery to the tree and, with --verbose, say so. */
static void on_discovery(void *arg, const struct pc_discovery *d)
{
	struct session *s = arg;
	pc_res_id id = pc_where_apply(s->tree, d);
	const struct pc_res *r = pc_res_get(s->tree, id);

	if (!s->o->verbose || r == NULL)
		return;
	if (d->kind == PC_DISC_THREAD)
		fprintf(stderr, "hunch: thread %s %s\n", r->path,
			d->retired ? "exited" : "appeared");
	else if (d->kind == PC_DISC_FUNCTION && d->retired)
		fprintf(stderr, "hunch: library %s unloaded\n", r->path);
}

/* With --verbose, name the modules that the last poll brought. */
static void report_new_modules(struct session *s, size_t before)
{
	const struct pc_res *code = pc_res_get(s->tree,
		pc_res_tree_hierarchy(s->tree, "Code"));

	for (size_t i = before; s->o->verbose && i < code->nchildren; i++)
		fprintf(stderr, "hunch: library %s loaded (%zu functions)\n",
			pc_res_get(s->tree, code->children[i])->path,
			pc_res_count_kind(s->tree, code->children[i],
					  PC_RES_FUNCTION));
}

static void sync_tree(struct session *s)
{
	pc_res_id code = pc_res_tree_hierarchy(s->tree, "Code");
	size_t before = pc_res_get(s->tree, code)->nchildren;

	s->src->ops->poll_resources(s->src, on_discovery, s);
	if (before > 0)  /* the first poll is the where axis at main */
		report_new_modules(s, before);
}

/* The program's own module in full; libraries as one line each (libc
 * alone has thousands of functions: `hunch where --pid` lists them). */
static void print_where(struct session *s)
{
	const struct pc_res *code = pc_res_get(s->tree,
		pc_res_tree_hierarchy(s->tree, "Code"));

	fprintf(stderr, "hunch: where axis of %s (pid %d):\nCode\n",
		s->o->label, (int)src_live_pid(s->src));
	for (size_t i = 0; i < code->nchildren; i++) {
		const struct pc_res *m = pc_res_get(s->tree, code->children[i]);

		if (i == 0) {  /* modules arrive executable first */
			pc_res_print(s->tree, m->id, true, false, stderr);
			continue;
		}
		fprintf(stderr, "  %s (%zu functions)\n", m->name,
			pc_res_count_kind(s->tree, m->id, PC_RES_FUNCTION));
	}
	pc_res_print(s->tree, pc_res_tree_hierarchy(s->tree, "Process"), true,
		     false, stderr);
}

static void run_loop(struct session *s)
{
	double deadline = s->o->seconds >= 0 ? clock_mono_s() + s->o->seconds : -1;
	struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };

	for (;;) {
		char note[1200];

		src_live_pump(s->src, 0, &s->st);
		while (src_live_debug_note(note, sizeof(note)))
			fprintf(stderr, "hunch: %s\n", note);
		sync_tree(s);
		if (s->st.ended)
			return;
		if (deadline >= 0 && clock_mono_s() >= deadline)
			return;
		if (poll(&pfd, 1, 100) > 0) {
			s->ended_by_signal = sigtick_read_ending(s->sigfd);
			if (s->ended_by_signal)
				return;
		}
	}
}

/* Leave the program running untouched, whatever ended the session. */
static void finish_attached(struct session *s)
{
	struct hunch_err err = { 0 };

	if (s->st.ended)
		return;
	if (src_live_detach(s->src, &err) < 0)
		fprintf(stderr, "hunch: %s\n", err.msg);
	else if (s->ended_by_signal)
		fprintf(stderr, "hunch: %s: detached from %s (pid %d), which "
			"runs on\n", strsignal(s->ended_by_signal),
			s->o->label, (int)src_live_pid(s->src));
	else
		fprintf(stderr, "hunch: detached from %s (pid %d), which runs "
			"on\n", s->o->label, (int)src_live_pid(s->src));
}

/* Say how the program ended; return hunch's exit status for `run`. */
static int report_end(const struct session *s)
{
	const struct src_live_status *st = &s->st;

	if (!st->ended)
		return s->ended_by_signal ? 128 + s->ended_by_signal : 0;
	if (st->killed) {
		fprintf(stderr, "hunch: %s (pid %d) was killed by signal %d "
			"(%s)%s\n", s->o->label, (int)src_live_pid(s->src),
			st->signo, sigabbrev_np(st->signo) ?
			sigabbrev_np(st->signo) : "?",
			st->core ? ", core dumped" : "");
		return 128 + st->signo;
	}
	fprintf(stderr, "hunch: %s (pid %d) exited with status %d\n",
		s->o->label, (int)src_live_pid(s->src), st->exit_code);
	return st->exit_code;
}

static int session_run(struct session *s)
{
	struct hunch_err err = { 0 };
	int rc;

	sync_tree(s);
	if (s->o->where)
		print_where(s);
	if (src_live_resume(s->src, &err) < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		finish_attached(s);
		return HUNCH_EXIT_TARGET;
	}
	run_loop(s);
	finish_attached(s);
	rc = report_end(s);
	s->src->ops->close(s->src);
	pc_res_tree_free(s->tree);
	close(s->sigfd);
	return rc;
}

/* The batch run's options mean nothing without --batch: say so rather
 * than ignore them.  The search's own (--hypotheses, --set, --journal,
 * --no-journal) also serve the dashboard's search. */
static int check_batch_only(const struct session_opts *o, const char *cmd)
{
	const struct batch_opts *b = &o->bo;
	bool search = b->hypotheses != NULL || b->nsets != 0 ||
		      b->journal != NULL || b->no_journal || b->report != NULL;

	if (o->batch || (b->time_limit < 0 &&
			 !b->kill_at_end && b->phases.n == 0 &&
			 (!search || ui_session_wanted(false))))
		return 0;
	fprintf(stderr, "hunch %s: --report, --time-limit, --hypotheses, "
		"--set, --journal, --no-journal, --kill-at-end and "
		"--phase-at need --batch (or the dashboard, for the search's options)\n",
		cmd);
	return -1;
}

static int parse_session(int argc, char **argv, struct session_opts *o,
			 const char *cmd)
{
	static const struct option longopts[] = {
		{ "no-rtlib", no_argument, NULL, 'n' },
		{ "where", no_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "seconds", required_argument, NULL, 's' },
		{ "batch", no_argument, NULL, 'b' },
		{ "screenshot", required_argument, NULL, 'S' },
		{ "report", required_argument, NULL, 'r' },
		{ "time-limit", required_argument, NULL, 'T' },
		{ "hypotheses", required_argument, NULL, 'H' },
		{ "set", required_argument, NULL, 'e' },
		{ "journal", required_argument, NULL, 'j' },
		{ "no-journal", no_argument, NULL, 'J' },
		{ "kill-at-end", no_argument, NULL, 'K' },
		{ "phase-at", required_argument, NULL, 'P' },
		{ "follow", no_argument, NULL, 'F' },
		{ "no-follow", no_argument, NULL, 'N' },
		{ "tree", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end, name[32];
	int c;

	snprintf(name, sizeof name, "hunch%s%s", strcmp(cmd, "demo") ? " " : "",
		 strcmp(cmd, "demo") ? cmd : "");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:nwvs:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'h': exit(cli_help(cmd, stdout));  /* nothing started */
		case 'n': o->rtlib = false; break;
		case 'w': o->where = true; break;
		case 'v': o->verbose = o->bo.verbose = true; break;
		case 'b': o->batch = true; break;
		case 'S': o->screenshot = optarg; break;
		case 'r': o->bo.report = optarg; break;
		case 'H': o->bo.hypotheses = optarg; break;
		case 'j': o->bo.journal = optarg; break;
		case 'J': o->bo.no_journal = true; break;
		case 'K': o->bo.kill_at_end = true; break;
		case 'F': o->follow = 1; break;
		case 'N': o->follow = -1; break;
		case 't': o->tree = true; o->follow = 1; break;
		case 'e':
			if (o->bo.nsets == CLI_BATCH_MAX_SETS) {
				fprintf(stderr, "hunch %s: too many --set\n",
					cmd);
				return -1;
			}
			o->bo.sets[o->bo.nsets++] = optarg;
			break;
		case 'T':
			o->bo.time_limit = strtod(optarg, &end);
			if (*end != '\0' || optarg[0] == '\0' ||
			    o->bo.time_limit <= 0) {
				fprintf(stderr, "hunch %s: --time-limit needs "
					"a number of seconds > 0, got '%s'\n",
					cmd, optarg);
				return -1;
			}
			break;
		case 'P':   /* a current phase from S seconds of search */
			if (strtod(optarg, &end) <= 0 || *end != '\0' ||
			    pc_phase_at_add(&o->bo.phases,
					    strtod(optarg, NULL)) < 0) {
				fprintf(stderr, "hunch %s: --phase-at needs a "
					"number of seconds > 0 (at most %d), "
					"got '%s'\n", cmd, PC_PHASE_AT_MAX,
					optarg);
				return -1;
			}
			break;
		case 's':
			o->seconds = strtod(optarg, &end);
			if (*end != '\0' || o->seconds < 0) {
				fprintf(stderr, "hunch %s: --seconds needs a "
					"number of seconds >= 0, got '%s'\n",
					cmd, optarg);
				return -1;
			}
			break;
		default:
			cli_opts_error(name, c, argv, longopts);
			return -1;
		}
	}
	return check_batch_only(o, cmd);
}

/* The dashboard's options from the command line's; with the runtime
 * library, the search's configuration (its errors: exit 1, nothing
 * started). */
static int dashboard_opts(const struct session_opts *o, const char *label,
			  char *const *argv, struct ui_opts *uo)
{
	*uo = (struct ui_opts){
		.label = label, .screenshot = o->screenshot,
		.rtlib = o->rtlib ? cli_paths_rtlib() : NULL,
		.journal = o->bo.journal, .no_journal = o->bo.no_journal,
		.report = o->bo.report, .argv = (const char *const *)argv,
		.follow = o->follow, .tree = o->tree,
	};
	if (!o->rtlib)
		return HUNCH_EXIT_OK;
	if (cli_check_load_config(o->bo.hypotheses, o->bo.sets, o->bo.nsets,
			    &uo->cfg) != HUNCH_EXIT_OK)
		return HUNCH_EXIT_USAGE;
	uo->config = cli_check_config_summary(uo->cfg);
	return HUNCH_EXIT_OK;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The configuration of a batch search, before anything runs: a usage
 * error must not leave a half-started program behind. */
static int batch_config(const struct session_opts *o, struct pc_config **c)
{
	if (!o->rtlib) {
		fprintf(stderr, "hunch: --batch searches with the runtime "
			"library: drop --no-rtlib\n");
		return HUNCH_EXIT_USAGE;
	}
	return cli_check_load_config(o->bo.hypotheses, o->bo.sets, o->bo.nsets,
				     c);
}

/* --batch: the consultant's search instead of the plain session. */
static int batch_launch(char **argv, const struct session_opts *o)
{
	struct src_live_launch lo = {
		.argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
	};
	struct batch_target t = { .label = o->label, .argv = argv };
	struct out_fwd fwd;
	struct hunch_err err = { 0 };
	struct pc_config *cfg;
	struct pc_source *src;
	int rc = batch_config(o, &cfg);

	if (rc != HUNCH_EXIT_OK)
		return rc;
	if ((lo.rtlib = cli_paths_rtlib()) == NULL) {
		pc_config_free(cfg);
		return HUNCH_EXIT_USAGE;
	}
	t.sigfd = SIGTICK_SIGNALS(run_signals, NULL);
	/* The journal wants the program's output: a forwarder passes it on
	 * and hands hunch a copy (out_forward.h).  Not when either stream
	 * is a terminal: the program would see a pipe instead (isatty,
	 * stdio buffering, colours), and it must not notice it is watched;
	 * then, without a journal, or if the forwarder cannot start, the
	 * program inherits hunch's stdout and stderr as before. */
	if (!o->bo.no_journal && !isatty(STDOUT_FILENO) &&
	    !isatty(STDERR_FILENO) && out_forward_start(&fwd) == 0) {
		t.fwd = &fwd;
		lo.stdout_fd = fwd.prog_fd[0];
		lo.stderr_fd = fwd.prog_fd[1];
	}
	rc = src_live_launch(&lo, &src, &err);
	if (rc == 0 && o->follow != 0)
		src_live_fork_set_follow(src, o->follow > 0);
	if (t.fwd != NULL)
		out_forward_launched(t.fwd);
	if (rc < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		if (t.fwd != NULL)
			out_forward_close(t.fwd);
		pc_config_free(cfg);
		return HUNCH_EXIT_TARGET;
	}
	t.pid = src_live_pid(src);
	rc = cli_batch_search(src, cfg, &o->bo, &t);
	close(t.sigfd);
	return rc;
}

/* The dashboard's options freed; where it could not use the terminal,
 * say so (the session goes on without it). */
static int after_dashboard(int rc, struct ui_opts *uo)
{
	json_decref(uo->config);
	if (rc == UI_FALLBACK)
		fprintf(stderr, "hunch: cannot use terminal '%s'; running "
			"without the dashboard\n", getenv("TERM"));
	return rc;
}

static int launch_session(char **argv, const struct session_opts *o)
{
	struct session s = { .o = o };
	struct src_live_launch lo = {
		.argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
	};
	struct hunch_err err = { 0 };

	if (o->batch)
		return batch_launch(argv, o);
	if (o->rtlib && (lo.rtlib = cli_paths_rtlib()) == NULL)
		return HUNCH_EXIT_TARGET;
	if (ui_session_wanted(o->batch)) {
		struct ui_opts uo;
		int rc = dashboard_opts(o, base_name(o->label), argv, &uo);

		if (rc != HUNCH_EXIT_OK)
			return rc;
		rc = after_dashboard(ui_session_launch(argv, &uo), &uo);
		if (rc != UI_FALLBACK)
			return rc;
	}
	s.sigfd = SIGTICK_SIGNALS(run_signals, NULL);
	if (src_live_launch(&lo, &s.src, &err) < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		return HUNCH_EXIT_TARGET;
	}
	if (o->follow != 0)
		src_live_fork_set_follow(s.src, o->follow > 0);
	s.tree = pc_res_tree_new();
	return session_run(&s);
}

int cli_run(int argc, char **argv)
{
	struct session_opts o = { .rtlib = true, .seconds = -1,
				   .bo.time_limit = -1 };

	if (parse_session(argc, argv, &o, "run") < 0)
		return HUNCH_EXIT_USAGE;
	if (optind >= argc) {
		fprintf(stderr, "hunch run: name the program to run: "
			"hunch run [options] [--] PROGRAM [ARGS...]\n");
		return HUNCH_EXIT_USAGE;
	}
	o.label = argv[optind];
	return launch_session(argv + optind, &o);
}

/* The process's name (/proc/PID/comm) for the dashboard's status. */
static const char *comm_of(pid_t pid)
{
	static char name[64];
	char path[64];
	FILE *f;

	snprintf(name, sizeof(name), "%d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fgets(name, sizeof(name), f) != NULL)
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	return name;
}

static int batch_attach(pid_t pid, const struct session_opts *o)
{
	struct batch_target t = { .label = o->label, .pid = pid };
	struct hunch_err err = { 0 };
	struct pc_config *cfg;
	struct pc_source *src;
	const char *rtlib;
	int rc = batch_config(o, &cfg);

	if (rc != HUNCH_EXIT_OK)
		return rc;
	if ((rtlib = cli_paths_rtlib()) == NULL) {
		pc_config_free(cfg);
		return HUNCH_EXIT_USAGE;
	}
	t.sigfd = SIGTICK_SIGNALS(run_signals, NULL);
	if (src_live_attach(pid, rtlib, &src, &err) < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		pc_config_free(cfg);
		return HUNCH_EXIT_TARGET;
	}
	if (o->follow != 0)
		src_live_fork_set_follow(src, o->follow > 0);
	if (o->tree)
		src_live_fork_adopt_tree(src);
	t.label = comm_of(pid);
	rc = cli_batch_search(src, cfg, &o->bo, &t);
	close(t.sigfd);
	return rc;
}

int cli_run_attach(int argc, char **argv)
{
	struct session_opts o = { .rtlib = true, .seconds = 0,
				   .bo.time_limit = -1 };
	struct session s = { .o = &o };
	struct hunch_err err = { 0 };
	const char *rtlib = NULL;
	char *end;
	long pid;

	if (parse_session(argc, argv, &o, "attach") < 0)
		return HUNCH_EXIT_USAGE;
	if (optind != argc - 1) {
		fprintf(stderr, "hunch attach: name one process id: "
			"hunch attach [options] PID (pgrep NAME or ps -e "
			"finds it)\n");
		return HUNCH_EXIT_USAGE;
	}
	pid = strtol(argv[optind], &end, 10);
	if (*end != '\0' || pid <= 0) {
		const char *a = argv[optind];

		/* A program's name instead of its pid: say how to find it. */
		if (isalpha((unsigned char)a[0]))
			fprintf(stderr, "hunch attach: '%s' is not a process "
				"id: give its number (pgrep %s lists the "
				"pids of programs named so)\n", a, a);
		else
			fprintf(stderr, "hunch attach: '%s' is not a process "
				"id: give a number > 0\n", a);
		return HUNCH_EXIT_USAGE;
	}
	o.label = argv[optind];
	if (o.batch)
		return batch_attach((pid_t)pid, &o);
	if (o.rtlib && (rtlib = cli_paths_rtlib()) == NULL)
		return HUNCH_EXIT_TARGET;
	if (ui_session_wanted(o.batch)) {
		struct ui_opts uo;
		int rc = dashboard_opts(&o, comm_of((pid_t)pid), NULL, &uo);

		if (rc != HUNCH_EXIT_OK)
			return rc;
		rc = after_dashboard(ui_session_attach((pid_t)pid, &uo), &uo);
		if (rc != UI_FALLBACK)
			return rc;
	}
	s.sigfd = SIGTICK_SIGNALS(run_signals, NULL);
	if (src_live_attach((pid_t)pid, rtlib, &s.src, &err) < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		return HUNCH_EXIT_TARGET;
	}
	if (o.follow != 0)
		src_live_fork_set_follow(s.src, o.follow > 0);
	if (o.tree)
		src_live_fork_adopt_tree(s.src);
	s.tree = pc_res_tree_new();
	return session_run(&s) == HUNCH_EXIT_TARGET ? HUNCH_EXIT_TARGET
						     : HUNCH_EXIT_OK;
}

int cli_run_demo(int argc, char **argv)
{
	struct session_opts o = {
		.rtlib = true, .where = true, .verbose = true, .seconds = -1,
		.label = "hunch-demo", .bo.time_limit = -1,
	};
	const char *demo;
	char *dargv[] = { NULL, "--seconds", "3", NULL };

	if (parse_session(argc, argv, &o, "demo") < 0 || optind < argc) {
		cli_help_usage();
		return HUNCH_EXIT_USAGE;
	}
	if ((demo = cli_paths_demo()) == NULL)
		return HUNCH_EXIT_TARGET;
	dargv[0] = (char *)demo;
	/* The dashboard shows the demo for longer: there is more to see
	 * than in the printed where axis. */
	if (o.batch) {
		dargv[2] = "10";
		fprintf(stderr, "hunch: no program named; hunting the bundled "
			"demo (%s --seconds 10)\n", demo);
		return launch_session(dargv, &o);
	}
	if (ui_session_wanted(o.batch)) {
		dargv[2] = "10";
		o.where = o.verbose = false;
		return launch_session(dargv, &o) == 0 ? HUNCH_EXIT_OK
						      : HUNCH_EXIT_TARGET;
	}
	fprintf(stderr, "hunch: no program named; running the bundled demo "
		"(%s --seconds 3)\n", demo);
	return launch_session(dargv, &o) == 0 ? HUNCH_EXIT_OK
					      : HUNCH_EXIT_TARGET;
}
