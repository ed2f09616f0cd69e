/*
 * ui_search.c - the Search pane: the search history graph as
 * an indented DAG, one row per experiment (hypothesis x focus).
 *
 * A row reads, left to right: the refinement that led to it (why '>',
 * where '@', a second path '^': Paradyn's shadow node, drawn dim and not
 * followed further), the state letter (T true, F false, ? tested but
 * not concluded, . never evaluated, x could not be tested), the activity
 * (* active, + being enabled, : queued), the hypothesis, the focus
 * (the constrained parts only: "demo_worker", "Mutex"), then on the
 * right the last value against the threshold as a small bar (the
 * threshold at its middle), the numbers, and when the node reached its
 * state.  Letters carry the meaning, so monochrome and ASCII lose
 * nothing; colour only repeats them.
 *
 * The rows are rebuilt only when what they show changed (a cheap sum
 * over the nodes, ui_search_changed); drawing touches the visible rows
 * only, so 5,000 nodes cost a walk, not a screenful of work each.
 *
 * Keys: motions; Enter follows a node (it becomes the top of the view,
 * its refinements below), Backspace goes back; Left/Right fold; d the
 * node's evidence (ui_search_detail.c); f hides false nodes, i those no
 * longer tested (true ones stay); p pauses or resumes the shown search,
 * P starts a new phase, c switches between the global search and the
 * current phase's; X stops an experiment the user started by hand (x in
 * the where pane), the search's own nodes are not the user's to stop.
 */
#include "ui_search.h"
#include "ui_panes.h"
#include "ui_replay.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_search.h"
#include "pc_steer.h"

#define MAX_DEPTH 64
#define BAR_W 8
#define MAX_FOLLOW 64

struct srow {
	int node;
	uint8_t depth;
	char edge;           /* ' ' top, '>' why, '@' where, '^' shadow */
};

/* The pane's own state, one per dashboard (u->search_view): what it
 * shows and how, kept across a replay's seeks (a new search gets its own
 * folds and no node followed, the filters stay). */
struct ui_search_view {
	bool phase;          /* the current phase's search, not the global */
	const struct pc_search *built_for;
	int root;            /* node followed with Enter; -1: the root */
	int stack[MAX_FOLLOW];
	int nstack;
	uint8_t *fold;       /* per node id: folded */
	size_t nfold;
	struct srow *rows;
	size_t nrows, caprows;
	bool stale;
	size_t cur, top;
	int cur_node;        /* keeps the cursor on its node */
	int page;
	bool hide_false, hide_inactive;
	bool detail;         /* the cursor node's evidence fills the pane */
	int dskip;           /* its lines scrolled off the top */
	uint64_t sig;
};

static struct ui_search_view *view(struct ui *u)
{
	struct ui_search_view *v = u->search_view;

	if (v != NULL)
		return v;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		abort();
	v->root = v->cur_node = -1;
	v->stale = true;
	return u->search_view = v;
}

void ui_search_free(struct ui *u)
{
	struct ui_search_view *v = u->search_view;

	if (v == NULL)
		return;
	free(v->fold);
	free(v->rows);
	free(v);
	u->search_view = NULL;
}

const struct pc_search *ui_search_shown(const struct ui *u)
{
	if (u->pc == NULL)
		return NULL;
	if (u->search_view != NULL && u->search_view->phase &&
	    u->pc->current != NULL)
		return u->pc->current;
	return u->pc->global;
}

/* A cheap sum of what the rows show: node count, states, values to the
 * thousandth.  Equal sums: nothing to redraw. */
static uint64_t signature(const struct pc_search *s)
{
	uint64_t h = (uintptr_t)s * 31u + s->nn * 7919u + (uint64_t)s->state;

	for (size_t i = 0; i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];
		double v = isfinite(n->value) ? n->value * 1000 : -1;

		h = h * 1000003u + (uint64_t)n->truth * 7u +
		    (uint64_t)n->active * 3u + (uint64_t)n->pending +
		    (uint64_t)n->queued * 11u + (uint64_t)n->nkids * 13u +
		    (uint64_t)(int64_t)v + (uint64_t)(n->guess + 1) * 17u;
	}
	return h;
}

