/*
 * ui_session.c - the dashboard's session loop (DESIGN §1: one thread,
 * one loop).
 *
 * One poll() over the terminal, a signalfd (SIGCHLD: ptrace news;
 * SIGWINCH: resize; SIGINT, SIGTERM, SIGHUP: detach cleanly and leave;
 * SIGTSTP/SIGCONT: suspend and come back), a timerfd tick at 4 Hz, and
 * the program's stdout and stderr pipes.  The source is pumped without
 * waiting (timeout 0) on SIGCHLD and on every tick, so a stopped or busy
 * target never holds the loop.  Keys are answered at once; everything
 * else is drawn at the next tick, so the screen changes at most four
 * times a second however fast the program talks.
 *
 * However the dashboard ends, the program is left correct: detached with
 * every byte restored when it still runs.  A program hunch launched still
 * writes into hunch's pipes after a detach, so hunch stays, without the
 * dashboard, to pass its output on until it ends, and returns its exit
 * status as `hunch run` does.
 */
#include "ui.h"
#include "sigtick.h"
#include "ui_session.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ui_consult.h"
#include "ui_findings.h"
#include "ui_panes.h"
#include "pc_search.h"
#include "ui_search.h"

#define TICK_MS 250

/* What the loop reads from its signalfd. */
static const int loop_signals[] = {
	SIGCHLD, SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT,
};
#define LOG_LINES 20000

struct loop {
	int sigfd, tfd;
	sigset_t old_mask;   /* before the dashboard blocked its signals */
	int ending_signal;   /* SIGINT/SIGTERM/SIGHUP that ended hunch */
	struct ui_consult c; /* the search, its journal (ui_consult.c) */
};

bool ui_session_wanted(bool batch)
{
	const char *term = getenv("TERM");

	return !batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
	       term != NULL && term[0] != '\0' && strcmp(term, "dumb") != 0;
}

static void ui_init(struct ui *u, const struct ui_opts *o)
{
	memset(u, 0, sizeof(*u));
	u->label = o->label;
	u->shot_path = o->screenshot;
	/* With a search, the dashboard opens on it and its findings. */
	u->active = u->main_pane = o->cfg != NULL ? UI_PANE_SEARCH :
				   UI_PANE_WHERE;
	u->find_on = o->cfg != NULL;
	u->t0 = ui_screen_now();
	ui_where_init(&u->where);
	ui_log_init(&u->log, LOG_LINES);
}

/* The target's news, then the consultant's pass (resources, search,
 * journal, the status line's search fields). */
static void pump(struct ui *u, struct loop *lp)
{
	struct src_live_status old = u->st;
	char note[1200];

	if (u->detached || u->st.ended)
		return;
	src_live_pump(u->src, 0, &u->st);
	while (src_live_debug_note(note, sizeof(note)))
		ui_log_add(u, UI_LOG_HUNCH, "%s", note);
	ui_consult_pump(u, &lp->c);
	if (memcmp(&old, &u->st, sizeof(old)) != 0)
		u->dirty |= UI_D_STATUS;
	if (u->st.ended && !old.ended) {
		u->t_end = ui_screen_now();
		if (u->st.killed)
			ui_log_add(u, UI_LOG_HUNCH, "%s (pid %d) was killed by "
				   "signal %d (SIG%s)%s", u->label, (int)u->pid,
				   u->st.signo, sigabbrev_np(u->st.signo) ?
				   sigabbrev_np(u->st.signo) : "?",
				   u->st.core ? ", core dumped" : "");
		else
			ui_log_add(u, UI_LOG_HUNCH, "%s (pid %d) exited with "
				   "status %d", u->label, (int)u->pid,
				   u->st.exit_code);
		ui_status_note(
			u, u->pc != NULL && u->pc->started
				   ? "the program has "
				     "ended: q quits and prints the findings"
				   : "the program has ended: q quits");
	} else if (u->st.stopped != old.stopped) {
		ui_log_add(u, UI_LOG_HUNCH, "%s (pid %d) %s", u->label,
			   (int)u->pid, u->st.stopped ? "stopped (job control)"
			   : "continued");
	}
	ui_findings_tick(u);
}

/* --- the loop ------------------------------------------------------- */

static void on_signals(struct ui *u, struct loop *lp, bool *pumpit)
{
	struct signalfd_siginfo si;

	while (read(lp->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD: *pumpit = true; break;
		case SIGWINCH: ui_screen_resize(u); break;
		case SIGTSTP: ui_screen_suspend(u); break;
		case SIGCONT:  /* after a stop not of our making, too */
			reset_prog_mode();
			ui_screen_resize(u);
			break;
		default:  /* SIGINT, SIGTERM, SIGHUP */
			lp->ending_signal = (int)si.ssi_signo;
			u->quit = true;
			break;
		}
	}
}

