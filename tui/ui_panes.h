/*
 * ui_panes.h - what the consultant's Histograms, Tunables and Hypotheses
 * panes (ui_hist.c, ui_tunables.c, ui_hyp.c, ui_editor.c) offer the
 * other ui files: the where pane enables metrics through the histogram
 * pane, and the picker it shows for it is shared.
 *
 * Each keeps its state in its own struct in the dashboard's `struct ui`
 * (u->hist, u->tunables, u->hyp, u->pick: ui.h), reset when the search
 * it shows (u->pc) changes.
 */
#ifndef UI_PANES_H
#define UI_PANES_H

#include "pc_focus.h"
#include "ui.h"

/* Enable `metric` on `f` and add its curve to the histogram pane.
 * Returns 0, or -1 with the reason in the hint line. */
int ui_hist_add(struct ui *u, const char *metric, const struct pc_focus *f);
/* The replay: enable the curves kept across a seek in the search shown
 * now (those whose resources it has discovered); how many it enabled. */
int ui_hist_follow(struct ui *u);
/* The replay shows another search: its curves are not enabled in it. */
void ui_hist_new_search(struct ui *u);
/* After each consultant tick: the curves gained data. */
void ui_hist_tick(struct ui *u);
/* Curves shown (tests). */
int ui_hist_count(const struct ui *u);

/* Each pane's state freed (ui_panes.c: the dashboard's end), and those
 * of the Histograms and Hypotheses panes alone. */
void ui_panes_free(struct ui *u);
void ui_hist_free(struct ui *u);
void ui_hyp_free(struct ui *u);

/* ui_pick.c: the where pane's picker (m: a metric to enable on the focus,
 * x: a hypothesis to start on it), drawn in place of the tree. */
bool ui_pick_active(const struct ui *u);
void ui_pick_start(struct ui *u, int key);
void ui_pick_draw(struct ui *u, const struct ui_rect *r);
bool ui_pick_key(struct ui *u, int key);

/* Feed a key to a line being edited: 1 Enter, -1 Esc/Ctrl-C/Ctrl-G,
 * 0 edited or ignored. */
int ui_line_key(struct ui_line *l, int key);

/* Run $VISUAL or $EDITOR (else vi) on `path` with the terminal handed
 * over: endwin() before, the screen restored after, as Ctrl-Z does.
 * Returns the editor's exit status, or -1 with the reason in `err`. */
int ui_editor_run(struct ui *u, const char *path, char *err, size_t len);

/* The focus by its constrained hierarchies only ("/Code/m/f.c/fn",
 * "/Code/m/f.c/fn,/Process/42"), "whole program" when none is. */
void ui_line_focus_short(const struct ui *u, const struct pc_focus *f,
			 char *buf, size_t len);

/* How many rows `w` columns wide `s` takes when it wraps: after the last
 * ',', '/' or ' ' of a row's second half, else where the row is full (a
 * focus breaks between its resources and path parts). */
int ui_line_rows(const struct ui *u, const char *s, int w);
/* `s` wrapped that way over `rows` rows of r from row y, in attribute a;
 * the last row ends in an ellipsis if it still does not fit (a long
 * focus or path is read whole at 80 columns). */
void ui_line_draw_wrapped(struct ui *u, const struct ui_rect *r, int y,
			  const char *s, int rows, attr_t a);

/* Word-wrap `s` into the rectangle from row *y (indented by `indent`);
 * returns false once the rectangle is full. */
bool ui_line_wrap(struct ui *u, const struct ui_rect *r, int *y, int indent,
	     const char *s, attr_t a);

#endif
