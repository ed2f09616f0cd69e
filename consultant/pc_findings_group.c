/*
 * pc_findings_group.c - steps 1 and 2 of building findings
 * (pc_findings.c): which of a search's most refined true nodes describe
 * one cause.
 *
 *  1. per hypothesis, the most refined true nodes ("leaves"), the most
 *     specific first, join the first group whose where they are
 *     compatible with in every hierarchy (one resource is the other's
 *     ancestor, or in /Code on the other's chain of refinements down
 *     the call graph); a leaf compatible with several groups (the
 *     process, when three functions are each true) is evidence of each
 *     and identifies none;
 *  2. groups that name the same function, sync object or file join,
 *     whatever their hypotheses (the mutex waited for and locked very
 *     often); so do a hypothesis and its why-refinement on compatible
 *     foci (blocked in I/O on a thread, small I/O in its function), and
 *     the CPU of a function with a cause that tested true in it and
 *     whose chain runs through it (a writer's CPU is its write()s');
 *  3. CPU groups of the two CPU hypotheses (used, wanted) whose foci
 *     refine each other, when the wider holds only the one.
 *
 * Joined groups are a union-find over the groups of step 1.
 */
#include "pc_findings_int.h"

#include <string.h>

static bool compat(const struct pc_findings_ctx *c, int h, pc_res_id a,
		   const struct pc_node *na, pc_res_id b,
		   const struct pc_node *nb)
{
	/* any two parts of the program: threads of one process, the
	 * processes of a job, threads of different processes */
	if (a == b || pc_findings_res_anc(c, a, b) || pc_findings_res_anc(c, b, a) ||
	    (h == 1 && pc_findings_is_part(c, a) && pc_findings_is_part(c, b)))
		return true;
	return h == 0 && ((nb && pc_findings_on_chain(c, nb, a)) ||
			  (na && pc_findings_on_chain(c, na, b)));
}

static int chain_len(const struct pc_findings_ctx *c, const struct pc_node *n)
{
	int k = 0;

	for (const struct pc_node *p = n; p && p->id != c->s->root;
	     p = pc_shg_node(c->s, p->orig_parent))
		k++;
	return k;
}

static int spec(const struct pc_findings_ctx *c, const struct pc_node *n)
{
	int d = 0;

	for (int h = 0; h < PC_NHIER; h++)
		d += pc_findings_depth(c, n->focus.r[h]);
	return d * 64 + chain_len(c, n);
}

/* Is n, or a node it was refined from, a kid on the path to a dominant
 * descendant that tested true (pc_truth.c: `implied`)?  The levels the
 * search still walks down that path lead to the function the
 * descendant already named, which holds nearly all of their evidence:
 * its finding is theirs.  A pool's CPU came out as three findings, in
 * `_start`, in `Popen._launch` and in `work`, the last the answer. */
static bool on_true_dominant_path(const struct pc_search *s,
				  const struct pc_node *n)
{
	for (const struct pc_node *p = n; p != NULL && p->orig_parent >= 0;
	     p = pc_shg_node(s, p->orig_parent)) {
		const struct pc_node *d = p->implied && p->implied_by >= 0 ?
					  pc_shg_node(s, p->implied_by) : NULL;

		if (d != NULL && d != p && d->truth == PC_TRUE &&
		    d->hyp == p->hyp)
			return true;
	}
	return false;
}

static bool is_leaf(const struct pc_search *s, const struct pc_node *n)
{
	if (n->truth != PC_TRUE || n->is_virtual ||
	    on_true_dominant_path(s, n))
		return false;
	for (size_t i = 0; i < n->nkids; i++)
		if (pc_shg_node(s, n->kids[i].child)->truth == PC_TRUE)
			return false;
	return true;
}

static void collect_leaves(struct pc_findings_ctx *c)
{
	for (size_t i = 0; i < c->s->nn && c->nl < MAXL; i++)
		if (is_leaf(c->s, c->s->nodes[i]))
			c->leaf[c->nl++] = c->s->nodes[i];
	/* Most specific first, then oldest: insertion sort, small lists. */
	for (size_t i = 1; i < c->nl; i++) {
		const struct pc_node *x = c->leaf[i];
		int sx = spec(c, x);
		size_t j = i;

		while (j > 0 && (spec(c, c->leaf[j - 1]) < sx ||
				 (spec(c, c->leaf[j - 1]) == sx &&
				  c->leaf[j - 1]->id > x->id))) {
			c->leaf[j] = c->leaf[j - 1];
			j--;
		}
		c->leaf[j] = x;
	}
}

