/*
 * pc_config_diff.c - how a loaded configuration differs from the shipped
 * defaults, said in lines a person reads (see pc_config_diff.h).
 *
 * A user's overlay in ~/.config/hunch is loaded by every later run; a
 * report whose thresholds were not the shipped ones must say so, or its
 * conclusions cannot be compared with anyone else's.  The comparison is
 * with the shipped file loaded alone: a tunable differs when its value
 * does (an overlay's "set", --set, a redefinition); a hypothesis when it
 * is new, or its parent, threshold, comparison or inputs' count changed;
 * a metric, constraint or list when it is new or another file redefined
 * it (their instrumentation is not compared piece by piece).
 */
#include "pc_config_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct diff {
	const struct pc_config *shipped;
	pc_config_diff_fn fn;
	void *arg;
	size_t n;
};

static void say(struct diff *d, const char *fmt, const char *name,
		const struct pc_loc *l)
{
	char line[512];

	d->n++;
	if (d->fn == NULL)
		return;
	snprintf(line, sizeof line, fmt, name, l->file ? l->file : "?",
		 l->line);
	d->fn(d->arg, line);
}

static bool same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	       (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void tunables(struct diff *d, const struct pc_config *c)
{
	char line[512];

	for (size_t i = 0; i < c->ntun; i++) {
		const struct pc_tunable *t = &c->tun[i], *s = NULL;

		for (size_t j = 0; j < d->shipped->ntun && s == NULL; j++)
			if (strcmp(d->shipped->tun[j].name, t->name) == 0)
				s = &d->shipped->tun[j];
		if (s == NULL) {
			say(d, "tunable %s: new, defined in %s:%d", t->name,
			    &t->loc);
			continue;
		}
		if (s->value == t->value)
			continue;
		d->n++;
		snprintf(line, sizeof line, "tunable %s = %g (shipped: %g)",
			 t->name, t->value, s->value);
		if (d->fn != NULL)
			d->fn(d->arg, line);
	}
}

static const struct pc_hypothesis *shipped_hyp(const struct diff *d,
					       const char *name)
{
	for (size_t j = 0; j < d->shipped->nhyp; j++)
		if (strcmp(d->shipped->hyp[j].name, name) == 0)
			return &d->shipped->hyp[j];
	return NULL;
}

static void hypotheses(struct diff *d, const struct pc_config *c)
{
	for (size_t i = 0; i < c->nhyp; i++) {
		const struct pc_hypothesis *h = &c->hyp[i];
		const struct pc_hypothesis *s = shipped_hyp(d, h->name);

		if (s == NULL)
			say(d, "hypothesis %s: new, defined in %s:%d",
			    h->name, &h->loc);
		else if (!same_str(s->parent, h->parent) ||
			 !same_str(s->threshold, h->threshold) ||
			 s->cmp != h->cmp || s->nin != h->nin ||
			 s->expand != h->expand)
			say(d, "hypothesis %s: changed in %s:%d", h->name,
			    &h->loc);
	}
}

/* Metrics, constraints and lists: new, or redefined by another file. */
static void defined(struct diff *d, const char *kind, const char *name,
		    const struct pc_loc *l, bool in_shipped)
{
	char fmt[128];

	if (in_shipped && (l->file == NULL || d->shipped->nfiles == 0 ||
			   strcmp(l->file, d->shipped->files[0]) == 0))
		return;
	snprintf(fmt, sizeof fmt, "%s %%s: %s in %%s:%%d", kind,
		 in_shipped ? "redefined" : "new, defined");
	say(d, fmt, name, l);
}

#define HAS(arr, n, nm) ({ bool f_ = false;                              \
	for (size_t j_ = 0; j_ < (n) && !f_; j_++)                      \
		f_ = strcmp((arr)[j_].name, (nm)) == 0;                 \
	f_; })

size_t pc_config_diff(const struct pc_config *c,
		      const struct pc_config *shipped, pc_config_diff_fn fn,
		      void *arg)
{
	struct diff d = { .shipped = shipped, .fn = fn, .arg = arg };
	const struct pc_config *s = shipped;

	tunables(&d, c);
	hypotheses(&d, c);
	for (size_t i = 0; i < c->nmet; i++)
		defined(&d, "metric", c->met[i].name, &c->met[i].loc,
			HAS(s->met, s->nmet, c->met[i].name));
	for (size_t i = 0; i < c->ncon; i++)
		defined(&d, "constraint", c->con[i].name, &c->con[i].loc,
			HAS(s->con, s->ncon, c->con[i].name));
	for (size_t i = 0; i < c->nlists; i++)
		defined(&d, "list", c->lists[i].name, &c->lists[i].loc,
			HAS(s->lists, s->nlists, c->lists[i].name));
	return d.n;
}

static void append_line(void *arg, const char *line)
{
	json_array_append_new(arg, json_string(line));
}

json_t *pc_config_diff_summary(const struct pc_config *c,
			  const struct pc_config *shipped)
{
	json_t *files = json_array(), *differs = json_array();

	for (size_t i = 0; i < c->nfiles; i++)
		json_array_append_new(files, json_string(c->files[i]));
	pc_config_diff(c, shipped, append_line, differs);
	return json_pack("{s:o, s:o}", "files", files, "differs", differs);
}

char *pc_config_diff_summary_line(const json_t *summary)
{
	const json_t *files = json_object_get(summary, "files");
	size_t nd = json_array_size(json_object_get(summary, "differs"));
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m;
	json_t *f;

	if (!json_is_array(files) || json_array_size(files) == 0 ||
	    (m = open_memstream(&buf, &len)) == NULL)
		return NULL;
	if (nd == 0 && json_array_size(files) == 1) {
		fprintf(m, "the shipped defaults (%s)",
			json_string_value(json_array_get(files, 0)));
	} else {
		json_array_foreach(files, i, f)
			fprintf(m, "%s%s", i ? ", " : "", json_string_value(f));
		if (nd == 0)
			fprintf(m, " (the same values as the shipped defaults)");
		else
			fprintf(m, " (%zu difference%s from the shipped "
				"defaults)", nd, nd == 1 ? "" : "s");
	}
	fclose(m);
	return buf;
}
