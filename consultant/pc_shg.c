/* pc_shg.c - the search history graph's store (see pc_shg.h). */
#include "pc_shg.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pc_search *pc_shg_new(int id, const char *label, double t)
{
	struct pc_search *s = calloc(1, sizeof(*s));

	if (s == NULL)
		abort();
	s->id = id;
	snprintf(s->label, sizeof(s->label), "%s", label);
	s->t_start = t;
	s->t_end = -1;
	s->root = -1;
	return s;
}

void pc_shg_free(struct pc_search *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nn; i++) {
		free(s->nodes[i]->name);
		free(s->nodes[i]->parents);
		free(s->nodes[i]->kids);
		free(s->nodes[i]);
	}
	free(s->nodes);
	free(s);
}

struct pc_node *pc_shg_node(const struct pc_search *s, int id)
{
	if (id < 0 || (size_t)id >= s->nn)
		return NULL;
	return s->nodes[id];
}

int pc_shg_find(const struct pc_search *s, int hyp, const struct pc_focus *f)
{
	for (size_t i = 0; i < s->nn; i++)
		if (s->nodes[i]->hyp == hyp &&
		    pc_focus_eq(&s->nodes[i]->focus, f))
			return (int)i;
	return -1;
}

static void add_edge(struct pc_search *s, int parent, int child, bool why,
		     bool shadow)
{
	struct pc_node *p = s->nodes[parent], *c = s->nodes[child];

	p->kids = realloc(p->kids, (p->nkids + 1) * sizeof(*p->kids));
	c->parents = realloc(c->parents,
			     (c->nparents + 1) * sizeof(*c->parents));
	if (p->kids == NULL || c->parents == NULL)
		abort();
	p->kids[p->nkids++] = (struct pc_edge){ child, why, shadow };
	c->parents[c->nparents++] = parent;
}

int pc_shg_add(struct pc_search *s, int parent, int hyp,
	       const struct pc_focus *f, bool why, const char *name, double t,
	       bool *created)
{
	int id = pc_shg_find(s, hyp, f);
	struct pc_node *n;

	if (id >= 0) {
		struct pc_node *e = s->nodes[id];
		bool dup = false;

		for (size_t i = 0; parent >= 0 && i < e->nparents; i++)
			dup |= e->parents[i] == parent;
		if (parent >= 0 && !dup && parent != id)
			add_edge(s, parent, id, why, true);
		*created = false;
		return id;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		abort();
	n->id = (int)s->nn;
	n->hyp = hyp;
	n->focus = *f;
	n->name = strdup(name);
	n->orig_parent = parent;
	n->narrow = -1;
	n->guess = -1;
	n->no_input = -1;
	n->hint = -1;
	n->implied_by = -1;
	n->t_created = t;
	n->t_start = n->t_concluded = n->t_true_since = -1;
	n->t_was_from = n->t_was_to = -1;
	n->was_value = NAN;
	if (s->nn == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->nodes = realloc(s->nodes, s->cap * sizeof(*s->nodes));
		if (s->nodes == NULL)
			abort();
	}
	s->nodes[s->nn++] = n;
	if (parent >= 0)
		add_edge(s, parent, n->id, why, false);
	*created = true;
	return n->id;
}

void pc_shg_node_trace(struct pc_node *n, const char *state)
{
	size_t len = strlen(n->trace);
	const char *last = strrchr(n->trace, ' ');

	last = last ? last + 1 : n->trace;
	if (len && strcmp(last, state) == 0)
		return;
	snprintf(n->trace + len, sizeof(n->trace) - len, "%s%s",
		 len ? " " : "", state);
}

int pc_shg_lookup(const struct pc_search *s, const struct pc_config *cfg,
		  const char *hyp, const char *focus_name)
{
	for (size_t i = 0; i < s->nn; i++) {
		const char *nm = s->nodes[i]->name;
		size_t hl = strlen(cfg->hyp[s->nodes[i]->hyp].name);

		if (strcmp(cfg->hyp[s->nodes[i]->hyp].name, hyp) == 0 &&
		    strcmp(nm + hl, focus_name) == 0)
			return (int)i;
	}
	return -1;
}

const char *pc_shg_truth_name(enum pc_truth t)
{
	return t == PC_TRUE ? "true" : t == PC_FALSE ? "false" : "unknown";
}

double pc_shg_node_judged(const struct pc_node *n)
{
	if (strcmp(n->how, "time limit") == 0 && n->run_len > 0)
		return n->run_sum / n->run_len;
	/* still true while its latest values lie on the false side (not
	 * concluded false yet: a worker's last interval as it exits): the
	 * mean its truth rests on, not theirs, which read "0.25 > 0.3" */
	if (n->truth == PC_TRUE && n->guess == 0 && n->held_set)
		return n->held_mean;
	return n->wn > 0 ? n->wmean : n->value;
}

bool pc_shg_node_holds(const struct pc_node *n, enum pc_cmp cmp)
{
	double v = pc_shg_node_judged(n);

	return cmp == PC_CMP_GT ? v > n->threshold : v < n->threshold;
}
