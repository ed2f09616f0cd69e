/*
 * ui_tunables.c - the Tunables pane: every tunable of the search with
 * its value, range and units, the selected one's description under the
 * list, and live editing.
 *
 * Enter opens a prompt for the selected tunable; Enter again parses the
 * value (numbers; true/false/on/off for booleans) and hands it to
 * pc_steer_jnl_set_tunable (pc_consult_set_tunable, journaled as a `tunable`
 * action for the replay), which range-checks it and applies it to the
 * running search (a new threshold re-tests the refinements it gates).
 * A refused value is shown with the reason, which for a range names the
 * range.  Developer tunables are hidden until `D`.
 */
#include "ui.h"
#include "ui_panes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pc_search.h"
#include "pc_steer.h"

static void sync_pc(struct ui *u)
{
	if (u->tunables.pc != u->pc) {
		memset(&u->tunables, 0, sizeof(u->tunables));
		u->tunables.pc = u->pc;
	}
}

static bool visible(const struct ui *u, const struct pc_tunable *t)
{
	return u->tunables.dev || !t->developer;
}

/* The n-th visible tunable, or NULL. */
static struct pc_tunable *nth(const struct ui *u, size_t n)
{
	const struct pc_config *c = u->pc->cfg;

	for (size_t i = 0; i < c->ntun; i++)
		if (visible(u, &c->tun[i]) && n-- == 0)
			return &c->tun[i];
	return NULL;
}

static size_t count(const struct ui *u)
{
	size_t n = 0;

	for (size_t i = 0; i < u->pc->cfg->ntun; i++)
		n += visible(u, &u->pc->cfg->tun[i]);
	return n;
}

static void value_text(const struct pc_tunable *t, double v, char *buf,
		       size_t len)
{
	if (t->type == PC_TUN_BOOL)
		snprintf(buf, len, "%s", v != 0 ? "true" : "false");
	else
		snprintf(buf, len, "%g", v);
}

static void row(struct ui *u, const struct ui_rect *r, int y,
		const struct pc_tunable *t, bool cur)
{
	char val[32], range[64], line[256];

	value_text(t, t->value, val, sizeof(val));
	if (t->type == PC_TUN_BOOL)
		snprintf(range, sizeof(range), "true/false");
	else
		snprintf(range, sizeof(range), "[%g, %g]", t->min, t->max);
	snprintf(line, sizeof(line), " %-26s %-8s %-14s %s%s", t->name, val,
		 range, t->units ? t->units : "", t->developer ? " (dev)" : "");
	ui_screen_put(u, y, r->x, r->w, line,
		      cur && u->active == UI_PANE_TUNABLES
			      ? A_REVERSE
			      : (cur ? A_BOLD : A_NORMAL));
}

/* Under the list: the prompt or the last outcome, then the selected
 * tunable's description. */
static void footer(struct ui *u, const struct ui_rect *r, int y,
		   const struct pc_tunable *t)
{
	struct ui_tunables *ts = &u->tunables;
	char line[160];
	struct ui_rect d = { y + 1, r->x, r->y + r->h - y - 1, r->w };

	if (ts->editing) {
		snprintf(line, sizeof(line), " %s = %s_", t->name,
			 ts->line.text);
		ui_screen_put(u, y, r->x, r->w, line, A_BOLD);
	} else if (ts->msg[0]) {
		ui_screen_put(u, y, r->x + 1, r->w - 1, ts->msg, ts->msg_err ?
		       ui_screen_attr(u, UI_C_WARN) | A_BOLD : A_NORMAL);
	}
	if (t->desc)
		ui_line_wrap(u, &d, &d.y, 1, t->desc,
			     ui_screen_attr(u, UI_C_DIM));
}

static void draw(struct ui *u, enum ui_pane pane, const struct ui_rect *r)
{
	struct ui_tunables *ts = &u->tunables;
	size_t n, list_h;
	int y = r->y;

	(void)pane;
	sync_pc(u);
	if (u->pc == NULL) {
		y++;
		ui_line_wrap(u, r, &y, 2,
			     "Empty: no search yet. The tunables are "
			     "those of the running search.",
			     ui_screen_attr(u, UI_C_DIM));
		return;
	}
	n = count(u);
	if (ts->sel >= n)
		ts->sel = n ? n - 1 : 0;
	list_h = r->h > 6 ? (size_t)r->h - 5 : 1;
	if (ts->sel < ts->top)
		ts->top = ts->sel;
	if (ts->sel >= ts->top + list_h)
		ts->top = ts->sel - list_h + 1;
	for (size_t i = ts->top; i < n && i < ts->top + list_h; i++)
		row(u, r, y++, nth(u, i), i == ts->sel);
	if (n)
		footer(u, r, r->y + (int)list_h, nth(u, ts->sel));
}

