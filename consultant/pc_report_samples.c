/*
 * pc_report_samples.c - the report's stack samples section (see
 * pc_report_samples.h).  Text only from the recorded object's fields.
 */
#include "pc_report_samples.h"

#include <string.h>

json_t *pc_report_samples_get(const struct pc_consult *pc)
{
	if (pc->src == NULL || pc->src->ops->stack_samples == NULL)
		return NULL;
	return pc->src->ops->stack_samples(pc->src);
}

const char *pc_report_samples_name(const json_t *fn, char *buf, size_t len)
{
	const char *name = json_string_value(json_object_get(fn, "function"));
	const char *mod = json_string_value(json_object_get(fn, "module"));
	const char *path = json_string_value(json_object_get(fn, "path"));
	const char *file;

	/* a Python function is named by its script, as the findings name
	 * it: /Code/<python>/<file>/<qualname> */
	if (name != NULL && mod != NULL && strcmp(mod, "<python>") == 0 &&
	    path != NULL && (file = strstr(path, "/<python>/")) != NULL) {
		file += strlen("/<python>/");
		snprintf(buf, len, "`%s` (%.*s)", name,
			 (int)strcspn(file, "/"), file);
	} else if (name != NULL)
		snprintf(buf, len, "`%s` (%s)", name, mod ? mod : "?");
	else
		snprintf(buf, len, "code in (%s)", mod ? mod : "?");
	return buf;
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* The function that called `self` most: the second of the first
 * chain (the most samples first) that starts at `self`, or NULL. */
static const json_t *caller_of(const json_t *s, const json_t *self)
{
	const char *p = json_string_value(json_object_get(self, "path"));
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(s, "chains"), i, c) {
		const json_t *fns = json_object_get(c, "functions");
		const char *q = json_string_value(json_object_get(
			json_array_get(fns, 0), "path"));

		if (p && q && strcmp(p, q) == 0 && json_array_size(fns) > 1)
			return json_array_get(fns, 1);
	}
	return NULL;
}

static void text_list(const json_t *a, const char *title, FILE *f)
{
	char name[512];
	size_t i;
	json_t *e;

	fprintf(f, "  %s:\n", title);
	json_array_foreach(a, i, e)
		fprintf(f, "    %5.1f%% %6lld  %s\n", num(e, "percent"),
			(long long)json_integer_value(json_object_get(e,
								"samples")),
			pc_report_samples_name(e, name, sizeof(name)));
}

static void text_chains(const json_t *a, FILE *f)
{
	char name[512];
	size_t i, k;
	json_t *e, *fn;

	fprintf(f, "  call chains (innermost first, called from the next):\n");
	json_array_foreach(a, i, e) {
		fprintf(f, "    %5.1f%% %6lld  ", num(e, "percent"),
			(long long)json_integer_value(json_object_get(e,
								"samples")));
		json_array_foreach(json_object_get(e, "functions"), k, fn)
			fprintf(f, "%s%s", k ? " <- " : "",
				pc_report_samples_name(fn, name, sizeof(name)));
		fprintf(f, "\n");
	}
}

void pc_report_samples_text(const json_t *s, FILE *f)
{
	const json_t *self, *caller;
	char name[512];

	if (s == NULL)
		return;
	self = json_array_get(json_object_get(s, "self"), 0);
	fprintf(f, "\nstack samples (sampled, not concluded by the search): "
		"%lld over %.1f s, %.1f CPU",
		(long long)json_integer_value(json_object_get(s, "count")),
		num(s, "seconds"), num(s, "cpus"));
	if (self != NULL) {
		fprintf(f, ": %.0f%% in %s", num(self, "percent"),
			pc_report_samples_name(self, name, sizeof(name)));
		caller = caller_of(s, self);
		if (caller != NULL)
			fprintf(f, ", called from %s",
				pc_report_samples_name(caller, name,
						       sizeof(name)));
	}
	fprintf(f, "\n");
	text_list(json_object_get(s, "self"), "by self samples", f);
	text_list(json_object_get(s, "inclusive"), "by inclusive samples", f);
	text_chains(json_object_get(s, "chains"), f);
}
