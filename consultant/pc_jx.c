/*
 * pc_jx.c - positioned loader errors, typed JSON accessors and "did you
 * mean" suggestions (see pc_load_int.h).
 */
#include "pc_load_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *pc_jx_strdup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void pc_jx_path(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

void pc_jx_diags_free(struct pc_diags *ds)
{
	if (ds == NULL)
		return;
	for (size_t i = 0; i < ds->n; i++)
		free(ds->d[i].msg);
	free(ds->d);
	memset(ds, 0, sizeof(*ds));
}

static void push_diag(struct pc_lctx *l, const struct pc_loc *loc,
		      const char *fmt, va_list ap)
{
	char text[768], *msg;
	int len;

	vsnprintf(text, sizeof(text), fmt, ap);
	len = asprintf(&msg, "%s:%d:%d: %s: %s", loc->file, loc->line,
		       loc->col, loc->path, text);
	if (len < 0)
		abort();
	l->nerr++;
	if (l->ds == NULL) {
		free(msg);
		return;
	}
	PC_GROW(l->ds->d, l->ds->n, l->ds->cap);
	l->ds->d[l->ds->n++].msg = msg;
}

void pc_jx_loc_set(struct pc_lctx *l, struct pc_loc *loc, const char *path)
{
	loc->file = l->file;
	snprintf(loc->path, sizeof(loc->path), "%s", path);
	pc_jpos_find(&l->jp, path, &loc->line, &loc->col);
}

void pc_jx_err(struct pc_lctx *l, const char *path, const char *fmt, ...)
{
	struct pc_loc loc;
	va_list ap;

	pc_jx_loc_set(l, &loc, path);
	va_start(ap, fmt);
	push_diag(l, &loc, fmt, ap);
	va_end(ap);
}

void pc_jx_err_at(struct pc_lctx *l, const struct pc_loc *loc,
		const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	push_diag(l, loc, fmt, ap);
	va_end(ap);
}

const char *pc_jx_type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Levenshtein distance, two rows. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *prev = calloc(lb + 1, sizeof(size_t));
	size_t *cur = calloc(lb + 1, sizeof(size_t));
	size_t d;

	if (prev == NULL || cur == NULL)
		abort();
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? sub : del;
			if (ins < cur[j])
				cur[j] = ins;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	d = prev[lb];
	free(prev);
	free(cur);
	return d;
}

const char *pc_jx_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1;
	/* A typo changes a few characters; beyond a third of the word it is
	 * more likely a different name, and a suggestion would mislead. */
	size_t limit = strlen(word) / 3 + 1;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, cands[i]);

		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

void pc_jx_err_unknown(struct pc_lctx *l, const struct pc_loc *loc,
		     const char *what, const char *name, const char *expected,
		     const char *const *cands, size_t n)
{
	const char *s = pc_jx_suggest(name, cands, n);

	if (s)
		pc_jx_err_at(l, loc, "unknown %s \"%s\"; expected %s "
			   "(did you mean \"%s\"?)", what, name, expected, s);
	else
		pc_jx_err_at(l, loc, "unknown %s \"%s\"; expected %s", what,
			   name, expected);
}

void pc_jx_fields(struct pc_lctx *l, json_t *obj, const char *path,
		  const char *const *allowed)
{
	const char *key;
	json_t *v;
	size_t n = 0;
	char list[512] = "", sub[256];

	while (allowed[n])
		n++;
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? ", " : "", allowed[i]);
	json_object_foreach(obj, key, v) {
		bool ok = false;
		struct pc_loc loc;
		char expected[600];

		for (size_t i = 0; i < n && !ok; i++)
			ok = strcmp(key, allowed[i]) == 0;
		if (ok)
			continue;
		pc_jx_path(sub, sizeof(sub), "%s.%s", path, key);
		pc_jx_loc_set(l, &loc, sub);
		snprintf(expected, sizeof(expected), "one of: %s", list);
		pc_jx_err_unknown(l, &loc, "field", key, expected, allowed, n);
	}
}

static json_t *member(struct pc_lctx *l, json_t *obj, const char *path,
		      const char *key, bool required, char *sub, size_t len)
{
	json_t *v = json_object_get(obj, key);

	snprintf(sub, len, "%s.%s", path, key);
	if (v == NULL && required)
		pc_jx_err(l, path, "missing field \"%s\"", key);
	return v;
}