static bool fits_group(const struct pc_findings_ctx *c, int g,
		       const struct pc_node *n)
{
	if (c->ghyp[g] != n->hyp)
		return false;
	for (int h = 0; h < PC_NHIER; h++)
		if (!compat(c, h, c->gwhere[g][h], h ? NULL : c->gcode[g],
			    n->focus.r[h], n))
			return false;
	return true;
}

static void new_group(struct pc_findings_ctx *c, size_t l)
{
	const struct pc_node *n = c->leaf[l];
	int g = c->ng++;

	c->ghyp[g] = n->hyp;
	memcpy(c->gwhere[g], n->focus.r, sizeof(c->gwhere[g]));
	c->gcode[g] = n;
	c->mem[g][l] = 1;
	c->uf[g] = g;
}

/* Step 1. */
static void group_per_hypothesis(struct pc_findings_ctx *c)
{
	for (size_t l = 0; l < c->nl; l++) {
		int fit[MAXL], nf = 0;

		for (int g = 0; g < c->ng; g++)
			if (fits_group(c, g, c->leaf[l]))
				fit[nf++] = g;
		if (nf == 0) {
			new_group(c, l);
			continue;
		}
		for (int i = 0; i < nf; i++)
			c->mem[fit[i]][l] = nf == 1 ? 1 : 2;
		if (nf > 1)
			continue;
		for (int h = 0; h < PC_NHIER; h++) {
			pc_res_id *gw = &c->gwhere[fit[0]][h];
			pc_res_id r = c->leaf[l]->focus.r[h];

			if (pc_findings_sibling_parts(c, *gw, r))
				*gw = pc_findings_res(c, r)->parent;
			else if (pc_findings_depth(c, r) > pc_findings_depth(c, *gw)) {
				*gw = r;
				if (h == 0)
					c->gcode[fit[0]] = c->leaf[l];
			}
		}
	}
}

int pc_findings_group_root(struct pc_findings_ctx *c, int g)
{
	while (c->uf[g] != g)
		g = c->uf[g] = c->uf[c->uf[g]];
	return g;
}

/* A resource that names one cause: a function, a sync object, a file. */
static bool names_cause(const struct pc_findings_ctx *c, pc_res_id id)
{
	enum pc_res_kind k = pc_findings_res(c, id)->kind;

	return k == PC_RES_FUNCTION || k == PC_RES_SYNCOBJ ||
	       k == PC_RES_FILE;
}

static void uf_join(struct pc_findings_ctx *c, int a, int b)
{
	int ra = pc_findings_group_root(c, a);
	int rb = pc_findings_group_root(c, b);

	c->uf[ra > rb ? ra : rb] = ra < rb ? ra : rb;
}


/* The CPU of function F (generic group a) is the time of group b's
 * cause when b's chain of refinements runs through F (b is in F or in
 * what F calls) and b's hypothesis tested true at F itself: measured
 * there, not guessed (demo_writer's CPU is its write()s'). */
static bool cpu_spent_in(struct pc_findings_ctx *c, int a, int b)
{
	pc_res_id fn = c->gwhere[a][0];
	struct pc_focus at;
	int id;

	if (!pc_findings_is_generic(c->pc, c->ghyp[a]) || pc_findings_is_generic(c->pc, c->ghyp[b]) ||
	    pc_findings_res(c, fn)->kind != PC_RES_FUNCTION || c->gcode[b] == NULL ||
	    !pc_findings_on_chain(c, c->gcode[b], fn))
		return false;
	pc_focus_top(c->pc->res, &at);
	at.r[0] = fn;
	id = pc_shg_find(c->s, c->ghyp[b], &at);
	return id >= 0 && pc_shg_node(c->s, id)->truth == PC_TRUE;
}

/* hyp a is hyp b or one of its why-ancestors (ExcessiveIOBlockingTime
 * of TooManySmallIOOps). */
static bool why_anc(const struct pc_findings_ctx *c, int a, int b)
{
	for (int h = b; h >= 0; h = c->pc->cfg->hyp[h].parent_idx)
		if (h == a)
			return true;
	return false;
}

