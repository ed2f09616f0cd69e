/*
 * cli_batch.c - batch mode (see cli_batch.h).
 *
 * One loop, as the plain session's: the signalfd wakes it for ptrace
 * events and hunch's own signals, and otherwise it sleeps until the
 * live source's next sample is due.  Every pass pumps the source (which
 * samples when due) and ticks the consultant, which polls the source for
 * everything itself.
 *
 * At the end the instrumentation is removed first, so whatever happens
 * next (waiting for a launched program to finish, detaching, killing)
 * the program runs its own code.  A launched program is waited for
 * before the report is printed, so that its output and the report do
 * not interleave on stdout; with a journal its output goes through a
 * forwarder (out_forward.h), read to its end before the report too.
 *
 * stderr stays short: one line per new finding (pc_findings.h) as the
 * search concludes it, and a progress line (rewritten in place on a
 * terminal, a line every few seconds otherwise).  The search's event
 * log goes to the journal as `log` records, and to stderr with -v.
 */
#include "cli_batch.h"
#include "clock_mono.h"
#include "sigtick.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "jnl_path.h"
#include "jnl_source.h"
#include "out_forward.h"
#include "pc_findings.h"
#include "pc_procend.h"
#include "pc_report.h"
#include "pc_search.h"
#include "pc_steer.h"
#include "src_live.h"

/* How often a progress line reports cost and experiments: a new line
 * when stderr is not a terminal, the line rewritten when it is. */
#define PROGRESS_EVERY_S 4.0
#define PROGRESS_TTY_EVERY_S 0.5
/* How often the findings are grouped again to tell the new ones. */
#define FINDINGS_EVERY_S 0.2
/* The longest sleep of the loop: bounds how late a time limit is seen. */
#define MAX_WAIT_MS 50
/* After the program's end, how long the forwarder may stay silent before
 * the report goes out anyway (a child of the program holds its pipes). */
#define DRAIN_IDLE_MS 1000
/* How long a launched program runs before the search starts (start). */
#define SETTLE_MS 200

struct batch {
	const struct batch_opts *o;
	const struct batch_target *t;
	struct pc_source *live, *src;   /* src: live, or its journal wrapper */
	struct jnl_writer *jw;
	struct pc_consult *pc;
	struct pc_restree *res;
	struct src_live_status st;
	double start, last_progress, last_findings;
	bool tty;                       /* stderr is a terminal */
	bool progress_shown;            /* a progress line is on it, open */
	bool following;                 /* complete, the job followed on */
	struct pc_findings_told told;
	int nfindings;
	struct pc_phase_at phases;      /* --phase-at, still to start */
	const char *stop;               /* why hunch stopped the search */
	int signo;                      /* hunch's ending signal, or 0 */
	json_t *config;                 /* files loaded, differences */
};

/* Before a line of its own: the open progress line is wiped. */
static void clear_progress(struct batch *b)
{
	if (b->progress_shown)
		fputs("\r\033[K", stderr);
	b->progress_shown = false;
}

/* The search's event log: always journaled; on stderr with -v, without
 * the consultant's own "+T) " stamp (the line has its time). */
static void on_log(void *arg, double t, const char *line)
{
	struct batch *b = arg;
	const char *text = line;

	if (b->jw != NULL) {
		json_t *o = json_pack("{s:s, s:f}", "text", line, "at", t);

		jnl_write_json(b->jw, "log", jnl_write_ts_now(b->jw), o);
		json_decref(o);
	}
	if (!b->o->verbose)
		return;
	if (line[0] == '+' && strstr(line, ") ") != NULL)
		text = strstr(line, ") ") + 2;
	clear_progress(b);
	fprintf(stderr, "hunch: %6.1f s  %s\n", t, text);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A launched program's argv with the program as the user named it (the
 * label; see command_of), for the journal's header; NULL if attached. */
