/*
 * pc_cost_order.c - the order of the run queue: which queued experiment
 * launches next when the cost controls (pc_cost.c) let one go.
 *
 * Among equal priorities (a why-refinement before a where-refinement):
 * confirmed before speculative (started early under a parent not true
 * yet), deeper before shallower within one why-branch, then the
 * source's evidence, then oldest.
 */
#include "pc_search.h"

/* How far a node's hypothesis is below the root of the why axis. */
int pc_cost_order_why_depth(const struct pc_consult *pc,
			    const struct pc_node *n)
{
	int d = 0;

	for (int h = n->hyp; h >= 0 && d < 64; d++)
		h = pc->cfg->hyp[h].parent_idx;
	return d;
}

/* No evidence at all: the source watched and never saw the program in
 * that resource (a function that ran once at start-up, a thread that
 * only sleeps).  Unknown (-1: the source cannot see that kind of
 * resource, a file written through the page cache) is not "none". */
bool pc_cost_order_no_evidence(const struct pc_node *n)
{
	return n->hint >= 0 && n->hint < 1e-9;
}

/* Among equal priorities and hypothesis depths: a dominant descendant
 * (skipDominantLevels) first, then refinements with some or unknown
 * evidence, then one on the path to a dominant descendant (its test
 * mostly answered by the descendant's), then none seen busy. */
static int evidence_class(const struct pc_node *n)
{
	/* The why-parent tested the same focus false (the demo's small
	 * writes in __lll_lock_wait, where ExcessiveIOBlockingTime was
	 * false: a dominant guess of a lock-bound chain) is measured
	 * evidence against, stronger than the sampler's share. */
	if (pc_cost_order_no_evidence(n) || n->why_ev < 0)
		return 3;
	if (n->why_ev > 0)
		return 0;
	if (n->dominant)
		return 0;
	return n->implied ? 2 : 1;
}

/* The top-level hypothesis n's hypothesis refines (the one under
 * topLevelHypothesis): its why-branch. */
int pc_cost_order_why_root(const struct pc_consult *pc,
			   const struct pc_node *n)
{
	int h = n->hyp;

	for (int k = 0; k < 64 && h >= 0; k++) {
		int up = pc->cfg->hyp[h].parent_idx;

		if (up < 0 || pc->cfg->hyp[up].parent_idx < 0)
			return h;
		h = up;
	}
	return h;
}

/* Started early (pc_early.c) under a parent not true yet: among equal
 * priorities after every refinement of a true node, so a speculation
 * never takes the budget from a confirmed level. */
static bool speculative(const struct pc_node *n)
{
	return n->early && n->ntrue_parents == 0;
}

/* Does n come before b in the queue (b at depth bd, n at depth d)?
 * Depth orders refinements within one why-branch only: across branches
 * a deeper one must not starve another (the demo's CPUdemand
 * refinements, under CPUstarved, went before every lock refinement and
 * demo_worker's lock wait was never tested under load). */
static bool runs_before(const struct pc_consult *pc, const struct pc_node *n,
			int d, const struct pc_node *b, int bd)
{
	if (n->priority != b->priority)
		return n->priority < b->priority;
	if (speculative(n) != speculative(b))
		return speculative(b);
	if (d != bd &&
	    pc_cost_order_why_root(pc, n) == pc_cost_order_why_root(pc, b))
		return d > bd;
	if (evidence_class(n) != evidence_class(b))
		return evidence_class(n) < evidence_class(b);
	return n->seq < b->seq;
}

/* The head of a search's queue: smallest priority; among equals, the
 * more specific hypothesis (a where-refinement of TooManySmallIOOps
 * before one of its parent ExcessiveIOBlockingTime: the narrower why is
 * the better explanation, and under a tight cost limit the first
 * tested); then a resource with some (or unknown) evidence before one
 * the source never saw busy (rank_kids orders siblings by evidence;
 * this demotes, across parents, bnsw_parse, bnsw_open and bnsw_now,
 * which run once at start-up, behind the thread doing every write()
 * on bn_smallwrites); then oldest.  Ordering every refinement by its
 * share instead starved bn_smallwrites' file (unknown: page-cache
 * writes never block), shed and queued last again and again. */
struct pc_node *pc_cost_order_head(const struct pc_consult *pc,
				   const struct pc_search *s)
{
	struct pc_node *best = NULL;
	int bd = 0;

	for (size_t i = 0; i < s->nn; i++) {
		struct pc_node *n = s->nodes[i];
		int d;

		if (!n->queued || n->rate_wait)
			continue;
		d = pc_cost_order_why_depth(pc, n);
		if (best == NULL || runs_before(pc, n, d, best, bd)) {
			best = n;
			bd = d;
		}
	}
	return best;
}
