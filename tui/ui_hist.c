/*
 * ui_hist.c - the Histograms pane: Paradyn's rthist in a terminal.
 *
 * Up to ten curves, each a metric instance (metric x focus) the user
 * enabled from the where pane; its data is the data manager's global
 * histogram (1,000 buckets that fold by doubling, pc_hist.h), or with
 * `p` the current phase's.  The plot spans the phase from its start to
 * now: each plot column averages the buckets it covers (empty buckets
 * are "no data", not zero).
 *
 * In a UTF-8 locale the points are braille dots (2 x 4 per cell, so a
 * curve is four times finer than the rows); otherwise each curve draws
 * its legend letter.  The y axis is shared (labelled 0 and the top of
 * the scale, with the selected curve's units); the x axis is seconds
 * since the phase started, and the current phase's start is a dotted
 * column marked P<n>.
 */
#include "ui.h"
#include "ui_panes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pc_search.h"
#include "pc_steer.h"

#define AXIS_W 9            /* y labels (8 columns: "slowdown") and the axis */

static void sync_recorded(struct ui *u);

static void curve_free(struct ui_hist_curve *c)
{
	free(c->metric);
	for (int h = 0; h < PC_NHIER; h++)
		free(c->path[h]);
	memset(c, 0, sizeof(*c));
}

/* Curves belong to one search: a new one (a new session) starts with
 * none.  The replay's searches are one recording seen at other times
 * (a backward seek makes a new one): there the curves stay, to be
 * enabled again by ui_hist_follow.  (The replay says so with
 * ui_hist_new_search: a new search may have a freed one's address.) */
static void sync_pc(struct ui *u)
{
	struct ui_hist *hs = &u->hist;

	if (hs->pc == u->pc)
		return;
	for (int i = 0; i < hs->n; i++) {
		if (u->replay != NULL)
			hs->c[i].inst = 0;
		else
			curve_free(&hs->c[i]);
	}
	if (u->replay == NULL)
		hs->n = hs->sel = 0;
	hs->pc = u->pc;
}

void ui_hist_free(struct ui *u)
{
	for (int i = 0; i < u->hist.n; i++)
		curve_free(&u->hist.c[i]);
	memset(&u->hist, 0, sizeof(u->hist));
}

void ui_hist_new_search(struct ui *u)
{
	struct ui_hist *hs = &u->hist;

	for (int i = 0; i < hs->n; i++)
		hs->c[i].inst = 0;
	hs->pc = u->pc;
}

/* The instance shown by curve i, NULL while it is not enabled. */
static const struct pc_minst *minst(const struct ui *u, int i)
{
	const struct ui_hist *hs = &u->hist;

	return hs->c[i].inst > 0 ? pc_datamgr_get(&u->pc->dm,
						 hs->c[i].inst) : NULL;
}

void ui_hist_tick(struct ui *u)
{
	struct ui_hist *hs = &u->hist;

	if (hs->n > 0 && hs->pc == u->pc)
		u->dirty |= UI_D_PANE(UI_PANE_HIST);
}

int ui_hist_count(const struct ui *u)
{
	return u->hist.n;
}

/* Enable curve i on the current search: its resources by path (false
 * while one of them is not discovered yet). */
static bool enable_curve(struct ui *u, int i, struct hunch_err *e)
{
	struct ui_hist *hs = &u->hist;
	struct ui_hist_curve *c = &hs->c[i];
	struct pc_focus f;
	int id;

	for (int h = 0; h < PC_NHIER; h++)
		if ((f.r[h] = pc_res_find(u->tree, c->path[h])) == PC_RES_NONE)
			return false;
	id = pc_steer_enable(u->pc, c->metric, &f, e);
	c->inst = id > 0 ? id : -1;   /* -1: refused, not asked again */
	return true;
}

int ui_hist_follow(struct ui *u)
{
	struct ui_hist *hs = &u->hist;
	struct hunch_err e = { 0 };
	int n = 0;

	sync_pc(u);
	if (u->pc == NULL)
		return 0;
	sync_recorded(u);
	for (int i = 0; i < hs->n; i++)
		if (hs->c[i].inst == 0 && !hs->c[i].recorded &&
		    enable_curve(u, i, &e))
			n++;
	if (n > 0)
		u->dirty |= UI_D_PANE(UI_PANE_HIST);
	return n;
}