static const char **named_argv(const struct batch_target *t)
{
	const char **v;
	size_t n = 0;

	if (t->argv == NULL)
		return NULL;
	while (t->argv[n] != NULL)
		n++;
	v = calloc(n + 1, sizeof(*v));
	if (v == NULL)
		abort();
	for (size_t i = 0; i < n; i++)
		v[i] = i ? t->argv[i] : t->label;
	return v;
}

/* The journal, unless --no-journal; a journal that cannot be opened is
 * a warning: the search is worth running without it. */
static void open_journal(struct batch *b, const struct pc_config *cfg)
{
	struct jnl_choice c = { .path = b->o->journal,
				.disabled = b->o->no_journal };
	const char **argv = named_argv(b->t);
	struct jnl_header h = {
		.program = base_name(b->t->label),
		.argv = argv,
		.pid = (int)b->t->pid, .mode = "batch",
	};
	struct jnl_writer_opts wo = { 0 };
	struct hunch_err err = { 0 };
	json_t *hyp, *files, *tun;

	/* The replay then uses these very documents and values. */
	pc_steer_jnl_header_config(cfg, &hyp, &files, &tun);
	h.hypotheses = hyp;
	h.hypotheses_files = files;
	h.tunables = tun;
	b->config = cli_check_config_summary(cfg);
	h.config = b->config;
	clock_gettime(CLOCK_REALTIME, &h.start_wall);
	h.start_mono_ns = clock_mono_ns();
	if (jnl_path_open_for_search(&b->jw, &c, &h, &wo, getenv, &err) < 0) {
		fprintf(stderr, "hunch: no journal: %s\n", err.msg);
		b->jw = NULL;
	}
	json_decref(hyp);
	json_decref(files);
	json_decref(tun);
	free(argv);
	b->src = b->live;
	if (b->jw != NULL) {
		b->src = jnl_source_wrap(b->live, b->jw, (int)b->t->pid);
		fprintf(stderr, "hunch: journal %s\n",
			jnl_write_path(b->jw));
	}
}

/* The program's output so far into the journal (batch mode with a
 * forwarder: out_forward.h). */
static void journal_output(struct batch *b)
{
	if (b->t->fwd != NULL)
		out_forward_pump(b->t->fwd, b->jw);
}

static void progress(struct batch *b)
{
	double now = clock_mono_s();

	if (now - b->last_progress < (b->tty ? PROGRESS_TTY_EVERY_S :
				      PROGRESS_EVERY_S))
		return;
	b->last_progress = now;
	clear_progress(b);
	fprintf(stderr, "hunch: %6.1f s  %d finding%s; %d experiments active, "
		"%d pending, %d run; cost %.2f%% (peak %.2f%%)%s",
		now - b->start, b->nfindings, b->nfindings == 1 ? "" : "s",
		b->pc->nactive, b->pc->npending, b->pc->runs,
		100 * b->pc->observed, 100 * b->pc->peak_observed,
		b->tty ? "" : "\n");
	b->progress_shown = b->tty;
}

/* One line per finding the search has not told yet. */
static void tell_findings(struct batch *b)
{
	struct pc_findings fs = { 0 };
	double now = clock_mono_s();
	char line[1024];

	if (now - b->last_findings < FINDINGS_EVERY_S)
		return;
	b->last_findings = now;
	pc_findings_build(b->pc, b->pc->global, &fs);
	for (size_t i = 0; i < fs.n; i++) {
		if (!pc_findings_text_tell(&b->told, b->pc->global, &fs.f[i]))
			continue;
		b->nfindings++;
		clear_progress(b);
		fprintf(stderr, "hunch: %6.1f s  finding: %s\n", b->pc->now,
			pc_findings_text_line(b->pc, &fs.f[i], line,
					      sizeof(line)));
	}
	pc_findings_free(&fs);
}

