/*
 * pc_experiment.c - judging one experiment's data: Paradyn's rule and
 * hunch's statistical one, side by side.
 *
 * Paradyn (PCexperiment.C): adjusted = value - threshold * hys; the guess
 * is adjusted > 0 (gt) or < 0 (lt); hys starts at 1+h, becomes 1-h after
 * the guess turns true and 1+h after it turns false; a guess that has
 * held for sufficientTime becomes the conclusion.  hunch mirrors the
 * band for "lt" (band_edge): true below 1-h, false again above 1+h.
 *
 * hunch: the mean of the interval values since the guess last flipped,
 * with a confidence interval around it, concludes as soon as the whole
 * interval lies outside the band [threshold*(1-h), threshold*(1+h)] - but
 * never before the experiment has run minObservationTime.  So clear cases
 * conclude at the floor and borderline ones wait for Paradyn's
 * sufficientTime, the ceiling.
 *
 * The interval (studentT) is a sequential test: the mean of n interval
 * values with unknown variance is judged with Student's t quantile for
 * n-1 degrees of freedom, not the normal quantile (which held only 76%
 * confidence for 2 values, and let a short observation take a little
 * noise for a finding), and the error confidenceZ allows (2.576: 1%) is
 * spent over the repeated looks: the k-th look since the guess last
 * flipped allows alpha * 6/(pi^2 k^2), which sums to alpha.  So with
 * interval values independent and normal, an experiment concludes on
 * the wrong side of the band before sufficientTime with probability at
 * most 1%, however many intervals it is looked at.  The looks start at 3
 * values (at 2, 104 standard errors: a look spent for nothing): the
 * first takes 12.8 standard errors, the third (5 values) 9.5, the fifth
 * (7 values) 7.8.
 *
 * One-sided (oneSidedTest): a look concludes true only when the lower
 * bound is over the band's upper edge, false only when the upper bound
 * is under its lower edge.  A wrong conclusion is one on the wrong side
 * of the band: true while the real mean is below it (only the lower
 * bound's error can do that), false while it is above (only the upper
 * bound's).  So each kind of error needs one tail, and the quantile
 * that leaves alpha_k in one tail (the two-sided one at 2 alpha_k)
 * keeps the same guarantee: on the wrong side of the band with
 * probability at most 1% over all the looks.  (Inside the band either
 * conclusion is within the indifference the band grants; each has at
 * most 1%.)  The two-sided interval spent half its error on the side
 * that cannot be wrong: the first look took 12.8 standard errors where
 * 9.0 suffice, the third 9.5 where 8.0 do, the fifth 7.8 where 6.8 do; a CPU value at 2x its
 * threshold under load (bn_pipeline's 0.64 against 0.3) needed ~10
 * intervals.  A configuration without the tunable (a journal recorded
 * before it) keeps the two-sided interval, the search it recorded.
 *
 * A value that keeps crossing the band (borderline, noisy: a loaded
 * machine) flips the guess before it holds sufficientTime, and Paradyn's
 * rule never concludes.  Such an experiment held its cost for good, and
 * under a tight cost limit the search waited on it for ever (the cost
 * control waits for an unknown node to conclude before it makes room:
 * bn_smallwrites stalled 80 s so).  maxConclusionTime bounds it: an
 * experiment still unknown that long concludes by the mean of its whole
 * run against the threshold ("time limit").
 *
 * A true node's mean stays on the true side of the threshold, not just
 * inside the band: the guess alone (the last value against the band)
 * kept a node true at a mean of 0.94 under a threshold of 0.95, and the
 * report listed "0.9407 > 0.95".  So a guess that held sufficientTime
 * concludes only when its mean agrees, and a true node whose guess
 * stays true while its mean since then crosses the threshold (values
 * inside the band, below it, for long) turns false ("mean crossed");
 * a guess that flips is judged by the rules above as before.
 * pc_shg_node_judged is the value the reports give.
 */
#include "pc_search.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The PC metric over the last interval; NaN when an input has no data or
 * a denominator is not positive (no I/O operations means no average I/O
 * size, not a size of 0 - Paradyn's DivideEval returned 0 here, which
 * made TooManySmallIOOps true wherever there was no I/O at all). */
