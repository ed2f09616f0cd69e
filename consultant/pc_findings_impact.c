/*
 * pc_findings_impact.c - a finding's impact (see pc_findings_int.h):
 * the seconds per second of the program its cause explains, from the
 * tightest measure of its own hypothesis among the leaves it joined
 * (threads of one process summed as parts), from a why-ancestor's nodes
 * that hold its where for a cause measured otherwise (bytes per
 * operation), else from the other hypotheses joined.
 */
#include "pc_findings_int.h"

#include <math.h>

static const struct pc_res *res(const struct pc_findings_ctx *c, pc_res_id id)
{
	return pc_findings_res(c, id);
}

static bool is_generic(const struct pc_consult *pc, int hyp)
{
	return pc_findings_is_generic(pc, hyp);
}

/* A true node of a why-ancestor of hyp whose focus holds the finding's
 * where in every hierarchy: its measure in seconds (the I/O blocking
 * time of the code doing small I/O). */
static bool holds_where(const struct pc_findings_ctx *c,
			const struct pc_node *n,
			const pc_res_id *where, const struct pc_node *lead)
{
	for (int h = 0; h < PC_NHIER; h++)
		if (!pc_findings_res_anc(c, n->focus.r[h], where[h]) &&
		    !(h == 0 && pc_findings_on_chain(c, lead, n->focus.r[0])))
			return false;
	return true;
}

static bool measures(struct pc_findings_ctx *c, const struct pc_node *n,
		     int hyp)
{
	return n->hyp == hyp && !isnan(pc_findings_value(c->pc, n));
}

/* The smallest value of hyp among b's own leaves on part r. */
static double part_value(struct pc_findings_ctx *c, const struct pc_findings_members *b,
			 int hyp, pc_res_id r)
{
	double t = NAN;

	for (size_t j = 0; j < b->n; j++) {
		const struct pc_node *m = c->leaf[b->leaves[j]];

		if (b->own[j] && measures(c, m, hyp) && m->focus.r[1] == r &&
		    (isnan(t) || pc_findings_value(c->pc, m) < t))
			t = pc_findings_value(c->pc, m);
	}
	return t;
}

/* Does leaf n measure the whole job of several processes while every
 * other leaf measuring hyp lies in one process?  Then its value counts
 * processes the finding does not name: a pool's job-level CPU demand
 * (1.89 CPUs, three workers) was given as the demand of "1 thread of
 * process 4612", whose own leaf read 0.94.  A job of one process is
 * that process: nothing changes there. */
static bool wider_than_rest(struct pc_findings_ctx *c,
			    const struct pc_findings_members *b, const struct pc_node *n,
			    int hyp)
{
	pc_res_id one = PC_RES_NONE;

	if (res(c, n->focus.r[1])->kind != PC_RES_HIERARCHY ||
	    res(c, n->focus.r[1])->nchildren < 2)
		return false;
	for (size_t i = 0; i < b->n; i++) {
		const struct pc_node *m = c->leaf[b->leaves[i]];
		pc_res_id p;

		if (m == n || !measures(c, m, hyp))
			continue;
		p = pc_findings_process_of(c, m->focus.r[1]);
		if (p == PC_RES_NONE || (one != PC_RES_NONE && p != one))
			return false;
		one = p;
	}
	return one != PC_RES_NONE;
}

static double tightest(struct pc_findings_ctx *c, const struct pc_findings_members *b,
		       int hyp)
{
	double lo = NAN, sum = 0;
	bool any_part = false;

	for (size_t i = 0; i < b->n; i++) {
		const struct pc_node *n = c->leaf[b->leaves[i]];

		if (!measures(c, n, hyp) || pc_findings_is_part(c, n->focus.r[1]) ||
		    wider_than_rest(c, b, n, hyp))
			continue;
		if (isnan(lo) || pc_findings_value(c->pc, n) < lo)
			lo = pc_findings_value(c->pc, n);
	}
	if (!isnan(lo))
		return lo;
	for (size_t i = 0; i < b->n; i++) {
		const struct pc_node *n = c->leaf[b->leaves[i]];
		pc_res_id r = n->focus.r[1], up = res(c, r)->parent;
		bool first = true;

		if (!b->own[i] || !measures(c, n, hyp) ||
		    !pc_findings_is_part(c, r))
			continue;
		/* a thread of a process measured as a part itself */
		if (res(c, r)->kind == PC_RES_THREAD &&
		    pc_findings_is_part(c, up) && !isnan(part_value(c, b, hyp, up)))
			continue;
		for (size_t j = 0; j < i; j++)
			first &= !(b->own[j] && measures(c, c->leaf[b->leaves[j]],
							 hyp) &&
				   c->leaf[b->leaves[j]]->focus.r[1] == r);
		if (first) {
			sum += part_value(c, b, hyp, r);
			any_part = true;
		}
	}
	return any_part ? sum : NAN;
}