/* A launched job (the program alone too: it may fork workers later),
 * or an attached one whose children are followed (--follow) under a
 * time limit, is followed to its end after its search completed (until
 * then, or --time-limit): the report is read after the job, and must
 * give each process's real end, not "running" for the ones that
 * outlived the search, and processes that start meanwhile are
 * searched.  The consultant
 * keeps ticking, so the ends reach the report and the journal (the
 * replay plays the same ticks).  --kill-at-end asks not to wait. */
static bool follow_job(struct batch *b)
{
	/* an attached program: only when its children are followed and a
	 * time limit ends the wait (a server would never end it) */
	if ((b->t->argv == NULL && (b->o->time_limit < 0 ||
				    !src_live_fork_following(b->live))) ||
	    b->o->kill_at_end || !pc_procend_job_lives(b->pc))
		return false;
	if (!b->following) {
		b->following = true;
		clear_progress(b);
		fprintf(stderr, "hunch: %6.1f s  search complete; following "
			"the job until its processes end%s\n",
			clock_mono_s() - b->start, b->o->time_limit >= 0 ?
			" or the time limit" : "");
	}
	return true;
}

/* Whether the search should stop now, and why (b->stop). */
static bool search_done(struct batch *b)
{
	if (pc_consult_ended(b->pc) || b->st.ended)
		return true;  /* the consultant says how the target ended */
	if (b->o->time_limit >= 0 &&
	    clock_mono_s() - b->start >= b->o->time_limit) {
		b->stop = "time limit";
		return true;
	}
	/* A phase still to start has its search to run: idle until then
	 * is not the end. */
	if (!pc_consult_idle(b->pc) || pc_phase_at_pending(&b->phases))
		return false;
	return !follow_job(b);
}

static void search_loop(struct batch *b)
{
	struct pollfd pfd = { .fd = b->t->sigfd, .events = POLLIN };

	for (;;) {
		int due = src_live_due_ms(b->live);
		char note[1200];

		src_live_pump(b->live, 0, &b->st);
		while (src_live_debug_note(note, sizeof(note))) {
			clear_progress(b);
			fprintf(stderr, "hunch: %s\n", note);
		}
		journal_output(b);
		pc_consult_tick(b->pc);
		pc_phase_at_live(&b->phases, b->pc, clock_mono_s() - b->start, b->jw);
		if (b->jw != NULL)
			jnl_write_flush(b->jw);
		tell_findings(b);
		if (search_done(b))
			return;
		progress(b);
		if (poll(&pfd, 1, due < 0 || due > MAX_WAIT_MS ? MAX_WAIT_MS
			 : due) > 0 && (b->signo = sigtick_read_ending(b->t->sigfd))) {
			b->stop = "interrupted";
			return;
		}
	}
}

/* Wait for a launched program to end by itself (hunch's own ending
 * signal stops the wait: then it is detached and runs on). */
static void wait_for_end(struct batch *b)
{
	struct pollfd pfd = { .fd = b->t->sigfd, .events = POLLIN };

	while (!b->st.ended && b->signo == 0) {
		src_live_pump(b->live, 0, &b->st);
		journal_output(b);
		if (b->st.ended)
			break;
		if (poll(&pfd, 1, 200) > 0)
			b->signo = sigtick_read_ending(b->t->sigfd);
	}
}

/* The program as the user asked: attached ones detached, launched ones
 * left to finish or killed (--kill-at-end). */
static void leave_target(struct batch *b)
{
	struct hunch_err err = { 0 };

	src_live_metrics_stop(b->live);
	if (b->st.ended)
		return;
	if (b->t->argv != NULL && b->o->kill_at_end) {
		src_live_kill(b->live);
		while (!b->st.ended) {
			src_live_pump(b->live, 100, &b->st);
			journal_output(b);
		}
		return;
	}
	if (b->t->argv != NULL && b->signo == 0) {
		fprintf(stderr, "hunch: search over; waiting for %s to finish "
			"(--kill-at-end does not wait)\n", b->t->label);
		wait_for_end(b);
	}
	if (!b->st.ended && src_live_detach(b->live, &err) < 0)
		fprintf(stderr, "hunch: %s\n", err.msg);
	else if (!b->st.ended)
		fprintf(stderr, "hunch: detached from %s (pid %d), which runs "
			"on\n", b->t->label, (int)b->t->pid);
}

