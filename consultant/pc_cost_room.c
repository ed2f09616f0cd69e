/*
 * pc_cost_room.c - room for the cost gate when the cost limit blocks the
 * queue for good (pc_cost.c calls it): a node that tested true hands its
 * experiment's room down to the refinements waiting (its conclusion
 * stands), and the test of whether anything will ever free room at all.
 * Only nodes whose stop frees some cost give room, and experiments on
 * code no stack sample shows are not waited for.
 */
#include "pc_search.h"

#include <stdio.h>
#include <stdlib.h>

#include "xmalloc.h"

/* The source never saw the program in the node's resource (a function
 * that ran once at start-up): it will conclude false, from the samples
 * or for lack of data, but only 3.5-6 s after it was made.  Waiting for
 * it held bn_smallwrites' room for 4 s (CPUdemand on bnsw_now, printf,
 * lseek ...) while its file's small writes waited. */
static bool unseen(const struct pc_node *n)
{
	return pc_cost_order_no_evidence(n);
}

/* Stopping n frees nothing: every input is read from the kernel or
 * computed by hunch (CPU time of the whole program, a process or a
 * thread; active_processes), no instrumentation.  Such a node handing
 * its room down only costs the gate its settling (0.4 s a step):
 * bn_smallwrites stopped CPUbound at the top and at its thread, each
 * free, before the I/O experiments that held the budget.  Running it
 * costs nothing either (pc_cost.c launches it beside a head that waits
 * for room). */
bool pc_cost_room_frees_nothing(const struct pc_consult *pc,
				const struct pc_node *n)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	bool code_top = pc_res_get(pc->res, n->focus.r[0])->kind ==
			PC_RES_HIERARCHY;

	for (int i = 0; i < h->nin; i++) {
		const struct pc_metric_def *m = pc_metric_def_find(pc->cfg,
							       h->in[i].metric);

		if (m == NULL)
			return false;
		if (m->type == PC_BASE_INTERNAL)
			continue;
		if (m->kernel != PC_KERNEL_NONE &&
		    (code_top || h->in[i].top_focus))
			continue;
		return false;
	}
	return true;
}

static bool has_queued_kid(const struct pc_search *s, const struct pc_node *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		if (pc_shg_node(s, n->kids[i].child)->queued)
			return true;
	return false;
}

/* roomWaitsForNeed (absent: off, a journal recorded before it). */
static bool waits_for_need(const struct pc_consult *pc)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg,
						     "roomWaitsForNeed");

	return t != NULL && t->value != 0;
}

/* An experiment still unknown after BORDERLINE_OBS times the
 * observation floor is near its threshold: it concludes when its guess
 * has held sufficientTime, or at maxConclusionTime, not soon.  Waiting
 * for it held the demo's small writes, whose file refinement needed
 * 2%, for 3 s behind CPU timers on `demo_hot_loop` and
 * `demo_locked_work` at 0.28 CPUs against 0.3. */
#define BORDERLINE_OBS 4
static bool borderline(const struct pc_consult *pc, const struct pc_node *n)
{
	return pc->now - n->t_start >
	       BORDERLINE_OBS * pc_tunables_get(pc->cfg, "minObservationTime");
}

/* The active node that tested true longest ago and whose refinements
 * wait in the queue; NULL if none, or if some active experiment has not
 * concluded yet (it will, and free room or not).  With roomWaitsForNeed,
 * unconcluded experiments are waited for only when together they were
 * charged at least `need`, what the queue's head lacks (less cannot
 * make its room, however they conclude: bn_smallwrites' file waited 5 s,
 * to the end of the run, on CPUbound at write(), charged 0.1% and
 * borderline under load), and never one held for its parent's
 * conclusion (pc_early.c: it concludes only after its parent). */
