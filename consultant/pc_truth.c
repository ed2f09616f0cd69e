/*
 * pc_truth.c - what a conclusion does to the graph: Paradyn's changeTruth
 * with percolation up (virtual parents are the OR of their children) and
 * down (children need a true parent), and expansion once per node along
 * the hypothesis's expand policy, prune and suppress lists.
 *
 * Where-refinement of /Code follows the static call graph from the start
 * functions (call-graph search, the default), or module -> source file ->
 * function when useCallGraphSearch is off.  In call-graph search a node is
 * "narrowed" to the hierarchy it was refined along, and refines only that
 * one until it is exhausted, then moves on round-robin (pc_source_facts
 * §3 "Call-graph where").
 */
#include "pc_search.h"
#include "pc_kids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRIO_WHY 5
#define PRIO_WHERE 10

const struct pc_hypothesis *pc_truth_node_hyp(const struct pc_consult *pc,
					const struct pc_node *n)
{
	return &pc->cfg->hyp[n->hyp];
}

/* A virtual parent is transparent: it passes on its own eligibility. */
static bool parent_enables(const struct pc_search *s,
			   const struct pc_node *p)
{
	if (p->truth == PC_TRUE)
		return true;
	if (!p->is_virtual)
		return false;
	return p->id == s->root || pc_truth_has_true_parent(s, p);
}

bool pc_truth_has_true_parent(const struct pc_search *s,
			     const struct pc_node *n)
{
	if (n->persistent || n->id == s->root)
		return true;
	for (size_t i = 0; i < n->nparents; i++)
		if (parent_enables(s, pc_shg_node(s, n->parents[i])))
			return true;
	return false;
}

static void percolate_up(struct pc_consult *pc, struct pc_search *s,
			 struct pc_node *n, bool became_true)
{
	char focus[512];

	for (size_t i = 0; i < n->nparents; i++) {
		struct pc_node *p = pc_shg_node(s, n->parents[i]);

		p->ntrue_children += became_true ? 1 : -1;
		if (!p->is_virtual)
			continue;
		/* Virtual: the OR of the children. */
		if (became_true && p->ntrue_children == 1 &&
		    p->truth != PC_TRUE) {
			p->truth = PC_TRUE;
			p->t_true_since = pc->now;
			pc_shg_node_trace(p, "true");
			pc_consult_logf(pc, "%s tested true for %s",
				pc_truth_node_hyp(pc, p)->name,
				pc_focus_name(pc->res, &p->focus, focus,
					      sizeof(focus)));
			percolate_up(pc, s, p, true);
		} else if (!became_true && p->ntrue_children == 0 &&
			   p->truth == PC_TRUE) {
			p->truth = PC_FALSE;
			pc_shg_node_trace(p, "false");
			pc_consult_logf(pc, "%s became false for %s",
				pc_truth_node_hyp(pc, p)->name,
				pc_focus_name(pc->res, &p->focus, focus,
					      sizeof(focus)));
			percolate_up(pc, s, p, false);
		}
	}
}

static bool node_idle(const struct pc_node *n)
{
	return !n->active && !n->pending && !n->queued && !n->skipped &&
	       !n->failed;
}

static int edge_prio(const struct pc_edge *e)
{
	return e->why ? PRIO_WHY : PRIO_WHERE;
}

static void percolate_down(struct pc_consult *pc, struct pc_search *s,
			   struct pc_node *n, bool became_true)
{
	bool callgraph = pc_tunables_get(pc->cfg, "useCallGraphSearch") != 0;

