/*
 * pc_unseen.c - refinements on code the stack samples never show: a
 * where-refinement whose function (or module) is in none of the
 * source's recent samples - CPU samples and blocked threads' stacks,
 * the source's hint - is concluded false from them, without an
 * experiment, and reported as estimated from stack samples.
 *
 * Why: functions that ran once at start-up (argument parsing, open,
 * mkstemp, printf) are refined like any other, and an experiment on
 * code that never runs again can only end "no data" after
 * sufficientTime (6 s), one at a time when the cost limit is tight.
 * bn_smallwrites queued about fifty such nodes and its search never
 * ended before the program did.  Code absent from every sample for a
 * whole evidence window spent no measurable time there: it explains
 * none of a time hypothesis, and a ratio hypothesis over it (bytes per
 * write) describes operations too rare to matter - the conclusion an
 * experiment would reach after sufficientTime of no data, reached from
 * what was already measured.
 *
 * The rule needs the node to have existed for PC_UNSEEN_WAIT (longer
 * than the live source's 3 s evidence window, so the answer rests on
 * samples taken after the node was made) and asks the source again
 * then: a function seen at start-up is seen in the answer at creation,
 * not in the one asked 3 s later.  Only unknown nodes that are queued,
 * or active with no value yet: a measured value is the experiment's to
 * judge.  Each function is asked once per PC_UNSEEN_EVERY seconds (the
 * answers are journaled, and the replay asks the same questions at the
 * same ticks).
 */
#include "pc_search.h"
#include "vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PC_UNSEEN_WAIT 3.5    /* s a node exists before samples judge it */
#define PC_UNSEEN_EVERY 1.0   /* s between sweeps */
#define PC_CODE 0             /* /Code's index in a focus */

/* The node's /Code resource when it names code (not the hierarchy's
 * root), else NULL. */
static const struct pc_res *code_of(const struct pc_consult *pc,
				    const struct pc_node *n)
{
	const struct pc_res *r = pc_res_get(pc->res, n->focus.r[PC_CODE]);

	return r == NULL || r->kind == PC_RES_HIERARCHY ? NULL : r;
}

static bool candidate(const struct pc_consult *pc, const struct pc_search *s,
		      const struct pc_node *n)
{
	if (n->is_virtual || n->persistent || n->truth != PC_UNKNOWN ||
	    n->pending || n->orig_parent < 0 || code_of(pc, n) == NULL ||
	    pc_early_held(s, n))
		return false;
	if (pc->now - n->t_created + 1e-9 < PC_UNSEEN_WAIT)
		return false;
	return n->queued || (n->active && n->guess < 0);
}

/* Answers of this sweep, one per /Code resource. */
struct asked {
	struct answer {
		pc_res_id id;
		double share;
	} *v;
	size_t n, cap;
};

static double share_of(struct pc_consult *pc, struct asked *a,
		       const struct pc_res *r)
{
	double v;

	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].id == r->id)
			return a->v[i].share;
	v = pc->src->ops->hint(pc->src, r->path);
	VEC_RESERVE(a->v, a->cap, a->n + 1);
	a->v[a->n++] = (struct answer){ .id = r->id, .share = v };
	return v;
}

static void conclude(struct pc_consult *pc, struct pc_search *s,
		     struct pc_node *n)
{
	if (n->queued) {
		n->queued = false;
		n->t_start = pc->now;   /* judged now, over the window */
	}
	n->sampled = true;
	n->held_s = 0;
	snprintf(n->how, sizeof(n->how), "stack samples");
	pc->unseen++;
	pc_truth_change(pc, s, n, PC_FALSE);   /* stops an active one */
}

static void sweep(struct pc_consult *pc, struct pc_search *s,
		  struct asked *a)
{
	if (s == NULL || s->state != PC_SEARCH_RUNNING)
		return;
	/* Nodes may be added while concluding (new paths): by index. */
	for (size_t i = 0; i < s->nn; i++) {
		struct pc_node *n = s->nodes[i];
		double v;

		if (!candidate(pc, s, n))
			continue;
		v = share_of(pc, a, code_of(pc, n));
		if (v >= 0 && v < 1e-9)
			conclude(pc, s, n);
	}
}

void pc_unseen_conclude(struct pc_consult *pc)
{
	struct asked a = { 0 };

	if (pc->src->ops->hint == NULL ||
	    pc->now - pc->unseen_t + 1e-9 < PC_UNSEEN_EVERY)
		return;
	pc->unseen_t = pc->now;
	sweep(pc, pc->global, &a);
	sweep(pc, pc->current, &a);
	free(a.v);
}