static void on_keys(struct ui *u)
{
	int ch;

	while (!u->quit && (ch = wgetch(stdscr)) != ERR)
		ui_keys_press(u, ch);
}

static void on_tick(struct ui *u, int tfd)
{
	uint64_t n;
	int second = (int)ui_status_elapsed_s(u);

	if (read(tfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	if (second != u->shown_second)
		u->dirty |= UI_D_STATUS;
}

static void run_loop(struct ui *u, struct loop *lp)
{
	struct pollfd p[5];

	while (!u->quit) {
		bool pumpit = false, keyed = false, ticked = false;
		int due = u->detached || u->st.ended ? -1 :
			  ui_consult_due_ms(u, &lp->c);
		int n;

		p[0] = (struct pollfd){ fileno(u->tty_in), POLLIN, 0 };
		p[1] = (struct pollfd){ lp->sigfd, POLLIN, 0 };
		p[2] = (struct pollfd){ lp->tfd, POLLIN, 0 };
		p[3] = (struct pollfd){ u->log.fd[0], POLLIN, 0 };
		p[4] = (struct pollfd){ u->log.fd[1], POLLIN, 0 };
		/* Woken for the next sample too: the source samples when
		 * pumped, and the search needs every period's sample. */
		n = poll(p, 5, due);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0)
			pumpit = true;
		if (p[1].revents)
			on_signals(u, lp, &pumpit);
		if (p[2].revents) {
			on_tick(u, lp->tfd);
			ticked = pumpit = true;
		}
		for (int i = 0; i < 2; i++)
			if (p[3 + i].revents)
				ui_log_read(u, i);
		if (pumpit)
			pump(u, lp);
		if (p[0].revents & (POLLHUP | POLLERR)) {
			lp->ending_signal = SIGHUP;  /* the terminal went away */
			u->quit = true;
		} else if (p[0].revents & POLLIN) {
			on_keys(u);
			keyed = true;
		}
		if (u->dirty && (keyed || ticked) && !u->quit)
			ui_layout_draw(u);
	}
}

/* --- ending ------------------------------------------------------------ */

static void leave_program(struct ui *u, struct loop *lp)
{
	struct hunch_err err = { 0 };

	if (u->st.ended || u->detached)
		return;
	if (!lp->ending_signal)
		ui_consult_journal_action(u, "quit", NULL, -1);
	ui_consult_stop(u, &lp->c);
	if (src_live_detach(u->src, &err) < 0) {
		ui_log_add(u, UI_LOG_HUNCH, "%s", err.msg);
		return;
	}
	u->detached = true;
	if (lp->ending_signal)
		ui_log_add(u, UI_LOG_HUNCH, "%s: detached from %s (pid %d), "
			   "which runs on", strsignal(lp->ending_signal),
			   u->label, (int)u->pid);
	else
		ui_log_add(u, UI_LOG_HUNCH, "detached from %s (pid %d), which "
			   "runs on", u->label, (int)u->pid);
	u->dirty |= UI_D_STATUS;
}

/* Copy what is left in the pipes to hunch's own stdout and stderr;
 * with `wait`, until the program closes them (it runs on, detached).
 * Returns the signal (SIGINT, SIGTERM, SIGHUP) that cut it short, or 0. */
static int forward_output(struct ui *u, const struct loop *lp, bool wait)
{
	char buf[16384];

	for (;;) {
		struct pollfd p[3] = {
			{ u->log.fd[0], POLLIN, 0 }, { u->log.fd[1], POLLIN, 0 },
			{ lp->sigfd, POLLIN, 0 },
		};
		struct signalfd_siginfo si;

		if (u->log.fd[0] < 0 && u->log.fd[1] < 0)
			return 0;
		if (poll(p, 3, wait ? -1 : 0) <= 0)
			return 0;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (!p[i].revents)
				continue;
			n = read(u->log.fd[i], buf, sizeof(buf));
			if (n > 0 && write(i ? 2 : 1, buf, (size_t)n) < 0)
				n = 0;
			if (n <= 0 && !(n < 0 && errno == EAGAIN)) {
				close(u->log.fd[i]);
				u->log.fd[i] = -1;
			}
		}
		while (read(lp->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM ||
			    si.ssi_signo == SIGHUP)
				return (int)si.ssi_signo;
	}
}

/* hunch must go now (a signal), but a program it launched still writes
 * into hunch's pipes and would die of SIGPIPE once they close: a child
 * (no ptrace, nothing else) keeps passing its output on until it ends.
 * Where the output cannot go any more (the terminal hung up), it is read
 * and dropped, so the program never blocks on a full pipe. */
static void forward_in_background(struct ui *u)
{
	char buf[16384];
	pid_t pid;

	if (u->log.fd[0] < 0 && u->log.fd[1] < 0)
		return;
	pid = fork();
	if (pid != 0)
		return;  /* hunch (or fork failed: then the pipes just close) */
	for (;;) {
		struct pollfd p[2] = {
			{ u->log.fd[0], POLLIN, 0 }, { u->log.fd[1], POLLIN, 0 },
		};

		if (p[0].fd < 0 && p[1].fd < 0)
			_exit(0);
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			_exit(1);
		for (int i = 0; i < 2; i++) {
			ssize_t n = p[i].revents ? read(p[i].fd, buf,
						       sizeof(buf)) : -1;

			if (n > 0 && write(i ? 2 : 1, buf, (size_t)n) < 0)
				continue;  /* dropped */
			if (p[i].revents && n <= 0 && errno != EINTR)
				u->log.fd[i] = -1;
		}
	}
}

/* A launched program, detached with `q y`: stay (without the dashboard)
 * to pass its output on, and return its exit status as `hunch run`
 * does; if hunch is told to go meanwhile, hand the output to a child. */
static int follow_detached(struct ui *u, struct loop *lp)
{
	int ws, sig;

	fprintf(stderr, "hunch: detached from %s (pid %d); its output "
		"follows until it ends\n", u->label, (int)u->pid);
	sig = forward_output(u, lp, true);
	if (sig != 0) {
		forward_in_background(u);
		return 128 + sig;
	}
	if (waitpid(u->pid, &ws, 0) == u->pid)
		return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return HUNCH_EXIT_OK;
}

/* What `hunch run` prints when the program ends, and its exit status. */
static int report_end(struct ui *u, struct loop *lp)
{
	const struct src_live_status *st = &u->st;

	if (u->detached && u->launched && lp->ending_signal == 0)
		return follow_detached(u, lp);
	forward_output(u, lp, false);
	if (u->launched)  /* still open: a child of the program has them */
		forward_in_background(u);
	if (u->detached) {
		fprintf(stderr, "hunch: %s%sdetached from %s (pid %d), which "
			"runs on%s\n", lp->ending_signal ?
			strsignal(lp->ending_signal) : "", lp->ending_signal ?
			": " : "", u->label, (int)u->pid, u->launched ?
			"; its output still comes here" : "");
		return lp->ending_signal ? 128 + lp->ending_signal : 0;
	}
	if (st->killed) {
		fprintf(stderr, "hunch: %s (pid %d) was killed by signal %d "
			"(%s)%s\n", u->label, (int)u->pid, st->signo,
			sigabbrev_np(st->signo) ? sigabbrev_np(st->signo) : "?",
			st->core ? ", core dumped" : "");
		return 128 + st->signo;
	}
	fprintf(stderr, "hunch: %s (pid %d) exited with status %d\n",
		u->label, (int)u->pid, st->exit_code);
	return st->exit_code;
}

/* Why the search ended, for the journal's end record. */
static const char *end_reason(const struct ui *u, const struct loop *lp)
{
	if (u->st.ended)
		return "target ended";
	if (lp->ending_signal)
		return "interrupted";
	return u->detached ? "detached" : "search ended";
}

static int finish(struct ui *u, struct loop *lp)
{
	int rc;

	leave_program(u, lp);
	if (u->shot_path != NULL) {
		u->dirty = UI_D_ALL;
		ui_layout_draw(u);
		if (ui_shot_write(u, u->shot_path) < 0)
			u->shot_path = NULL;  /* reported below */
	}
	ui_screen_end(u);
	/* The findings, as the batch report begins, where the dashboard
	 * was (not to a terminal that hung up). */
	if (lp->ending_signal != SIGHUP)
		ui_consult_print_findings(u, &lp->c, stdout);
	/* The search is over: its journal is closed before hunch perhaps
	 * follows a detached program's output to its end. */
	ui_consult_close(u, &lp->c, end_reason(u, lp));
	rc = report_end(u, lp);
	pc_res_tree_free(u->tree);
	ui_where_free(&u->where);
	ui_log_free(&u->log);
	ui_panes_free(u);
	close(lp->sigfd);
	close(lp->tfd);
	return rc;
}

/* --- starting ------------------------------------------------------- */

static int start(struct ui *u, struct loop *lp)
{
	lp->sigfd = SIGTICK_SIGNALS(loop_signals, &lp->old_mask);
	lp->tfd = sigtick_timer(TICK_MS);
	if (lp->sigfd < 0 || lp->tfd < 0 || ui_screen_init(u) < 0) {
		/* the plain session takes over: as if we had never come */
		if (lp->sigfd >= 0)
			close(lp->sigfd);
		if (lp->tfd >= 0)
			close(lp->tfd);
		sigprocmask(SIG_SETMASK, &lp->old_mask, NULL);
		pc_config_free(lp->c.cfg);
		ui_where_free(&u->where);
		ui_log_free(&u->log);
		ui_panes_free(u);
		return UI_FALLBACK;
	}
	ui_layout(u);
	u->starting = true;
	ui_layout_draw(u);
	return 0;
}

/* An attached program keeps its own stdout and stderr; when they are
 * this terminal, what it prints lands on the dashboard (Ctrl-L redraws). */
static void warn_shared_terminal(struct ui *u)
{
	char path[64], target[256], *mine = ttyname(STDOUT_FILENO);

	for (int fd = 1; fd <= 2 && mine != NULL; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)u->pid, fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, mine) == 0) {
			ui_log_add(u, UI_LOG_HUNCH, "warning: %s writes to this "
				   "terminal (fd %d); its output can mar the "
				   "screen (Ctrl-L redraws)", u->label, fd);
			return;
		}
	}
}