bool ui_search_changed(struct ui *u)
{
	struct ui_search_view *v = view(u);
	const struct pc_search *s = ui_search_shown(u);
	uint64_t sig = s ? signature(s) : 0;

	/* the header's state word, which the status line shows too */
	sig = sig * 31u + (uintptr_t)ui_search_state_word(u, s);
	if (sig == v->sig)
		return false;
	v->sig = sig;
	v->stale = true;
	return true;
}

/* --- what a node is ------------------------------------------------------ */

char ui_search_letter(const struct pc_node *n)
{
	if (n->truth == PC_TRUE)
		return 'T';
	if (n->truth == PC_FALSE)
		return 'F';
	if (n->failed || n->skipped)
		return 'x';
	return n->guess >= 0 || n->wn > 0 ? '?' : '.';
}

char ui_search_activity(const struct pc_node *n)
{
	if (n->active)
		return '*';
	if (n->pending)
		return '+';
	return n->queued ? ':' : ' ';
}

attr_t ui_search_attr(const struct ui *u, const struct pc_node *n)
{
	attr_t a;

	switch (ui_search_letter(n)) {
	case 'T': a = ui_screen_attr(u, UI_C_FOCUS) | A_BOLD; break;
	case 'F': a = ui_screen_attr(u, UI_C_DIM); break;
	case '?': a = ui_screen_attr(u, UI_C_WARN); break;
	default: a = A_NORMAL; break;
	}
	return a | (n->active ? A_BOLD : 0);
}

/* The time the node reached its state (seconds since the target began). */
static double ui_search_when(const struct pc_node *n)
{
	if (n->truth == PC_TRUE && n->t_true_since >= 0)
		return n->t_true_since;
	if (n->truth == PC_FALSE && n->t_concluded >= 0)
		return n->t_concluded;
	return n->t_start >= 0 ? n->t_start : n->t_created;
}

/* The focus, short: the last part of each constrained hierarchy, or
 * "whole program" when none is.  Full: the node's name (detail line). */
void ui_search_focus_short(const struct ui *u, const struct pc_node *n,
			   char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < PC_NHIER && off < len; i++) {
		const struct pc_res *r = pc_res_get(u->pc->res,
						    n->focus.r[i]);

		if (r == NULL || r->kind == PC_RES_HIERARCHY)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? "," : "", r->name);
	}
	if (off == 0)
		snprintf(buf, len, "whole program");
}

/* --- the rows ------------------------------------------------------------ */

static bool hidden(const struct ui_search_view *v, const struct pc_node *n)
{
	if (v->hide_false && n->truth == PC_FALSE)
		return true;
	return v->hide_inactive && !n->active && !n->pending &&
	       n->truth != PC_TRUE && !n->is_virtual;
}

static void add_row(struct ui_search_view *v, int node, int depth,
		    char edge)
{
	if (v->nrows == v->caprows) {
		size_t cap = v->caprows ? 2 * v->caprows : 256;
		struct srow *r = realloc(v->rows, cap * sizeof(*r));

		if (r == NULL)
			return;
		v->rows = r;
		v->caprows = cap;
	}
	v->rows[v->nrows++] = (struct srow){ node, (uint8_t)depth, edge };
}

static bool folded(const struct ui_search_view *v, int id)
{
	return (size_t)id < v->nfold && v->fold[id];
}

static void walk(struct ui_search_view *v, const struct pc_search *s,
		 int id, int depth, char edge)
{
	const struct pc_node *n = pc_shg_node(s, id);

	if (n == NULL || (depth > 0 && hidden(v, n)))
		return;
	add_row(v, id, depth, edge);
	if (edge == '^' || folded(v, id) || depth >= MAX_DEPTH)
		return;
	for (size_t i = 0; i < n->nkids; i++) {
		const struct pc_edge *e = &n->kids[i];

		walk(v, s, e->child, depth + 1, e->shadow ? '^' :
		     e->why ? '>' : '@');
	}
}

/* A new search shown: its own folds, no node followed. */
static void reset_view(struct ui_search_view *v, const struct pc_search *s)
{
	v->built_for = s;
	v->root = -1;
	v->nstack = 0;
	v->cur = v->top = 0;
	v->cur_node = -1;
	v->detail = false;
	memset(v->fold, 0, v->nfold);
}

