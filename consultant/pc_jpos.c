/*
 * pc_jpos.c - positions of JSON values by path (see pc_jpos.h).
 *
 * A small recursive scanner, not a validator: jansson has already judged
 * the text (or will report its syntax error).  It tracks line and column
 * the way jansson does (1-based; a tab is one column) so that both kinds
 * of error point the same way.
 */
#include "pc_jpos.h"
#include "vec.h"
#include "xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct scan {
	struct pc_jpos *jp;
	const char *p;
	int line, col;
	char path[256];
	bool failed;
};

static void advance(struct scan *s)
{
	if (*s->p == '\n') {
		s->line++;
		s->col = 1;
	} else {
		s->col++;
	}
	s->p++;
}

static void skip_ws(struct scan *s)
{
	while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' ||
	       *s->p == '\r')
		advance(s);
}

static void record(struct scan *s, int line, int col)
{
	struct pc_jpos *jp = s->jp;

	VEC_RESERVE(jp->e, jp->cap, jp->n + 1);
	jp->e[jp->n].path = xstrdup(s->path);
	jp->e[jp->n].line = line;
	jp->e[jp->n].col = col;
	jp->n++;
}

static void fail(struct scan *s)
{
	if (!s->failed)
		snprintf(s->jp->stop_path, sizeof(s->jp->stop_path), "%s",
			 s->path);
	s->failed = true;
}

/* Read a string into `out` (truncated to `len`), escapes kept simple:
 * only the characters matter for paths, and keys are plain names. */
static void scan_string(struct scan *s, char *out, size_t len)
{
	size_t n = 0;

	advance(s);  /* opening quote */
	while (*s->p && *s->p != '"') {
		if (*s->p == '\\' && s->p[1])
			advance(s);
		if (out && n + 1 < len)
			out[n++] = *s->p;
		advance(s);
	}
	if (out)
		out[n] = '\0';
	if (*s->p != '"') {
		fail(s);
		return;
	}
	advance(s);
}

static void scan_value(struct scan *s);

/* After a member of an object or array: a ',' goes on (0), the closing
 * bracket ends it (1), anything else is the error (1). */
static int end_of_member(struct scan *s, char close)
{
	skip_ws(s);
	if (*s->p == ',') {
		advance(s);
		return 0;
	}
	if (*s->p == close) {
		advance(s);
		return 1;
	}
	fail(s);
	return 1;
}

static void scan_object(struct scan *s)
{
	size_t base = strlen(s->path);
	char key[128];

	advance(s);
	skip_ws(s);
	if (*s->p == '}') {
		advance(s);
		return;
	}
	while (!s->failed) {
		int line, col;

		skip_ws(s);
		if (*s->p != '"')
			return fail(s);
		line = s->line;
		col = s->col;
		scan_string(s, key, sizeof(key));
		snprintf(s->path + base, sizeof(s->path) - base, ".%s", key);
		record(s, line, col);
		skip_ws(s);
		if (*s->p != ':')
			return fail(s);
		advance(s);
		scan_value(s);
		if (s->failed)
			return;
		s->path[base] = '\0';
		if (end_of_member(s, '}'))
			return;
	}
}

static void scan_array(struct scan *s)
{
	size_t base = strlen(s->path);
	int i = 0;

	advance(s);
	skip_ws(s);
	if (*s->p == ']') {
		advance(s);
		return;
	}
	while (!s->failed) {
		skip_ws(s);
		snprintf(s->path + base, sizeof(s->path) - base, "[%d]", i++);
		record(s, s->line, s->col);
		scan_value(s);
		if (s->failed)
			return;
		s->path[base] = '\0';
		if (end_of_member(s, ']'))
			return;
	}
}

static void scan_value(struct scan *s)
{
	skip_ws(s);
	switch (*s->p) {
	case '{':
		scan_object(s);
		break;
	case '[':
		scan_array(s);
		break;
	case '"':
		scan_string(s, NULL, 0);
		break;
	case '\0':
		fail(s);
		break;
	default:  /* number, true, false, null */
		if (strchr("-0123456789tfn", *s->p) == NULL)
			return fail(s);
		while (*s->p && strchr(" \t\r\n,]}", *s->p) == NULL)
			advance(s);
	}
}

void pc_jpos_scan(struct pc_jpos *jp, const char *text)
{
	struct scan s = { .jp = jp, .p = text, .line = 1, .col = 1 };

	strcpy(s.path, "$");
	jp->stop_path[0] = '\0';
	skip_ws(&s);
	record(&s, s.line, s.col);
	scan_value(&s);
}

bool pc_jpos_find(const struct pc_jpos *jp, const char *path,
		  int *line, int *col)
{
	for (size_t i = 0; i < jp->n; i++) {
		if (strcmp(jp->e[i].path, path) == 0) {
			*line = jp->e[i].line;
			*col = jp->e[i].col;
			return true;
		}
	}
	*line = *col = 0;
	return false;
}

void pc_jpos_free(struct pc_jpos *jp)
{
	for (size_t i = 0; i < jp->n; i++)
		free(jp->e[i].path);
	free(jp->e);
	memset(jp, 0, sizeof(*jp));
}