bool pc_jx_str(struct pc_lctx *l, json_t *obj, const char *path,
	       const char *key, bool required, const char **out)
{
	char sub[256];
	json_t *v = member(l, obj, path, key, required, sub, sizeof(sub));

	if (v == NULL)
		return false;
	if (!json_is_string(v)) {
		pc_jx_err(l, sub, "expected a string, got %s",
			pc_jx_type_name(v));
		return false;
	}
	*out = json_string_value(v);
	return true;
}

bool pc_jx_num(struct pc_lctx *l, json_t *obj, const char *path,
	       const char *key, bool required, double *out)
{
	char sub[256];
	json_t *v = member(l, obj, path, key, required, sub, sizeof(sub));

	if (v == NULL)
		return false;
	if (json_is_boolean(v)) {  /* bool tunables keep 0/1 */
		*out = json_is_true(v);
		return true;
	}
	if (!json_is_number(v)) {
		pc_jx_err(l, sub, "expected a number, got %s",
			pc_jx_type_name(v));
		return false;
	}
	*out = json_number_value(v);
	return true;
}

bool pc_jx_bool(struct pc_lctx *l, json_t *obj, const char *path,
		const char *key, bool *out)
{
	char sub[256];
	json_t *v = member(l, obj, path, key, false, sub, sizeof(sub));

	if (v == NULL)
		return false;
	if (!json_is_boolean(v)) {
		pc_jx_err(l, sub, "expected true or false, got %s",
			pc_jx_type_name(v));
		return false;
	}
	*out = json_is_true(v);
	return true;
}

int pc_jx_enum(struct pc_lctx *l, json_t *obj, const char *path,
	       const char *key, const char *const *names, int def)
{
	const char *s;
	char sub[256], expected[400] = "one of: ";
	size_t n = 0;
	struct pc_loc loc;

	if (!pc_jx_str(l, obj, path, key, false, &s))
		return json_object_get(obj, key) ? -1 : def;
	for (; names[n]; n++) {
		if (strcmp(s, names[n]) == 0)
			return (int)n;
		snprintf(expected + strlen(expected),
			 sizeof(expected) - strlen(expected), "%s%s",
			 n ? ", " : "", names[n]);
	}
	pc_jx_path(sub, sizeof(sub), "%s.%s", path, key);
	pc_jx_loc_set(l, &loc, sub);
	pc_jx_err_unknown(l, &loc, key, s, expected, names, n);
	return -1;
}

json_t *pc_jx_obj(struct pc_lctx *l, json_t *obj, const char *path,
		  const char *key, bool required)
{
	char sub[256];
	json_t *v = member(l, obj, path, key, required, sub, sizeof(sub));

	if (v && !json_is_object(v)) {
		pc_jx_err(l, sub, "expected an object, got %s",
			pc_jx_type_name(v));
		return NULL;
	}
	return v;
}

json_t *pc_jx_arr(struct pc_lctx *l, json_t *obj, const char *path,
		  const char *key)
{
	char sub[256];
	json_t *v = member(l, obj, path, key, false, sub, sizeof(sub));

	if (v && !json_is_array(v)) {
		pc_jx_err(l, sub, "expected an array, got %s",
			pc_jx_type_name(v));
		return NULL;
	}
	return v;
}

bool pc_jx_strlist(struct pc_lctx *l, json_t *obj, const char *path,
		   const char *key, char ***out, size_t *n)
{
	json_t *a = pc_jx_arr(l, obj, path, key), *v;
	char sub[256];
	size_t i;

	*out = NULL;
	*n = 0;
	if (a == NULL)
		return false;
	*out = calloc(json_array_size(a) + 1, sizeof(char *));
	if (*out == NULL)
		abort();
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			pc_jx_path(sub, sizeof(sub), "%s.%s[%zu]", path, key,
				   i);
			pc_jx_err(l, sub, "expected a string, got %s",
				pc_jx_type_name(v));
			continue;
		}
		(*out)[(*n)++] = pc_jx_strdup(json_string_value(v));
	}
	return true;
}
