/*
 * pc_cost.c - the run queues and the three cost controls (devguide §1.5
 * "Search control"): the cost limit, the number of active experiments and
 * the number of pending enables, each with its status message.
 *
 * hunch's cost limit is a slowdown bound (costLimit = 0.05: the program
 * runs at most 5% slower), enforced twice:
 *  - before launch, with the predicted cost: a node whose own cost is over
 *    the limit is dropped for good; otherwise it waits until the committed
 *    cost (the larger of observed and predicted-active, plus pending) leaves
 *    room for it;
 *  - after launch, with the observed cost: when it is over the limit,
 *    launching stops and the lowest-priority experiments are shed (back to
 *    the queue) until the estimate is under it.
 * Predictions are scaled by how far observed cost has exceeded them
 * (cost_factor), so a source that underestimates cannot make the search
 * oscillate between launching and shedding, and by what each
 * hypothesis' experiments were measured to cost (below).  The queue's
 * order is pc_cost_order.c's.
 */
#include "pc_kids.h"
#include "pc_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sheds after which an experiment is not run again (give_up). */
#define PC_MAX_SHEDS 2
/* Launching by measured cost fills the budget to this share of it. */
#define PC_MEASURED_ROOM 0.7

/* The source's evidence for the resource a where-refinement narrowed
 * its parent to (the first component that differs); -1 when unknown.
 * A wait hypothesis's asks as its siblings were ranked (pc_kids_ask: a
 * lock-bound thread is no evidence of I/O; a journal recorded before
 * that question falls back to the bare path it asked); any other's,
 * CPU's too, asks the bare path, as journals recorded it. */
static double node_hint(struct pc_consult *pc, struct pc_search *s,
			const struct pc_node *n)
{
	const struct pc_node *p;
	char ask[96];

	if (n->orig_parent < 0 || pc->src->ops->hint == NULL)
		return -1;
	p = pc_shg_node(s, n->orig_parent);
	pc_kids_ask(pc, n->hyp, ask, sizeof(ask));
	if (strncmp(ask, PC_SRC_HINT_WAIT, sizeof(PC_SRC_HINT_WAIT) - 1) != 0)
		ask[0] = '\0';
	for (int k = 0; k < PC_NHIER; k++)
		if (n->focus.r[k] != p->focus.r[k])
			return pc_kids_hint(pc, ask, n->focus.r[k]);
	return -1;
}

void pc_cost_queue(struct pc_consult *pc, struct pc_search *s,
		   struct pc_node *n, int priority)
{
	if (n->is_virtual || n->queued || n->active || n->pending ||
	    n->given_up)
		return;
	if (!n->hinted) {
		n->hint = node_hint(pc, s, n);
		n->hinted = true;
	}
	n->queued = true;
	n->priority = priority;
	n->seq = ++pc->seq;
	pc_shg_node_trace(n, "queued");
}

void pc_cost_node_stop(struct pc_consult *pc, struct pc_node *n, const char *st)
{
	for (int i = 0; i < n->nin; i++) {
		pc_datamgr_release(&pc->dm, n->inst[i]);
		n->was_inst[i] = n->inst[i];
	}
	if (n->nin > 0)
		n->nwas = n->nin;
	n->nin = 0;
	if (n->pending) {
		pc->npending--;
		pc->pending_cost -= n->charged_cost;
	}
	if (n->active)
		pc->nactive--;
	n->pending = n->active = false;
	pc_shg_node_trace(n, st);
}

static void focus_of_input(struct pc_consult *pc, const struct pc_node *n,
			   int i, struct pc_focus *f)
{
	if (pc_truth_node_hyp(pc, n)->in[i].top_focus)
		pc_focus_top(pc->res, f);
	else
		*f = n->focus;
}

/* The node's predicted cost as things are now.  The one made when the
 * node was created may be stale: an experiment on a thread shares the
 * code of the same metric on the whole process and was predicted free,
 * but once that was stopped to make room it needs code of its own (on
 * bn_smallwrites, 4.5%: launched as free, it overshot and was shed). */
