/*
 * ui_search.h - the Search pane (ui_search.c): what the session loop and
 * the status line ask of it.
 */
#ifndef UI_SEARCH_H
#define UI_SEARCH_H

#include <stdbool.h>

#include "ui.h"

struct pc_search;

/* The search the pane shows: the global one, or the current phase's
 * (the `g` key); NULL before the search starts. */
const struct pc_search *ui_search_shown(const struct ui *u);
/* Whether what the pane shows changed since the last call (the session
 * loop then marks the pane dirty). */
bool ui_search_changed(struct ui *u);

#endif
