/*
 * ui_slots.c - the panes that show the consultant's search: the search
 * history graph, histograms, tunables and hypotheses.
 *
 * The search is not in hunch yet (it is being written on branch `pc`),
 * so these panes show no data: they say what they will show and why
 * they are empty, rather than anything made up.  When the consultant
 * lands, a struct ui_pane_ops of its own takes a slot's place in the
 * table of ui_layout.c (see tui/README.md, "Hooks").
 */
#include "ui.h"

struct slot_text {
	const char *what;      /* what the pane will show */
	const char *keys;      /* the keys it will take */
};

static const struct slot_text slots[UI_NPANES] = {
	[UI_PANE_SEARCH] = {
		"The search history graph: each experiment (hypothesis x "
		"focus) as an indented DAG, with its state (never "
		"evaluated, unknown, true, false; active or not), its value "
		"against the threshold, and how long it has run. Shadow "
		"nodes mark a second path; why- and where-refinements are "
		"marked differently.",
		"Enter follows a node, Backspace goes back, d shows its "
		"evidence, p pauses or resumes, P starts a phase.",
	},
	[UI_PANE_HIST] = {
		"Histograms in the manner of Paradyn's rthist: up to 10 "
		"curves of metric x focus over time, 1000 buckets that fold "
		"by doubling, with axes, units, legend and the current "
		"phase.",
		"From the where pane, a selected focus will offer the "
		"metrics to enable.",
	},
	[UI_PANE_TUNABLES] = {
		"Every tunable of the search with its value, range and "
		"description, editable with validation and applied live; "
		"developer tunables behind a toggle.",
		"Enter edits a value, D shows developer tunables.",
	},
	[UI_PANE_HYP] = {
		"The why axis as loaded: each hypothesis with its metric "
		"expression, comparison and threshold.",
		"e opens the hypotheses file in $VISUAL or $EDITOR and "
		"applies it when it is valid.",
	},
};

/* Word-wrap s into the rectangle from row *y; returns false when full. */
static bool wrap(struct ui *u, const struct ui_rect *r, int *y,
		 const char *s, attr_t a)
{
	int w = r->w - 4;

	while (*s != '\0') {
		int take = 0, last_space = -1;

		if (*y >= r->y + r->h)
			return false;
		while (s[take] != '\0' && take < w) {
			if (s[take] == ' ')
				last_space = take;
			take++;
		}
		if (s[take] != '\0' && last_space > 0)
			take = last_space;
		{
			char line[512];
			int n = take < (int)sizeof(line) - 1 ? take :
				(int)sizeof(line) - 1;

			for (int i = 0; i < n; i++)
				line[i] = s[i];
			line[n] = '\0';
			ui_screen_put(u, (*y)++, r->x + 2, w, line, a);
		}
		s += take;
		while (*s == ' ')
			s++;
	}
	return true;
}

static void slot_draw(struct ui *u, enum ui_pane p, const struct ui_rect *r)
{
	const struct slot_text *t = &slots[p];
	int y = r->y + 1;

	if (t->what == NULL)
		return;
	if (!wrap(u, r, &y, "Empty: no search yet. The consultant's search "
		  "is not part of this build of hunch, so there is nothing "
		  "to show here; the where axis (2) and the log (6) are "
		  "live.", A_BOLD))
		return;
	y++;
	if (!wrap(u, r, &y, t->what, A_NORMAL))
		return;
	y++;
	wrap(u, r, &y, t->keys, ui_screen_attr(u, UI_C_DIM));
}

#define SLOT(name, t) const struct ui_pane_ops name = { \
	.title = t, .draw = slot_draw, .key = NULL, \
	.hint = "Tab or 1-6 panes  S screenshot  ? help  q quit" }

SLOT(ui_search_slot, "Search");
SLOT(ui_hist_slot, "Histograms");
SLOT(ui_tunables_slot, "Tunables");
SLOT(ui_hyp_slot, "Hypotheses");