static double predict_now(struct pc_consult *pc, const struct pc_node *n,
			  bool *measuring)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	double c = 0;

	*measuring = false;
	for (int i = 0; i < h->nin; i++) {
		struct pc_focus f;

		focus_of_input(pc, n, i, &f);
		c += pc_datamgr_predict(&pc->dm, h->in[i].metric, &f);
		*measuring |= pc_datamgr_measuring(&pc->dm, h->in[i].metric, &f);
	}
	return c;
}

/* The source is measuring how often the node's functions are called
 * (the live source counts calls at their entry for 20 ms of the
 * target's CPU time): its
 * prediction with the guessed rate (1000 calls/s) would launch an
 * experiment on malloc in a program that calls it 10^7 times a second
 * as nearly free, and it would overshoot the limit before the observed
 * cost showed it.  The node waits for the measured rate, out of the
 * queue for this tick; others launch meanwhile. */
static void wait_for_rates(struct pc_consult *pc, struct pc_node *n)
{
	char focus[512];

	n->rate_wait = true;
	pc->rates_measured = true;
	pc->rates_t = pc->now;
	if (n->rate_logged)
		return;
	n->rate_logged = true;
	pc_consult_logf(
		pc, "Measuring call rates to predict the cost of %s for %s",
		pc_truth_node_hyp(pc, n)->name,
		pc_focus_name(pc->res, &n->focus, focus, sizeof(focus)));
}

static void clear_rate_waits(struct pc_consult *pc)
{
	struct pc_search *ss[2] = { pc->global, pc->current };

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++)
			ss[k]->nodes[i]->rate_wait = false;
}

static void launch(struct pc_consult *pc, struct pc_node *n, double c)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);

	n->queued = false;
	n->pending = true;
	n->charged_cost = c;
	pc->npending++;
	pc->pending_cost += c;
	pc->runs++;
	pc_shg_node_trace(n, "pending");
	n->nin = 0;
	for (int i = 0; i < h->nin; i++) {
		struct pc_focus f;
		int id;

		focus_of_input(pc, n, i, &f);
		id = pc_datamgr_acquire(&pc->dm, h->in[i].metric, &f, pc->now);
		if (id < 0) {
			/* Refused outright: the next tick reports it as a
			 * failed enable, like a failed reply. */
			n->failed = true;
			continue;
		}
		n->inst[n->nin++] = id;
	}
}

/* The experiment goes active when every input is enabled (shared inputs
 * may already be); a failed input fails the node. */
bool pc_cost_launch_done(struct pc_consult *pc, struct pc_search *s,
		    struct pc_node *n)
{
	const char *reason = NULL;
	char focus[512];
	bool all = true;

	(void)s;
	for (int i = 0; i < n->nin; i++) {
		struct pc_minst *m = pc_datamgr_get(&pc->dm, n->inst[i]);

		if (m->state == PC_MI_FAILED)
			reason = m->fail_reason ? m->fail_reason : "refused";
		all &= m->state == PC_MI_ENABLED;
	}
	if (n->failed && reason == NULL)
		reason = "the source refused the request";
	if (reason) {
		n->failed = true;
		snprintf(n->refused, sizeof(n->refused), "%s", reason);
		pc_cost_node_stop(pc, n, "failed");
		pc_consult_logf(
			pc, "Could not enable %s for %s (%s); not tested",
			pc_truth_node_hyp(pc, n)->name,
			pc_focus_name(pc->res, &n->focus, focus, sizeof(focus)),
			reason);
		return true;
	}
	if (!all)
		return false;
	n->pending = false;
	pc->npending--;
	pc->pending_cost -= n->charged_cost;
	n->active = true;
	pc->nactive++;
	n->t_start = pc->now;
	n->guess = -1;
	n->run_sum = n->run_len = 0;
	n->accum = n->wn = n->wmean = n->wm2 = 0;
	pc_shg_node_trace(n, "active");
	return true;
}