	for (size_t i = 0; i < n->nkids; i++) {
		struct pc_node *c = pc_shg_node(s, n->kids[i].child);

		if (became_true) {
			/* Re-queue on the first true parent only. */
			if (++c->ntrue_parents == 1 && node_idle(c))
				pc_cost_queue(pc, s, c, edge_prio(&n->kids[i]));
			/* Queued early (pc_early.c): its place among equals
			 * dates from now, when its reason to run arose, not
			 * from its parent's guess (a CPU refinement queued
			 * early went before bn_smallwrites' file, whose
			 * parent was true 0.8 s sooner). */
			else if (c->ntrue_parents == 1 && c->early && c->queued)
				c->seq = ++pc->seq;
			continue;
		}
		if (--c->ntrue_parents > 0 || c->persistent || callgraph)
			continue;
		/* Module search: a node with no true parent left is false. */
		if (c->queued) {
			c->queued = false;
			pc_shg_node_trace(c, "dequeued");
		}
		if (c->truth == PC_TRUE || c->active || c->pending)
			pc_truth_change(pc, s, c, PC_FALSE);
	}
}

static void new_path(struct pc_consult *pc, struct pc_search *s,
		     struct pc_node *p);

/* A dominant descendant tested false answers nothing for the kids on its
 * path: they queue again as refinements with evidence of their own (the
 * demo's lock wait at demo_worker waited behind everything else once
 * libc's __lll_lock_wait, its dominant descendant, tested false). */
static void unimply_siblings(struct pc_search *s, const struct pc_node *d)
{
	for (size_t i = 0; i < s->nn; i++) {
		struct pc_node *c = s->nodes[i];

		if (c->implied && c->orig_parent == d->orig_parent &&
		    c->hyp == d->hyp)
			c->implied = false;
	}
}

/* The why-parent's verdict on n's focus (n->why_ev): the same focus
 * tested under the hypothesis n's refines, when that is not virtual. */
static void why_evidence_of(const struct pc_consult *pc,
			    const struct pc_search *s, struct pc_node *n)
{
	int up = pc->cfg->hyp[n->hyp].parent_idx, id;

	if (up < 0 || pc->cfg->hyp[up].is_virtual)
		return;
	id = pc_shg_find(s, up, &n->focus);
	if (id >= 0 && pc_shg_node(s, id)->truth != PC_UNKNOWN)
		n->why_ev = pc_shg_node(s, id)->truth == PC_TRUE ? 1 : -1;
}

/* n concluded: its why-children on the same focus learn the verdict. */
static void why_evidence_to(const struct pc_consult *pc,
			    const struct pc_search *s, const struct pc_node *n)
{
	if (pc->cfg->hyp[n->hyp].is_virtual)
		return;
	for (size_t i = 0; i < pc->cfg->nhyp; i++) {
		int id;

		if (pc->cfg->hyp[i].parent_idx != n->hyp)
			continue;
		id = pc_shg_find(s, (int)i, &n->focus);
		if (id >= 0)
			pc_shg_node(s, id)->why_ev = n->truth == PC_TRUE ? 1 :
						 n->truth == PC_FALSE ? -1 : 0;
	}
}

void pc_truth_change(struct pc_consult *pc, struct pc_search *s,
		     struct pc_node *n, enum pc_truth t)
{
	enum pc_truth was = n->truth;
	char focus[512];

	if (t == was)
		return;
	pc_focus_name(pc->res, &n->focus, focus, sizeof(focus));
	n->truth = t;
	n->t_concluded = pc->now;
	why_evidence_to(pc, s, n);
	if (t == PC_TRUE) {
		n->t_true_since = pc->now;
		n->was_value = pc_shg_node_judged(n);   /* for "earlier" */
		pc_shg_node_trace(n, "true");
		pc_consult_logf(pc, "%s tested true for %s",
				pc_truth_node_hyp(pc, n)->name, focus);
		percolate_up(pc, s, n, true);
		if (!n->expanded)
			pc_truth_expand(pc, s, n);
		else
			percolate_down(pc, s, n, true);
		return;   /* true nodes stay instrumented */
	}
	pc_shg_node_trace(n, "false");
	pc_consult_logf(pc, "%s %s false for %s",
			pc_truth_node_hyp(pc, n)->name,
			was == PC_TRUE ? "became" : "tested", focus);
	if (!n->persistent && (n->active || n->pending))
		pc_cost_node_stop(pc, n, "stopped");
	pc_early_withdraw(pc, s, n);   /* refinements started early */
	if (was == PC_TRUE) {
		n->t_was_from = n->t_true_since;
		n->t_was_to = pc->now;
		percolate_up(pc, s, n, false);
		percolate_down(pc, s, n, false);
	}
	if (n->dominant)
		unimply_siblings(s, n);
	if (n->orig_parent >= 0)
		new_path(pc, s, pc_shg_node(s, n->orig_parent));
}


