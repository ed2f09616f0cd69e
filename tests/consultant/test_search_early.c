/*
 * test_search_early.c - conclusions sooner, with the same guarantee, on
 * the sim source (consultant/pc_early.c, consultant/pc_experiment.c):
 *  - refineEarly: a node whose guess holds clearly has its refinements
 *    running before it concludes; they conclude only once it is true,
 *    and are withdrawn (never true, not listed as untested) when it
 *    concludes false; one estimated from stack samples counts its
 *    values only from its release;
 *  - loneChildFirst: only a lone file is queued first among equals
 *    (the sim program writes two, and is one process: neither counts);
 *  - oneSidedTest: the sequential test spends each look's error in the
 *    one tail that can be wrong, and concludes a look sooner than the
 *    two-sided interval on the same values.
 */
#include <math.h>

#include "pc_untested.h"
#include "sim_world.h"

#define PROC "</Code,/Process/100,/SyncObject,/Files>"

static int count_holds(struct world *w)
{
	int n = 0;

	for (size_t i = 0; i < w->pc->nlog; i++)
		n += strstr(w->pc->log[i], "holds clearly") != NULL;
	return n;
}

static struct world *early_world(const char *early)
{
	const char *sets[] = { "minObservationTime=0.5", "studentT=true",
			       early, NULL };

	return world_new(NULL, sets);
}

/* CPU 0.9 everywhere, against CPUbound's 0.3: the top node's first
 * whole interval is 0.9 >= 2 x 0.315, so /Process/100 runs before the
 * top concludes and concludes as soon as the top is true; without
 * refineEarly it starts only then. */
static void test_early_start(void)
{
	struct world *w = early_world("refineEarly=2");
	struct pc_node *top, *p;
	double t_early, t_late;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0);
	world_run(w, 3.0);
	top = world_node(w, 0, "CPUbound", TOP);
	p = world_node(w, 0, "CPUbound", PROC);
	tap_ok(top && top->truth == PC_TRUE && p && p->truth == PC_TRUE,
	       "refineEarly: the top node and /Process/100 true");
	tap_ok(top && p && p->t_start >= 0 && p->t_start < top->t_concluded,
	       "/Process/100 started before the top concluded (%g < %g)",
	       p ? p->t_start : -1, top ? top->t_concluded : -1);
	tap_ok(top && p && p->t_concluded >= top->t_concluded - 1e-9,
	       "and concluded no earlier than it (%g >= %g)",
	       p ? p->t_concluded : -1, top ? top->t_concluded : -1);
	tap_ok(p && p->early, "marked early");
	tap_ok(count_holds(w) > 0, "the log says the top holds clearly");
	t_early = p ? p->t_concluded : -1;
	world_free(w);

	w = early_world("refineEarly=0");
	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0);
	world_run(w, 3.0);
	top = world_node(w, 0, "CPUbound", TOP);
	p = world_node(w, 0, "CPUbound", PROC);
	tap_ok(top && p && p->t_start >= top->t_concluded - 1e-9 && !p->early,
	       "refineEarly=0: /Process/100 starts at the top's conclusion");
	tap_ok(count_holds(w) == 0, "nothing holds clearly");
	t_late = p ? p->t_concluded : -1;
	tap_ok(fabs(t_early - 1.2) < 1e-6 && fabs(t_late - 1.6) < 1e-6,
	       "/Process/100 concluded at 1.2 s instead of 1.6 s (%g, %g)",
	       t_early, t_late);
	world_free(w);
}

/* The top's first interval is 0.9 (clear: its refinements start), then
 * 0.0 for good: it concludes false; its early refinements, held all
 * along (their own values 0.9 then 0.0), were never concluded and are
 * withdrawn: no finding, nothing untested. */
static void test_early_withdrawn(void)
{
	struct world *w = early_world("refineEarly=2");
	struct pc_search *s;
	struct pc_node *top, *p;
	const struct pc_node *un[64];
	int ntrue = 0, nearly = 0, nwithdrawn = 0;

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0);
	src_sim_script(w->sim, "cpu_inclusive", "*", 0.6, 0.0, 0);
	world_run(w, 4.0);
	s = pc_consult_search(w->pc, 0);
	top = world_node(w, 0, "CPUbound", TOP);
	p = world_node(w, 0, "CPUbound", PROC);
	tap_ok(top && top->truth == PC_FALSE, "the top node concluded false");
	tap_ok(p && p->early && p->truth == PC_UNKNOWN && !p->active &&
	       !p->queued && !p->pending,
	       "/Process/100 started early, never concluded, stopped");
	for (size_t i = 0; s && i < s->nn; i++) {
		const struct pc_node *n = s->nodes[i];

		if (n->hyp != (top ? top->hyp : -1) || n == top)
			continue;
		ntrue += n->truth == PC_TRUE;
		nearly += n->early;
		nwithdrawn += strstr(n->trace, "withdrawn") != NULL;
	}
	tap_ok(nearly > 0 && nwithdrawn == nearly,
	       "every early refinement withdrawn (%d of %d)", nwithdrawn,
	       nearly);
	tap_ok(ntrue == 0, "none of them true (%d)", ntrue);
	tap_ok(s && pc_untested_list(w->pc, s, NULL, un, 64) == 0,
	       "nothing listed as untested");
	world_free(w);
}