/* Over the active experiments of both searches: what they were charged
 * (only those started less than `since` s ago when since > 0), or what
 * they are predicted to cost scaled by their hypotheses' factors. */
static double sum_active(const struct pc_consult *pc, bool predicted,
			 double since)
{
	struct pc_search *ss[2] = { pc->global, pc->current };
	double sum = 0;

	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++) {
			const struct pc_node *n = ss[k]->nodes[i];

			if (!n->active ||
			    (since > 0 && pc->now - n->t_start + 1e-9 >= since))
				continue;
			sum += predicted ? n->pred_cost *
						   pc_cost_learn_hyp_factor(
							   pc, n->hyp)
					 : n->charged_cost;
		}
	}
	return sum;
}

double pc_cost_charged_active(const struct pc_consult *pc, double since)
{
	return sum_active(pc, false, since);
}

double pc_cost_predicted_active(const struct pc_consult *pc)
{
	return sum_active(pc, true, 0);
}

static double active_charged(const struct pc_consult *pc)
{
	return pc_cost_charged_active(pc, 0);
}

static void throttle(struct pc_consult *pc, enum pc_throttle t)
{
	static const char *const msg[] = {
		"", "Search slowed: cost limit reached.",
		"Search slowed: max active experiments reached.",
		"Search slowed: max pending enables reached.",
	};

	if (pc->throttle != t)
		pc_consult_logf(pc, "%s", msg[t]);
	pc->throttle = t;
}

/* Alternate between the global and current queues for fairness. */
static struct pc_search *next_queue(struct pc_consult *pc)
{
	struct pc_search *ss[2] = { pc->global, pc->current };

	for (int i = 0; i < 2; i++) {
		struct pc_search *s = ss[(pc->fair + i) % 2];

		if (s && s->state == PC_SEARCH_RUNNING && pc_cost_order_head(pc, s)) {
			pc->fair = (pc->fair + i + 1) % 2;
			return s;
		}
	}
	return NULL;
}


/* (What each hypothesis' experiments cost is learnt in pc_cost_learn.c.)
 *
 * Observed cost is measured over a sample period and reaches the
 * consultant a tick later: for two sample periods after shedding it
 * still shows the shed instrumentation.  Neither launching nor shedding
 * more until then: relaunching at once what was just shed (its cost not
 * yet gone from the figure) made the demo shed and relaunch in a loop. */
static bool settling(const struct pc_consult *pc)
{
	return pc->shed_t >= 0 &&
	       pc->now - pc->shed_t < 2 * pc_consult_sample_period(pc);
}

/* A burst of launches is judged by predictions alone until the observed
 * cost shows it, two sample periods after the last launch with no
 * enable pending: at most PC_BATCH_MAX charged launches, then none until
 * the observed cost has caught up with them (committed cost counts it
 * from then on).  A prediction can be wrong by orders of magnitude (a
 * call rate measured while the target hardly ran): zstd -19 launched
 * ~120 refinements predicted at 1e-7 each within 0.2 s, the observed
 * cost read 114%, and 164 experiments were shed at once. */
#define PC_BATCH_MAX 16

static bool batch_full(struct pc_consult *pc)
{
	if (pc->batch_n == 0)
		return false;
	if (pc->npending > 0)
		pc->batch_t = pc->now;   /* not shown until enabled */
	if (pc->now - pc->batch_t + 1e-9 >= 2 * pc_consult_sample_period(pc))
		pc->batch_n = 0;
	return pc->batch_n >= PC_BATCH_MAX;
}

static void batch_count(struct pc_consult *pc, double c)
{
	if (!(c > 0))
		return;   /* shared code: nothing new to show */
	pc->batch_n++;
	pc->batch_t = pc->now;
}