static bool same_focus(const struct ui *u, const struct ui_hist_curve *c,
		       const char *metric, const struct pc_focus *f)
{
	if (strcmp(c->metric, metric) != 0)
		return false;
	for (int h = 0; h < PC_NHIER; h++)
		if (strcmp(c->path[h], pc_res_get(u->tree, f->r[h])->path) != 0)
			return false;
	return true;
}

static void keep_curve(struct ui *u, int id, const char *metric,
		       const struct pc_focus *f)
{
	struct ui_hist *hs = &u->hist;
	struct ui_hist_curve *c = &hs->c[hs->n];

	c->inst = id;
	c->metric = strdup(metric);
	for (int h = 0; h < PC_NHIER; h++)
		c->path[h] = strdup(pc_res_get(u->tree, f->r[h])->path);
	hs->sel = hs->n++;
}

static void drop_curve(struct ui_hist *hs, int i)
{
	curve_free(&hs->c[i]);
	memmove(&hs->c[i], &hs->c[i + 1], (size_t)(hs->n - i - 1) *
		sizeof(hs->c[0]));
	memset(&hs->c[hs->n - 1], 0, sizeof(hs->c[0]));
	hs->n--;
	if (hs->sel >= hs->n && hs->sel > 0)
		hs->sel--;
	else if (hs->sel > i)
		hs->sel--;
}

static bool has_inst(const int *inst, size_t n, int id)
{
	for (size_t k = 0; k < n; k++)
		if (inst[k] == id)
			return true;
	return false;
}

/* A replay: the curves the recording's user enabled by hand are the
 * instances the replayed search holds for display (pc_steer_jnl_held): one
 * appears when its metric_enable is replayed and goes with its
 * metric_disable, and a seek back, which restores a search from before
 * them, takes them away until they are replayed again.  They are not
 * the viewer's: `d` and ui_hist_follow leave them alone. */
static void sync_recorded(struct ui *u)
{
	struct ui_hist *hs = &u->hist;
	int held[UI_HIST_MAX * 4], changed = 0;
	size_t n;

	if (u->replay == NULL || u->pc == NULL || hs->pc != u->pc)
		return;
	n = pc_steer_jnl_held(u->pc, held, sizeof(held) / sizeof(held[0]));
	for (int i = hs->n; i-- > 0;)
		if (hs->c[i].recorded && !has_inst(held, n, hs->c[i].inst)) {
			drop_curve(hs, i);
			changed++;
		}
	for (size_t k = 0; k < n && hs->n < UI_HIST_MAX; k++) {
		const struct pc_minst *m = pc_datamgr_get(&u->pc->dm, held[k]);
		bool shown = false;

		for (int i = 0; i < hs->n; i++)
			shown |= hs->c[i].inst == held[k];
		if (shown || m == NULL)
			continue;
		keep_curve(u, held[k], m->metric, &m->focus);
		hs->c[hs->sel].recorded = true;
		changed++;
	}
	if (changed)
		u->dirty |= UI_D_PANE(UI_PANE_HIST);
}

int ui_hist_add(struct ui *u, const char *metric, const struct pc_focus *f)
{
	struct ui_hist *hs = &u->hist;
	struct hunch_err e = { 0 };
	int id;

	sync_pc(u);
	if (u->pc == NULL) {
		ui_status_note(u, "no search yet: nothing to enable %s in",
			       metric);
		return -1;
	}
	for (int i = 0; i < hs->n; i++)
		if (same_focus(u, &hs->c[i], metric, f)) {   /* already shown */
			hs->sel = i;
			u->dirty |= UI_D_PANE(UI_PANE_HIST);
			return 0;
		}
	if (hs->n == UI_HIST_MAX) {
		ui_status_note(u, "%d curves already: d in the histograms pane "
			"removes one", UI_HIST_MAX);
		return -1;
	}
	id = pc_steer_enable(u->pc, metric, f, &e);
	if (id < 0) {
		ui_status_note(u, "%s", e.msg);
		return -1;
	}
	keep_curve(u, id, metric, f);
	u->dirty |= UI_D_PANE(UI_PANE_HIST);
	return 0;
}

static void remove_sel(struct ui *u)
{
	struct ui_hist *hs = &u->hist;

	if (hs->n == 0)
		return;
	if (hs->c[hs->sel].recorded) {
		ui_status_note(
			u,
			"%c is the recording's: it goes when the recording "
			"removed it",
			'a' + hs->sel);
		return;
	}
	if (hs->c[hs->sel].inst > 0)
		pc_steer_release(u->pc, hs->c[hs->sel].inst);
	drop_curve(hs, hs->sel);
}