/* An early refinement estimated from stack samples reads 0 until its
 * code shows in the samples (a followed child's outer functions, before
 * its sampler's window filled), here until 2.6 s, when its parent (the
 * top, noisy: 0.9 +- 0.3) concludes true: held, it counts nothing, and
 * it concludes on what comes after its release: true.  Measured
 * otherwise, the same zeros held count, and it concludes false at the
 * release. */
static void test_early_sampled(void)
{
	for (int sampled = 1; sampled >= 0; sampled--) {
		struct world *w = early_world("refineEarly=2");
		struct pc_node *top, *p;

		if (sampled)
			src_sim_sampled(w->sim, PROC);
		src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0);
		src_sim_script(w->sim, "cpu_inclusive", TOP, 0, 0.9, 0.3);
		src_sim_script(w->sim, "cpu_inclusive", PROC, 0, 0.0, 0);
		src_sim_script(w->sim, "cpu_inclusive", PROC, 2.6, 0.9, 0);
		world_run(w, 4.0);
		top = world_node(w, 0, "CPUbound", TOP);
		p = world_node(w, 0, "CPUbound", PROC);
		tap_ok(top && top->truth == PC_TRUE &&
		       fabs(top->t_concluded - 2.6) < 1e-6 && p && p->early &&
		       p->t_start < 1.0 && p->sampled == (sampled != 0),
		       "%s: started early (%g), the top true at 2.6 s (%g)",
		       sampled ? "sampled" : "measured", p ? p->t_start : -1,
		       top ? top->t_concluded : -1);
		if (sampled)
			tap_ok(p && p->truth == PC_TRUE &&
			       p->t_concluded > top->t_concluded + 0.5,
			       "sampled: true, on values after the release "
			       "(%g)", p ? p->t_concluded : -1);
		else
			tap_ok(p && p->truth == PC_FALSE &&
			       fabs(p->t_concluded - 2.6) < 1e-6,
			       "measured: the zeros held count, false at the "
			       "release (%g)", p ? p->t_concluded : -1);
		world_free(w);
	}
}

/* CPU 0.9 +- 0.08 (0.98, 0.98, 0.82, 0.82, ...) against 0.3: three
 * values clear the band by about 10 standard errors, over the
 * one-sided quantile (9.0) and under the two-sided one (12.8); four
 * values clear both. */
static struct pc_node *noisy_top(const char *one_sided, struct world **wp)
{
	const char *sets[] = { "minObservationTime=0.5", "studentT=true",
			       "refineEarly=0", one_sided, NULL };
	struct world *w = world_new(NULL, sets);

	src_sim_script(w->sim, "cpu_inclusive", "*", 0, 0.9, 0.08);
	world_run(w, 3.0);
	*wp = w;
	return world_node(w, 0, "CPUbound", TOP);
}

static void test_one_sided(void)
{
	struct world *w1, *w2;
	struct pc_node *a = noisy_top("oneSidedTest=true", &w1);
	struct pc_node *b = noisy_top("oneSidedTest=false", &w2);

	tap_ok(a && a->truth == PC_TRUE && strcmp(a->how, "statistics") == 0,
	       "one-sided: true by statistics");
	/* held_s: the guess's time at the conclusion, 0.2 s a value */
	tap_ok(a && fabs(a->held_s - 0.6) < 1e-6,
	       "at the first look, 3 values (held %g s)", a ? a->held_s : -1);
	tap_ok(b && b->truth == PC_TRUE && strcmp(b->how, "statistics") == 0,
	       "two-sided: true by statistics");
	tap_ok(b && fabs(b->held_s - 0.8) < 1e-6,
	       "at the second look, 4 values (held %g s)", b ? b->held_s : -1);
	tap_ok(a && b && fabs(a->t_concluded - 0.8) < 1e-6 &&
	       fabs(b->t_concluded - 1.0) < 1e-6,
	       "at 0.8 s instead of 1.0 s (%g, %g)",
	       a ? a->t_concluded : -1, b ? b->t_concluded : -1);
	world_free(w1);
	world_free(w2);
}

/* The sim program is one process (/Process/100) writing two files. */
static void test_lone_child(void)
{
	const char *on[] = { "loneChildFirst=true", NULL };
	struct world *w = world_new(NULL, on);
	struct pc_node *p, *f;

	world_writes(w, 0.001, 0.001, 1);
	world_run(w, 4.0);
	p = world_node(w, 0, "ExcessiveIOBlockingTime", PROC);
	f = world_node(w, 0, "ExcessiveIOBlockingTime",
		       "</Code,/Process,/SyncObject,/Files/tmp/out.log>");
	tap_ok(p && !p->dominant, "loneChildFirst: the one process is not "
	       "queued first (a process, not a file)");
	tap_ok(f && !f->dominant, "nor one of two files");
	world_free(w);
}

int main(void)
{
	test_lone_child();
	test_early_start();
	test_early_withdrawn();
	test_early_sampled();
	test_one_sided();
	return tap_done();
}