static double combine(const struct pc_consult *pc, const struct pc_node *n,
		      int *missing)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	double v[PC_MAX_INPUTS] = { 0 }, r;

	*missing = -1;
	for (int i = 0; i < n->nin; i++) {
		const struct pc_minst *m = pc_datamgr_get(&pc->dm, n->inst[i]);

		v[i] = m->last;
		if (m->sampled)   /* the report says how it was measured */
			((struct pc_node *)n)->sampled = true;
		if (isnan(v[i])) {
			*missing = i;   /* no data, not a ratio over nothing */
			return NAN;
		}
	}
	r = v[0];
	for (int i = 1; i < n->nin; i++) {
		switch (h->op) {
		case PC_PM_ADD: r += v[i]; break;
		case PC_PM_SUB: r -= v[i]; break;
		case PC_PM_MUL: r *= v[i]; break;
		case PC_PM_DIV:
			if (v[i] <= 0)
				return NAN;
			r /= v[i];
			break;
		case PC_PM_MAX: r = v[i] > r ? v[i] : r; break;
		case PC_PM_ID: break;
		}
	}
	return r;
}

static bool is_true_side(enum pc_cmp cmp, double adjusted)
{
	return cmp == PC_CMP_GT ? adjusted > 0 : adjusted < 0;
}

/* P(|T| <= t) for Student's t with df degrees of freedom, in terms of
 * theta = atan(t / sqrt(df)): the finite series of Abramowitz & Stegun
 * 26.7.3 (odd df) and 26.7.4 (even df). */
static double t_central(double theta, int df)
{
	double s = sin(theta), c2 = cos(theta) * cos(theta);
	double term = 1, sum = 1;

	if (df % 2 == 0) {
		for (int k = 2; k <= df - 2; k += 2) {
			term *= c2 * (k - 1) / k;
			sum += term;
		}
		return s * sum;
	}
	if (df == 1)
		return 2 * theta / M_PI;
	for (int k = 3; k <= df - 2; k += 2) {
		term *= c2 * (k - 1) / k;
		sum += term;
	}
	return 2 / M_PI * (theta + s * cos(theta) * sum);
}

/* The two-sided t quantile: P(|T| <= t) = conf with df degrees of
 * freedom, by bisection on theta (the series is monotone in it).  Past
 * 200 degrees of freedom (40 s of intervals) 200's quantile is used:
 * larger by under 0.5%, so a little more cautious, and the series stays
 * short. */
static double t_quantile(double conf, int df)
{
	double lo = 0, hi = M_PI / 2;

	if (df > 200)
		df = 200;
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;

		if (t_central(mid, df) < conf)
			lo = mid;
		else
			hi = mid;
	}
	return tan((lo + hi) / 2) * sqrt(df);
}

/* The interval's half-width in standard errors for n values at the
 * k-th look: the t quantile at the confidence left for that look, or
 * confidenceZ itself when studentT is off or absent (a journal recorded
 * before it existed replays the search it recorded). */
static bool studentT(const struct pc_consult *pc)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg, "studentT");

	return t != NULL && t->value != 0;
}

static bool one_sided(const struct pc_consult *pc)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg, "oneSidedTest");

	return t != NULL && t->value != 0;
}

static double crit_value(const struct pc_consult *pc, int n, int k)
{
	double z = pc_tunables_get(pc->cfg, "confidenceZ");
	double alpha;

	if (!studentT(pc))
		return z;
	alpha = erfc(z / M_SQRT2) * 6 / (M_PI * M_PI * k * k);
	if (one_sided(pc))
		alpha *= 2;   /* alpha_k in the one tail that can be wrong */
	return t_quantile(1 - alpha, n - 1);
}

/* 1 clearly true, 0 clearly false, -1 not clear (yet). */
static int statistical(const struct pc_consult *pc, struct pc_node *n,
		       enum pc_cmp cmp, double hr)
{
	double lo_band = n->threshold * (1 - hr), hi_band = n->threshold * (1 + hr);
	double se, lo, hi, z;

	if (n->wn < 2 || (studentT(pc) && n->wn < 3))
		return -1;
	z = crit_value(pc, (int)n->wn, ++n->wlooks);
	se = sqrt(n->wm2 / (n->wn - 1) / n->wn);
	lo = n->wmean - z * se;
	hi = n->wmean + z * se;
	if (lo > hi_band)
		return cmp == PC_CMP_GT ? 1 : 0;
	if (hi < lo_band)
		return cmp == PC_CMP_GT ? 0 : 1;
	return -1;
}

