/*
 * test_search_fast.c - what makes the search reach its conclusions
 * sooner without concluding anything the data does not show
 * (consultant/README.md, "Where hunch differs"), on the sim source:
 *  - a level with one child is refined past (skipSingleChildLevels);
 *  - the queue puts a resource the source never saw busy after the
 *    others, across parents;
 *  - the cost of a hypothesis' experiments is measured when one starts
 *    or stops alone, and scales its predictions;
 *  - an experiment with no data where the source saw the program is
 *    enabled again before the no-data rule may conclude;
 *  - shedding takes a resource the source never saw busy first;
 *  - a short observation (minObservationTime 0.5 s) concludes a clear
 *    value by the sequential t test, looked at from 3 values on, and
 *    does not take the first high intervals of a value whose mean is
 *    under the threshold for a finding, as the normal quantile did.
 */
#include <math.h>

#include "sim_world.h"

#define AT(f) "<" f ",/Process,/SyncObject,/Files>"
#define THREAD(t) "</Code,/Process/100/" t ",/SyncObject,/Files>"

static int count_logged(struct world *w, const char *part)
{
	int n = 0;

	for (size_t i = 0; i < w->pc->nlog; i++)
		n += strstr(w->pc->log[i], part) != NULL;
	return n;
}

/* One process: /Process refines straight to its threads, from the top
 * node; two classes of sync object: /SyncObject keeps its class level. */
static void test_skip_single_child(void)
{
	const char *sets[] = { "skipSingleChildLevels=true", NULL };
	struct world *w = world_new(NULL, sets);
	struct pc_node *top, *t0, *t1;

	src_sim_script(w->sim, "sync_wait", "*", 0, 0.9, 0.02);
	world_run(w, 3.0);
	top = world_node(w, 0, "ExcessiveSyncWaitingTime", TOP);
	t0 = world_node(w, 0, "ExcessiveSyncWaitingTime", THREAD("100:main"));
	t1 = world_node(w, 0, "ExcessiveSyncWaitingTime",
			THREAD("101:worker"));
	tap_ok(top && top->truth == PC_TRUE, "the top node is true");
	tap_ok(t0 && t1 && t0->orig_parent == top->id &&
	       t1->orig_parent == top->id,
	       "both threads are refinements of the top node");
	tap_ok(world_node(w, 0, "ExcessiveSyncWaitingTime",
			  "</Code,/Process/100,/SyncObject,/Files>") == NULL,
	       "no node for the one process");
	tap_ok(world_node(w, 0, "ExcessiveSyncWaitingTime",
			  "</Code,/Process,/SyncObject/Mutex,/Files>") != NULL,
	       "two classes of sync object: the class level stays");
	TRACE_IS(w, 0, "ExcessiveSyncWaitingTime", THREAD("101:worker"),
		 "queued pending active true");
	world_free(w);
}

/* main's refinements (locker 0.8, compute unknown, writer 0) are
 * queued before the threads' (0.5 each: /Process/100 concluded after
 * main); with one pending enable at a time, taking two ticks each, they
 * launch in queue order - but writer, where the source never saw the
 * program, after the threads. */
static void test_no_evidence_last(void)
{
	const char *sets[] = { "maxPendingEnables=1", NULL };
	struct world *w = world_new(NULL, sets);
	struct pc_node *wr, *cp, *th;

	src_sim_hint(w->sim, F_WRITER, 0);
	src_sim_hint(w->sim, F_LOCKER, 0.8);
	src_sim_hint(w->sim, "/Process/100/100:main", 0.5);
	src_sim_hint(w->sim, "/Process/100/101:worker", 0.5);
	src_sim_enable_delay(w->sim, 2);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.02);
	world_run(w, 20.0);
	wr = world_node(w, 0, "CPUbound", AT(F_WRITER));
	cp = world_node(w, 0, "CPUbound", AT(F_COMPUTE));
	th = world_node(w, 0, "CPUbound", THREAD("101:worker"));
	tap_ok(wr && cp && th, "the refinements exist");
	tap_ok(wr && cp && th && wr->hint == 0 && cp->hint < 0 &&
	       th->hint == 0.5, "their evidence: writer 0, compute unknown, "
	       "the worker thread 0.5");
	tap_ok(wr && th && wr->seq < th->seq, "writer was queued first");
	tap_ok(wr && cp && th && cp->t_start >= 0 &&
	       cp->t_start < th->t_start && th->t_start < wr->t_start,
	       "compute ran first, then the thread, then writer (%.1f, "
	       "%.1f, %.1f s)", cp ? cp->t_start : -1,
	       th ? th->t_start : -1, wr ? wr->t_start : -1);
	world_free(w);
}