static const struct pc_hist *hist_of(const struct ui *u,
				     const struct pc_minst *m)
{
	return u->hist.phase ? &m->current : &m->global;
}

static int points(const struct pc_hist *h)
{
	int n = 0;

	for (int i = 0; i < PC_HIST_BUCKETS; i++)
		n += !isnan(h->b[i]);
	return n;
}

/* The newest bucket with data, NaN if none. */
static double last_rate(const struct pc_hist *h)
{
	for (int i = PC_HIST_BUCKETS - 1; i >= 0; i--)
		if (!isnan(h->b[i]))
			return pc_hist_rate(h, i);
	return NAN;
}

/* Mean rate over [t0, t1) from the buckets it touches; NaN: no data. */
static double mean_over(const struct pc_hist *h, double t0, double t1)
{
	int a = (int)floor((t0 - h->start) / h->width);
	int b = (int)ceil((t1 - h->start) / h->width);
	double sum = 0;
	int n = 0;

	if (b <= a)
		b = a + 1;
	for (int i = a < 0 ? 0 : a; i < b && i < PC_HIST_BUCKETS; i++) {
		if (isnan(h->b[i]))
			continue;
		sum += pc_hist_rate(h, i);
		n++;
	}
	return n ? sum / n : NAN;
}

/* 1, 2 or 5 times a power of ten, at least v. */
static double nice_ceil(double v)
{
	double p;

	if (!(v > 0))
		return 1;
	p = pow(10, floor(log10(v)));
	if (v <= p)
		return p;
	if (v <= 2 * p)
		return 2 * p;
	if (v <= 5 * p)
		return 5 * p;
	return 10 * p;
}

static const char *units_of(const struct ui *u, const struct pc_minst *m)
{
	const struct pc_metric_def *d =
		pc_metric_def_find(u->pc->cfg, m->metric);

	return d && d->units ? d->units : "";
}

/* A curve not enabled in this search: its focus as typed, and why. */
static void legend_waiting(struct ui *u, const struct ui_rect *r, int y,
			   int i)
{
	struct ui_hist *hs = &u->hist;
	const struct ui_hist_curve *c = &hs->c[i];
	char line[512];
	size_t n = 0;

	n += (size_t)snprintf(line, sizeof(line), "%s%c %s <",
			      i == hs->sel ? ">" : " ", 'a' + i, c->metric);
	for (int h = 0; h < PC_NHIER && n < sizeof(line); h++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s",
				      h ? "," : "", c->path[h]);
	if (n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, ">  %s",
			 c->inst == 0 ? "not discovered yet" : "refused");
	ui_screen_put(u, y, r->x, r->w, line, i == hs->sel ? A_BOLD : A_NORMAL);
}

static void legend_line(struct ui *u, const struct ui_rect *r, int y, int i)
{
	struct ui_hist *hs = &u->hist;
	const struct pc_minst *m = minst(u, i);
	char focus[256], line[512], val[64];
	double v;

	if (m == NULL) {
		legend_waiting(u, r, y, i);
		return;
	}
	v = last_rate(hist_of(u, m));
	ui_line_focus_short(u, &m->focus, focus, sizeof(focus));
	if (m->state == PC_MI_PENDING)
		snprintf(val, sizeof(val), "enabling");
	else if (m->state == PC_MI_FAILED)
		snprintf(val, sizeof(val), "failed: %s",
			 m->fail_reason ? m->fail_reason : "refused");
	else if (isnan(v))
		snprintf(val, sizeof(val), "no data yet");
	else
		snprintf(val, sizeof(val), "%.3g %s, %d pts", v,
			 units_of(u, m), points(hist_of(u, m)));
	snprintf(line, sizeof(line), "%s%c %s %s  %s",
		 i == hs->sel ? ">" : " ", 'a' + i, m->metric, focus, val);
	ui_screen_put(u, y, r->x, r->w, line, i == hs->sel ? A_BOLD : A_NORMAL);
}

/* One plot: `cols` x `rows` cells whose top-left is (y, x). */
struct plot {
	int y, x, rows, cols;
	int sub_x, sub_y;       /* points per cell: braille 2 x 4, else 1 */
	double ymax, span, start;
	unsigned char *dots;    /* braille bits per cell */
	char *who;              /* curve letter per cell, 0 for none */
};