/* The program is stopped at main (or attached): fill the where axis,
 * let it run, and watch. */
static int watch(struct ui *u, struct loop *lp)
{
	struct hunch_err err = { 0 };

	u->pid = src_live_pid(u->src);
	u->tree = pc_res_tree_new();
	ui_consult_open(u, &lp->c);
	ui_consult_pump(u, &lp->c);
	u->starting = false;
	ui_log_add(u, UI_LOG_HUNCH, "%s %s (pid %d): %zu resources, %zu "
		   "functions", u->launched ? "launched" : "attached to",
		   u->label, (int)u->pid, pc_res_tree_count(u->tree) - 1,
		   pc_res_count_kind(u->tree, 1, PC_RES_FUNCTION));
	if (!u->launched)
		warn_shared_terminal(u);
	if (!src_live_rtlib_ready(u->src))
		ui_log_add(u, UI_LOG_HUNCH, "no runtime library in the "
			   "program (--no-rtlib)");
	if (src_live_resume(u->src, &err) < 0)
		ui_log_add(u, UI_LOG_HUNCH, "%s", err.msg);
	u->t0 = ui_screen_now();
	lp->c.search_at = u->t0 + UI_SETTLE_S;
	u->dirty = UI_D_ALL;
	ui_layout_draw(u);
	run_loop(u, lp);
	return finish(u, lp);
}

