/*
 * ui_search.h - the Search pane (ui_search.c): what the session loop and
 * the status line ask of it.
 */
#ifndef UI_SEARCH_H
#define UI_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "ui.h"

struct pc_search;
struct pc_node;

/* The search the pane shows: the global one, or the current phase's
 * (the `g` key); NULL before the search starts. */
const struct pc_search *ui_search_shown(const struct ui *u);
/* Whether what the pane shows changed since the last call (the session
 * loop then marks the pane dirty). */
bool ui_search_changed(struct ui *u);
/* Rebuild the rows now (the benchmark times it). */
void ui_search_rebuild(struct ui *u);
/* The pane's state freed (the dashboard's end). */
void ui_search_free(struct ui *u);

/* The search's state in one word, as the header and the status line
 * both say it: starting, ended, paused, slowed, idle, searching; at the
 * end of a replay, the journal's own (ui_replay_end_word). */
const char *ui_search_state_word(const struct ui *u,
				 const struct pc_search *s);
/* The status line's word set to it after a key that changed it. */
void ui_search_sync_state(struct ui *u);

/* What a node is, as a row shows it: the state letter (T F ? . x), the
 * activity (* + : or blank), its colour, when it reached its state, and
 * its focus shortened to the constrained parts. */
char ui_search_letter(const struct pc_node *n);
char ui_search_activity(const struct pc_node *n);
attr_t ui_search_attr(const struct ui *u, const struct pc_node *n);
void ui_search_focus_short(const struct ui *u, const struct pc_node *n,
			   char *buf, size_t len);

/* ui_consult.c: a user action ("pause", "resume", "phase_start",
 * "quit") into the live session's journal (docs/journal-format.md,
 * `action`); nothing without a journal.  phase < 0: none. */
void ui_consult_journal_action(struct ui *u, const char *action,
			       const char *name, int phase);
/* ui_consult.c: a line of the program's output (stream 0 stdout, 1
 * stderr; eol: a newline ended it) into the journal, bytes as written,
 * so a replay shows it at its time; nothing without a journal. */
void ui_consult_journal_output(struct ui *u, int stream, const char *bytes,
		       size_t len, bool eol);

/* ui_search_detail.c: a node's evidence over the pane's body; */
/* `skip`: lines scrolled off the top (j/k); lowered to what the
 * evidence needs, so that its last line stays on screen. */
void ui_search_detail_draw(struct ui *u, const struct pc_search *s, int id,
			   const struct ui_rect *r, int *skip);

#endif