static const unsigned char braille_bit[2][4] = {
	{ 0x01, 0x02, 0x04, 0x40 }, { 0x08, 0x10, 0x20, 0x80 },
};

static void plot_curve(struct plot *p, const struct pc_hist *h, int ci)
{
	int nx = p->cols * p->sub_x, ny = p->rows * p->sub_y;

	for (int x = 0; x < nx; x++) {
		double t0 = p->start + p->span * x / nx;
		double v = mean_over(h, t0, p->start + p->span * (x + 1) / nx);
		int dy, cell;

		if (isnan(v))
			continue;
		dy = (int)lround(fmin(v, p->ymax) / p->ymax * (ny - 1));
		dy = ny - 1 - (dy < 0 ? 0 : dy);   /* from the top */
		cell = dy / p->sub_y * p->cols + x / p->sub_x;
		p->dots[cell] |= p->sub_x == 2 ?
			braille_bit[x % 2][dy % 4] : 1;
		p->who[cell] = (char)('a' + ci);
	}
}

static void put_cell(struct ui *u, const struct plot *p, int cell)
{
	struct ui_hist *hs = &u->hist;
	char s[4];
	int y = p->y + cell / p->cols, x = p->x + cell % p->cols;
	unsigned b = p->dots[cell];

	if (p->sub_x == 1) {
		s[0] = p->who[cell];
		s[1] = '\0';
	} else {
		s[0] = (char)0xe2;
		s[1] = (char)(0xa0 | (b >> 6));
		s[2] = (char)(0x80 | (b & 0x3f));
		s[3] = '\0';
	}
	ui_screen_put(u, y, x, 1, s,
		      p->who[cell] - 'a' == hs->sel ? A_BOLD : 0);
}

/* The current phase's start: a dotted column where no point is. */
static void phase_mark(struct ui *u, const struct plot *p)
{
	struct ui_hist *hs = &u->hist;
	const struct pc_search *cur = u->pc->current;
	int x;

	if (hs->phase || cur == NULL || cur->t_start <= p->start)
		return;
	x = (int)((cur->t_start - p->start) / p->span * p->cols);
	if (x >= p->cols)
		return;
	for (int y = 0; y < p->rows; y++)
		if (p->dots[y * p->cols + x] == 0)
			ui_screen_put(u, p->y + y, p->x + x, 1,
			       u->utf8 ? "\xe2\x94\x8a" : ":", A_NORMAL);
	{
		char lab[16];

		snprintf(lab, sizeof(lab), "P%d", cur->id);
		ui_screen_put(u, p->y + p->rows, p->x + x, p->cols - x, lab,
			      A_BOLD);
	}
}

static void axes(struct ui *u, const struct plot *p, const char *units)
{
	char lab[32];
	const char *v = u->utf8 ? "\xe2\x94\x82" : "|";

	for (int y = 0; y < p->rows; y++)
		ui_screen_put(u, p->y + y, p->x - 1, 1, v, A_NORMAL);
	snprintf(lab, sizeof(lab), "%.3g", p->ymax);
	ui_screen_put(u, p->y, p->x - AXIS_W, AXIS_W - 1, lab, A_NORMAL);
	ui_screen_put(u, p->y + 1, p->x - AXIS_W, AXIS_W - 1, units, A_NORMAL);
	ui_screen_put(u, p->y + p->rows - 1, p->x - AXIS_W, AXIS_W - 1, "0",
	       A_NORMAL);
	ui_screen_put(u, p->y + p->rows, p->x - AXIS_W, AXIS_W, "", A_NORMAL);
	for (int x = 0; x < p->cols; x++)
		ui_screen_put(u, p->y + p->rows, p->x + x, 1, u->g->hline,
			      A_NORMAL);
	snprintf(lab, sizeof(lab), "%.1fs", p->start);
	ui_screen_put(u, p->y + p->rows + 1, p->x, p->cols, lab, A_NORMAL);
	snprintf(lab, sizeof(lab), "%.1fs", p->start + p->span);
	ui_screen_put(u, p->y + p->rows + 1, p->x + p->cols - (int)strlen(lab),
	       (int)strlen(lab), lab, A_NORMAL);
}

static double scale_max(const struct ui *u)
{
	const struct ui_hist *hs = &u->hist;
	double mx = 0;

	for (int i = 0; i < hs->n; i++) {
		const struct pc_hist *h;

		if (minst(u, i) == NULL)
			continue;
		h = hist_of(u, minst(u, i));
		for (int b = 0; b < PC_HIST_BUCKETS; b++)
			if (!isnan(h->b[b]))
				mx = fmax(mx, pc_hist_rate(h, b));
	}
	return nice_ceil(mx);
}

