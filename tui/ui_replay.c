/*
 * ui_replay.c - the dashboard over a recorded search (see ui_replay.h).
 *
 * The replay clock: while playing, each real tick (100 ms) moves the
 * replay time on by the real time passed times the speed (0.5x to
 * 100x), and the consultant is ticked over every recorded tick up to
 * it, exactly as `hunch replay --batch` ticks it.  Pause stops the clock.
 * A seek forward plays on to the target time at once.  A seek backward
 * restores the latest checkpoint before the target (src_replay_ckpt.h:
 * the consultant, the tree and the source as they were at a tick) and
 * plays on from there: the search is deterministic, so the state at
 * time t is the same whichever way it was reached.  Checkpoints are
 * taken while the search shown is the recording's own; a key that
 * steers it (an experiment, a metric, a tunable, a reload) stops that
 * until the next seek back, and one that changes the configuration
 * drops them all (the next backward seek plays from the start again,
 * under the new configuration).  The log is given back from an archive
 * of the recording's lines.  The Histograms pane's curves are view
 * state: kept across seeks, enabled again in the search shown.
 * bench/journal/README.md has the times.
 *
 * The loop is the live dashboard's (ui_session.c) without a program:
 * one poll() over the terminal, a signalfd (SIGWINCH, SIGINT, SIGTERM,
 * SIGHUP, SIGTSTP, SIGCONT) and a timerfd.
 */
#include "ui.h"
#include "sigtick.h"
#include "ui_replay.h"
#include "ui_panes.h"
#include "ui_consult.h"
#include "ui_search.h"
#include "ui_session.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "pc_report.h"
#include "pc_steer.h"
#include "pc_search.h"
#include "src_replay.h"
#include "src_replay_ckpt.h"
#include "ui_replay_int.h"

#define TICK_MS 100

/* What the loop reads from its signalfd. */
static const int loop_signals[] = {
	SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT,
};

static const double speeds[] = { 0.5, 1, 2, 5, 10, 20, 50, 100 };
#define NSPEEDS (sizeof(speeds) / sizeof(speeds[0]))

/* --- the consultant at the replay time ------------------------------- */

/* What the journal could not show, at the top of the log. */
static void journal_notes(struct ui *u)
{
	struct src_replay *rp = u->replay->o->rp;

	if (!src_replay_indexed(rp)) {   /* the rest: index_done() */
		ui_replay_seek_log(u, UI_LOG_HUNCH,
				   "replaying %s: %.1f s (indexing it "
				   "while it plays)",
				   u->replay->o->journal, u->replay->t_last);
		return;
	}
	ui_replay_seek_log(u, UI_LOG_HUNCH, "replaying %s: %zu ticks, %.1f s",
			   u->replay->o->journal, src_replay_ticks(rp),
			   u->replay->t_last);
	for (size_t i = 0; i < src_replay_nbad(rp); i++)
		ui_replay_seek_log(u, UI_LOG_HUNCH, "skipped: %s",
				   src_replay_bad(rp, i));
	if (src_replay_nbad_total(rp) > src_replay_nbad(rp))
		ui_replay_seek_log(u, UI_LOG_HUNCH, "skipped: %zu more lines",
				   src_replay_nbad_total(rp) -
					   src_replay_nbad(rp));
	if (src_replay_end_message(rp))
		ui_replay_seek_log(u, UI_LOG_HUNCH, "%s",
				   src_replay_end_message(rp));
}

/* The status line's search fields, from the consultant: the words of
 * the live dashboard's and the Search pane's header (ui_search.c). */
static void fill_search(struct ui *u)
{
	u->search = ui_consult_status(u, ui_search_shown(u));
}

/* Threads alive at the replay time; the pid, when the header has none
 * (a launched program), from the first process the journal found. */
static void threads_now(struct ui *u)
{
	pc_res_id p = pc_res_tree_hierarchy(u->tree, "Process");
	const struct pc_res *r = pc_res_get(u->tree, p);

	u->st.nthreads = (int)pc_res_count_kind(u->tree, p, PC_RES_THREAD);
	if (u->pid == 0 && r != NULL && r->nchildren > 0)
		u->pid = (pid_t)pc_res_get(u->tree, r->children[0])->tag;
}

/* Every pane shows new data. */
static void changed(struct ui *u)
{
	ui_where_changed(u);
	ui_search_changed(u);   /* its rows are rebuilt at the next draw */
	ui_hist_tick(u);        /* the curves gained data */
	threads_now(u);
	fill_search(u);
	u->dirty = UI_D_ALL;
}