/* Does the hypothesis measure CPU time (its first input a metric the
 * kernel can read as CPU time: cpu_inclusive)?  Only for those is a
 * kid's share of the window, CPU samples where its code never blocks,
 * the evidence of what the hypothesis measures, and the chains below
 * every likely kid followed.  Others follow the focus's own chain, through
 * its first kid, as before: followed below main, the demo's lock and
 * I/O hypotheses tested demo_hot_loop, which never locks or writes, and
 * held those experiments open, on no data, for sufficientTime. */
static bool cpu_hypothesis(const struct pc_consult *pc,
			   const struct pc_hypothesis *hy)
{
	const struct pc_metric_def *m = hy->nin > 0 ?
		pc_metric_def_find(pc->cfg, hy->in[0].metric) : NULL;

	return m != NULL && m->kernel == PC_KERNEL_CPU;
}

static bool suppressed(const struct pc_consult *pc,
		       const struct pc_hypothesis *h, const struct pc_focus *f)
{
	for (size_t i = 0; i < h->nsuppress; i++) {
		size_t len = strlen(h->suppress[i]);

		for (int k = 0; k < PC_NHIER; k++) {
			const char *p = pc_res_get(pc->res, f->r[k])->path;

			if (strncmp(p, h->suppress[i], len) == 0 &&
			    (p[len] == '\0' || p[len] == '/'))
				return true;
		}
	}
	return false;
}

int pc_truth_add_node(struct pc_consult *pc, struct pc_search *s, int parent,
		int hyp, const struct pc_focus *f, bool why)
{
	const struct pc_hypothesis *h = &pc->cfg->hyp[hyp];
	struct pc_node *n, *p = parent >= 0 ? pc_shg_node(s, parent) : NULL;
	char name[640], focus[512];
	bool created;
	int id;

	snprintf(name, sizeof(name), "%s%s", h->name,
		 pc_focus_name(pc->res, f, focus, sizeof(focus)));
	id = pc_shg_add(s, parent, hyp, f, why, name, pc->now, &created);
	n = pc_shg_node(s, id);
	if (created) {
		n->is_virtual = h->is_virtual;
		why_evidence_of(pc, s, n);
		for (int i = 0; i < h->nin; i++) {
			struct pc_focus top, *ff = (struct pc_focus *)f;

			if (h->in[i].top_focus) {
				pc_focus_top(pc->res, &top);
				ff = &top;
			}
			n->pred_cost += pc_datamgr_predict(&pc->dm,
							   h->in[i].metric,
						      ff);
		}
	} else if (p && n->orig_parent != parent) {
		pc_shg_node_trace(n, "shadow");
	}
	if (p && p->truth == PC_TRUE)
		n->ntrue_parents++;
	if (n->is_virtual) {
		if (!n->expanded && pc_truth_has_true_parent(s, n))
			pc_truth_expand(pc, s, n);
	} else if (node_idle(n) && n->truth == PC_UNKNOWN &&
		   pc_truth_has_true_parent(s, n)) {
		pc_cost_queue(pc, s, n, why ? PRIO_WHY : PRIO_WHERE);
	}
	return id;
}

static int expand_why(struct pc_consult *pc, struct pc_search *s,
		      struct pc_node *n)
{
	int made = 0;