static struct pc_node *room_giver(struct pc_consult *pc, double need)
{
	struct pc_search *ss[2] = { pc->global, pc->current };
	struct pc_node *best = NULL, *done = NULL;
	bool by_need = waits_for_need(pc);
	double unknown = 0;

	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++) {
			struct pc_node *n = ss[k]->nodes[i];

			if (!n->active)
				continue;
			/* An unknown node will conclude and may stop, freeing
			 * room: wait.  Not a persistent one: it keeps its
			 * experiment whatever it concludes (bn_smallwrites
			 * waited 3 s for CPUbound at the top); nor one on
			 * code no sample shows (unseen); nor one charged
			 * nothing (read from the kernel or the samples, or
			 * sharing instruments already counted): its stop
			 * frees no room (bn_smallwrites' I/O refinements
			 * waited 2.7 s on CPUdemand in main's callees). */
			if (n->truth == PC_UNKNOWN &&
			    (n->persistent || unseen(n) ||
			     !(n->charged_cost > 1e-6)))
				continue;
			if (n->truth == PC_UNKNOWN && by_need) {
				if (!pc_early_held(ss[k], n) &&
				    !borderline(pc, n))
					unknown += n->charged_cost;
				continue;
			}
			if (n->truth == PC_UNKNOWN)
				return NULL;
			if (n->truth != PC_TRUE || pc_cost_room_frees_nothing(pc, n))
				continue;
			if (!has_queued_kid(ss[k], n)) {
				if (n->charged_cost > 0 && (done == NULL ||
				    n->t_true_since < done->t_true_since))
					done = n;
				continue;
			}
			if (best == NULL || n->t_true_since < best->t_true_since)
				best = n;
		}
	}
	if (by_need && unknown >= need)
		return NULL;
	/* No true node's refinements wait, yet the queue is blocked: what
	 * waits refines nodes stopped earlier, and the true nodes still
	 * measured - refined to the end, each holding its cost for good -
	 * are the only room there is (bn_smallwrites: eleven of them held
	 * 4.4% for 55 s while fourteen refinements waited).  The oldest
	 * gives its room: its conclusion stands. */
	return best ? best : done;
}

/* The search n belongs to. */
static struct pc_search *search_of(struct pc_consult *pc,
				      const struct pc_node *n)
{
	struct pc_search *s = pc->current;

	if (s != NULL && n->id >= 0 && (size_t)n->id < s->nn &&
	    s->nodes[n->id] == n)
		return s;
	return pc->global;
}

/* Called when the cost limit blocks the queue.  If the search is stuck
 * for good - nothing pending, every active experiment concluded, so
 * none will stop and free room - nodes that tested true and whose
 * refinements wait hand their room down: their experiments stop, their
 * conclusions (truth, value, time) stand.  As many at once, oldest
 * first, as free the `need` the queue's head lacks by what they were
 * charged: one a settling (0.4 s) made bn_smallwrites wait 1.6 s for
 * four steps of room before its file and bnsw_write_loop launched.
 * Then settling until the observed cost shows it; and from then on the
 * budget has proved too small for the predictions, so each launch is
 * judged by the observed cost it brings before the next (`tight`:
 * bursts of launches made bn_smallwrites shed 41 times in 28 s, one at
 * a time 6).  Without this a program calling write() half a million
 * times a second is never refined: the top-level I/O node alone costs
 * 4.4% of a 5% limit, and top-level nodes are persistent (Paradyn keeps
 * true nodes instrumented; hunch does too as long as that does not
 * stall the search). */
bool pc_cost_room_make(struct pc_consult *pc, double need)
{
	struct pc_node *n, *last = NULL;
	double freed = 0;
	int k = 0;
	char focus[512];
	bool kids;

	while ((pc->npending == 0 &&
		(n = room_giver(pc, need - freed)) != NULL) &&
	       (k == 0 || freed < need)) {
		kids = has_queued_kid(search_of(pc, n), n);
		freed += n->charged_cost;
		k++;
		pc_cost_node_stop(pc, n, "stopped");
		last = n;
		pc_consult_logf(
			pc,
			"Cost limit: stopped %s for %s (true since %.1f s) "
			"to make room for %s",
			pc_truth_node_hyp(pc, n)->name,
			pc_focus_name(pc->res, &n->focus, focus, sizeof(focus)),
			n->t_true_since, kids ? "its refinements" : "others");
	}
	if (k == 0)
		return false;
	/* the observed cost's drop measures one stop, not several */
	if (k == 1)
		pc_cost_learn_probe(pc, last, -1);
	else
		pc->probe = NULL;
	pc->shed_t = pc->now;
	pc->tight = true;
	return true;
}

/* Nothing will ever free room: nothing pending, and every active
 * experiment either persistent or concluded (and none of those hands
 * room down).  A learnt cost can make the head's prediction more than
 * the whole limit (capped at it), which the persistent nodes' own small
 * cost would then block for ever (bn_smallwrites stalled 80 s so); such
 * a head launches alone, measured, and shedding answers for what it
 * really costs.  (A prediction under the limit waits, as before.) */
bool pc_cost_room_stuck(const struct pc_consult *pc)
{
	struct pc_search *ss[2] = { pc->global, pc->current };

	if (pc->npending)
		return false;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++)
			if (ss[k]->nodes[i]->active &&
			    ss[k]->nodes[i]->truth == PC_UNKNOWN &&
			    !ss[k]->nodes[i]->persistent)
				return false;
	return true;
}


/* narrowerWhyFirst (absent: off, a journal recorded before it). */
static bool narrower_first(const struct pc_consult *pc)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg,
						     "narrowerWhyFirst");

	return t != NULL && t->value != 0;
}

/* Is a narrower why of v's branch tested on v's focus already (running
 * or true)?  v's own test then adds little to the finding. */