static void rebuild(struct ui_search_view *v, const struct pc_search *s)
{
	if (s != v->built_for)
		reset_view(v, s);
	if (s->nn > v->nfold) {
		uint8_t *f = realloc(v->fold, s->nn + 256);

		if (f != NULL) {
			memset(f + v->nfold, 0, s->nn + 256 - v->nfold);
			v->fold = f;
			v->nfold = s->nn + 256;
		}
	}
	v->nrows = 0;
	walk(v, s, v->root >= 0 ? v->root : s->root, 0, ' ');
	for (size_t i = 0; i < v->nrows; i++)
		if (v->rows[i].node == v->cur_node) {
			v->cur = i;
			break;
		}
	if (v->cur >= v->nrows)
		v->cur = v->nrows ? v->nrows - 1 : 0;
	v->stale = false;
}

/* The rows now (the benchmark times a rebuild and a full draw). */
void ui_search_rebuild(struct ui *u)
{
	struct ui_search_view *v = view(u);
	const struct pc_search *s = ui_search_shown(u);

	v->stale = true;
	if (s != NULL)
		rebuild(v, s);
}

/* --- drawing -------------------------------------------------------------- */

/* "[####....]"-like: BAR_W cells, half full at the threshold, so that
 * the bar grows as the hypothesis holds more: for ">" full at twice the
 * threshold, for "<" (TooManySmallIOOps) full at 0, empty at twice it. */
static void draw_bar(struct ui *u, int y, int x, const struct pc_node *n,
		     const struct pc_hypothesis *h, attr_t a)
{
	double ratio = n->threshold > 0 && isfinite(n->value) ?
		       n->value / n->threshold : -1;
	int fill;

	if (ratio < 0 || n->is_virtual)
		return;
	if (h != NULL && h->cmp == PC_CMP_LT)
		ratio = ratio >= 2 ? 0 : 2 - ratio;
	fill = (int)lround(ratio * BAR_W / 2);
	for (int i = 0; i < BAR_W; i++)
		ui_screen_put(u, y, x + i, 1,
			      i < fill ? (u->utf8 ? "\xe2\x96\x88" : "#")
				       : (i == BAR_W / 2 ? "|"
							 : (u->utf8 ? "\xc2\xb7"
								    : ".")),
			      i < fill ? a : A_NORMAL);
}

/* At most 5 columns: 0.067, 0.7, 12.3, 1234, 2e+05. */
static void num5(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (a >= 99999.5)
		snprintf(buf, len, "%.0e", v);
	else if (a >= 99.95)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 9.995)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 0.0005 || a == 0)
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "%.0e", v);
	if (strchr(buf, '.') != NULL && strchr(buf, 'e') == NULL) {
		size_t k = strlen(buf);

		while (buf[k - 1] == '0')
			buf[--k] = '\0';
		if (buf[k - 1] == '.')
			buf[k - 1] = '\0';
	}
}

static void right_text(const struct pc_node *n, char *buf, size_t len)
{
	char v[16], th[16];

	char when[24];
	double t = ui_search_when(n);

	if (t >= 0)
		snprintf(when, sizeof(when), "%.1fs", t);
	else
		snprintf(when, sizeof(when), "-");
	if (n->is_virtual || !isfinite(n->value) || n->threshold <= 0)
		snprintf(buf, len, "%11s %6s", "", when);
	else
	{
		num5(n->value, v, sizeof(v));
		num5(n->threshold, th, sizeof(th));
		snprintf(buf, len, "%5s/%-5s %6s", v, th, when);
	}
}