	for (size_t i = 0; i < pc->cfg->nhyp; i++) {
		if (pc->cfg->hyp[i].parent_idx != n->hyp)
			continue;
		int id = pc_truth_add_node(pc, s, n->id, (int)i, &n->focus,
					   true);

		/* A why-child keeps the parent's narrowing. */
		if (pc_shg_node(s, id)->orig_parent == n->id) {
			pc_shg_node(s, id)->narrow = n->narrow;
			pc_shg_node(s, id)->tried_hier = n->tried_hier;
		}
		made++;
	}
	return made;
}

/* A where-child of n along h at resource r, or NULL when suppressed.
 * `before`: the hierarchies the child counts as tried. */
static struct pc_node *add_where_kid(struct pc_consult *pc,
				     struct pc_search *s, struct pc_node *n,
				     int h, pc_res_id r, int before)
{
	struct pc_focus f = n->focus;
	struct pc_node *c;

	f.r[h] = r;
	if (suppressed(pc, pc_truth_node_hyp(pc, n), &f))
		return NULL;
	c = pc_shg_node(s, pc_truth_add_node(pc, s, n->id, n->hyp, &f, false));
	if (c->orig_parent == n->id && c->narrow < 0) {
		c->narrow = h;
		c->tried_hier = before | 1 << h;
	}
	return c;
}

/* loneChildFirst: the only file along /Files (the one file written)
 * holds all the file I/O its parent holds: it is queued with the
 * dominant descendants, first among equals, not behind them with the
 * unknown (bn_smallwrites' file, whose evidence the sampler cannot see -
 * page-cache writes never block - waited for cost room behind CPU
 * refinements of write()).  Not the one process or sync-object class:
 * a level that says nothing new, first, took the room from write()'s
 * own refinements; nor a lone callee, not its caller's all.  Absent (a
 * journal recorded before it): off. */
static bool lone_child(const struct pc_consult *pc, int h,
		       const struct pc_kids *k)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg,
						     "loneChildFirst");

	return h == PC_NHIER - 1 && k->n == 1 && t != NULL && t->value != 0;
}

static int refine_along(struct pc_consult *pc, struct pc_search *s,
			struct pc_node *n, int h)
{
	struct pc_kids *k = malloc(sizeof(*k));
	struct pc_node *c;
	pc_res_id deep[PC_KIDS_DOMINANT], via[PC_KIDS_DOMINANT], edge;
	int deep_id[PC_KIDS_DOMINANT + 1];
	int made = 0, ndeep;

	/* What the children inherit: a wide node's other hierarchies are its
	 * siblings' business, not tried by this child. */
	int before = n->narrow < 0 ? 0 : n->tried_hier;

	if (k == NULL)
		abort();
	n->tried_hier |= 1 << h;
	pc_kids_ask(pc, n->hyp, k->ask, sizeof(k->ask));
	pc_kids_where(pc, &n->focus, h, k);
	pc_kids_rank(pc, k);
	/* The dominant descendants launch first among equals (pc_cost.c,
	 * runs_before); a kid on the path to one, whose test the
	 * descendant's mostly answers, after its siblings: under a tight
	 * cost limit, launched one at a time, the likeliest first. */
	ndeep = 0;
	edge = PC_RES_NONE;
	if (cpu_hypothesis(pc, pc_truth_node_hyp(pc, n)))
		ndeep = pc_kids_dominant_descendants(pc, &n->focus, h, k, deep, via);
	else if ((deep[0] = pc_kids_dominant_descendant(pc, &n->focus, h, k, 2,
						&edge)) != PC_RES_NONE)
		via[ndeep++] = k->r[0];
	/* The program's own function at the edge of the chain (the one
	 * calling libc's write()) is what to fix and what the finding
	 * names: tested with the leaf, not level by level after it
	 * (bn_smallwrites' bnsw_write_loop launched 8 s after write()). */
	if (ndeep == 1 && edge != PC_RES_NONE && edge != deep[0] &&
	    edge != k->r[0]) {
		deep[ndeep] = edge;
		via[ndeep++] = k->r[0];
	}
	for (int j = 0; j < ndeep; j++) {
		c = add_where_kid(pc, s, n, h, deep[j], before);
		deep_id[j] = c != NULL ? c->id : -1;
		if (c == NULL)
			continue;
		if (c->orig_parent == n->id)
			c->dominant = true;
		made++;
	}
	for (size_t i = 0; i < k->n; i++) {
		bool on_path = false;
		int by = -1;

		c = add_where_kid(pc, s, n, h, k->r[i], before);
		if (c == NULL)
			continue;
		if (lone_child(pc, h, k) && c->orig_parent == n->id)
			c->dominant = true;
		for (int j = 0; j < ndeep; j++)
			if (via[j] == k->r[i]) {
				on_path = true;
				by = deep_id[j];
			}
		/* The kid itself is the chain's edge (the demo's
		 * demo_worker above pthread_mutex_lock): first, not after
		 * its siblings. */
		if (edge == k->r[i] && ndeep > 0 && c->orig_parent == n->id)
			c->dominant = true;
		else if (on_path && c->orig_parent == n->id && !c->dominant) {
			c->implied = true;
			c->implied_by = by;
		}
		made++;
	}
	free(k);
	return made;
}

