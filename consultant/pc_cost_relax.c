/*
 * pc_cost_relax.c - what the cost gate learnt is undone when the
 * measurements no longer support it (pc_cost.c learns it):
 *  - one launch at a time (`tight`, set when the budget proved too small
 *    for the predictions) ends once the observed cost has stayed at or
 *    under half the limit for PC_CALM_S; it is set again only when the
 *    budget is exhausted again, so the two thresholds (the limit, half
 *    of it) keep the mode from flapping;
 *  - a hypothesis' learnt factor (kept at its largest when learnt) is
 *    lowered when its running experiments, shown in the observed cost,
 *    cost less than the factor predicts; and every learnt factor, and
 *    the global one, decays towards 1 (half-life PC_HALF_LIFE) while
 *    the observed cost is well under the limit.  A factor learnt under
 *    load (59 on bn_phases) otherwise held every later launch of that
 *    hypothesis back, one at a time, ~0.4 s each, for the rest of the
 *    run.  A factor decayed too far is learnt again by the next shed.
 */
#include "pc_search.h"

#include <math.h>

#define PC_CALM 0.5          /* of the limit: well under it */
#define PC_CALM_S 1.0        /* s of calm before launching freely again */
#define PC_HALF_LIFE 4.0     /* s, of a factor's excess over 1 while calm */
#define PC_OVER 0.8          /* observed under this share of predicted:
				the factors overestimate */
#define PC_MAX_STEP 0.5      /* largest correction in one tick */
#define PC_HOLD_S 3.0        /* s the largest observed cost is held */

/* The observed cost shows every running experiment: nothing pending,
 * launched, stopped or shed within two sample periods, and no change
 * being measured. */
static bool shown(const struct pc_consult *pc)
{
	struct pc_search *ss[2] = { pc->global, pc->current };
	double p = 2 * pc_consult_sample_period(pc);

	if (pc->npending > 0 || pc->probe != NULL ||
	    (pc->shed_t >= 0 && pc->now - pc->shed_t < p) ||
	    (pc->rates_measured && pc->now - pc->rates_t < p))
		return false;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++)
			if (ss[k]->nodes[i]->active &&
			    pc->now - ss[k]->nodes[i]->t_start + 1e-9 < p)
				return false;
	return true;
}

/* The cost of what runs by measurement: the observed cost plus what
 * the experiments it does not show yet were charged (pending, or
 * active for less than two sample periods). */
static double committed(const struct pc_consult *pc)
{
	return pc->observed + pc->pending_cost +
	       pc_cost_charged_active(pc, 2 * pc_consult_sample_period(pc));
}

/* The running experiments cost less than their factors say: lower the
 * factors of their hypotheses by the ratio (at most PC_MAX_STEP a tick,
 * never under 1). */
static void correct_active(struct pc_consult *pc)
{
	struct pc_search *ss[2] = { pc->global, pc->current };
	double pred = pc_cost_predicted_active(pc), r;

	/* Predictions of nearly nothing, observed at nothing, say nothing
	 * of a factor: right after a shed the experiments left running
	 * were predicted at ~1e-6 and observed at 0, and that halved the
	 * factor the shed had just learnt, twice, back to 1; sqlite3's next
	 * CPU timer on a hot function was predicted at 5% again and
	 * observed at 7%, eight times in one run. */
	if (pred < pc_tunables_get(pc->cfg, "costLimit") / 20 ||
	    pc->observed >= PC_OVER * pred)
		return;
	r = pc->observed / pred;
	if (r < PC_MAX_STEP)
		r = PC_MAX_STEP;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; ss[k] && i < ss[k]->nn; i++) {
			const struct pc_node *n = ss[k]->nodes[i];
			double *f;

			if (!n->active || !(n->pred_cost > 0) || n->hyp < 0 ||
			    (size_t)n->hyp >= pc->nhyp_factor)
				continue;
			f = &pc->hyp_factor[n->hyp];
			if (*f > 1 && *f * r < *f - 1e-12)
				*f = *f * r < 1 ? 1 : *f * r;
		}
	}
}

static double decayed(double f, double dt)
{
	return f > 1 ? 1 + (f - 1) * exp2(-dt / PC_HALF_LIFE) : f;
}

void pc_cost_relax(struct pc_consult *pc)
{
	double limit = pc_tunables_get(pc->cfg, "costLimit");
	double dt = pc->now - pc->relax_t;
	bool calm;

	pc->relax_t = pc->now;
	/* The observed cost varies with what the program does (bn_smallwrites
	 * under load: 2.6-4.4% from one sample period to the next), so a
	 * launch judged by one low reading overshot: the largest of the
	 * last PC_HOLD_S is held for the gate. */
	if (pc->observed >= pc->obs_hold ||
	    pc->now - pc->obs_hold_t > PC_HOLD_S) {
		pc->obs_hold = pc->observed;
		pc->obs_hold_t = pc->now;
	}
	if (shown(pc))
		correct_active(pc);
	/* Not while the observed cost may still show what was shed. */
	calm = !(pc->shed_t >= 0 && pc->now - pc->shed_t <
		 2 * pc_consult_sample_period(pc) && pc->probe == NULL) &&
	       committed(pc) <= PC_CALM * limit;
	if (!calm) {
		pc->calm_since = -1;
		return;
	}
	if (pc->calm_since < 0) {
		pc->calm_since = pc->now;
		return;
	}
	for (size_t h = 0; h < pc->nhyp_factor; h++)
		pc->hyp_factor[h] = decayed(pc->hyp_factor[h], dt);
	pc->cost_factor = decayed(pc->cost_factor, dt);
	if (pc->tight && pc->now - pc->calm_since + 1e-9 >= PC_CALM_S) {
		pc->tight = false;
		pc_consult_logf(
			pc,
			"Observed cost %.2f%% is well under the limit "
			"%.1f%%: launches no longer wait one at a time.",
			100 * pc->observed, 100 * limit);
	}
}