static void draw_plot(struct ui *u, const struct ui_rect *r, int top)
{
	struct ui_hist *hs = &u->hist;
	const struct pc_minst *sel = minst(u, hs->sel);
	const struct pc_hist *h0 = sel ? hist_of(u, sel) : NULL;
	struct plot p = {
		.y = top, .x = r->x + AXIS_W, .rows = r->y + r->h - top - 2,
		.cols = r->w - AXIS_W - 1, .sub_x = u->utf8 ? 2 : 1,
		.sub_y = u->utf8 ? 4 : 1, .ymax = scale_max(u),
		.start = h0->start,
	};
	unsigned char dots[200 * 80];
	char who[200 * 80];

	if (p.rows < 2 || p.cols < 10 || sel == NULL)
		return;
	if (p.cols > 200)
		p.cols = 200;
	if (p.rows > 80)
		p.rows = 80;
	p.span = fmax(u->pc->now - p.start, 1.0);
	p.dots = dots;
	p.who = who;
	memset(dots, 0, sizeof(dots));
	memset(who, 0, sizeof(who));
	for (int i = 0; i < hs->n; i++)
		if (i != hs->sel && minst(u, i) != NULL)
			plot_curve(&p, hist_of(u, minst(u, i)), i);
	plot_curve(&p, h0, hs->sel);   /* the selected curve on top */
	axes(u, &p, units_of(u, sel));
	for (int c = 0; c < p.rows * p.cols; c++)
		if (who[c])
			put_cell(u, &p, c);
	phase_mark(u, &p);
}

static void draw(struct ui *u, enum ui_pane pane, const struct ui_rect *r)
{
	struct ui_hist *hs = &u->hist;
	int y = r->y + 1, nleg, first;
	char head[160];

	(void)pane;
	sync_pc(u);
	sync_recorded(u);
	if (u->pc == NULL) {
		ui_line_wrap(u, r, &y, 2,
			     "Empty: no search yet. Histograms show "
			     "the metrics you enable on a focus once the "
			     "consultant runs.",
			     ui_screen_attr(u, UI_C_DIM));
		return;
	}
	if (hs->n == 0) {
		ui_line_wrap(u, r, &y, 2,
			     "No curves yet. In the where pane (2), "
			     "f puts a resource in the focus and m enables a "
			     "metric on it; its histogram is drawn here (up to "
			     "10 curves).",
			     ui_screen_attr(u, UI_C_DIM));
		return;
	}
	if (minst(u, hs->sel) != NULL)
		snprintf(head, sizeof(head), "%s phase, buckets of %gs",
			 hs->phase ? "current" : "global",
			 hist_of(u, minst(u, hs->sel))->width);
	else
		snprintf(head, sizeof(head), "%s phase",
			 hs->phase ? "current" : "global");
	ui_screen_put(u, r->y, r->x + 1, r->w - 1, head, A_NORMAL);
	/* The legend takes at most a third of the pane; it scrolls to keep
	 * the selected curve in it. */
	nleg = hs->n < (r->h - 1) / 3 ? hs->n : (r->h - 1) / 3;
	first = hs->sel >= nleg ? hs->sel - nleg + 1 : 0;
	for (int i = 0; i < nleg; i++)
		legend_line(u, r, r->y + 1 + i, first + i);
	draw_plot(u, r, r->y + 1 + nleg);
}

static bool key(struct ui *u, int k)
{
	struct ui_hist *hs = &u->hist;

	sync_pc(u);
	sync_recorded(u);
	switch (ui_keys_motion(k)) {
	case UI_K_UP:
		if (hs->sel > 0)
			hs->sel--;
		break;
	case UI_K_DOWN:
		if (hs->sel + 1 < hs->n)
			hs->sel++;
		break;
	default:
		if (k == 'd' || k == KEY_DC)
			remove_sel(u);
		else if (k == 'p')
			hs->phase = !hs->phase;
		else
			return false;
	}
	u->dirty |= UI_D_PANE(UI_PANE_HIST);
	return true;
}

const struct ui_pane_ops ui_hist_pane = {
	.title = "Histograms",
	.draw = draw,
	.key = key,
	.hint = "%s%s curve  d remove  p global/phase  2 where: f focus, "
		"m metric  ? help",
};
