/*
 * ui_export.h - `E` in the dashboard (live or replay): the state on the
 * screen written to files with the command line's writers
 * (consultant/pc_export.h, docs/export-formats.md): the histograms as
 * CSV, the search history graph as dot or JSON, the where axis as JSON.
 */
#ifndef UI_EXPORT_H
#define UI_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

struct ui;

enum ui_export_kind {
	UI_EXPORT_CSV,        /* a directory of CSV files, one per curve */
	UI_EXPORT_DOT,        /* the search history graph, Graphviz */
	UI_EXPORT_SHG_JSON,   /* the same as JSON */
	UI_EXPORT_WHERE_JSON, /* the where axis as JSON */
};

/* `E`: the menu of kinds in the hint line. */
void ui_export_start(struct ui *u);
/* While the menu or the file-name prompt is up, every key goes here. */
bool ui_export_active(const struct ui *u);
void ui_export_key(struct ui *u, int key);

/* Write `kind` of the dashboard's current state to `path`.  Returns 0
 * with what was written in `msg`, or a negative errno with the reason
 * (the path and the errno's text) in `msg`; the session goes on. */
int ui_export_write(struct ui *u, enum ui_export_kind kind, const char *path,
		    char *msg, size_t len);

#endif
