/*
 * pc_cost_learn.c - what a hypothesis' experiments cost, learnt by the
 * cost gate (pc_cost.c) from the changes it makes alone: a launch or a
 * stop measured against the observed cost two sample periods later
 * (the probe), and a shed.  pc_cost_relax.c undoes it when the
 * measurements no longer support it.
 */
#include "pc_search.h"

#include <stdio.h>
#include <stdlib.h>

/* A measured factor beyond this is noise (a cost the program's own
 * variation made, over a prediction of nearly nothing). */
#define PC_MAX_HYP_FACTOR 1000.0

/* ---- learning what a hypothesis' experiments cost ----
 *
 * The source predicts from a guessed call rate (1000 calls/s for a
 * function it knows nothing about), so an experiment on write() in a
 * program that calls it 500,000 times a second is predicted at 0.08%
 * and observed at 4.4%.  The global cost_factor learns that only while
 * such an experiment runs; once it stops the next launch is predicted
 * cheap again and overshoots the limit before the observed cost shows
 * it (bn_smallwrites: 7.9% slowdown, 5 sheds).  So every change the
 * search makes alone - a launch when launching one at a time, a stop
 * to make room - is measured: the observed cost two sample periods
 * after it, against before, over its prediction, is the factor of its
 * hypothesis (the same metrics, so the same functions), kept at its
 * largest: a measurement blurred by the program's own variation must
 * not make the next launch overshoot.  A shed teaches it too (what the
 * shed experiment was charged times observed / charged).  Predictions
 * of that hypothesis are scaled by it before launch; the gate launches
 * nothing while a measurement is open.  A launch beside experiments
 * that share its trampolines measures only the difference it makes,
 * so an underestimate can remain until a shed corrects it. */

double pc_cost_learn_hyp_factor(const struct pc_consult *pc, int hyp)
{
	if (hyp < 0 || (size_t)hyp >= pc->nhyp_factor ||
	    !(pc->hyp_factor[hyp] > 1))
		return 1;
	return pc->hyp_factor[hyp];
}

/* Has a change of this hypothesis' experiments been measured? (0 in
 * the table: not yet.) */
bool pc_cost_learn_measured(const struct pc_consult *pc, int hyp)
{
	return hyp >= 0 && (size_t)hyp < pc->nhyp_factor &&
	       pc->hyp_factor[hyp] > 0;
}

void pc_cost_learn_factor(struct pc_consult *pc, int hyp, double f)
{
	size_t need = (size_t)hyp + 1;

	if (need > pc->nhyp_factor) {
		pc->hyp_factor = realloc(pc->hyp_factor,
					 need * sizeof(*pc->hyp_factor));
		if (pc->hyp_factor == NULL)
			abort();
		for (size_t i = pc->nhyp_factor; i < need; i++)
			pc->hyp_factor[i] = 0;
		pc->nhyp_factor = need;
	}
	if (f > PC_MAX_HYP_FACTOR)
		f = PC_MAX_HYP_FACTOR;
	if (f < 1)
		f = 1;
	if (f > pc->hyp_factor[hyp])
		pc->hyp_factor[hyp] = f;
}

void pc_cost_learn_probe(struct pc_consult *pc, struct pc_node *n, int sign)
{
	if (!(n->pred_cost > 0)) {
		pc->probe = NULL;   /* nothing to scale: shared or free */
		return;
	}
	pc->probe = n;
	pc->probe_sign = sign;
	pc->probe_before = pc->observed;
	pc->probe_t = pc->now;
}

/* Close the open measurement once the observed cost shows the change:
 * two sample periods after the experiment went active (or stopped).
 * Abandoned if the launch failed or stopped before that. */
void pc_cost_learn_probe_next(struct pc_consult *pc)
{
	struct pc_node *n = pc->probe;
	double p = 2 * pc_consult_sample_period(pc), since, delta;

	if (n == NULL)
		return;
	if (pc->probe_sign > 0 && !n->active) {
		if (!n->pending || pc->now - pc->probe_t > 10 * p)
			pc->probe = NULL;
		return;
	}
	since = pc->probe_sign > 0 ? n->t_start : pc->probe_t;
	if (pc->now - since + 1e-9 < p)
		return;
	delta = pc->probe_sign * (pc->observed - pc->probe_before);
	/* A change under a twentieth of the limit is the program's own
	 * variation as much as the experiment's: over a prediction of
	 * nearly nothing it taught factors of 22-740 ("measured: 0.00%
	 * (predicted 0.000%); scaled by 396" on gzip and zstd), which
	 * then held back every launch of that hypothesis. */
	if (delta >= pc_tunables_get(pc->cfg, "costLimit") / 20) {
		pc_cost_learn_factor(pc, n->hyp, delta / n->pred_cost);
		pc_consult_logf(
			pc,
			"Cost of %s measured: %.2f%% (predicted %.3f%%); "
			"its predictions are scaled by %.0f",
			pc_truth_node_hyp(pc, n)->name, 100 * delta,
			100 * n->pred_cost,
			pc_cost_learn_hyp_factor(pc, n->hyp));
	} else {
		/* Measured as cheap: too little to scale by, but known.
		 * Left unmeasured, every later launch of the hypothesis
		 * was probed alone, ~0.4 s each (bn_phases: 48 launches
		 * waited so in a run's second half). */
		pc_cost_learn_factor(pc, n->hyp, 1);
	}
	pc->probe = NULL;
}