static int fail(struct ui *u, struct loop *lp, const struct hunch_err *err)
{
	ui_screen_end(u);
	fprintf(stderr, "hunch: %s\n", err->msg);
	pc_config_free(lp->c.cfg);
	ui_where_free(&u->where);
	ui_log_free(&u->log);
	ui_panes_free(u);
	close(lp->sigfd);
	close(lp->tfd);
	return HUNCH_EXIT_TARGET;
}

int ui_session_launch(char *const *argv, const struct ui_opts *o)
{
	struct ui u;
	struct loop lp = { 0 };
	struct src_live_launch lo = {
		.argv = argv, .rtlib = o->rtlib, .stdin_fd = -1,
	};
	struct hunch_err err = { 0 };
	int out[2], errp[2], rc;

	ui_init(&u, o);
	lp.c.cfg = o->cfg;
	lp.c.o = o;
	u.launched = true;
	if ((rc = start(&u, &lp)) < 0)
		return rc;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		hunch_err_set(&err, -errno,
			      "cannot make pipes for the program's "
			      "output: %s",
			      strerror(errno));
		return fail(&u, &lp, &err);
	}
	/* The terminal is the dashboard's: the program reads /dev/null. */
	lo.stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	lo.stdout_fd = out[1];
	lo.stderr_fd = errp[1];
	rc = src_live_launch(&lo, &u.src, &err);
	if (rc == 0 && o->follow != 0)
		src_live_fork_set_follow(u.src, o->follow > 0);
	close(out[1]);
	close(errp[1]);
	close(lo.stdin_fd);
	u.log.fd[0] = out[0];
	u.log.fd[1] = errp[0];
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	if (rc < 0)
		return fail(&u, &lp, &err);
	return watch(&u, &lp);
}

int ui_session_attach(pid_t pid, const struct ui_opts *o)
{
	struct ui u;
	struct loop lp = { 0 };
	struct hunch_err err = { 0 };
	int rc;

	ui_init(&u, o);
	lp.c.cfg = o->cfg;
	lp.c.o = o;
	if ((rc = start(&u, &lp)) < 0)
		return rc;
	if (src_live_attach(pid, o->rtlib, &u.src, &err) < 0)
		return fail(&u, &lp, &err);
	if (o->follow != 0)
		src_live_fork_set_follow(u.src, o->follow > 0);
	if (o->tree)
		src_live_fork_adopt_tree(u.src);
	rc = watch(&u, &lp);
	return rc == HUNCH_EXIT_TARGET ? rc : HUNCH_EXIT_OK;
}