static void free_search(struct ui *u)
{
	if (u->pc) {
		pc_consult_free(u->pc);
		pc_steer_forget(u->pc);   /* what hypothesis reloads kept */
	}
	if (u->tree)
		pc_res_tree_free(u->tree);
	u->pc = NULL;
	u->tree = NULL;
}

/* A fresh consultant at the start of the journal, its first tick
 * played (pc_consult_start asks the source for the time).  Checkpoints
 * of the search before (another tree, maybe other tunables) go. */
static void rebuild(struct ui *u)
{
	struct ui_replay *x = u->replay;
	pc_res_id cur = u->where.cur_id;
	struct pc_restree *tree = pc_res_tree_new();
	/* Made while the old search still exists, so that it has another
	 * address: the panes tell a new search by its pointer. */
	struct pc_consult *pc = pc_consult_new(x->o->cfg,
					       src_replay_source(x->o->rp), tree);
	double c0 = ui_replay_seek_cpu_now();

	x->moves++;
	free_search(u);
	src_replay_ckpt_clear(x->ck);
	ui_replay_seek_arch_free(x);
	x->nlines = 0;
	x->pristine = true;
	src_replay_rewind(x->o->rp);
	ui_log_free(&u->log);
	ui_log_init(&u->log, LOG_LINES);
	ui_where_free(&u->where);
	ui_where_init(&u->where);
	u->where.cur_id = cur;
	x->summed_up = false;
	journal_notes(u);
	u->tree = tree;
	u->pc = pc;
	ui_hist_new_search(u);
	pc_consult_set_log(pc, ui_replay_seek_on_log, u);
	if (src_replay_ticks_to(x->o->rp, -1) > 0) {
		pc_consult_start(u->pc);
		src_replay_actions(x->o->rp, u->pc);
		ui_replay_seek_checkpoint(u, ui_replay_seek_cpu_now() - c0);
	}
	changed(u);
}

/* The search as it was at checkpoint k: the consultant, the source and
 * the tree from the checkpoint, the log from the archive.  False when
 * k is ahead of the tree (nothing changed then). */
static bool restore(struct ui *u, const struct rp_ckpt *k)
{
	struct ui_replay *x = u->replay;
	pc_res_id cur = u->where.cur_id;
	size_t n = src_replay_ckpt_user(k);
	struct pc_consult *pc = src_replay_ckpt_restore(x->ck, k);

	if (pc == NULL)
		return false;
	x->moves++;
	pc_consult_free(u->pc);   /* after: the new one has another address */
	pc_steer_forget(u->pc);
	u->pc = pc;
	ui_hist_new_search(u);
	pc_consult_set_log(pc, ui_replay_seek_on_log, u);
	ui_log_free(&u->log);
	ui_log_init(&u->log, LOG_LINES);
	for (size_t i = n > LOG_LINES ? n - LOG_LINES : 0; i < n; i++)
		ui_log_add(u, x->arch[i].kind, "%s", x->arch[i].text);
	x->nlines = n;
	x->pristine = true;
	ui_where_free(&u->where);
	ui_where_init(&u->where);
	u->where.cur_id = cur;
	x->summed_up = false;
	changed(u);
	return true;
}

/* The time of the last tick played (before any: 0). */
static double played_now(const struct ui *u)
{
	long t = src_replay_tick(u->replay->o->rp);

	return t < 0 ? 0 : src_replay_tick_now(u->replay->o->rp, (size_t)t);
}

/* Play one more recorded tick; false at the end of the journal. */
static bool step_tick(struct ui *u)
{
	struct src_replay *rp = u->replay->o->rp;
	double c0;

	if (src_replay_ticks_to(rp, -1) == 0 || src_replay_done(rp) ||
	    pc_consult_ended(u->pc))
		return false;
	c0 = ui_replay_seek_cpu_now();
	u->replay->moves++;
	pc_consult_tick(u->pc);
	src_replay_actions(rp, u->pc);   /* the user's pauses, phases */
	ui_replay_seek_checkpoint(u, ui_replay_seek_cpu_now() - c0);
	return true;
}

static bool at_end(const struct ui *u)
{
	struct src_replay *rp = u->replay->o->rp;

	return src_replay_ticks_to(rp, -1) == 0 || src_replay_done(rp) ||
	       pc_consult_ended(u->pc);
}