static void draw_row(struct ui *u, const struct pc_search *s,
		     const struct ui_rect *rc, int y, const struct srow *row,
		     bool cursor)
{
	const struct pc_node *n = pc_shg_node(s, row->node);
	const struct pc_hypothesis *h = pc_truth_node_hyp(u->pc, n);
	attr_t a = row->edge == '^' ? ui_screen_attr(u, UI_C_DIM) :
		   ui_search_attr(u, n);
	char left[512], focus[256], right[64];
	int rw = rc->w >= 60 ? BAR_W + 1 + 18 : 0, x = rc->x + 1;
	int lw = rc->w - 1 - rw;

	if (cursor) {
		a |= u->active == UI_PANE_SEARCH ? A_REVERSE : A_UNDERLINE;
		wattrset(stdscr, a);
		mvwhline(stdscr, y, rc->x, ' ', rc->w);
	}
	ui_search_focus_short(u, n, focus, sizeof(focus));
	snprintf(left, sizeof(left), "%*s%c%c%c %s  %s", 2 * row->depth, "",
		 row->edge, ui_search_letter(n), ui_search_activity(n),
		 h ? h->name : "?", focus);
	ui_screen_put(u, y, x, lw - 1, left, a);
	if (rw == 0)
		return;
	draw_bar(u, y, rc->x + rc->w - rw, n, h, a);
	right_text(n, right, sizeof(right));
	ui_screen_put(u, y, rc->x + rc->w - rw + BAR_W + 1, rw - BAR_W - 1,
		      right, a);
}

static void header_text(const struct ui *u, const struct ui_search_view *v,
			const struct pc_search *s, char *buf, size_t len)
{
	size_t ntrue = 0, nact = 0;
	const char *st = ui_search_state_word(u, s);

	for (size_t i = 0; i < s->nn; i++) {
		ntrue += s->nodes[i]->truth == PC_TRUE;
		nact += s->nodes[i]->active;
	}
	char name[32];

	if (s->id)
		snprintf(name, sizeof(name), "Phase %d search", s->id);
	else
		snprintf(name, sizeof(name), "Global search");
	snprintf(buf, len, "%s: %zu nodes, %zu true, %zu active, %s%s%s%s",
		 name, s->nn, ntrue, nact, st, v->root >= 0 ? " (followed; "
		 "Bksp back)" : "", v->hide_false ? " -false" : "",
		 v->hide_inactive ? " -inactive" : "");
}

/* After a key (p pauses, c shows the other search): the status line's
 * word follows at once, not at the next tick, which a paused replay
 * would not have. */
void ui_search_sync_state(struct ui *u)
{
	const char *w;

	if (!u->search.have || u->pc == NULL)
		return;
	w = ui_search_state_word(u, ui_search_shown(u));
	if (w != u->search.state) {
		u->search.state = w;
		u->dirty |= UI_D_STATUS | UI_D_PANE(UI_PANE_SEARCH);
	}
}

/* One word for the search's state, the same in the pane's header and
 * the status line (live and replay): ended, paused, slowed (the cost
 * limit holds new experiments back), idle (nothing left to test now),
 * searching; at the end of a replay, how the journal says the search
 * ended (ui_replay_end_word: "time limit", "completed", ...), which the
 * consultant replayed cannot know. */
const char *ui_search_state_word(const struct ui *u,
				 const struct pc_search *s)
{
	const struct pc_consult *pc = u->pc;
	const char *end;

	if (pc == NULL || s == NULL)
		return "starting";
	if (s->state == PC_SEARCH_ENDED || pc_consult_ended(pc))
		return "ended";
	if (u->replay != NULL && (end = ui_replay_end_word(u)) != NULL)
		return end;
	if (s->state == PC_SEARCH_PAUSED)
		return "paused";
	if (pc->throttle == PC_THR_COST)
		return "slowed";
	return pc_consult_idle(pc) ? "idle" : "searching";
}

static void draw_empty(struct ui *u, const struct ui_rect *r)
{
	const char *why = u->pc == NULL ? (u->src == NULL ? "no search: "
		"nothing to watch" : "no search: hunch measures with its "
		"runtime library (not with --no-rtlib)") :
		"the search starts once the program has run a moment";

	ui_screen_put(u, r->y + 1, r->x + 2, r->w - 4, why,
		      ui_screen_attr(u, UI_C_DIM));
}

/* The rows the cursor node's full name takes at the foot of the pane,
 * wrapped over as many as it needs, at most half the pane (the last row
 * then ends in an ellipsis): a long focus is read whole at 80 columns. */
static int name_rows(const struct ui *u, const struct ui_rect *r,
		     const char *name)
{
	int rows = ui_line_rows(u, name, r->w), most = (r->h - 1) / 2;

	return rows < most ? rows : most > 1 ? most : 1;
}

