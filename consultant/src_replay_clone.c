/*
 * src_replay_clone.c - a deep copy of a consultant, for the replay's
 * checkpoints (src_replay_ckpt.h).
 *
 * It copies what pc_consult_free frees: the searches (every node with
 * its name, parents and children), the ended current phases, the data
 * manager's instances (strings and histograms) and the log.  The
 * configuration, the source and the resource tree are shared, as they
 * are between a consultant and its caller.  A field that owns memory
 * added to these structs must be copied here too:
 * tests/replay/test_replay_ckpt.c compares a restored search with one
 * played to the same tick, field by field through the reports and
 * traces.
 */
#include "src_replay_ckpt.h"

#include <stdlib.h>
#include <string.h>

#include "pc_search.h"

static void *dup_mem(const void *p, size_t n, size_t *bytes)
{
	void *q;

	if (p == NULL || n == 0)
		return NULL;
	if ((q = malloc(n)) == NULL)
		abort();   /* as the consultant does: no half-made search */
	memcpy(q, p, n);
	*bytes += n;
	return q;
}

static char *dup_str(const char *s, size_t *bytes)
{
	return s ? dup_mem(s, strlen(s) + 1, bytes) : NULL;
}

static struct pc_node *node_clone(const struct pc_node *n, size_t *bytes)
{
	struct pc_node *c = dup_mem(n, sizeof(*n), bytes);

	c->name = dup_str(n->name, bytes);
	c->parents = dup_mem(n->parents, n->nparents * sizeof(*n->parents),
			     bytes);
	c->kids = dup_mem(n->kids, n->nkids * sizeof(*n->kids), bytes);
	return c;
}

static struct pc_search *search_clone(const struct pc_search *s,
				      size_t *bytes)
{
	struct pc_search *c;

	if (s == NULL)
		return NULL;
	c = dup_mem(s, sizeof(*s), bytes);
	c->cap = s->nn;
	c->nodes = NULL;
	if (s->nn > 0) {
		c->nodes = malloc(s->nn * sizeof(*c->nodes));
		if (c->nodes == NULL)
			abort();
		*bytes += s->nn * sizeof(*c->nodes);
	}
	for (size_t i = 0; i < s->nn; i++)
		c->nodes[i] = node_clone(s->nodes[i], bytes);
	return c;
}

static struct pc_minst *minst_clone(const struct pc_minst *m, size_t *bytes)
{
	struct pc_minst *c = dup_mem(m, sizeof(*m), bytes);

	c->metric = dup_str(m->metric, bytes);
	c->fail_reason = dup_str(m->fail_reason, bytes);
	return c;
}

static void dm_clone(struct pc_datamgr *c, const struct pc_datamgr *dm,
		     size_t *bytes)
{
	*c = *dm;
	c->cap = dm->n;
	c->mi = NULL;
	if (dm->n > 0) {
		c->mi = malloc(dm->n * sizeof(*c->mi));
		if (c->mi == NULL)
			abort();
		*bytes += dm->n * sizeof(*c->mi);
	}
	for (size_t i = 0; i < dm->n; i++)
		c->mi[i] = minst_clone(dm->mi[i], bytes);
	/* the predictions asked this tick (asked once per tick) */
	c->pred = NULL;
	c->cappred = dm->npred;
	if (dm->npred > 0)
		c->pred = dup_mem(dm->pred, dm->npred * sizeof(*dm->pred),
				  bytes);
	for (size_t i = 0; i < dm->npred; i++)
		c->pred[i].metric = dup_str(dm->pred[i].metric, bytes);
}

static void log_clone(struct pc_consult *c, const struct pc_consult *pc,
		      size_t *bytes)
{
	c->log = NULL;
	c->caplog = 0;
	if (pc->nlog == 0)
		return;
	c->caplog = pc->nlog;
	c->log = malloc(c->caplog * sizeof(*c->log));
	if (c->log == NULL)
		abort();
	*bytes += c->caplog * sizeof(*c->log);
	for (size_t i = 0; i < pc->nlog; i++)
		c->log[i] = dup_str(pc->log[i], bytes);
}

/* The clone's node for `n`, a node of one of pc's searches (the node
 * whose cost change is being measured: pc_cost_learn_probe_next). */
static struct pc_node *node_in_clone(const struct pc_consult *pc,
				     const struct pc_consult *c,
				     const struct pc_node *n)
{
	const struct pc_search *from[2] = { pc->global, pc->current };
	struct pc_search *to[2] = { c->global, c->current };

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; from[k] != NULL && i < from[k]->nn; i++)
			if (from[k]->nodes[i] == n)
				return to[k]->nodes[i];
	for (size_t e = 0; e < pc->nended; e++)
		for (size_t i = 0; i < pc->ended[e]->nn; i++)
			if (pc->ended[e]->nodes[i] == n)
				return c->ended[e]->nodes[i];
	return NULL;
}

struct pc_consult *src_replay_clone(const struct pc_consult *pc, bool log,
				    bool dm, size_t *bytes)
{
	struct pc_consult *c = dup_mem(pc, sizeof(*pc), bytes);

	if (dm) {
		dm_clone(&c->dm, &pc->dm, bytes);
	} else {
		c->dm.mi = NULL;
		c->dm.n = c->dm.cap = 0;
		c->dm.pred = NULL;
		c->dm.npred = c->dm.cappred = 0;
	}
	c->global = search_clone(pc->global, bytes);
	/* current is the global search's, or a phase's of its own */
	c->current = pc->current == pc->global ? c->global :
		     search_clone(pc->current, bytes);
	c->ended = NULL;
	if (pc->nended > 0) {
		c->ended = malloc(pc->nended * sizeof(*c->ended));
		if (c->ended == NULL)
			abort();
		*bytes += pc->nended * sizeof(*c->ended);
	}
	for (size_t i = 0; i < pc->nended; i++)
		c->ended[i] = search_clone(pc->ended[i], bytes);
	if (log) {
		log_clone(c, pc, bytes);
	} else {
		c->log = NULL;
		c->caplog = 0;
	}
	/* the cost learnt per hypothesis, and the change being measured */
	c->hyp_factor = pc->nhyp_factor ? dup_mem(pc->hyp_factor,
			pc->nhyp_factor * sizeof(*pc->hyp_factor), bytes) : NULL;
	c->probe = pc->probe ? node_in_clone(pc, c, pc->probe) : NULL;
	return c;
}