void pc_findings_impact_also(struct pc_findings_ctx *c,
			     const struct pc_findings_members *b,
			     struct pc_finding *f)
{
	for (size_t h = 0; h < PC_FINDINGS_MAXHYP; h++)
		f->also[h] = NAN;
	for (size_t i = 0; i < b->n; i++) {
		int h = c->leaf[b->leaves[i]]->hyp;

		if (h != f->hyp && h < PC_FINDINGS_MAXHYP && isnan(f->also[h]))
			f->also[h] = tightest(c, b, h);
	}
}

/* Is n's focus the whole program (every hierarchy at its root)? */
static bool top_focus(const struct pc_findings_ctx *c, const struct pc_node *n)
{
	for (int k = 0; k < PC_NHIER; k++)
		if (!pc_findings_is_root(c, n->focus.r[k]))
			return false;
	return true;
}

/* The impact: the cause's own measure in seconds (its tightest value);
 * for a cause measured otherwise (bytes per operation), the smallest
 * value of its why-ancestor's concluded nodes that hold its where
 * (added as evidence);
 * else the largest measure in seconds of the other hypotheses joined,
 * specific ones before the generic CPU. */
void pc_findings_impact(struct pc_findings_ctx *c,
			const struct pc_findings_members *b,
			struct pc_findings *fs, struct pc_finding *f)
{
	f->impact = pc_findings_in_seconds(c->pc, f->hyp) ?
		    tightest(c, b, f->hyp) : NAN;
	if (!isnan(f->impact))
		return;
	for (int a = c->pc->cfg->hyp[f->hyp].parent_idx; a >= 0;
	     a = c->pc->cfg->hyp[a].parent_idx) {
		double narrow = NAN, v;   /* narrow: true below the whole
					   * program */

		if (!pc_findings_in_seconds(c->pc, a))
			continue;
		for (size_t i = 0; i < c->s->nn; i++) {
			const struct pc_node *n = c->s->nodes[i];

			/* True ones that hold the where, and the one at the
			 * cause's own focus even when it tested false (0 s
			 * blocked in I/O where 1-byte operations were
			 * counted): the tightest measure. */
			if (n->hyp != a || isnan(pc_findings_value(c->pc, n)) ||
			    !(n->truth == PC_TRUE ? holds_where(c, n, f->where,
								f->lead) :
			      n->truth == PC_FALSE &&
			      pc_focus_eq(&n->focus, &f->lead->focus)))
				continue;
			if (!pc_findings_pool_has(fs, fs->npool - f->nnodes, n)) {
				pc_findings_pool_add(fs, n);
				f->nnodes++;
			}
			v = pc_findings_value(c->pc, n);
			if (isnan(f->impact) || v < f->impact)
				f->impact = v;
			if (n->truth == PC_TRUE && !top_focus(c, n) &&
			    (isnan(narrow) || v < narrow))
				narrow = v;
		}
		/* A true measure at a narrower focus than the whole program
		 * that holds the where (the demo's writer blocked 0.96 s/s in
		 * I/O) outweighs a false one at the cause's own focus, which
		 * then contradicts it (a 0 there is a measurement gone wrong,
		 * seen once in CI: the demo's 1-byte writes ranked fifth at
		 * 0.00 s/s). */
		if (!isnan(narrow) && narrow > f->impact)
			f->impact = narrow;
		if (!isnan(f->impact))
			return;
	}
	for (int generic = 0; generic < 2 && isnan(f->impact); generic++)
		for (size_t i = 0; i < b->n; i++) {
			int h = c->leaf[b->leaves[i]]->hyp;
			double v;

			if (is_generic(c->pc, h) != generic ||
			    !pc_findings_in_seconds(c->pc, h))
				continue;
			v = tightest(c, b, h);
			if (!isnan(v) && (isnan(f->impact) || v > f->impact))
				f->impact = v;
		}
}