static void say_end(const struct batch *b)
{
	const struct src_live_status *st = &b->st;

	if (!st->ended || b->t->argv == NULL)
		return;
	if (st->killed)
		fprintf(stderr, "hunch: %s (pid %d) was killed by signal %d "
			"(%s)\n", b->t->label, (int)b->t->pid, st->signo,
			sigabbrev_np(st->signo) ? sigabbrev_np(st->signo)
						: "?");
	else
		fprintf(stderr, "hunch: %s (pid %d) exited with status %d\n",
			b->t->label, (int)b->t->pid, st->exit_code);
}

/* The target as reports name it: a launched program's command line
 * with the program as the user named it (the label: "hunch-demo" for
 * the bundled demo), as the replay rebuilds it from the journal's argv
 * (so both reports agree); or the attached program. */
static char *command_of(const struct batch_target *t)
{
	size_t n = 0;

	while (t->argv != NULL && t->argv[n + 1] != NULL)
		n++;
	return cli_quote_argv(t->label,
			      t->argv ? (const char *const *)t->argv + 1 : NULL,
			      n);
}

/* Text on stdout; JSON to --report.  A report that cannot be written is
 * a setup error (exit 1): the search's result would be lost silently.
 * A search that could not test a top-level hypothesis is incomplete
 * (exit 3): a script must not take it for "no bottleneck found". */
static int write_reports(struct batch *b)
{
	char *cmd = command_of(b->t);
	struct pc_report_meta m = {
		.target = cmd ? cmd : b->t->label, .pid = (int)b->t->pid,
		.mode = b->t->argv ? "run" : "attach", .stop = b->stop,
		.config = b->config,
	};
	FILE *f;
	int rc = HUNCH_EXIT_OK;

	fflush(stdout);
	errno = 0;
	pc_report_text(b->pc, &m, stdout);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		/* The reader went away (`| head`): hunch ignores SIGPIPE
		 * (main.c), so it is told here, not killed mid-search. */
		bool kept = b->jw != NULL && jnl_write_error(b->jw) == NULL;

		fprintf(stderr, "hunch: cannot write the report to standard "
			"output: %s%s%s\n", strerror(errno ? errno : EIO),
			kept ? "; the journal keeps the search: hunch replay "
			"--batch " : "", kept ? jnl_write_path(b->jw) : "");
		rc = HUNCH_EXIT_USAGE;
	} else if (pc_report_incomplete(b->pc, &m) > 0)
		rc = HUNCH_EXIT_INCOMPLETE;
	if (b->o->report == NULL) {
		free(cmd);
		return rc;
	}
	f = fopen(b->o->report, "w");
	if (f == NULL || pc_report_write_json(b->pc, &m, f) < 0) {
		fprintf(stderr, "hunch: cannot write the report %s: %s\n",
			b->o->report, strerror(errno));
		rc = HUNCH_EXIT_USAGE;
	}
	if (f != NULL && fclose(f) != 0)
		rc = HUNCH_EXIT_USAGE;
	free(cmd);
	return rc;
}

/* Let a launched program run SETTLE_MS (attached ones already run). */
static void settle(struct batch *b)
{
	double until = clock_mono_s() + SETTLE_MS / 1000.0;

	while (b->t->argv != NULL && !b->st.ended && clock_mono_s() < until) {
		src_live_pump(b->live, 10, &b->st);
		journal_output(b);
	}
}

