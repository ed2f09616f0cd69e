/*
 * ui_export.c - `E`: export what the dashboard shows.
 *
 * A menu in the hint line picks the kind (c histograms as CSV, d the
 * search history graph as dot, j the same as JSON, w the where axis as
 * JSON), then a prompt offers a file name to keep or edit: the program's
 * name and the time, in the current directory.  The files are written by
 * the functions `hunch replay --export-*` uses, with the same options,
 * so an export of a replay at its end equals the command line's export
 * of the same journal byte for byte.  In a replay they hold the state at
 * the replay time.  A file that cannot be written is a note naming the
 * path and the reason; nothing else changes.
 */
#include "ui_export.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pc_export.h"
#include "ui.h"

static const struct {
	int key;
	const char *what;          /* in messages */
	const char *suffix;        /* of the default name */
} kinds[] = {
	[UI_EXPORT_CSV] = { 'c', "histograms (CSV)", "-csv" },
	[UI_EXPORT_DOT] = { 'd', "search graph (dot)", ".shg.dot" },
	[UI_EXPORT_SHG_JSON] = { 'j', "search graph (JSON)", ".shg.json" },
	[UI_EXPORT_WHERE_JSON] = { 'w', "where axis (JSON)", ".where.json" },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

bool ui_export_active(const struct ui *u)
{
	return u->export_prompt.stage != 0;
}

/* "<program>-<UTC time><suffix>": the program's base name with anything
 * but letters, digits, '.', '-', '_' made '_' (as journal names are). */
static void default_name(struct ui *u, enum ui_export_kind k)
{
	struct ui_export_prompt *ex = &u->export_prompt;
	const char *label = u->label ? u->label : "hunch";
	const char *slash = strrchr(label, '/');
	time_t now = time(NULL);
	struct tm tm;
	char when[32];
	size_t n = 0;

	for (const char *p = slash ? slash + 1 : label;
	     *p && n < sizeof(ex->name) - 64; p++)
		ex->name[n++] = (*p >= 'a' && *p <= 'z') ||
				(*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9') || *p == '.' ||
				*p == '-' || *p == '_' ? *p : '_';
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	ex->len = n + (size_t)snprintf(ex->name + n, sizeof(ex->name) - n,
				       "-%s%s", when, kinds[k].suffix);
}

/* The prompt in the hint line: with the keys when they fit, else the
 * name alone, cut at its start ('<') when even that is too long. */
static void show_prompt(struct ui *u)
{
	struct ui_export_prompt *ex = &u->export_prompt;
	const char *keys = "  Enter writes, Esc cancels";
	int room = u->cols - 1 < (int)sizeof(u->message) - 1 ? u->cols - 1
		   : (int)sizeof(u->message) - 1;
	char head[64];
	int hl = snprintf(head, sizeof(head), "%s to: ", kinds[ex->kind].what);
	int fit = room - hl;
	const char *name = ex->name;

	if ((int)(ex->len + strlen(keys)) <= fit) {
		ui_status_note(u, "%s%s%s", head, name, keys);
		return;
	}
	if ((int)ex->len > fit && fit > 1) {
		name += ex->len - (size_t)(fit - 1);
		ui_status_note(u, "%s<%s", head, name);
		return;
	}
	ui_status_note(u, "%s%s", head, name);
}

void ui_export_start(struct ui *u)
{
	struct ui_export_prompt *ex = &u->export_prompt;

	ex->stage = 1;
	ui_status_note(u, "export: c hist CSV  d graph dot  j graph JSON  "
		"w where JSON  Esc cancels");
}

static int write_json(json_t *j, const char *path)
{
	FILE *f = fopen(path, "w");
	int r = 0;

	if (f == NULL)
		r = -errno;
	else if (json_dumpf(j, f, JSON_INDENT(2)) != 0)
		r = -EIO;
	if (f != NULL && fclose(f) != 0 && r == 0)
		r = -errno;
	json_decref(j);
	return r;
}

static int write_dot(const struct pc_consult *pc, const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -errno;
	pc_export_dot(pc, f);
	return fclose(f) == 0 ? 0 : -errno;
}

int ui_export_write(struct ui *u, enum ui_export_kind k, const char *path,
		    char *msg, size_t len)
{
	struct hunch_err e = { 0 };
	int r;

	if (k != UI_EXPORT_WHERE_JSON && (u->pc == NULL || !u->pc->started)) {
		snprintf(msg, len, "nothing to export yet: the search has "
			 "not started");
		return -EAGAIN;
	}
	switch (k) {
	case UI_EXPORT_CSV:
		r = pc_export_csv(u->pc, path, &e);
		if (r < 0) {
			snprintf(msg, len, "export failed: %s", e.msg);
			return r;
		}
		snprintf(msg, len, "exported %d histogram%s (CSV) to %s/", r,
			 r == 1 ? "" : "s", path);
		return 0;
	case UI_EXPORT_DOT:
		r = write_dot(u->pc, path);
		break;
	case UI_EXPORT_SHG_JSON:
		r = write_json(pc_export_shg_json(u->pc), path);
		break;
	default:
		r = u->tree ? write_json(pc_export_where_json(u->tree), path)
			    : -EAGAIN;
		break;
	}
	if (r < 0)
		snprintf(msg, len, "export failed: cannot write %s: %s", path,
			 strerror(-r));
	else
		snprintf(msg, len, "exported the %s to %s", kinds[k].what,
			 path);
	return r;
}

static void menu_key(struct ui *u, int key)
{
	struct ui_export_prompt *ex = &u->export_prompt;

	for (size_t k = 0; k < NKINDS; k++)
		if (kinds[k].key == key) {
			ex->kind = (int)k;
			ex->stage = 2;
			default_name(u, ex->kind);
			show_prompt(u);
			return;
		}
	ex->stage = 0;
	ui_status_note(u, "export cancelled");
}

static void name_key(struct ui *u, int key)
{
	struct ui_export_prompt *ex = &u->export_prompt;
	char msg[sizeof(u->message)];

	if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		ex->stage = 0;
		if (ex->len == 0) {
			ui_status_note(u, "export cancelled: no file name");
			return;
		}
		ui_export_write(u, ex->kind, ex->name, msg, sizeof(msg));
		ui_status_note(u, "%s", msg);
		return;
	}
	if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (ex->len > 0)
			ex->name[--ex->len] = '\0';
	} else if (key == UI_CTRL('u')) {
		ex->len = 0;
		ex->name[0] = '\0';
	} else if (key >= 0x20 && key < 0x7f &&
		   ex->len + 1 < sizeof(ex->name)) {
		ex->name[ex->len++] = (char)key;
		ex->name[ex->len] = '\0';
	}
	show_prompt(u);
}

void ui_export_key(struct ui *u, int key)
{
	struct ui_export_prompt *ex = &u->export_prompt;

	if (key == KEY_RESIZE)
		return;
	if (key == 27 || key == UI_CTRL('c') || key == UI_CTRL('g')) {
		ex->stage = 0;
		ui_status_note(u, "export cancelled");
		return;
	}
	if (ex->stage == 1)
		menu_key(u, key);
	else
		name_key(u, key);
}