/* The source's call-rate measurements cost too (a counter at the entry
 * of each function for 20 ms of the target's CPU time), and the
 * observed cost shows them for up to two sample periods after: they
 * are not the experiments' cost, and shedding one for them would give
 * up a node that fits. */
static bool measured_rates(const struct pc_consult *pc)
{
	return pc->rates_measured &&
	       pc->now - pc->rates_t < 2 * pc_consult_sample_period(pc);
}

/* The cost of what runs by measurement: the observed cost (its largest
 * of the last few seconds: pc_cost_relax.c), which shows every
 * experiment active for two sample periods, plus what those started
 * since were charged. */
static double measured_committed(const struct pc_consult *pc)
{
	struct pc_search *ss[2] = { pc->global, pc->current };
	double p = 2 * pc_consult_sample_period(pc), sum = pc->obs_hold;

	if (pc->observed > sum)
		sum = pc->observed;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++)
			if (ss[k]->nodes[i]->active &&
			    pc->now - ss[k]->nodes[i]->t_start + 1e-9 < p)
				sum += ss[k]->nodes[i]->charged_cost;
	return sum;
}

/* Does a launch charged c fit?  By the charged model (what the running
 * experiments were charged, or the observed cost if more), or by
 * measurement, one launch at a time, with PC_MEASURED_ROOM of the
 * limit (the rest spare for the program's own variation): the model is learnt from sheds that may have blamed an
 * experiment for another's cost, and on bn_smallwrites it charged the
 * running experiments ~4.5% while 1-3% was observed, holding ~77
 * refinements in the queue until the program ended. */
static bool fits(struct pc_consult *pc, double limit, double c)
{
	double committed = active_charged(pc);

	if (pc->observed > committed)
		committed = pc->observed;
	if (committed + pc->pending_cost + c <= limit + 1e-12)
		return true;
	if (measured_rates(pc) || pc->npending > 0)
		return false;   /* the observed cost shows the measuring */
	/* One at a time: each launch so admitted is shown in the observed
	 * cost before the next (a burst of them overshot on the demo,
	 * whose observed cost varies by a percent from one period to the
	 * next, and sixteen experiments were shed in 10 s). */
	committed = measured_committed(pc);
	if (committed > pc->obs_hold && committed > pc->observed)
		return false;
	return committed + c <= PC_MEASURED_ROOM * limit + 1e-12;
}

/* May a head that waits for room no running experiment will ever free
 * launch alone?  Judged by measurement: the observed cost, plus what
 * the experiments launched since its last showing were charged (right
 * after a burst the observed cost is still that of before it: sqlite3
 * at a 50% limit launched allocation timers predicted at 28% beside
 * sync timers predicted at 36% that the observed cost did not show
 * yet, and it read 86%).  A head whose prediction was capped at the
 * limit launches whatever runs (pc_cost_room_stuck says why). */
static bool alone_fits(struct pc_consult *pc, double limit, double c,
		       bool capped)
{
	double used = measured_committed(pc) + pc->pending_cost;

	return capped || used + c <= limit + 1e-12;
}

/* n's cost now (pred_cost) scaled by what its hypothesis and the running
 * experiments have taught (*c); false while its rates are still being
 * measured (it waits for them). */
static bool predict_scaled(struct pc_consult *pc, struct pc_node *n,
			   double *c)
{
	bool measuring;

	n->pred_cost = predict_now(pc, n, &measuring);
	if (measuring) {
		wait_for_rates(pc, n);
		return false;
	}
	*c = n->pred_cost * pc_cost_learn_hyp_factor(pc, n->hyp) *
	     pc->cost_factor;
	return true;
}