static void draw(struct ui *u, enum ui_pane p, const struct ui_rect *r)
{
	struct ui_search_view *v = view(u);
	const struct pc_search *s = ui_search_shown(u);
	const char *name = NULL;
	char buf[1024];
	int rows, nrows = 1;

	(void)p;
	if (s == NULL || !u->pc->started)
		return draw_empty(u, r);
	if (v->stale || s != v->built_for)
		rebuild(v, s);
	if (v->detail && v->nrows)
		return ui_search_detail_draw(u, s, v->rows[v->cur].node, r,
					     &v->dskip);
	header_text(u, v, s, buf, sizeof(buf));
	ui_screen_put(u, r->y, r->x + 1, r->w - 1, buf, A_BOLD);
	if (v->nrows) {
		name = pc_shg_node(s, v->rows[v->cur].node)->name;
		nrows = name_rows(u, r, name);
	}
	rows = r->h - 1 - nrows;
	if (rows < 1)
		return;
	v->page = rows;
	if (v->cur < v->top)
		v->top = v->cur;
	if (v->cur >= v->top + (size_t)rows)
		v->top = v->cur - (size_t)rows + 1;
	for (int i = 0; i < rows && v->top + (size_t)i < v->nrows; i++)
		draw_row(u, s, r, r->y + 1 + i, &v->rows[v->top + i],
			 v->top + (size_t)i == v->cur);
	if (name != NULL)
		ui_line_draw_wrapped(u, r, r->y + r->h - nrows, name, nrows,
				     ui_screen_attr(u, UI_C_DIM));
}

/* --- keys ----------------------------------------------------------------- */

static void step(struct ui_search_view *v, int dir, size_t steps)
{
	if (dir < 0)
		v->cur = v->cur > steps ? v->cur - steps : 0;
	else if (v->nrows)
		v->cur = v->cur + steps < v->nrows ? v->cur + steps :
			 v->nrows - 1;
}

static void follow(struct ui_search_view *v)
{
	if (v->nrows == 0 || v->cur == 0 || v->nstack == MAX_FOLLOW)
		return;
	v->stack[v->nstack++] = v->root;
	v->root = v->cur_node = v->rows[v->cur].node;
	v->top = 0;
	v->stale = true;
}

static void back(struct ui_search_view *v)
{
	if (v->nstack == 0)
		return;
	v->cur_node = v->root;  /* the cursor lands on the node left */
	v->root = v->stack[--v->nstack];
	v->stale = true;
}

static void set_fold(struct ui_search_view *v, bool fold)
{
	int id = v->nrows ? v->rows[v->cur].node : -1;

	if (id < 0 || (size_t)id >= v->nfold)
		return;
	if (!fold || v->fold[id] || v->cur + 1 >= v->nrows ||
	    v->rows[v->cur + 1].depth <= v->rows[v->cur].depth) {
		/* nothing below to fold: Left goes to the parent row */
		for (size_t i = v->cur; fold && !v->fold[id] && i-- > 0;)
			if (v->rows[i].depth < v->rows[v->cur].depth) {
				v->cur = i;
				return;
			}
		if (!fold)
			v->fold[id] = 0;
	} else {
		v->fold[id] = 1;
	}
	v->stale = true;
}

static void toggle_pause(struct ui *u, const struct pc_search *s)
{
	struct ui_search_view *v = view(u);
	bool pause = s->state == PC_SEARCH_RUNNING;

	if (pc_consult_pause(u->pc, s->id, pause) < 0) {
		ui_status_note(u, "the search has ended: nothing to pause");
	} else {
		ui_status_note(u, "search %s", pause ? "paused: p resumes" :
			"resumed");
		ui_consult_journal_action(u, pause ? "pause" : "resume", NULL,
					  s->id);
	}
	v->stale = true;
}

static void new_phase(struct ui *u)
{
	struct ui_search_view *v = view(u);
	int ph = pc_consult_phase_start(u->pc, NULL);

	if (ph < 0) {
		ui_status_note(u, "no new phase: the program has ended");
		return;
	}
	ui_consult_journal_action(u, "phase_start", u->pc->current->label, ph);
	v->phase = true;
	v->stale = true;
	ui_status_note(u, "phase %d started; c shows the global search", ph);
}

