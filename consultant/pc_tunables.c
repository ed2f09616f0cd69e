/*
 * pc_tunables.c - tunable constants: parsing "tunables" and "set", range
 * checks, lookups and --set NAME=VALUE.
 *
 * A tunable is a number (float, int or bool kept as 0/1) with a default,
 * a closed range, units, a description and a visibility.  Redefining a
 * tunable in a later file replaces it whole; "set" changes only values.
 */
#include "pc_load_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tun_fields[] = {
	"type", "default", "min", "max", "units", "description",
	"visibility", NULL
};
static const char *const tun_types[] = { "float", "int", "bool", NULL };
static const char *const tun_vis[] = { "user", "developer", NULL };

void pc_tunables_free(struct pc_tunable *t)
{
	free(t->name);
	free(t->units);
	free(t->desc);
}

struct pc_tunable *pc_tunables_find(const struct pc_config *c, const char *n)
{
	for (size_t i = 0; i < c->ntun; i++)
		if (strcmp(c->tun[i].name, n) == 0)
			return &c->tun[i];
	return NULL;
}

double pc_tunables_get(const struct pc_config *c, const char *name)
{
	struct pc_tunable *t = pc_tunables_find(c, name);

	/* The loader insists that the tunables the search reads exist
	 * (pc_config.c), so a miss here is a programming error. */
	if (t == NULL) {
		fprintf(stderr, "hunch: internal: no tunable %s\n", name);
		abort();
	}
	return t->value;
}

static void fmt_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%g", v);
}

/* The message for a value outside [min, max]; thresholds say so, because
 * a threshold is what a user edits when a hypothesis misbehaves. */
static void range_msg(char *buf, size_t len, const struct pc_tunable *t,
		      double v)
{
	char a[32], b[32], x[32];

	fmt_num(a, sizeof(a), t->min);
	fmt_num(b, sizeof(b), t->max);
	fmt_num(x, sizeof(x), v);
	if (t->used_as_threshold)
		snprintf(buf, len, "threshold %s = %s is out of its tunable's "
			 "range [%s, %s]", t->name, x, a, b);
	else
		snprintf(buf, len, "tunable %s = %s is out of its range "
			 "[%s, %s]", t->name, x, a, b);
}

static bool value_ok(const struct pc_tunable *t, double v)
{
	if (isnan(v) || v < t->min || v > t->max)
		return false;
	if (t->type == PC_TUN_INT && v != floor(v))
		return false;
	if (t->type == PC_TUN_BOOL && v != 0 && v != 1)
		return false;
	return true;
}

static void parse_one(struct pc_lctx *l, const char *name, json_t *o,
		      const char *path)
{
	struct pc_tunable t = { .name = pc_jx_strdup(name), .max = 1 };
	const char *s;
	int i;
	bool ok = true;

	pc_jx_loc_set(l, &t.loc, path);
	/* an overlay that gives a known tunable only a new default means to
	 * set its value: say how, instead of listing missing fields */
	if (pc_tunables_find(l->c, name) != NULL &&
	    json_object_get(o, "min") == NULL &&
	    json_object_get(o, "description") == NULL) {
		pc_jx_err(l, path,
			  "tunable %s is already defined: to change its "
			  "value, write \"set\": { \"%s\": VALUE } at the top "
			  "level (redefining it needs type, default, min, max "
			  "and description)",
			  name, name);
		pc_tunables_free(&t);
		return;
	}
	t.used_as_threshold = pc_config_lctx_is_threshold(l, name);
	pc_jx_fields(l, o, path, tun_fields);
	i = pc_jx_enum(l, o, path, "type", tun_types, 0);
	ok &= i >= 0;
	t.type = i < 0 ? PC_TUN_FLOAT : (enum pc_tun_type)i;
	ok &= pc_jx_num(l, o, path, "default", true, &t.def);
	if (t.type != PC_TUN_BOOL) {
		ok &= pc_jx_num(l, o, path, "min", true, &t.min);
		ok &= pc_jx_num(l, o, path, "max", true, &t.max);
	}
	if (pc_jx_str(l, o, path, "units", false, &s))
		t.units = pc_jx_strdup(s);
	if (pc_jx_str(l, o, path, "description", true, &s))
		t.desc = pc_jx_strdup(s);
	else
		ok = false;
	i = pc_jx_enum(l, o, path, "visibility", tun_vis, 0);
	ok &= i >= 0;
	t.developer = i == 1;
	t.value = t.def;
	if (ok && t.min > t.max) {
		pc_jx_err(l, path, "min %g is above max %g", t.min, t.max);
		ok = false;
	}
	if (ok && !value_ok(&t, t.def)) {
		char msg[256], sub[256];

		pc_jx_path(sub, sizeof(sub), "%s.default", path);
		range_msg(msg, sizeof(msg), &t, t.def);
		pc_jx_err(l, sub, "%s", msg);
		ok = false;
	}
	if (!ok) {
		pc_tunables_free(&t);
		return;
	}
	struct pc_tunable *old = pc_tunables_find(l->c, name);

	if (old) {
		pc_tunables_free(old);
		*old = t;
		return;
	}
	*PC_APPEND(l->c->tun, l->c->ntun) = t;
}