/* A node queued behind a head that does not fit, launched beside it:
 *  - one whose measures are all read from the kernel (the CPU time of
 *    the program, a process or a thread): no instrumentation, so the
 *    budget is not its to wait for.  The demo's CPU thread level waited
 *    3 s behind lock and I/O refinements that kept the observed cost at
 *    the 5% limit.  Not any node predicted at 0: one on code never
 *    called is predicted 0 and measured at 0.26% (bn_smallwrites'
 *    malloc), and its launches aside inflated the factor that scales
 *    every prediction until the search ran one experiment at a time;
 *  - a dominant descendant (skipDominantLevels: the code holding nearly
 *    all of its parent's samples) so cheap that a small overdraft
 *    covers it: a twentieth of the limit itself, the budget a tenth
 *    over the limit at most.  `demo_hot_loop`, predicted at 0.1-0.2%,
 *    waited whole runs there. */
static struct pc_node *cheap_aside(struct pc_consult *pc, double limit,
				      double used, double *cost,
				      struct pc_search **in)
{
	struct pc_search *ss[2] = { pc->global, pc->current };

	for (int i = 0; i < 2; i++) {
		struct pc_search *s = ss[i];

		for (size_t j = 0; s && s->state == PC_SEARCH_RUNNING &&
				   j < s->nn; j++) {
			struct pc_node *n = s->nodes[j];
			double c;

			if (!n->queued || n->rate_wait ||
			    !pc_truth_has_true_parent(s, n) ||
			    !predict_scaled(pc, n, &c))
				continue;
			if ((c <= 0 && pc_cost_room_frees_nothing(pc, n)) ||
			    (n->dominant && c <= limit / 20 &&
			     used + c <= limit * 1.1)) {
				*cost = c;
				*in = s;
				return n;
			}
		}
	}
	return NULL;
}

void pc_cost_gate(struct pc_consult *pc)
{
	double limit = pc_tunables_get(pc->cfg, "costLimit");
	int max_active = (int)pc_tunables_get(pc->cfg, "maxActiveExperiments");
	int max_pending = (int)pc_tunables_get(pc->cfg, "maxPendingEnables");
	char focus[512];

	clear_rate_waits(pc);
	for (;;) {
		struct pc_search *s = next_queue(pc);
		struct pc_search *ds;
		struct pc_node *n, *d;
		double c, committed, dc;
		bool fit;
		bool capped;

		if (s == NULL)
			return;
		n = pc_cost_order_head(pc, s);
		if (!pc_truth_has_true_parent(s, n) && !n->early) {
			n->queued = false;   /* its reason to run is gone */
			pc_shg_node_trace(n, "dequeued");
			continue;
		}
		/* Dropped for good only on its own prediction: cost_factor
		 * is learnt from whatever runs now (one write()-heavy
		 * experiment can make it 50) and says little about this
		 * node.  Scaled, it waits for room; capped at the limit, it
		 * runs once nothing else costs. */
		if (!predict_scaled(pc, n, &c))
			continue;
		capped = c > limit;
		if (capped)
			c = limit;
		if (n->pred_cost > limit) {
			n->queued = false;
			n->skipped = true;
			n->unconfirmed = n->truth == PC_TRUE;
			pc->skipped++;
			pc_shg_node_trace(n, "skipped");
			pc_consult_logf(pc,
				"Predicted cost %.4f of %s for %s exceeds the "
				"cost limit %.4f: skipped",
				n->pred_cost, pc_truth_node_hyp(pc, n)->name,
				pc_focus_name(pc->res, &n->focus, focus,
					      sizeof(focus)), limit);
			continue;
		}
		if (pc->npending >= max_pending)
			return throttle(pc, PC_THR_PENDING);
		if (pc->nactive + pc->npending >= max_active)
			return throttle(pc, PC_THR_ACTIVE);
		if (batch_full(pc) || settling(pc) || pc->probe != NULL)
			return throttle(pc, PC_THR_COST);
		committed = active_charged(pc);
		if (pc->observed > committed)
			committed = pc->observed;
		fit = fits(pc, limit, c);
		if (!fit && (d = cheap_aside(pc, limit, committed +
					pc->pending_cost, &dc, &ds)) != NULL) {
			launch(pc, d, dc);
			batch_count(pc, dc);
			pc_cost_launch_done(pc, ds, d);
			continue;
		}
		if (!fit) {
			double need = committed + pc->pending_cost + c - limit;

			throttle(pc, PC_THR_COST);
			if (pc_cost_room_narrower(pc, s, n, need) ||
			    pc_cost_room_make(pc, need) ||
			    !pc_cost_room_stuck(pc))
				return;
			/* Nothing will ever free room.  What the running
			 * experiments were charged is a model, learnt from
			 * sheds that may have blamed them for another's cost;
			 * the observed cost is the measurement.  A head that
			 * fits beside what is measured launches alone
			 * (bn_smallwrites' I/O node waited 86 s behind 1.5%
			 * charged to idle sync and allocation experiments
			 * while 0% was observed). */
			if (!alone_fits(pc, limit, c, capped))
				return;
			pc->tight = true;   /* launched alone, measured */
		}
		if (pc->throttle != PC_THR_NONE) {
			pc->throttle = PC_THR_NONE;
			pc_consult_logf(pc, "Search resumed.");
		}
		launch(pc, n, c);
		batch_count(pc, c);
		pc_cost_launch_done(pc, s, n);
		/* Once the budget proved too small for the predictions,
		 * launches go one at a time, each measured, until their
		 * hypothesis' cost is known; then as many as it leaves
		 * room for. */
		/* So does a refinement whose hypothesis is not measured
		 * yet and may take a tenth of the budget: the factor learnt
		 * from the top-level nodes together is an average (23 on
		 * bn_smallwrites, where small-write experiments cost 70
		 * times their prediction), and a burst of such launches
		 * overshot the limit by 60%. */
		if (!pc_cost_learn_measured(pc, n->hyp) &&
		    (pc->tight || (n->priority > 1 && c > limit / 10))) {
			pc->shed_t = pc->now;
			pc_cost_learn_probe(pc, n, +1);
			return;
		}
	}
}