/* Like bn_smallwrites: predicted from a guessed call rate, observed 30
 * times that.  Room is made by stopping the I/O node (its cost is then
 * measured), TooManySmallIOOps launches alone (measured too); from
 * then on predictions are scaled and no launch overshoots the limit. */
static void test_learn_cost(void)
{
	struct world *w = world_new(NULL, NULL);
	int io = pc_config_hypo_find(w->cfg, "ExcessiveIOBlockingTime");
	int small = pc_config_hypo_find(w->cfg, "TooManySmallIOOps");
	double peak_after = 0;

	world_writes(w, 0.0015, 0.0003, 30);
	world_run(w, 1.6);
	LOGGED(w, "+1.2) Cost limit: stopped ExcessiveIOBlockingTime for "
	       TOP " (true since 1.2 s) to make room for its refinements");
	LOGGED(w, "+1.6) Cost of ExcessiveIOBlockingTime measured: 4.50% "
	       "(predicted 0.150%); its predictions are scaled by 30");
	world_run(w, 2.4);
	LOGGED(w, "+2.4) Cost of TooManySmallIOOps measured: 1.80% "
	       "(predicted 0.060%); its predictions are scaled by 30");
	tap_ok(fabs(pc_cost_learn_hyp_factor(w->pc, io) - 30) < 1e-6 &&
		       fabs(pc_cost_learn_hyp_factor(w->pc, small) - 30) < 1e-6,
	       "both factors are 30 (%g, %g)",
	       pc_cost_learn_hyp_factor(w->pc, io),
	       pc_cost_learn_hyp_factor(w->pc, small));
	while (src_sim_source(w->sim)->ops->now(src_sim_source(w->sim)) <
	       20.0 - 1e-9) {
		world_run(w, src_sim_source(w->sim)->ops->now(
				src_sim_source(w->sim)) + 0.2);
		if (w->pc->observed > peak_after)
			peak_after = w->pc->observed;
	}
	tap_eq(count_logged(w, ": shed "), 0, "nothing shed");
	tap_ok(peak_after <= 0.05 + 1e-9, "observed cost never over the "
	       "limit after the start (peak %.4f)", peak_after);
	world_free(w);
}

/* No data at all in locker, where the source saw the program 0.9 of
 * the time: enabled again twice (a catchup may have missed), then the
 * no-data rule concludes.  compute, never seen by the source either
 * way (-1), concludes false by the rule without retries. */
static void test_no_data_retry(void)
{
	struct world *w = world_new(NULL, NULL);
	struct pc_node *lk, *cp;

	src_sim_hint(w->sim, F_LOCKER, 0.9);
	src_sim_script(w->sim, "io_wait", "*", 0, 0.9, 0.02);
	src_sim_script(w->sim, "io_bytes", "*", 0, 100, 0);
	src_sim_script(w->sim, "io_ops", "*", 0, 100, 0);
	src_sim_script(w->sim, "io_ops", AT(F_LOCKER), 0, 0, 0);
	src_sim_script(w->sim, "io_ops", AT(F_COMPUTE), 0, 0, 0);
	world_run(w, 30.0);
	lk = world_node(w, 0, "TooManySmallIOOps", AT(F_LOCKER));
	cp = world_node(w, 0, "TooManySmallIOOps", AT(F_COMPUTE));
	tap_eq(count_logged(w, "TooManySmallIOOps for " AT(F_LOCKER)
			    " had no data where the program was seen "
			    "(evidence 0.90): enabled again"), 2,
	       "locker: enabled again twice");
	tap_ok(lk && lk->truth == PC_FALSE && strcmp(lk->how, "no data") == 0,
	       "then concluded false by the no-data rule (%s)",
	       lk ? lk->how : "-");
	tap_ok(lk && lk->nodata_retries == 2, "two retries (%d)",
	       lk ? lk->nodata_retries : -1);
	tap_ok(cp && cp->truth == PC_FALSE && cp->nodata_retries == 0,
	       "compute (no evidence): false with no retry");
	world_free(w);
}

