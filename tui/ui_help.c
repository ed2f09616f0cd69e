/*
 * ui_help.c - `?`: every key, and what every abbreviation and mark on
 * the screen means (the status line's fields, the Search pane's letters,
 * marks and bars), in a box over the panes.  In a replay its keys come
 * first.  When the box is shorter than the text, Up/Down/PgUp/PgDn (and
 * j/k, Space) scroll it and the bottom line says where it is; any other
 * key closes it.
 */
#include "ui.h"

#include <stdio.h>
#include <string.h>

static const char *const replay_help[] = {
	"Replay (hunch replay): these keys work in every pane",
	"  s play/pause (at the end: again)  > next conclusion  $ end",
	"  t go to time (seconds or m:ss)  +/- speed (0.5x to 100x)",
	"  p c e do the same where the pane has no such key of its own",
	"  (p c: Search pane's pause/phase; p: Histograms; e: Hypotheses)",
	"  status: paused|playing|end 2x (the speed), replay time/length",
};

static const char *const help[] = {
	"Anywhere",
	"  1-6           show pane: 1 Search 2 Where 3 Histograms",
	"                4 Tunables 5 Hypotheses 6 Log (6 twice: full)",
	"  Tab, S-Tab    next / previous pane on screen",
	"  ? help  S save screen  E export  Ctrl-Z suspend  Ctrl-L redraw",
	"  q, Ctrl-C     quit (asks first while the program is traced:",
	"                y detaches and leaves it running, code restored)",
	"Moving: Up/Down k/j, PgUp/PgDn Ctrl-B/F, Home/End g/G",
	"Search: Enter follow, Bksp back, Left/Right fold, d detail, X stop",
	"  p pause  P new phase  c global/phase  f/i hide false/inactive",
	"Where: Enter/Space open/close  Right/l open  Left/h close, up",
	"  / find (as you type; Enter keeps, Esc back)  n/N next/previous",
	"  f focus (on a hierarchy: unconstrained)  F clear  r retired",
	"  m enable a metric on the focus  x start an experiment there",
	"Histograms: Up/Down curve  d remove it  p global/current phase",
	"Tunables: Enter edit (checked, applied live)  D developer ones",
	"Hypotheses: e edit in $VISUAL/$EDITOR (checked, applied, saved",
	"  in ~/.config/hunch/hypotheses.json: later runs load it)  x drop",
	"Log: End follows new output; ! stderr, # hunch's messages;",
	"  in pane 6 long lines wrap (in the strip they end in ...)",
	"Status line (top right), e.g. | 5Hz 1.8%/5% exp 5+0 slowed",
	"  5Hz      samples a second (rate)",
	"  1.8%/5%  the search's observed cost / its cost limit",
	"  exp 5+0  experiments active + pending (act, pend)",
	"  state    searching; slowed: the cost limit holds new",
	"           experiments back; idle: nothing to test now;",
	"           paused; ended (the Search header says the same);",
	"           at a replay's end, the journal's: time limit, ...",
	"Search rows: state, activity, edge, hypothesis, focus, bar",
	"  T F ?    true, false, unknown (tested, not concluded)",
	"  . x      not tested yet; could not be tested (d: why)",
	"  * + :    active; pending (cost); queued",
	"  > @ ^    why child; where child; shadow (second path)",
	"  bar      half at the threshold |, fuller as it holds (for",
	"           < hypotheses too); value/threshold; since when",
	"Findings: rank, impact in seconds per second (- when none)",
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int nlines(const struct ui *u)
{
	return 1 + (u->replay != NULL ? N(replay_help) : 0) + N(help);
}

static const char *line_at(const struct ui *u, int i)
{
	if (i == 0)
		return "hunch dashboard: keys and what the screen says";
	i--;
	if (u->replay != NULL) {
		if (i < N(replay_help))
			return replay_help[i];
		i -= N(replay_help);
	}
	return help[i];
}

static int box_h(const struct ui *u)
{
	int h = nlines(u) + 2;

	return h > u->rows - 2 ? u->rows - 2 : h;
}

void ui_help_open(struct ui *u)
{
	u->help.up = true;
	u->help.top = 0;
	u->dirty |= UI_D_ALL;
}

/* A scrolling key while the text does not fit: true (the box stays). */
bool ui_help_key(struct ui *u, int key)
{
	struct ui_help *hp = &u->help;
	int page = box_h(u) - 2, max = nlines(u) - page;

	if (max <= 0)
		return false;
	switch (ui_keys_motion(key)) {
	case UI_K_UP: hp->top--; break;
	case UI_K_DOWN: hp->top++; break;
	case UI_K_PGUP: hp->top -= page; break;
	case UI_K_PGDN: case UI_K_TOGGLE: hp->top += page; break;
	case UI_K_HOME: hp->top = 0; break;
	case UI_K_END: hp->top = max; break;
	default: return false;
	}
	if (hp->top < 0)
		hp->top = 0;
	if (hp->top > max)
		hp->top = max;
	u->dirty |= UI_D_ALL;
	return true;
}

void ui_help_draw(struct ui *u)
{
	struct ui_help *hp = &u->help;
	int n = nlines(u), w = 70, h = box_h(u), y0, x0, page;
	char foot[96];

	if (w > u->cols - 2)
		w = u->cols - 2;
	page = h - 2;
	if (hp->top > n - page)
		hp->top = n - page > 0 ? n - page : 0;
	y0 = (u->rows - h) / 2;
	x0 = (u->cols - w) / 2;
	wattrset(stdscr, A_NORMAL);
	for (int y = y0; y < y0 + h; y++)
		mvwhline(stdscr, y, x0, ' ', w);
	for (int x = x0; x < x0 + w; x++) {
		ui_screen_put(u, y0, x, 1, u->g->hline, A_BOLD);
		ui_screen_put(u, y0 + h - 1, x, 1, u->g->hline, A_BOLD);
	}
	for (int i = 0; i < page && hp->top + i < n; i++) {
		const char *s = line_at(u, hp->top + i);

		ui_screen_put(u, y0 + 1 + i, x0 + 2, w - 4, s,
			      hp->top + i == 0 || s[0] != ' ' ? A_BOLD
							      : A_NORMAL);
	}
	if (page < n)
		snprintf(foot, sizeof(foot), " %d-%d of %d: %s%s j/k PgDn "
			 "scroll, any other key closes ", hp->top + 1,
			 hp->top + page,
			 n, u->g->up, u->g->down);
	else
		snprintf(foot, sizeof(foot), " any key closes ");
	ui_screen_put(u, y0 + h - 1, x0 + 2, w - 4, foot, A_BOLD);
}