/* "0.5", "1e-3"; booleans also true/false/on/off/yes/no. */
static int parse(const struct pc_tunable *t, const char *s, double *v)
{
	static const char *const yes[] = { "true", "on", "yes" };
	static const char *const no[] = { "false", "off", "no" };
	char *end;

	if (t->type == PC_TUN_BOOL)
		for (int i = 0; i < 3; i++) {
			if (strcasecmp(s, yes[i]) == 0)
				return *v = 1, 0;
			if (strcasecmp(s, no[i]) == 0)
				return *v = 0, 0;
		}
	*v = strtod(s, &end);
	return end == s || *end != '\0' ? -1 : 0;
}

static void apply(struct ui *u, struct pc_tunable *t)
{
	struct ui_tunables *ts = &u->tunables;
	struct hunch_err e = { 0 };
	char old[32], now[32];
	const char *m;
	double v;

	ts->msg_err = true;
	if (parse(t, ts->line.text, &v) < 0) {
		snprintf(ts->msg, sizeof(ts->msg), "%s: \"%s\" is not a %s",
			 t->name, ts->line.text, t->type == PC_TUN_BOOL ?
			 "boolean (true or false)" : "number");
		return;
	}
	value_text(t, t->value, old, sizeof(old));
	if (pc_steer_jnl_set_tunable(u->pc, t->name, v, &e) < 0) {
		m = strncmp(e.msg, "--set: ", 7) == 0 ? e.msg + 7 : e.msg;
		snprintf(ts->msg, sizeof(ts->msg), "refused: %.240s", m);
		return;
	}
	value_text(t, t->value, now, sizeof(now));
	snprintf(ts->msg, sizeof(ts->msg), "%s = %s (was %s)", t->name, now,
		 old);
	ts->msg_err = false;
	u->dirty |= UI_D_PANE(UI_PANE_SEARCH) | UI_D_PANE(UI_PANE_HYP) |
		    UI_D_STATUS;
}

static void edit_key(struct ui *u, int k)
{
	struct ui_tunables *ts = &u->tunables;
	int r = ui_line_key(&ts->line, k);

	if (r == 0)
		return;
	ts->editing = false;
	u->prompt = UI_PROMPT_NONE;
	if (r > 0)
		apply(u, nth(u, ts->sel));
}

static void start_edit(struct ui *u)
{
	struct ui_tunables *ts = &u->tunables;

	if (nth(u, ts->sel) == NULL)
		return;
	ts->editing = true;
	ts->msg[0] = '\0';
	ts->line.len = 0;
	ts->line.text[0] = '\0';
	u->prompt = UI_PROMPT_PANE;
}

static bool key(struct ui *u, int k)
{
	struct ui_tunables *ts = &u->tunables;
	size_t n;

	sync_pc(u);
	if (u->pc == NULL)
		return false;
	if (ts->editing) {
		edit_key(u, k);
		u->dirty |= UI_D_PANE(UI_PANE_TUNABLES) | UI_D_HINT;
		return true;
	}
	n = count(u);
	switch (ui_keys_motion(k)) {
	case UI_K_UP: if (ts->sel > 0) ts->sel--; break;
	case UI_K_DOWN: if (ts->sel + 1 < n) ts->sel++; break;
	case UI_K_HOME: ts->sel = 0; break;
	case UI_K_END: ts->sel = n ? n - 1 : 0; break;
	case UI_K_TOGGLE: start_edit(u); break;
	default:
		if (k == 'D') {
			ts->dev = !ts->dev;
			ts->sel = ts->top = 0;
		} else {
			return false;
		}
	}
	u->dirty |= UI_D_PANE(UI_PANE_TUNABLES);
	return true;
}

const struct ui_pane_ops ui_tunables_pane = {
	.title = "Tunables",
	.draw = draw,
	.key = key,
	.hint = "%s%s move  Enter edit  D developer  Esc cancel  ? help",
};