static bool narrower_on(const struct pc_consult *pc,
			const struct pc_search *s, const struct pc_node *v,
			int vd)
{
	for (size_t i = 0; i < s->nn; i++) {
		const struct pc_node *u = s->nodes[i];

		if ((u->active || u->truth == PC_TRUE) &&
		    pc_focus_eq(&u->focus, &v->focus) &&
		    pc_cost_order_why_depth(pc, u) > vd &&
		    pc_cost_order_why_root(pc, u) ==
			    pc_cost_order_why_root(pc, v))
			return true;
	}
	return false;
}

/* May v, testing a wider why than head, stop for head's room?  Not
 * concluded (a conclusion stands; pc_cost_room_make hands a true node's
 * room down), charged a cost, not kept for good, not stopped so before,
 * in head's why-branch; and either on head's own focus, or on a focus a
 * narrower why already tests: there the narrower why tests the same
 * place better.  A wider why elsewhere may be the finding (the demo's
 * ExcessiveIOBlockingTime in demo_writer was stopped once for
 * TooManySmallIOOps in a lock worker, where no I/O is). */
static bool preemptible(const struct pc_consult *pc, const struct pc_search *s,
			const struct pc_node *v, const struct pc_node *head,
			int hd)
{
	int vd;

	if (!v->active || v->truth != PC_UNKNOWN || v->persistent ||
	    v->is_virtual || v->preempted || !(v->charged_cost > 1e-6) ||
	    v->orig_parent < 0 ||
	    pc_cost_order_why_root(pc, v) != pc_cost_order_why_root(pc, head) ||
	    (vd = pc_cost_order_why_depth(pc, v)) >= hd)
		return false;
	return pc_focus_eq(&v->focus, &head->focus) ||
	       narrower_on(pc, s, v, vd);
}

/* The demo's small writes: ExcessiveIOBlockingTime held clearly at the
 * top at 1.3 s and its where-refinements (write, demo_writer, its
 * thread, its file: a wall timer on a million write()s a second, ~1.5%
 * each) took the budget; TooManySmallIOOps held clearly at 1.9 s, and
 * its refinements, the finding, waited 0.9 s for them to conclude.  The
 * narrower why is the better explanation of the same waiting: a wider
 * why's experiment on the head's focus, or on one a narrower why tests
 * already, stops and queues again behind it (the queue orders a branch
 * deeper first), each once at most, the latest started first (the least
 * observation lost).  Not for a head the source never saw busy, nor one
 * whose why-parent tested false there. */
/* Latest started first; among equals, the first in the search. */
static int later_first(const void *a, const void *b)
{
	const struct pc_node *x = *(struct pc_node *const *)a;
	const struct pc_node *y = *(struct pc_node *const *)b;

	if (x->t_start != y->t_start)
		return x->t_start > y->t_start ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

bool pc_cost_room_narrower(struct pc_consult *pc, struct pc_search *s,
			   const struct pc_node *head, double need)
{
	int hd = pc_cost_order_why_depth(pc, head);
	double can = 0, freed = 0;
	char focus[512], hf[512];
	struct pc_node **v;
	size_t n = 0, k = 0;

	/* a head the source never saw busy, or whose why-parent tested
	 * false there, is no better than what runs */
	if (!narrower_first(pc) || pc->npending > 0 ||
	    pc_cost_order_no_evidence(head) || head->why_ev < 0 ||
	    !pc_truth_has_true_parent(s, head))
		return false;
	/* the candidates, judged once */
	v = xreallocarray(NULL, s->nn + 1, sizeof(*v));
	for (size_t i = 0; i < s->nn; i++)
		if (preemptible(pc, s, s->nodes[i], head, hd)) {
			v[n++] = s->nodes[i];
			can += s->nodes[i]->charged_cost;
		}
	if (!(can >= need))
		n = 0;   /* stopping them all would not make room */
	qsort(v, n, sizeof(*v), later_first);
	for (; k < n && freed < need; k++) {
		freed += v[k]->charged_cost;
		pc_cost_node_stop(pc, v[k], "preempted");
		v[k]->preempted = true;
		pc_consult_logf(pc, "Cost limit: stopped %s for %s (not "
			"concluded) to make room for %s for %s, a narrower "
			"why", pc_truth_node_hyp(pc, v[k])->name,
			pc_focus_name(pc->res, &v[k]->focus, focus,
				      sizeof(focus)),
			pc_truth_node_hyp(pc, head)->name,
			pc_focus_name(pc->res, &head->focus, hf, sizeof(hf)));
		pc_cost_queue(pc, s, v[k], v[k]->priority);
	}
	free(v);
	if (k == 0)
		return false;
	pc->probe = NULL;
	pc->shed_t = pc->now;
	return true;
}
