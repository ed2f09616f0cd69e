/*
 * ui_findings.h - the dashboard's findings strip (ui_findings.c): the
 * search's findings, ranked by impact, as they are concluded; a summary
 * once the program has ended; and, after the dashboard closes, the
 * findings printed to the terminal as batch mode's report begins.
 */
#ifndef UI_FINDINGS_H
#define UI_FINDINGS_H

#include <stdio.h>

#include "ui.h"

struct pc_report_meta;

/* Rows the strip wants: its title and at most `maxlines` lines (the
 * summary, the findings, or "none yet"). */
int ui_findings_rows(struct ui *u, int maxlines);
/* After each consultant pass (and when the program ends): when the
 * findings or the summary changed, the strip is marked dirty, and the
 * layout is made again when the rows it wants changed. */
void ui_findings_tick(struct ui *u);
void ui_findings_draw(struct ui *u, const struct ui_rect *r);
/* After the dashboard has closed: the findings as the batch report's
 * head to f (nothing when the search never ran). */
void ui_findings_print(const struct ui *u, const struct pc_report_meta *m,
		       FILE *f);
/* The strip's lines as drawn last (tests): line i, NULL past the end. */
const char *ui_findings_line(const struct ui *u, int i);
/* The strip's state freed (the dashboard's end). */
void ui_findings_free(struct ui *u);

#endif