/* Shedding with evidence: compute, where the source never saw the
 * program, reads 0.3 (the threshold: it keeps testing until
 * sufficientTime); at 4.0 s the instrumentation starts costing twice
 * its prediction.  compute started at 2.4 s, before main's and the
 * process's refinements along the other hierarchy (3.6 s), yet it is
 * shed first; then those still testing, latest first; the true ones
 * last. */
static void test_shed_no_evidence_first(void)
{
	static const char *want[] = {
		AT(F_COMPUTE),
		"<" F_LOCKER ",/Process/100,/SyncObject,/Files>",
		"<" F_WRITER ",/Process/100,/SyncObject,/Files>",
		THREAD("101:worker"),
		THREAD("100:main"),
	};
	struct world *w = world_new(NULL, NULL);
	char line[512];
	size_t k = 0;
	bool in_order = true;

	src_sim_hint(w->sim, F_COMPUTE, 0);
	src_sim_cost(w->sim, "cpu_inclusive", 0.005, 1);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.05);
	src_sim_script(w->sim, "cpu_inclusive", AT(F_COMPUTE), 0, 0.3, 0.05);
	world_run(w, 4.0);
	src_sim_cost(w->sim, "cpu_inclusive", 0.005, 2);
	world_run(w, 4.4);
	for (size_t i = 0; i < w->pc->nlog; i++) {
		if (strstr(w->pc->log[i], ": shed ") == NULL)
			continue;
		snprintf(line, sizeof(line), "+4.2) Observed cost 0.1000 is "
			 "over the limit 0.0500: shed CPUbound for %s",
			 k < 5 ? want[k] : "(none)");
		in_order &= strcmp(w->pc->log[i], line) == 0;
		k++;
	}
	tap_ok(in_order && k == 5, "shed at 4.2 s: compute (no evidence), "
	       "then locker and writer on /Process/100 (testing, latest "
	       "first), then the two true threads");
	if (!in_order || k != 5)
		world_dump(w);
	TRACE_IS(w, 0, "CPUbound", AT(F_COMPUTE),
		 "queued pending active shed queued");
	world_free(w);
}

/* CPUbound at the top after `until` s of cpu_inclusive `value` +-
 * `noise` (alternating every 0.4 s), observed for 0.5 s at least. */
static struct pc_node *short_run(const char *student, double value,
				 double noise, double until,
				 struct world **wp)
{
	const char *sets[] = { "minObservationTime=0.5", student, NULL };
	struct world *w = world_new(NULL, sets);

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, value, noise);
	world_run(w, until);
	*wp = w;
	return world_node(w, 0, "CPUbound", TOP);
}

/* CPU 0.9 against CPUbound's 0.3: clear, by statistics, before 1.2 s;
 * 0.2 +- 0.15 (CPUbound's threshold inside the swing): never true. */
static void test_sequential_t(void)
{
	struct world *w;
	struct pc_node *n = short_run("studentT=true", 0.9, 0, 1.2, &w);

	tap_ok(n && n->truth == PC_TRUE, "0.9 CPUs: CPUbound true");
	tap_ok(n && strcmp(n->how, "statistics") == 0, "by statistics (%s)",
	       n ? n->how : "");
	tap_ok(n && n->wlooks == (int)n->wn - 2, "looked at from 3 values on "
	       "(%d looks, %g values)", n ? n->wlooks : -1, n ? n->wn : -1);
	tap_ok(n && n->t_concluded < 1.2 - 1e-9, "before 1.2 s (%g)",
	       n ? n->t_concluded : -1);
	world_free(w);
	/* 0.35, 0.35, 0.05, 0.05, ... from 0.4 s: the mean 0.2 is under 0.3 */
	n = short_run("studentT=false", 0.2, -0.15, 1.0, &w);
	tap_ok(n && n->truth == PC_TRUE &&
	       strcmp(n->how, "statistics") == 0,
	       "normal quantile: the first high intervals taken for a "
	       "finding (truth %d)", n ? (int)n->truth : -1);
	world_free(w);
	n = short_run("studentT=true", 0.2, -0.15, 3.0, &w);
	tap_ok(n && n->truth == PC_UNKNOWN,
	       "sequential t: not a finding, still unknown at 3 s (truth %d)",
	       n ? (int)n->truth : -1);
	world_free(w);
}

int main(void)
{
	test_skip_single_child();
	test_no_evidence_last();
	test_learn_cost();
	test_no_data_retry();
	test_shed_no_evidence_first();
	test_sequential_t();
	return tap_done();
}