/* How the journal's end record says the search ended, in the words of
 * the status line: the replayed consultant plays the recorded ticks
 * and cannot know that the live one was stopped after the last. */
static const struct {
	const char *reason, *word;
} end_words[] = {
	{ "target_exited", "ended" },
	{ "target_killed", "ended" },
	{ "search_ended", "completed" },
	{ "time_limit", "time limit" },
	{ "user_quit", "stopped" },
	{ "detached", "detached" },
	{ "signal", "interrupted" },
	{ "error", "error" },
};

const char *ui_replay_end_word(const struct ui *u)
{
	const char *why;

	if (u->replay == NULL || !at_end(u))
		return NULL;
	why = src_replay_end_reason(u->replay->o->rp);
	if (why == NULL)
		return "cut short";   /* no end record: hunch was killed */
	for (size_t i = 0; i < sizeof(end_words) / sizeof(end_words[0]); i++)
		if (strcmp(why, end_words[i].reason) == 0)
			return end_words[i].word;
	return "stopped";
}

/* At the end of the journal, the bottlenecks as the report has them
 * (most refined true experiments, in the order they became true). */
static void sum_up(struct ui *u)
{
	const struct pc_node *b[256];
	size_t n;

	u->replay->summed_up = true;
	if (u->pc->global == NULL) {   /* no tick: the search never began */
		ui_replay_seek_log(u, UI_LOG_HUNCH,
				   "end of the journal: nothing was "
				   "recorded after the header");
		return;
	}
	n = pc_report_bottlenecks(u->pc, u->pc->global, b, 256);
	ui_replay_seek_log(u, UI_LOG_HUNCH,
			   "end of the journal: %zu bottleneck%s", n,
			   n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		ui_replay_seek_log(u, UI_LOG_HUNCH, "%zu. %s since %.1f s",
				   i + 1, b[i]->name, b[i]->t_true_since);
}

/* The curves the user kept, enabled in the search shown: that steers
 * it (an instance held by the display), so it is no longer the
 * recording's own. */
static void follow_curves(struct ui *u)
{
	bool was = u->replay->pristine;

	/* no longer the recording's before enabling: a line it logs is
	 * not the recording's either (the log's archive) */
	u->replay->pristine = false;
	if (ui_hist_follow(u) == 0)
		u->replay->pristine = was;
}

/* Play every recorded tick up to time t (ticks after it wait). */
static void play_to(struct ui *u, double t)
{
	struct src_replay *rp = u->replay->o->rp;
	bool any = false;

	while (!at_end(u) &&
	       src_replay_tick_now(rp, (size_t)(src_replay_tick(rp) + 1)) <= t)
		any |= step_tick(u);
	if (at_end(u) && !u->replay->summed_up)
		sum_up(u);
	if (any)
		changed(u);
	follow_curves(u);
}

/* The last tick at or before time t (0 when t is before the first: a
 * search starts by playing it). */
static long tick_at(const struct ui *u, double t)
{
	struct src_replay *rp = u->replay->o->rp;
	size_t lo = 0, hi = src_replay_ticks_to(rp, t);

	while (lo < hi) {   /* the first tick after t */
		size_t mid = (lo + hi) / 2;

		if (src_replay_tick_now(rp, mid) <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? (long)lo - 1 : 0;
}

/* Show the state at time t: on from here, or back from the latest
 * checkpoint before it (else from the start).  (Not forward through a
 * checkpoint: the tree is shared and only goes back, the resources
 * found after now are not in it.) */
static void seek(struct ui *u, double t)
{
	struct ui_replay *x = u->replay;

	if (t < 0)
		t = 0;
	if (t > x->t_last)
		t = x->t_last;
	if (t < played_now(u)) {
		const struct rp_ckpt *k = src_replay_ckpt_find(x->ck, tick_at(u, t));

		if (k != NULL && restore(u, k)) {
			restore(u, k);
			ui_status_note(
				u, "%.1f s: back from the checkpoint at %.1f s",
				t, played_now(u));
		} else {
			rebuild(u);
			ui_status_note(u, "%.1f s: played again from the start",
				       t);
		}
	}
	play_to(u, t);
	x->clock = t;
	u->dirty |= UI_D_STATUS;
}

/* --- conclusions ----------------------------------------------------- */

/* When a node reached its truth: true since, or concluded false. */
static double concluded_at(const struct pc_node *n)
{
	if (n->truth == PC_UNKNOWN)
		return -1;
	return n->truth == PC_TRUE ? n->t_true_since : n->t_concluded;
}

/* Which of two conclusions the step shows: the earlier; at the same
 * time a true one, and a true non-virtual one before a virtual one. */
static bool before(const struct pc_node *n, const struct pc_node *best)
{
	double tn = concluded_at(n), tb = concluded_at(best);

	if (tn != tb)
		return tn < tb;
	if ((n->truth == PC_TRUE) != (best->truth == PC_TRUE))
		return n->truth == PC_TRUE;
	return best->is_virtual && !n->is_virtual;
}

/* The first node that concluded after `since` and by now (experiments
 * conclude at the end of an evaluation interval, inside a tick). */
static const struct pc_node *concluded(const struct pc_consult *pc,
				       const struct pc_search *s,
				       const struct pc_node *best,
				       double since)
{
	for (size_t i = 0; s && i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];
		double t = concluded_at(n);

		if (t > since && t <= pc->now && (best == NULL || before(n,
									 best)))
			best = n;
	}
	return best;
}

static const struct pc_node *concluded_since(const struct pc_consult *pc,
					     double since)
{
	const struct pc_node *n = concluded(pc, pc->global, NULL, since);

	if (pc->current != pc->global)
		n = concluded(pc, pc->current, n, since);
	return n;
}

/* `c`: play on to the next tick in which a node concluded, and stop
 * there with the clock at the conclusion's own time. */
static void next_conclusion(struct ui *u)
{
	struct ui_replay *x = u->replay;
	double since = x->clock;
	/* The tick played last may hold later ones (the clock stopped at
	 * the first conclusion in it). */
	const struct pc_node *n = concluded_since(u->pc, since);

	x->playing = false;
	while (n == NULL && step_tick(u))
		n = concluded_since(u->pc, since);
	x->clock = n ? concluded_at(n) : x->t_last;
	if (at_end(u) && !x->summed_up)
		sum_up(u);
	changed(u);
	follow_curves(u);
	if (n == NULL)
		ui_status_note(u,
			       "no more conclusions: the end of the journal");
	else
		ui_status_note(u, "%.1f s: %s tested %s", x->clock, n->name,
			pc_shg_truth_name(n->truth));
}

/* --- keys ------------------------------------------------------------ */

/* "75", "75.5", "1:15" or "1:15.5": seconds; < 0 when not a time. */
static double parse_time(const char *s)
{
	char *end;
	double a = strtod(s, &end), b;

	if (end == s || a < 0)
		return -1;
	if (*end == '\0')
		return a;
	if (*end != ':' || a != floor(a))
		return -1;
	s = end + 1;
	b = strtod(s, &end);
	if (end == s || *end != '\0' || b < 0 || b >= 60)
		return -1;
	return a * 60 + b;
}

static void typing_note(struct ui *u)
{
	ui_status_note(u,
		       "go to time (seconds or m:ss, Enter; Esc cancels): %s_",
		       u->replay->typed);
}

static void typing_key(struct ui *u, int key)
{
	struct ui_replay *x = u->replay;
	double t;

	if (key == 27 || key == UI_CTRL('c') || key == UI_CTRL('g')) {
		x->typing = false;
		ui_status_note(u, "go to time: cancelled");
	} else if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		x->typing = false;
		if (x->ntyped == 0) {
			ui_status_note(u, "go to time: nothing typed");
			return;
		}
		if ((t = parse_time(x->typed)) < 0) {
			ui_status_note(
				u,
				"go to time: '%s' is not a time (seconds, "
				"or m:ss)",
				x->typed);
			return;
		}
		x->playing = false;
		seek(u, t);
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (x->ntyped > 0)
			x->typed[--x->ntyped] = '\0';
		typing_note(u);
	} else if (((key >= '0' && key <= '9') || key == '.' || key == ':') &&
		   x->ntyped + 1 < sizeof(x->typed)) {
		x->typed[x->ntyped++] = (char)key;
		x->typed[x->ntyped] = '\0';
		typing_note(u);
	} else {
		typing_note(u);
	}
}

static void set_speed(struct ui *u, int dir)
{
	struct ui_replay *x = u->replay;
	int s = x->speed + dir;

	if (s >= 0 && s < (int)NSPEEDS)
		x->speed = s;
	ui_status_note(u, "speed %gx", speeds[x->speed]);
	u->dirty |= UI_D_STATUS;
}

static void play_pause(struct ui *u)
{
	struct ui_replay *x = u->replay;

	if (!x->playing && x->clock >= x->t_last && at_end(u))
		seek(u, 0);   /* at the end, play starts again */
	x->playing = !x->playing;
	x->real_last = ui_screen_now();
	ui_status_note(u, "%s at %.1f s", x->playing ? "playing" : "paused",
		x->clock);
	u->dirty |= UI_D_STATUS;
}

static bool replay_key(struct ui *u, int key);

/* The replay's keys play the recording's search as it was before the
 * key (ui_replay_seek_on_key counts any other key as steering until it is seen to
 * have changed nothing). */
bool ui_replay_key(struct ui *u, int key)
{
	struct ui_replay *x = u->replay;

	if (x == NULL)
		return false;
	if (x->in_key)
		x->pristine = x->key_was;
	if (replay_key(u, key))
		return true;
	if (x->in_key)
		x->pristine = false;
	return false;
}

/* The replay's keys work in every pane: s play/pause, > next
 * conclusion, t go to time, + - speed, $ end.  The first letters they
 * had (p, c, e) work too where the pane shown does not use them itself:
 * p is the Search pane's pause and the Histograms pane's phase, c the
 * Search pane's global/phase, e the Hypotheses pane's editor.  (g went
 * back to being "top of the list" everywhere.) */
static bool pane_owns(const struct ui *u, int key)
{
	switch (u->active) {
	case UI_PANE_SEARCH: return key == 'p' || key == 'c';
	case UI_PANE_HIST: return key == 'p';
	case UI_PANE_HYP: return key == 'e';
	default: return false;
	}
}

static bool replay_key(struct ui *u, int key)
{
	struct ui_replay *x = u->replay;

	if (x->typing) {
		typing_key(u, key);
		return true;
	}
	/* Where keys are typed into the where pane's picker they stay its. */
	if (ui_pick_active(u) || pane_owns(u, key))
		return false;
	switch (key) {
	case '?':   /* the help box leaves the hint line in sight */
		ui_status_note(u, "%s", UI_REPLAY_KEYS);
		return false;
	case 's': case 'p': play_pause(u); return true;
	case '>': case 'c': next_conclusion(u); return true;
	case '$': case 'e':
		x->playing = false;
		seek(u, x->t_last);
		ui_status_note(u, "the end of the journal: %.1f s", x->t_last);
		return true;
	case 't':
		x->typing = true;
		x->typed[0] = '\0';
		x->ntyped = 0;
		typing_note(u);
		return true;
	case '+': case '=': set_speed(u, +1); return true;
	case '-': set_speed(u, -1); return true;
	default: return false;
	}
}

/* --- the status line ------------------------------------------------- */

void ui_replay_state_text(const struct ui *u, char *buf, size_t len)
{
	const struct ui_replay *x = u->replay;
	const char *st = x->playing ? "playing" :
			 at_end(u) && x->clock >= x->t_last ? "end" : "paused";

	snprintf(buf, len, "%s %gx", st, speeds[x->speed]);
}

static void clock_of(double t, char *buf, size_t len)
{
	long d = lround(t * 10);   /* tenths */

	if (d >= 36000)
		snprintf(buf, len, "%ld:%02ld:%02ld.%ld", d / 36000,
			 d / 600 % 60, d / 10 % 60, d % 10);
	else
		snprintf(buf, len, "%ld:%02ld.%ld", d / 600, d / 10 % 60,
			 d % 10);
}

void ui_replay_clock_text(const struct ui *u, char *buf, size_t len)
{
	char a[32], b[32];

	clock_of(u->replay->clock, a, sizeof(a));
	clock_of(u->replay->t_last, b, sizeof(b));
	snprintf(buf, len, "%s/%s", a, b);
}

/* --- the loop -------------------------------------------------------- */

/* A real tick: the clock moves by the time passed times the speed. */
static void on_tick(struct ui *u, int tfd)
{
	struct ui_replay *x = u->replay;
	double real = ui_screen_now();
	uint64_t n;

	if (read(tfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	if (!x->playing)
		return;
	x->clock += (real - x->real_last) * speeds[x->speed];
	x->real_last = real;
	if (x->clock >= x->t_last)
		x->clock = x->t_last;
	play_to(u, x->clock);
	if (x->clock >= x->t_last || at_end(u)) {
		x->playing = false;
		x->clock = x->t_last;
		play_to(u, x->clock);
		ui_status_note(u,
			       "the end of the journal: %.1f s (s plays again)",
			       x->t_last);
	}
	u->dirty |= UI_D_STATUS;
}

static int on_signals(struct ui *u, int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGWINCH: ui_screen_resize(u); break;
		case SIGTSTP: ui_screen_suspend(u); break;
		case SIGCONT:
			reset_prog_mode();
			ui_screen_resize(u);
			break;
		default:   /* SIGINT, SIGTERM, SIGHUP */
			u->quit = true;
			return (int)si.ssi_signo;
		}
	}
	return 0;
}

static int run_loop(struct ui *u, int sigfd, int tfd)
{
	bool indexed = src_replay_indexed(u->replay->o->rp);
	int ending = 0;

	while (!u->quit) {
		struct pollfd p[3] = {
			{ fileno(u->tty_in), POLLIN, 0 }, { sigfd, POLLIN, 0 },
			{ tfd, POLLIN, 0 },
		};
		int ch;

		if (poll(p, 3, indexed ? -1 : 0) < 0 && errno != EINTR)
			break;
		if (!indexed)
			ui_replay_idx_more(u, &indexed);
		if (p[1].revents)
			ending = on_signals(u, sigfd);
		if (p[2].revents)
			on_tick(u, tfd);
		if (p[0].revents & (POLLHUP | POLLERR)) {
			u->quit = true;
			ending = SIGHUP;
		} else if (p[0].revents & POLLIN) {
			while (!u->quit && (ch = wgetch(stdscr)) != ERR)
				ui_replay_seek_on_key(u, ch);
		}
		if (u->dirty && !u->quit)
			ui_layout_draw(u);
	}
	return ending;
}

static void init(struct ui *u, struct ui_replay *x,
		 const struct ui_replay_opts *o)
{
	memset(u, 0, sizeof(*u));
	memset(x, 0, sizeof(*x));
	x->o = o;
	x->speed = 1;   /* 1x */
	x->t_last = src_replay_length(o->rp);
	u->replay = x;
	u->label = o->label;
	u->pid = o->pid;
	/* As the live dashboard: on the search when there is one. */
	u->active = u->main_pane = o->cfg != NULL ? UI_PANE_SEARCH :
				   UI_PANE_WHERE;
	u->t0 = ui_screen_now();
	ui_where_init(&u->where);
	ui_log_init(&u->log, LOG_LINES);
	src_replay_set_output(o->rp, ui_replay_seek_on_output, u);
	x->ck = src_replay_ckpt_new(o->rp, RP_CKPT_BUDGET,
				    ui_replay_seek_spacing());
	if (x->ck == NULL)
		abort();
}

static void finish(struct ui *u, int sigfd, int tfd, const sigset_t *old)
{
	ui_screen_end(u);
	free_search(u);
	src_replay_set_output(u->replay->o->rp, NULL, NULL);
	ui_where_free(&u->where);
	ui_log_free(&u->log);
	ui_panes_free(u);
	src_replay_ckpt_free(u->replay->ck);
	ui_replay_seek_arch_free(u->replay);
	free(u->replay->arch);
	if (sigfd >= 0)
		close(sigfd);
	if (tfd >= 0)
		close(tfd);
	sigprocmask(SIG_SETMASK, old, NULL);
}

int ui_replay_run(const struct ui_replay_opts *o)
{
	struct ui u;
	struct ui_replay x;
	sigset_t old;
	int sigfd, tfd, ending;

	init(&u, &x, o);
	sigfd = SIGTICK_SIGNALS(loop_signals, &old);
	tfd = sigtick_timer(TICK_MS);
	if (sigfd < 0 || tfd < 0 || ui_screen_init(&u) < 0) {
		finish(&u, sigfd, tfd, &old);
		return UI_FALLBACK;
	}
	ui_layout(&u);
	rebuild(&u);
	x.clock = played_now(&u);
	ui_status_note(&u, "paused at %.1f s: %s", x.clock,
		       UI_REPLAY_KEYS_SHORT);
	ui_layout_draw(&u);
	ending = run_loop(&u, sigfd, tfd);
	finish(&u, sigfd, tfd, &old);
	return ending ? 128 + ending : HUNCH_EXIT_OK;
}
