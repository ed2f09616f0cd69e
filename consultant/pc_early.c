/*
 * pc_early.c - refinements started before their parent concludes
 * (refineEarly): when a node's guess is true and its mean lies far past
 * the band's true edge, its refinements are queued at once instead of
 * after its conclusion.
 *
 * Why: each level of the search waits for its parent's conclusion (the
 * sequential test's 3 whole intervals, 0.6-0.8 s) before its own
 * experiments even start, so a finding four levels down (bn_smallwrites'
 * file, bn_mutex's threads) costs four such waits.  A parent whose first
 * whole interval is already, say, ten times its threshold will almost
 * always conclude true; its children's experiments can run meanwhile.
 *
 * Soundness: the early start only moves when experiments run, never what
 * concludes them.  An early refinement is held (pc_early_held): it
 * collects data and its sequential test keeps spending its looks, but it
 * concludes nothing - true or false - until one of its parents is true;
 * so every conclusion still has the true parent Paradyn's search gives
 * it, and its test is the same test (looks spent while held only make
 * it more cautious).  If the parent concludes false first, its early
 * refinements that have no other true parent are withdrawn (dequeued or
 * stopped, traced "withdrawn"): as if never made, they are not reported
 * as untested (pc_untested.c: nothing left to answer).  The cost gate
 * launches them after the refinements of true nodes among equal
 * priorities (pc_cost.c), so a speculation never takes the budget from
 * a confirmed level.
 *
 * Replay: a configuration without the tunable (a journal recorded before
 * it existed) never expands early: the search it recorded.
 */
#include "pc_search.h"

#include <stdio.h>

#define PRIO_WHY 5      /* as pc_truth.c */
#define PRIO_WHERE 10

/* refineEarly's factor, 0 (off) when absent or 0. */
static double early_factor(const struct pc_consult *pc)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg, "refineEarly");

	return t ? t->value : 0;
}

/* The guess is true and the mean since it turned so is past the band's
 * true edge by the factor f: "above" f times threshold*(1+h), "below"
 * under threshold*(1-h) / f. */
static bool holds_clearly(const struct pc_consult *pc,
			  const struct pc_node *n, double f)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	double hr = pc_tunables_get(pc->cfg, "hysteresisRange");

	if (n->guess != 1 || n->wn < 1)
		return false;
	if (h->cmp == PC_CMP_GT)
		return n->wmean >= n->threshold * (1 + hr) * f;
	return n->wmean * f <= n->threshold * (1 - hr);
}

bool pc_early_held(const struct pc_search *s, const struct pc_node *n)
{
	return n->early && !pc_truth_has_true_parent(s, n);
}

static bool idle_unknown(const struct pc_node *c)
{
	return c->truth == PC_UNKNOWN && !c->is_virtual && !c->queued &&
	       !c->pending && !c->active && !c->skipped && !c->failed &&
	       !c->given_up;
}

void pc_early_consider(struct pc_consult *pc, struct pc_search *s,
		       struct pc_node *n)
{
	double f = early_factor(pc);
	char focus[512];
	int made = 0;

	if (f <= 0 || n->is_virtual || n->expanded ||
	    n->truth != PC_UNKNOWN || !holds_clearly(pc, n, f) ||
	    !pc_truth_has_true_parent(s, n))
		return;
	pc_truth_expand(pc, s, n);
	/* Expansion queues only refinements with a true parent: these have
	 * none yet.  By index: nothing below adds kids. */
	for (size_t i = 0; i < n->nkids; i++) {
		struct pc_node *c = pc_shg_node(s, n->kids[i].child);

		if (!idle_unknown(c) || pc_truth_has_true_parent(s, c))
			continue;
		c->early = true;
		pc_cost_queue(pc, s, c, n->kids[i].why ? PRIO_WHY : PRIO_WHERE);
		made++;
	}
	if (made > 0)
		pc_consult_logf(pc, "%s holds clearly for %s (%.4g against "
				"%.4g): %d refinements start before it "
				"concludes",
				pc_truth_node_hyp(pc, n)->name,
				pc_focus_name(pc->res, &n->focus, focus,
					      sizeof(focus)),
				n->wmean, n->threshold, made);
}

void pc_early_withdraw(struct pc_consult *pc, struct pc_search *s,
		       struct pc_node *n)
{
	for (size_t i = 0; i < n->nkids; i++) {
		struct pc_node *c = pc_shg_node(s, n->kids[i].child);

		if (!pc_early_held(s, c) || c->truth != PC_UNKNOWN)
			continue;
		if (c->queued) {
			c->queued = false;
			pc_shg_node_trace(c, "withdrawn");
		} else if (c->active || c->pending) {
			pc_cost_node_stop(pc, c, "withdrawn");
		}
	}
}
