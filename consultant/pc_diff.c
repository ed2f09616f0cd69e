/* pc_diff.c - conclusions that differ between two searches (pc_diff.h). */
#include "pc_diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct pc_node *find(const struct pc_search *s,
				  const char *name)
{
	for (size_t i = 0; s && i < s->nn; i++)
		if (strcmp(s->nodes[i]->name, name) == 0)
			return s->nodes[i];
	return NULL;
}

static enum pc_truth truth(const struct pc_node *n)
{
	return n ? n->truth : PC_UNKNOWN;
}

static double since(const struct pc_node *n)
{
	return n && n->truth == PC_TRUE ? n->t_true_since : NAN;
}

static bool differs(const struct pc_node *a, const struct pc_node *b)
{
	if (truth(a) != truth(b))
		return true;
	return truth(a) == PC_TRUE && fabs(since(a) - since(b)) > 1e-9;
}

/* A node whose experiment the journal could not answer. */
static bool unrecorded(const struct pc_consult *pc, const struct pc_node *n)
{
	for (int k = 0; n && k < n->nin; k++) {
		const struct pc_minst *m = pc_datamgr_get(&pc->dm, n->inst[k]);

		if (m && m->fail_reason &&
		    strstr(m->fail_reason, "not recorded") != NULL)
			return true;
	}
	return false;
}

static void add(struct pc_change **out, size_t *n, size_t *cap, int sid,
		const struct pc_node *a, const struct pc_node *b,
		const struct pc_consult *now)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*out = realloc(*out, *cap * sizeof(**out));
		if (*out == NULL)
			abort();
	}
	(*out)[(*n)++] = (struct pc_change){
		.search = sid, .name = strdup(a ? a->name : b->name),
		.was = truth(a), .now = truth(b),
		.was_since = since(a), .now_since = since(b),
		.not_recorded = unrecorded(now, b),
	};
}

size_t pc_diff_conclusions(const struct pc_consult *was,
			   const struct pc_consult *now,
			   struct pc_change **out)
{
	size_t n = 0, cap = 0;
	int top = was->nphases > now->nphases ? was->nphases : now->nphases;

	*out = NULL;
	for (int sid = 0; sid <= top; sid++) {
		const struct pc_search *a = pc_consult_search(was, sid);
		const struct pc_search *b = pc_consult_search(now, sid);

		for (size_t i = 0; b && i < b->nn; i++) {
			const struct pc_node *x = find(a, b->nodes[i]->name);

			if (differs(x, b->nodes[i]))
				add(out, &n, &cap, sid, x, b->nodes[i], now);
		}
		for (size_t i = 0; a && i < a->nn; i++)
			if (find(b, a->nodes[i]->name) == NULL &&
			    a->nodes[i]->truth != PC_UNKNOWN)
				add(out, &n, &cap, sid, a->nodes[i], NULL, now);
	}
	return n;
}

void pc_diff_changes_free(struct pc_change *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
	free(c);
}

static const char *word(enum pc_truth t)
{
	return t == PC_TRUE ? "true" : t == PC_FALSE ? "false" : "unknown";
}

static void side(FILE *f, enum pc_truth t, double since)
{
	fputs(word(t), f);
	if (t == PC_TRUE)
		fprintf(f, " since %.1f s", since);
}

void pc_diff_print(const struct pc_change *c, size_t n, FILE *f)
{
	fprintf(f,
		"\nChanged conclusions (recorded -> replayed with new tunables): %zu\n",
		n);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "  %s%s: ", c[i].search ? "[phase] " : "",
			c[i].name);
		side(f, c[i].was, c[i].was_since);
		fputs(" -> ", f);
		side(f, c[i].now, c[i].now_since);
		if (c[i].not_recorded)
			fputs(" (experiment not recorded)", f);
		fputc('\n', f);
	}
}

json_t *pc_diff_json(const struct pc_change *c, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:i,s:s,s:s,s:s,s:b}",
			"search", c[i].search, "node", c[i].name,
			"recorded", word(c[i].was), "replayed", word(c[i].now),
			"not_recorded", c[i].not_recorded));
	return a;
}