static int start(struct batch *b, struct pc_config *cfg)
{
	struct hunch_err err = { 0 };

	if (src_live_metrics_start(b->live, cfg, &err) < 0) {
		fprintf(stderr, "hunch: cannot measure %s: %s\n", b->t->label,
			err.msg);
		return HUNCH_EXIT_USAGE;
	}
	open_journal(b, cfg);
	b->res = pc_res_tree_new();
	b->pc = pc_consult_new(cfg, b->src, b->res);
	pc_consult_set_log(b->pc, on_log, b);
	/* The program runs a moment before the first enable.  Measured on
	 * the demo: start-function timers enabled while the program is
	 * stopped at main miss main's whole activation (cpu_inclusive read
	 * 0.2 CPUs where ps saw 0.9), while enabled later the engine's
	 * catchup counts main from then on. */
	if (src_live_resume(b->live, &err) < 0) {
		fprintf(stderr, "hunch: %s\n", err.msg);
		return HUNCH_EXIT_TARGET;
	}
	settle(b);
	if (pc_consult_start(b->pc) < 0) {
		fprintf(stderr, "hunch: the search could not start\n");
		return HUNCH_EXIT_USAGE;
	}
	return HUNCH_EXIT_OK;
}

/* The journal's end reason (docs/journal-format.md, `end`): the replay
 * reports "stopped (time limit)" from "time_limit", as the live search
 * did. */
static const char *end_reason(const struct batch *b)
{
	if (b->stop != NULL && strcmp(b->stop, "time limit") == 0)
		return "time_limit";
	if (b->stop != NULL)
		return "signal";
	if (b->st.ended)
		return b->st.killed ? "target_killed" : "target_exited";
	return b->t->argv ? "search_ended" : "detached";
}

static void finish(struct batch *b, struct pc_config *cfg)
{
	if (b->t->fwd != NULL) {
		out_forward_pump(b->t->fwd, b->jw);
		out_forward_close(b->t->fwd);  /* the forwarder runs on alone */
	}
	if (b->jw != NULL) {
		jnl_write_end(b->jw, jnl_write_ts_now(b->jw), end_reason(b),
			      NULL);
		jnl_source_unwrap(b->src);
		jnl_write_close(b->jw, NULL);
	}
	b->live->ops->close(b->live);
	pc_consult_free(b->pc);
	pc_res_tree_free(b->res);
	json_decref(b->config);
	pc_config_free(cfg);
}

int cli_batch_search(struct pc_source *live, struct pc_config *cfg,
		     const struct batch_opts *o,
		     const struct batch_target *t)
{
	struct batch b = { .o = o, .t = t, .live = live,
			   .phases = o->phases };
	int rc;

	b.start = b.last_progress = clock_mono_s();
	b.last_findings = -1;
	b.tty = isatty(STDERR_FILENO);
	fprintf(stderr, "hunch: searching %s (pid %d)%s\n", t->label,
		(int)t->pid, o->time_limit >= 0 ? " with a time limit" : "");
	rc = start(&b, cfg);
	if (rc == HUNCH_EXIT_OK)
		search_loop(&b);
	if (b.pc != NULL && rc == HUNCH_EXIT_OK) {
		b.last_findings = -1;   /* what the last tick concluded */
		tell_findings(&b);
	}
	clear_progress(&b);
	if (b.pc != NULL && rc == HUNCH_EXIT_OK)
		fprintf(stderr, "hunch: %6.1f s  search %s; %d experiments "
			"run, peak cost %.2f%%\n", clock_mono_s() - b.start,
			b.stop ? b.stop : "complete", b.pc->runs,
			100 * b.pc->peak_observed);
	leave_target(&b);
	/* The program's output comes before the report: once the forwarder
	 * has sent its last copy, all of it has been written out. */
	if (t->fwd != NULL && b.st.ended)
		out_forward_drain(t->fwd, b.jw, DRAIN_IDLE_MS);
	say_end(&b);
	if (rc == HUNCH_EXIT_OK)
		rc = write_reports(&b);
	finish(&b, cfg);
	pc_findings_text_told_free(&b.told);
	return rc;
}