/* Among equal priorities: one still testing before one that has found
 * its answer true (shedding that loses the finding's evidence: on
 * bn_smallwrites the planted node, concluded, was shed for the launch
 * after it); then one on a resource the source never saw busy before
 * one with some or unknown evidence (bn_smallwrites shed its file, the
 * latest started, twice, while bnsw_parse and bnsw_open, which ran once
 * at start-up, kept testing); then the latest started. */
static bool shed_before(const struct pc_node *n, const struct pc_node *w)
{
	if ((n->truth == PC_TRUE) != (w->truth == PC_TRUE))
		return w->truth == PC_TRUE;
	if (pc_cost_order_no_evidence(n) != pc_cost_order_no_evidence(w))
		return pc_cost_order_no_evidence(n);
	return n->t_start >= w->t_start;
}

/* An experiment charged under 1/PC_SHED_SLIVER of the excess over the
 * limit is a sliver of it (pc_cost_shed). */
#define PC_SHED_SLIVER 10

/* The lowest-priority active experiment: largest key, latest started.
 * Only experiments charged a cost: one whose instrumentation was already
 * there for another (predicted 0: shared code) frees nothing when shed,
 * and shedding it would only lose its data (on the demo, an observed
 * cost 10% over the limit once shed all 25 experiments). */
static struct pc_node *shed_candidate(struct pc_consult *pc,
				      struct pc_search **where, double least)
{
	struct pc_search *ss[2] = { pc->global, pc->current };
	struct pc_node *worst = NULL;

	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++) {
			struct pc_node *n = ss[k]->nodes[i];

			if (!n->active || !(n->charged_cost > least))
				continue;
			if (worst == NULL || n->priority > worst->priority ||
			    (n->priority == worst->priority &&
			     shed_before(n, worst))) {
				worst = n;
				*where = ss[k];
			}
		}
	}
	return worst;
}

/* How many charged experiments are active (shed candidates). */
static int charged_active(struct pc_consult *pc)
{
	struct pc_search *ss[2] = { pc->global, pc->current };
	int n = 0;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++)
			n += ss[k]->nodes[i]->active &&
			     ss[k]->nodes[i]->charged_cost > 0;
	return n;
}

