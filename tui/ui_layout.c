/*
 * ui_layout.c - where each pane goes, and drawing a frame.
 *
 * Compact (below 140x40, so 80x24): the status and focus lines on top,
 * the key hint at the bottom, one main pane chosen with 1-6 or Tab, and
 * under it a strip of the log so that the program's output and hunch's
 * messages stay in sight.  Pane 6 gives the log the whole body.
 *
 * Wide (140x40 and up): the where axis on the left, the chosen pane
 * (the search by default) on the right, the log across the bottom.
 *
 * In a session with a search, the findings strip (ui_findings.c) sits
 * over the log strip, as high as the findings it lists (its rows come
 * out of the log's, which keeps a title and two lines); it asks for a
 * new layout only when that height changes.
 *
 * Every rectangle is recomputed from the terminal size, so a resize is
 * one call to ui_layout() and a full repaint.
 */
#include "ui.h"
#include "ui_findings.h"

#include <stdio.h>
#include <string.h>

#define WIDE_COLS 140
#define WIDE_ROWS 40
#define MIN_COLS 40
#define MIN_ROWS 10

/* The panes by number key.  Slots say what they will show until the
 * consultant's panes replace them. */
static const struct ui_pane_ops *const panes[UI_NPANES] = {
	[UI_PANE_SEARCH] = &ui_search_pane,
	[UI_PANE_WHERE] = &ui_where_pane,
	[UI_PANE_HIST] = &ui_hist_pane,
	[UI_PANE_TUNABLES] = &ui_tunables_pane,
	[UI_PANE_HYP] = &ui_hyp_pane,
	[UI_PANE_LOG] = &ui_log_pane,
};

const struct ui_pane_ops *ui_layout_pane_ops(enum ui_pane p)
{
	return panes[p];
}

static const char *ui_layout_pane_title(enum ui_pane p)
{
	return panes[p]->title;
}

static struct ui_rect rect(int y, int x, int h, int w)
{
	struct ui_rect r = { y, x, h, w };

	return r;
}

/* The findings strip above the log strip, which starts at row `logy`
 * and is `*logh` rows: its rows come out of the log's, down to a title
 * and two lines, then out of the pane above (which keeps `keep` rows).
 * Returns the rows taken from the pane above. */
static int place_findings(struct ui *u, int logy, int *logh, int above,
			  int keep, int maxlines)
{
	int want, from_log, from_above;

	if (!u->find_on || *logh == 0)
		return 0;
	want = ui_findings_rows(u, maxlines);
	from_log = *logh > 3 ? *logh - 3 : 0;
	if (from_log > want)
		from_log = want;
	from_above = want - from_log;
	if (from_above > above - keep)
		from_above = above - keep > 0 ? above - keep : 0;
	want = from_log + from_above;
	*logh -= from_log;
	u->r_find = rect(logy - from_above, 0, want, u->cols);
	return from_above;
}

static void layout_compact(struct ui *u, int top, int h)
{
	int logh = h >= 16 ? h / 3 : (h >= 10 ? 4 : 0), mainh;

	if (u->main_pane == UI_PANE_LOG || logh == 0) {
		u->r_pane[u->main_pane] = rect(top, 0, h, u->cols);
		u->shown[u->main_pane] = true;
		if (u->active != u->main_pane)
			u->active = u->main_pane;
		return;
	}
	mainh = h - logh;
	mainh -= place_findings(u, top + mainh, &logh, mainh, 8, 3);
	u->r_pane[u->main_pane] = rect(top, 0, mainh, u->cols);
	u->r_pane[UI_PANE_LOG] = rect(top + h - logh, 0, logh, u->cols);
	u->shown[u->main_pane] = u->shown[UI_PANE_LOG] = true;
	if (u->active != u->main_pane && u->active != UI_PANE_LOG)
		u->active = u->main_pane;
}

static void layout_wide(struct ui *u, int top, int h)
{
	int logh = h / 3, toph = h - logh, leftw = u->cols * 2 / 5;
	enum ui_pane right = u->main_pane;

	if (right == UI_PANE_WHERE || right == UI_PANE_LOG)
		right = UI_PANE_SEARCH;
	u->main_pane = right;
	toph -= place_findings(u, top + toph, &logh, toph, 12, 8);
	u->r_pane[UI_PANE_WHERE] = rect(top, 0, toph, leftw);
	u->r_pane[right] = rect(top, leftw + 1, toph, u->cols - leftw - 1);
	u->r_pane[UI_PANE_LOG] = rect(top + h - logh, 0, logh, u->cols);
	u->shown[UI_PANE_WHERE] = u->shown[right] = true;
	u->shown[UI_PANE_LOG] = true;
	if (!u->shown[u->active])
		u->active = right;
}

void ui_layout(struct ui *u)
{
	int body = u->rows - 3;

	memset(u->shown, 0, sizeof(u->shown));
	memset(u->r_pane, 0, sizeof(u->r_pane));
	memset(&u->r_find, 0, sizeof(u->r_find));
	u->r_status = rect(0, 0, 1, u->cols);
	u->r_focus = rect(1, 0, 1, u->cols);
	u->r_hint = rect(u->rows - 1, 0, 1, u->cols);
	u->wide = u->cols >= WIDE_COLS && u->rows >= WIDE_ROWS;
	if (u->rows < MIN_ROWS || u->cols < MIN_COLS)
		return;
	if (u->wide)
		layout_wide(u, 2, body);
	else
		layout_compact(u, 2, body);
	u->dirty = UI_D_ALL;
}