/* One cause seen by a hypothesis and its why-refinement, on foci that
 * refine each other (I/O blocking on a thread and file; small I/O in
 * the function that thread runs). */
static bool same_family(struct pc_findings_ctx *c, int a, int b)
{
	if (c->ghyp[a] == c->ghyp[b] || !(why_anc(c, c->ghyp[a], c->ghyp[b]) ||
					  why_anc(c, c->ghyp[b], c->ghyp[a])))
		return false;
	for (int h = 0; h < PC_NHIER; h++)
		if (!compat(c, h, c->gwhere[a][h], h ? NULL : c->gcode[a],
			    c->gwhere[b][h], h ? NULL : c->gcode[b]))
			return false;
	return true;
}

/* Step 2. */
static void join_groups(struct pc_findings_ctx *c)
{
	for (int a = 0; a < c->ng; a++)
		for (int b = 0; b < c->ng; b++) {
			if (a == b)
				continue;
			if (cpu_spent_in(c, a, b) || same_family(c, a, b))
				uf_join(c, a, b);
			for (int h = 0; b > a && h < PC_NHIER; h++) {
				pc_res_id r = c->gwhere[a][h];

				if (r == c->gwhere[b][h] && names_cause(c, r))
					uf_join(c, a, b);
			}
		}
}

/* Group g's finding holds a cause other than CPU (joined in step 2:
 * the lock workers' CPU is their lock's time). */
static bool in_cause(struct pc_findings_ctx *c, int g)
{
	int r = pc_findings_group_root(c, g);

	for (int k = 0; k < c->ng; k++)
		if (pc_findings_group_root(c, k) == r &&
		    !pc_findings_is_generic(c->pc, c->ghyp[k]))
			return true;
	return false;
}

static bool compat_all(struct pc_findings_ctx *c, int a, int b)
{
	for (int h = 0; h < PC_NHIER; h++)
		if (!compat(c, h, c->gwhere[a][h], h ? NULL : c->gcode[a],
			    c->gwhere[b][h], h ? NULL : c->gcode[b]))
			return false;
	return true;
}

/* In a job of several processes, a where in one of them (the process
 * or one of its threads) and one wider than that process: the job's CPU
 * is not one process's, however few of the others have concluded yet
 * (the pool's "3.01 CPUs wanted" was once said of one worker). */
static bool member_outside(struct pc_findings_ctx *c, pc_res_id in,
			   pc_res_id out)
{
	const struct pc_res *p = pc_findings_res(c, in);

	if (p->kind == PC_RES_THREAD)
		p = pc_findings_res(c, p->parent);
	return p->kind == PC_RES_PROCESS && pc_findings_is_part(c, p->id) &&
	       !pc_findings_res_anc(c, p->id, out);
}

static bool job_and_member(struct pc_findings_ctx *c, int a, int b)
{
	return member_outside(c, c->gwhere[a][1], c->gwhere[b][1]) ||
	       member_outside(c, c->gwhere[b][1], c->gwhere[a][1]);
}

/* Step 3: CPU used (CPUbound) and CPU wanted (CPUdemand) are one
 * measure, CPU time; a CPU group whose where holds exactly one other
 * CPU group left as a finding of its own is that group's CPU seen
 * wider (the process's CPU and its one hot loop's), so one finding.
 * Two candidates: the wider one explains neither, and stays. */
static void join_cpu(struct pc_findings_ctx *c)
{
	for (int a = 0; a < c->ng; a++) {
		int only = -1, n = 0;

		if (!pc_findings_is_generic(c->pc, c->ghyp[a]) || in_cause(c, a))
			continue;
		for (int b = 0; b < c->ng; b++) {
			if (b == a || c->ghyp[b] == c->ghyp[a] ||
			    !pc_findings_is_generic(c->pc, c->ghyp[b]) ||
			    in_cause(c, b) || !compat_all(c, a, b) ||
			    job_and_member(c, a, b))
				continue;
			if (pc_findings_group_root(c, b) !=
			    pc_findings_group_root(c, a))
				n++, only = b;
		}
		if (n == 1)
			uf_join(c, a, only);
	}
}

void pc_findings_group(struct pc_findings_ctx *c)
{
	collect_leaves(c);
	group_per_hypothesis(c);
	join_groups(c);
	join_cpu(c);
}
