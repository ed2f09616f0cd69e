/*
 * ui_panes.c - the end of every pane's state: each pane keeps its own in
 * the dashboard's `struct ui` (ui.h), by value or, for the Search pane
 * and the findings strip, behind a pointer its file makes on first use;
 * this frees what they hold when the dashboard ends, so that nothing of
 * one dashboard is left for the next in the same process.
 */
#include "ui.h"
#include "ui_findings.h"
#include "ui_panes.h"
#include "ui_search.h"

void ui_panes_free(struct ui *u)
{
	ui_search_free(u);
	ui_findings_free(u);
	ui_hist_free(u);
	ui_hyp_free(u);
}
