/*
 * ui_help.c - `?`: every key, in a box over the panes.  Any key closes
 * it.  At 80x24 the whole list fits; on smaller terminals it is cut, and
 * the last line says so.
 */
#include "ui.h"

#include <string.h>

static const char *const help[] = {
	"hunch dashboard: keys",
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
	"  T/F/? true/false/unknown . untested * active >why @where ^shadow",
	"Where: Enter/Space open/close  Right/l open  Left/h close, up",
	"  / find (as you type; Enter keeps, Esc back)  n/N next/previous",
	"  f focus (on a hierarchy: unconstrained)  F clear  r retired",
	"  m enable a metric on the focus  x start an experiment there",
	"Histograms: Up/Down curve  d remove it  p global/current phase",
	"Tunables: Enter edit (checked, applied live)  D developer ones",
	"Hypotheses: e edit in $VISUAL/$EDITOR (checked, applied)  x drop",
	"Log: End follows new output; ! marks stderr, # hunch's messages",
};

void ui_help_draw(struct ui *u)
{
	int n = (int)(sizeof(help) / sizeof(help[0]));
	int w = 70, h = n + 2, y0, x0;

	if (w > u->cols - 2)
		w = u->cols - 2;
	if (h > u->rows - 2)
		h = u->rows - 2;
	y0 = (u->rows - h) / 2;
	x0 = (u->cols - w) / 2;
	wattrset(stdscr, A_NORMAL);
	for (int y = y0; y < y0 + h; y++)
		mvwhline(stdscr, y, x0, ' ', w);
	for (int x = x0; x < x0 + w; x++) {
		ui_put(u, y0, x, 1, u->g->hline, A_BOLD);
		ui_put(u, y0 + h - 1, x, 1, u->g->hline, A_BOLD);
	}
	for (int i = 0; i < n && i < h - 2; i++)
		ui_put(u, y0 + 1 + i, x0 + 2, w - 4, help[i],
		       i == 0 ? A_BOLD : A_NORMAL);
	ui_put(u, y0 + h - 1, x0 + 2, w - 4,
	       h - 2 < n ? " (cut: the terminal is small) any key closes "
			 : " any key closes ", A_BOLD);
}