static void switch_search(struct ui *u)
{
	struct ui_search_view *v = view(u);

	if (u->pc->current == NULL) {
		ui_status_note(u, "no current phase yet: P starts one");
		return;
	}
	v->phase = !v->phase;
	v->stale = true;
}

/* X: stop the cursor's node, when the user started it (where pane, x). */
static void stop_by_hand(struct ui *u, const struct pc_search *s)
{
	struct ui_search_view *v = view(u);
	struct hunch_err e = { 0 };
	const struct pc_node *n;
	char focus[512];
	int r;

	if (v->nrows == 0)
		return;
	n = pc_shg_node(s, v->rows[v->cur].node);
	ui_line_focus_short(u, &n->focus, focus, sizeof(focus));
	r = pc_steer_stop(u->pc, s->id, n->id, &e);
	if (r == -EPERM)
		ui_status_note(u, "X stops only what x started by hand");
	else if (r == -EALREADY)
		ui_status_note(u, "%s on %s is not running",
			       pc_truth_node_hyp(u->pc, n)->name, focus);
	else if (r < 0)
		ui_status_note(u, "%s", e.msg);
	else
		ui_status_note(u, "%s on %s stopped by hand",
			       pc_truth_node_hyp(u->pc, n)->name, focus);
	v->stale = true;
}

static bool steer_key(struct ui *u, const struct pc_search *s, int key)
{
	struct ui_search_view *v = view(u);

	switch (key) {
	case 'X': stop_by_hand(u, s); break;
	case 'p': toggle_pause(u, s); break;
	case 'P': new_phase(u); break;
	case 'c': switch_search(u); break;
	case 'f': v->hide_false = !v->hide_false; v->stale = true; break;
	case 'i': v->hide_inactive = !v->hide_inactive; v->stale = true;
		break;
	case 'd': v->detail = !v->detail; v->dskip = 0; break;
	case KEY_BACKSPACE: case 127: case 8:
		if (v->detail)
			v->detail = false;
		else
			back(v);
		break;
	case 27: v->detail = false; break;
	default: return false;
	}
	return true;
}

static bool motion_key(struct ui_search_view *v, int key)
{
	size_t page = v->page > 1 ? (size_t)v->page - 1 : 1;

	switch (ui_keys_motion(key)) {
	case UI_K_UP: step(v, -1, 1); break;
	case UI_K_DOWN: step(v, +1, 1); break;
	case UI_K_PGUP: step(v, -1, page); break;
	case UI_K_PGDN: step(v, +1, page); break;
	case UI_K_HOME: v->cur = 0; break;
	case UI_K_END: step(v, +1, v->nrows); break;
	case UI_K_LEFT: set_fold(v, true); break;
	case UI_K_RIGHT: set_fold(v, false); break;
	case UI_K_TOGGLE:
		if (key == ' ')
			set_fold(v, !folded(v, v->nrows ?
					       v->rows[v->cur].node : -1));
		else
			follow(v);
		break;
	default: return false;
	}
	return true;
}

/* The evidence scrolls when the pane is short (80x24). */
static bool detail_key(struct ui_search_view *v, int key)
{
	switch (ui_keys_motion(key)) {
	case UI_K_UP: v->dskip -= v->dskip > 0; break;
	case UI_K_DOWN: v->dskip++; break;  /* the drawing bounds it */
	case UI_K_HOME: v->dskip = 0; break;
	default: return false;
	}
	return true;
}

static bool key(struct ui *u, int k)
{
	struct ui_search_view *v = view(u);
	const struct pc_search *s = ui_search_shown(u);
	bool took;

	if (s == NULL || !u->pc->started)
		return false;
	if (v->stale || s != v->built_for)
		rebuild(v, s);
	took = steer_key(u, s, k) || (v->detail ? detail_key(v, k) :
					  motion_key(v, k));
	if (!took)
		return false;
	if (v->nrows && !v->stale)
		v->cur_node = v->rows[v->cur].node;
	u->dirty |= UI_D_PANE(UI_PANE_SEARCH) | UI_D_STATUS;
	return true;
}

const struct ui_pane_ops ui_search_pane = {
	.title = "Search",
	.draw = draw,
	.key = key,
	.hint = "%s%s move  Enter follow  Bksp back  d detail  p pause  "
		"P phase  c global  ? help",
};