void pc_tunables_parse(struct pc_lctx *l, json_t *obj)
{
	const char *name;
	json_t *v;
	char path[256];

	json_object_foreach(obj, name, v) {
		pc_jx_path(path, sizeof(path), "$.tunables.%s", name);
		if (!json_is_object(v)) {
			pc_jx_err(l, path, "expected an object, got %s",
				pc_jx_type_name(v));
			continue;
		}
		parse_one(l, name, v, path);
	}
}

static const char **tunable_names(const struct pc_config *c)
{
	const char **names = calloc(c->ntun + 1, sizeof(char *));

	if (names == NULL)
		abort();
	for (size_t i = 0; i < c->ntun; i++)
		names[i] = c->tun[i].name;
	return names;
}

/* "set": { "NAME": value } after all tunables of the file are known; the
 * range check uses the final "used as threshold" marks, so the loader
 * calls this after hypotheses are parsed. */
void pc_tunables_apply_set(struct pc_lctx *l, json_t *obj)
{
	const char *name;
	json_t *v;
	char path[256], msg[256];

	json_object_foreach(obj, name, v) {
		struct pc_tunable *t = pc_tunables_find(l->c, name);
		struct pc_loc loc;
		double x;

		pc_jx_path(path, sizeof(path), "$.set.%s", name);
		pc_jx_loc_set(l, &loc, path);
		if (t == NULL) {
			const char **names = tunable_names(l->c);

			pc_jx_err_unknown(l, &loc, "tunable", name,
					"a tunable defined under $.tunables",
					names, l->c->ntun);
			free(names);
			continue;
		}
		if (!json_is_number(v) && !json_is_boolean(v)) {
			pc_jx_err(l, path, "expected a number, got %s",
				pc_jx_type_name(v));
			continue;
		}
		x = json_is_boolean(v) ? json_is_true(v) : json_number_value(v);
		t->used_as_threshold |= pc_config_lctx_is_threshold(l, name);
		if (!value_ok(t, x)) {
			range_msg(msg, sizeof(msg), t, x);
			pc_jx_err(l, path, "%s", msg);
			continue;
		}
		t->value = x;
	}
}

int pc_tunables_set(struct pc_config *c, const char *name, double v,
		   struct hunch_err *e)
{
	struct pc_tunable *t = pc_tunables_find(c, name);
	char msg[256];

	if (t == NULL) {
		const char **names = tunable_names(c);
		const char *s = pc_jx_suggest(name, names, c->ntun);
		int r;

		if (s)
			r = hunch_err_set(e, -ENOENT, "--set: unknown tunable "
				       "\"%s\" (did you mean \"%s\"?)", name, s);
		else
			r = hunch_err_set(e, -ENOENT, "--set: unknown tunable "
				       "\"%s\"; `hunch check --list` shows "
				       "them all", name);
		free(names);
		return r;
	}
	if (!value_ok(t, v)) {
		range_msg(msg, sizeof(msg), t, v);
		return hunch_err_set(e, -ERANGE, "--set: %s", msg);
	}
	t->value = v;
	return 0;
}

int pc_tunables_set_str(struct pc_config *c, const char *assign,
		       struct hunch_err *e)
{
	const char *eq = strchr(assign, '=');
	char name[128], *end;
	double v;

	if (eq == NULL || eq == assign || (size_t)(eq - assign) >= sizeof(name))
		return hunch_err_set(e, -EINVAL, "--set: expected NAME=VALUE, "
				  "got \"%s\"", assign);
	memcpy(name, assign, (size_t)(eq - assign));
	name[eq - assign] = '\0';
	if (strcmp(eq + 1, "true") == 0)
		v = 1;
	else if (strcmp(eq + 1, "false") == 0)
		v = 0;
	else {
		errno = 0;
		v = strtod(eq + 1, &end);
		if (eq[1] == '\0' || *end != '\0' || errno)
			return hunch_err_set(e, -EINVAL,
					     "--set %s: \"%s\" is not "
					     "a number (or true/false)",
					     name, eq + 1);
	}
	return pc_tunables_set(c, name, v, e);
}