/* A shed experiment goes back to the queue, unless running it again
 * would overshoot again: it was the only experiment charged a cost, or
 * its share of the observed cost is over the limit by itself (it alone
 * costs more than the limit: python3.11's CPU timer on the trap at
 * _PyEval_EvalFrameDefault's entry, 120-160% at a limit of 50%, was
 * launched again once it was the queue's capped head), or it has been shed
 * PC_MAX_SHEDS times (each relaunch learnt a larger factor and still
 * overshot).  Relaunching such a node was the flapping of sqlite3's
 * top-level experiments, launched and shed every 0.6 s for the whole
 * run.  It is reported as not tested for cost (times_shed > 0, not
 * queued: pc_untested.c). */
static bool give_up(struct pc_consult *pc, struct pc_node *n, bool alone,
		    double cost)
{
	char focus[512];

	if (!alone && n->times_shed < PC_MAX_SHEDS)
		return false;
	n->given_up = true;
	pc_consult_logf(pc, "Cost limit: %s for %s not run again: %s (about "
		"%.1f%%)", pc_truth_node_hyp(pc, n)->name,
		pc_focus_name(pc->res, &n->focus, focus, sizeof(focus)),
		alone ? "alone it costs more than the limit" :
			"shed twice", 100 * cost);
	return true;
}

void pc_cost_shed(struct pc_consult *pc)
{
	double limit = pc_tunables_get(pc->cfg, "costLimit");
	double estimate = pc->observed, charged = active_charged(pc), ratio;
	bool alone = charged_active(pc) == 1, shed_large = false;
	char focus[512];

	if (pc->observed <= limit || settling(pc) || measured_rates(pc))
		return;
	throttle(pc, PC_THR_COST);
	pc->shed_t = pc->now;
	/* Each experiment is assumed to cost its share of what is observed,
	 * not what was predicted for it: the prediction was wrong. */
	ratio = charged > 0 && pc->observed > charged ?
		pc->observed / charged : 1;
	while (estimate > limit) {
		struct pc_search *s = NULL;
		/* Experiments whose share is a sliver of the excess first
		 * pass over: shedding one frees nothing that shows, and one
		 * after another they were all shed before the costly one
		 * (zstd: 103 experiments in one shed for a lock timer that
		 * alone cost 14%).  Once a large one is shed, the observed
		 * cost says whether the slivers must go too. */
		double sliver = (estimate - limit) / PC_SHED_SLIVER / ratio;
		struct pc_node *n = shed_candidate(pc, &s, sliver);

		if (n == NULL && shed_large)
			break;
		if (n == NULL)
			n = shed_candidate(pc, &s, 0);
		if (n == NULL)
			break;
		shed_large |= n->charged_cost > sliver;
		estimate -= n->charged_cost * ratio;
		/* What it really cost is what it was charged times the
		 * ratio: its hypothesis' predictions scale so from now on
		 * (a probe measured beside another experiment sharing its
		 * trampolines sees only the difference it makes). */
		if (n->pred_cost > 0)
			pc_cost_learn_factor(pc, n->hyp,
				     n->charged_cost * ratio / n->pred_cost);
		pc_cost_node_stop(pc, n, "shed");
		n->times_shed++;
		n->unconfirmed = n->truth == PC_TRUE;
		pc->shed++;
		pc_consult_logf(
			pc,
			"Observed cost %.4f is over the limit %.4f: shed "
			"%s for %s",
			pc->observed, limit, pc_truth_node_hyp(pc, n)->name,
			pc_focus_name(pc->res, &n->focus, focus,
				      sizeof(focus)));
		if (!give_up(pc, n, alone || n->charged_cost * ratio > limit,
			     n->charged_cost * ratio))
			pc_cost_queue(pc, s, n, n->priority);
	}
}
