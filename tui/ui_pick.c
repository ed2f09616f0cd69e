/*
 * ui_pick.c - the where pane's picker: what to do with the focus.
 *
 * `m` lists the metrics of the loaded hypotheses document; Enter enables
 * the chosen one on the focus (u->focus, chosen with `f`; unconstrained
 * hierarchies stay at their root) and opens the Histograms pane on its
 * curve.  `x` lists the hypotheses that have a metric; Enter starts that
 * experiment (hypothesis x focus) in the running search by hand.
 *
 * The picker replaces the tree inside the where pane while it is open
 * and reads every key (UI_PROMPT_PANE) until Enter or Esc.
 */
#include "ui.h"
#include "ui_panes.h"

#include <stdio.h>
#include <string.h>

#include "pc_search.h"
#include "pc_steer.h"

enum pick_kind { PICK_NONE, PICK_METRIC, PICK_EXPERIMENT };

bool ui_pick_active(const struct ui *u)
{
	return u->pick.kind != PICK_NONE;
}

/* The focus as the consultant takes it: the hierarchy's root where the
 * user constrained nothing. */
static void focus_of(const struct ui *u, struct pc_focus *f)
{
	pc_focus_top(u->tree, f);
	for (int k = 0; k < PC_NHIER; k++)
		if (u->focus[k] != PC_RES_NONE)
			f->r[k] = u->focus[k];
}

/* Items: metrics, or the hypotheses with a metric (by index). */
static size_t nitems(const struct ui *u)
{
	const struct ui_pick *pk = &u->pick;
	const struct pc_config *c = u->pc->cfg;
	size_t n = 0;

	if (pk->kind == PICK_METRIC)
		return c->nmet;
	for (size_t i = 0; i < c->nhyp; i++)
		n += !c->hyp[i].is_virtual;
	return n;
}

static const struct pc_hypothesis *nth_hyp(const struct ui *u, size_t n)
{
	const struct pc_config *c = u->pc->cfg;

	for (size_t i = 0; i < c->nhyp; i++)
		if (!c->hyp[i].is_virtual && n-- == 0)
			return &c->hyp[i];
	return NULL;
}

static void item_text(const struct ui *u, size_t i, char *buf, size_t len)
{
	const struct ui_pick *pk = &u->pick;

	if (pk->kind == PICK_METRIC) {
		const struct pc_metric_def *m = &u->pc->cfg->met[i];

		snprintf(buf, len, " %-18s %s (%s)", m->name,
			 m->title ? m->title : "", m->units ? m->units : "");
	} else {
		const struct pc_hypothesis *h = nth_hyp(u, i);

		snprintf(buf, len, " %-26s %s", h->name, h->desc ? h->desc : "");
	}
}

void ui_pick_start(struct ui *u, int key)
{
	struct ui_pick *pk = &u->pick;

	if (u->pc == NULL) {
		ui_status_note(u, "no search yet: nothing to %s", key == 'm' ?
			"enable a metric in" : "start an experiment in");
		return;
	}
	pk->kind = key == 'm' ? PICK_METRIC : PICK_EXPERIMENT;
	pk->sel = pk->top = 0;
	u->prompt = UI_PROMPT_PANE;
	u->dirty |= UI_D_PANE(UI_PANE_WHERE) | UI_D_HINT;
}

void ui_pick_draw(struct ui *u, const struct ui_rect *r)
{
	struct ui_pick *pk = &u->pick;
	char buf[600], focus[512];
	struct pc_focus f;
	size_t n = nitems(u), page = r->h > 2 ? (size_t)r->h - 2 : 1;
	int y = r->y;

	focus_of(u, &f);
	ui_line_focus_short(u, &f, focus, sizeof(focus));
	snprintf(buf, sizeof(buf), "%s on %s:", pk->kind == PICK_METRIC ?
		 "Enable a metric" : "Start an experiment", focus);
	ui_screen_put(u, y++, r->x, r->w, buf, A_BOLD);
	if (pk->sel < pk->top)
		pk->top = pk->sel;
	if (pk->sel >= pk->top + page)
		pk->top = pk->sel - page + 1;
	for (size_t i = pk->top; i < n && i < pk->top + page; i++) {
		item_text(u, i, buf, sizeof(buf));
		ui_screen_put(u, y++, r->x, r->w, buf,
			      i == pk->sel ? A_REVERSE : A_NORMAL);
	}
	ui_screen_put(u, r->y + r->h - 1, r->x, r->w,
		      "Enter chooses, Esc cancels",
		      ui_screen_attr(u, UI_C_DIM));
}

static void enable_metric(struct ui *u, const struct pc_focus *f)
{
	struct ui_pick *pk = &u->pick;
	const char *name = u->pc->cfg->met[pk->sel].name;

	if (ui_hist_add(u, name, f) < 0)
		return;
	ui_layout_select_pane(u, UI_PANE_HIST);
	ui_status_note(u, "%s enabled: its histogram fills as samples come",
		       name);
}

static void start_experiment(struct ui *u, const struct pc_focus *f)
{
	struct ui_pick *pk = &u->pick;
	const struct pc_hypothesis *h = nth_hyp(u, pk->sel);
	struct hunch_err e = { 0 };
	char focus[512];
	bool existed;

	ui_line_focus_short(u, f, focus, sizeof(focus));
	if (pc_steer_experiment(u->pc, h->name, f, &existed, &e) < 0)
		ui_status_note(u, "%s", e.msg);
	else if (existed)
		ui_status_note(u, "%s on %s is already in the search", h->name,
			       focus);
	else
		ui_status_note(u, "%s on %s started by hand", h->name, focus);
	u->dirty |= UI_D_PANE(UI_PANE_SEARCH) | UI_D_STATUS;
}

bool ui_pick_key(struct ui *u, int key)
{
	struct ui_pick *pk = &u->pick;
	size_t n = nitems(u);
	struct pc_focus f;
	enum pick_kind kind = (enum pick_kind)pk->kind;

	u->dirty |= UI_D_PANE(UI_PANE_WHERE) | UI_D_HINT;
	switch (ui_keys_motion(key)) {
	case UI_K_UP: if (pk->sel > 0) pk->sel--; return true;
	case UI_K_DOWN: if (pk->sel + 1 < n) pk->sel++; return true;
	case UI_K_HOME: pk->sel = 0; return true;
	case UI_K_END: pk->sel = n ? n - 1 : 0; return true;
	default: break;
	}
	if (key != 27 && key != UI_CTRL('c') && key != UI_CTRL('g') &&
	    key != '\r' && key != '\n' && key != KEY_ENTER)
		return true;   /* the picker holds the keyboard */
	pk->kind = PICK_NONE;
	u->prompt = UI_PROMPT_NONE;
	if (key == 27 || key == UI_CTRL('c') || key == UI_CTRL('g') || n == 0)
		return true;
	focus_of(u, &f);
	if (kind == PICK_METRIC)
		enable_metric(u, &f);
	else
		start_experiment(u, &f);
	return true;
}