/* An experiment whose metric has had no value at all (a ratio over
 * nothing: TooManySmallIOOps in a function that does no I/O) for
 * sufficientTime concludes false: there is nothing there to find.
 * Otherwise it would stay active for ever, holding its cost and, when
 * the cost limit is tight, the search (bn_smallwrites stalled on
 * bnsw_open and bnsw_parse, which run once, at the start).  When an input
 * (not a ratio over nothing) never had a value, the node records which
 * (no_input): the source delivered nothing, and the reports list it as
 * not tested rather than as a finding that nothing is there. */
/*
 * But no data where the source's evidence saw the program busy (its
 * hint) says the instrumentation missed, not that nothing happens: a
 * function constraint whose function was already on a thread's stack
 * when it was inserted is set by catchup, which skips a thread stopped
 * inside trampoline code - on bn_smallwrites, inside write()'s, often -
 * and bnsw_write_loop never returns to set it again, so bytes per
 * operation there had no data and was concluded false.  Such an
 * experiment is enabled again (new code, a new catchup) after
 * minObservationTime, up to PC_NODATA_RETRIES times, before the rule
 * above may conclude; still only instrumentation concludes.
 */
#define PC_SEEN_HINT 0.25
#define PC_NODATA_RETRIES 2

static bool retry_no_data(struct pc_consult *pc, struct pc_search *s,
			  struct pc_node *n)
{
	char focus[512];

	/* A sampled estimate's missing value is its warm-up (a wall time
	 * from samples has none before 2 s of them, src_live_setwall.c),
	 * not a missed catchup: enabled again, it only starts over. */
	if (n->sampled || n->hint < PC_SEEN_HINT ||
	    n->nodata_retries >= PC_NODATA_RETRIES ||
	    pc->now - n->t_start + 1e-9 < pc_tunables_get(pc->cfg,
							 "minObservationTime"))
		return false;
	n->nodata_retries++;
	pc_cost_node_stop(pc, n, "stopped");
	pc_consult_logf(pc,
			"%s for %s had no data where the program was seen "
			"(evidence %.2f): enabled again",
			pc_truth_node_hyp(pc, n)->name,
			pc_focus_name(pc->res, &n->focus, focus, sizeof(focus)),
			n->hint);
	pc_cost_queue(pc, s, n, n->priority);
	return true;
}

static void no_data(struct pc_consult *pc, struct pc_search *s,
		    struct pc_node *n, int missing)
{
	if (n->guess >= 0 || n->truth != PC_UNKNOWN)
		return;
	if (retry_no_data(pc, s, n) ||
	    pc->now - n->t_start + 1e-9 < pc_tunables_get(pc->cfg,
							 "sufficientTime") ||
	    pc_early_held(s, n))
		return;
	snprintf(n->how, sizeof(n->how), "no data");
	n->no_input = missing;
	pc_truth_change(pc, s, n, PC_FALSE);
}

/* maxConclusionTime has passed since the experiment started (0, or a
 * configuration without the tunable - a journal recorded before it
 * existed - means no limit, the search that journal recorded). */
static bool over_time_limit(const struct pc_consult *pc,
			    const struct pc_node *n)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg,
						     "maxConclusionTime");

	return t != NULL && t->value > 0 && n->run_len > 0 &&
	       pc->now - n->t_start + 1e-9 >= t->value;
}

/* The hysteresis band's edge a value must cross to flip the guess, as a
 * multiple of the threshold: away from the threshold on the true side
 * to become true, on the false side to become false again.  Paradyn
 * started every guess at 1+h whatever the comparison, so a "below"
 * hypothesis became true up to h above its threshold: bn_pipeline's
 * writer, 4096-byte writes under "below 4096 bytes", concluded
 * TooManySmallIOOps true at 4095.99.  A configuration without
 * hysteresisFollowsCompare (a journal recorded before it) keeps
 * Paradyn's band, the search it recorded. */