/* Number keys: show pane p and give it the keyboard. */
void ui_layout_select_pane(struct ui *u, enum ui_pane p)
{
	if (u->wide) {
		if (p != UI_PANE_WHERE && p != UI_PANE_LOG)
			u->main_pane = p;
	} else if (p != UI_PANE_LOG || u->active == UI_PANE_LOG) {
		u->main_pane = p;  /* 6 twice: the log takes the body */
	}
	u->active = p;
	ui_layout(u);
	u->active = p;
}

/* Tab / Shift-Tab: the next pane on screen. */
void ui_layout_next_pane(struct ui *u, int dir)
{
	int p = (int)u->active;

	for (int i = 0; i < UI_NPANES; i++) {
		p = (p + dir + UI_NPANES) % UI_NPANES;
		if (u->shown[p])
			break;
	}
	u->active = (enum ui_pane)p;
	u->dirty = UI_D_ALL;
}

/* The title row of a pane: in compact mode the main pane's title lists
 * every pane with its number, so the keys explain themselves. */
static void ui_layout_draw_title(struct ui *u, const struct ui_rect *r,
				 enum ui_pane p)
{
	bool active = u->active == p;
	attr_t a = active ? ui_screen_attr(u, UI_C_TITLE) | A_BOLD : A_BOLD;
	char buf[64];
	int x = r->x;

	wattrset(stdscr, a);
	mvwhline(stdscr, r->y, r->x, ' ', r->w);
	if (!active) {
		for (int i = 0; i < r->w; i++)
			ui_screen_put(u, r->y, r->x + i, 1, u->g->hline,
				      A_NORMAL);
	}
	if (u->wide || p == UI_PANE_LOG) {
		snprintf(buf, sizeof(buf), " %d %s ", (int)p + 1,
			 ui_layout_pane_title(p));
		ui_screen_put(u, r->y, x, r->w, buf, a);
		return;
	}
	for (int i = 0; i < UI_NPANES && x < r->x + r->w; i++) {
		bool cur = i == (int)p;

		snprintf(buf, sizeof(buf), cur ? "[%d %s]" : " %d %s ", i + 1,
			 ui_layout_pane_title((enum ui_pane)i));
		x += ui_screen_put(u, r->y, x, r->x + r->w - x, buf,
			    cur ? a | A_BOLD : (active ? a & ~A_BOLD : A_NORMAL));
		x += ui_screen_put(u, r->y, x, r->x + r->w - x, " ",
				   active ? a : 0);
	}
}

static void draw_pane(struct ui *u, enum ui_pane p)
{
	struct ui_rect r = u->r_pane[p], body;

	ui_screen_clear_rect(u, &r);
	ui_layout_draw_title(u, &r, p);
	body = rect(r.y + 1, r.x, r.h - 1, r.w);
	if (body.h > 0)
		panes[p]->draw(u, p, &body);
}

static void draw_too_small(struct ui *u)
{
	char buf[96];
	size_t len, off = 0;

	werase(stdscr);
	len = (size_t)snprintf(buf, sizeof(buf), "hunch: %dx%d is too small; "
			       "%dx%d or more, please (q quits)", u->cols,
			       u->rows, MIN_COLS, MIN_ROWS);
	for (int y = 0; y < u->rows && off < len; y++) {
		ui_screen_put(u, y, 0, u->cols, buf + off, A_NORMAL);
		off += (size_t)u->cols;
	}
}

/* Wide mode: a vertical rule between the two upper panes. */
static void draw_divider(struct ui *u)
{
	const struct ui_rect *w = &u->r_pane[UI_PANE_WHERE];

	for (int y = w->y; y < w->y + w->h; y++)
		ui_screen_put(u, y, w->x + w->w, 1,
			      u->utf8 ? "\xe2\x94\x82" : "|", A_NORMAL);
}

void ui_layout_draw(struct ui *u)
{
	unsigned d = u->dirty;

	if (u->force_full) {
		clearok(curscr, TRUE);
		u->force_full = false;
	}
	if (u->rows < MIN_ROWS || u->cols < MIN_COLS) {
		draw_too_small(u);
	} else {
		if (d == UI_D_ALL)
			werase(stdscr);
		if (d & UI_D_STATUS)
			ui_status_draw(u);
		if (d & UI_D_FOCUS)
			ui_status_draw_focus(u);
		if (d & UI_D_HINT)
			ui_status_draw_hint(u);
		for (int p = 0; p < UI_NPANES; p++)
			if (u->shown[p] && (d & UI_D_PANE(p)))
				draw_pane(u, (enum ui_pane)p);
		if (u->r_find.h > 0 && (d & UI_D_FIND))
			ui_findings_draw(u, &u->r_find);
		if (u->wide && d == UI_D_ALL)
			draw_divider(u);
		if (u->help.up)
			ui_help_draw(u);
	}
	wnoutrefresh(stdscr);
	doupdate();
	u->dirty = 0;
}