static int expand_where(struct pc_consult *pc, struct pc_search *s,
			struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	bool callgraph = pc_tunables_get(pc->cfg, "useCallGraphSearch") != 0;
	int made = 0;

	if (!callgraph || n->narrow < 0) {
		/* Module search, or the first (wide) expansion. */
		for (int k = 0; k < PC_NHIER; k++)
			if (!h->prune[k])
				made += refine_along(pc, s, n, k);
		return made;
	}
	/* Narrow: along its own hierarchy, then round-robin onwards to the
	 * next hierarchy not yet refined. */
	for (int i = 0; i < PC_NHIER && made == 0; i++) {
		int k = (n->narrow + i) % PC_NHIER;

		if (h->prune[k] || (i > 0 && (n->tried_hier & 1 << k)))
			continue;
		made = refine_along(pc, s, n, k);
	}
	return made;
}

/* Paradyn's expandWhereDownNewPath: when every where-child of a narrowed
 * true node has been found false, the answer is not down this hierarchy;
 * try the next one not refined yet (round-robin). */
static void new_path(struct pc_consult *pc, struct pc_search *s,
		     struct pc_node *p)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, p);
	bool any = false;

	if (p->narrow < 0 || p->truth != PC_TRUE ||
	    pc_tunables_get(pc->cfg, "useCallGraphSearch") == 0)
		return;
	for (size_t i = 0; i < p->nkids; i++) {
		struct pc_node *c = pc_shg_node(s, p->kids[i].child);

		if (p->kids[i].why)
			continue;
		if (c->truth != PC_FALSE)
			return;
		any = true;
	}
	if (!any)
		return;
	for (int i = 1; i < PC_NHIER; i++) {
		int k = (p->narrow + i) % PC_NHIER;

		if (h->prune[k] || (p->tried_hier & 1 << k))
			continue;
		if (refine_along(pc, s, p, k) > 0)
			return;
	}
}

void pc_truth_expand(struct pc_consult *pc, struct pc_search *s,
		     struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);

	if (n->expanded)
		return;
	n->expanded = true;
	switch (h->expand) {
	case PC_EXP_WHY_AND_WHERE:
		expand_why(pc, s, n);
		expand_where(pc, s, n);
		break;
	case PC_EXP_WHERE_AND_WHY:
		expand_where(pc, s, n);
		expand_why(pc, s, n);
		break;
	case PC_EXP_WHY_BEFORE_WHERE:
		if (expand_why(pc, s, n) == 0)
			expand_where(pc, s, n);
		break;
	case PC_EXP_WHERE_BEFORE_WHY:
		if (expand_where(pc, s, n) == 0)
			expand_why(pc, s, n);
		break;
	case PC_EXP_WHY_ONLY:
		expand_why(pc, s, n);
		break;
	case PC_EXP_WHERE_ONLY:
		expand_where(pc, s, n);
		break;
	}
}