static bool band_follows_compare(const struct pc_consult *pc)
{
	const struct pc_tunable *t = pc_tunables_find(pc->cfg,
						     "hysteresisFollowsCompare");

	return t != NULL && t->value != 0;
}

static double band_edge(const struct pc_consult *pc, enum pc_cmp cmp,
			double hr, int guess)
{
	double up = guess ? 1 - hr : 1 + hr;

	if (cmp == PC_CMP_GT || !band_follows_compare(pc))
		return up;
	return 2 - up;      /* "below": true under 1-h, false again over 1+h */
}

/* At maxConclusionTime the whole run's mean decides, true only past the
 * edge a guess crosses to become true: a mean inside the band is no
 * finding (without the band, the raw threshold, as recorded before). */
static double time_limit_edge(const struct pc_consult *pc, enum pc_cmp cmp,
			      double hr)
{
	return band_follows_compare(pc) ? band_edge(pc, cmp, hr, 0) : 1;
}

void pc_experiment_evaluate(struct pc_consult *pc, struct pc_search *s,
		 struct pc_node *n, double len)
{
	const struct pc_hypothesis *h = pc_truth_node_hyp(pc, n);
	double hr = pc_tunables_get(pc->cfg, "hysteresisRange");
	int guess, clear, want = -1, missing;
	double v = combine(pc, n, &missing), delta;

	if (isnan(v)) {
		no_data(pc, s, n, missing);
		return;
	}
	n->no_input = -1;
	n->unconfirmed = false;     /* measured again since it was shed */
	n->value = v;
	n->threshold = pc_tunables_get(pc->cfg, h->threshold);
	/* A refinement started early on stack samples counts nothing until
	 * a parent is true: the samples may not hold its code yet (a
	 * followed child's outer functions, before its sampler's window
	 * filled, read 0 CPUs and concluded false at the release); its data
	 * starts then, as if it had started then. */
	if (n->sampled && pc_early_held(s, n))
		return;
	if (n->guess < 0)
		n->hys = band_edge(pc, h->cmp, hr, 0);
	guess = is_true_side(h->cmp, v - n->threshold * n->hys);
	if (guess != n->guess) {
		n->held_set = n->truth == PC_TRUE && n->guess == 1 &&
			      guess == 0 && n->wn > 0;
		n->held_mean = n->wmean;
		n->hys = band_edge(pc, h->cmp, hr, guess);
		n->accum = len;
		n->wn = 0;
		n->wlooks = 0;
		n->wmean = n->wm2 = 0;
		n->guess = guess;
	} else {
		n->accum += len;
	}
	n->run_sum += v * len;
	n->run_len += len;
	n->wn += 1;
	delta = v - n->wmean;
	n->wmean += delta / n->wn;
	n->wm2 += delta * (v - n->wmean);
	pc_early_consider(pc, s, n);
	if (pc->now - n->t_start + 1e-9 < pc_tunables_get(pc->cfg,
							 "minObservationTime"))
		return;
	clear = statistical(pc, n, h->cmp, hr);
	if (clear >= 0 && clear == n->guess) {
		want = clear;
		snprintf(n->how, sizeof(n->how), "statistics");
	} else if (n->truth == PC_TRUE && n->guess == 1 &&
		   !pc_shg_node_holds(n, h->cmp)) {
		want = 0;   /* true only while its mean is: pc_shg.h */
		snprintf(n->how, sizeof(n->how), "mean crossed");
	} else if (n->accum + 1e-9 >= pc_tunables_get(pc->cfg,
						      "sufficientTime") &&
		   is_true_side(h->cmp, n->wmean - n->threshold) ==
		   n->guess) {
		want = n->guess;
		snprintf(n->how, sizeof(n->how), "sufficient time");
	} else if (n->truth == PC_UNKNOWN && over_time_limit(pc, n)) {
		want = is_true_side(h->cmp, n->run_sum / n->run_len -
				    n->threshold * time_limit_edge(pc, h->cmp, hr));
		snprintf(n->how, sizeof(n->how), "time limit");
	}
	if (want < 0 || (want ? PC_TRUE : PC_FALSE) == n->truth ||
	    pc_early_held(s, n))   /* pc_early.c: no true parent yet */
		return;
	n->held_s = n->accum;
	pc_truth_change(pc, s, n, want ? PC_TRUE : PC_FALSE);
}
