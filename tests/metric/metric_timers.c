/*
 * metric_timers.c - wall timers compiled from metric definitions:
 * inclusive time of a function that sleeps a known time (±5 ms), and of
 * a recursive function (counted once per outermost activation, as the
 * rtlib timer nests), plus predicted cost.  Target: progs/mcalls.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "eng_proc.h"
#include "mt_defs.h"
#include "mt_util.h"
#include "tap.h"

static const char *const sleep_fn[] = { "mc_sleep" };
static const char *const rec_fn[] = { "mc_recurse" };

#define TIMER_DEF(var, fns, title)                                          \
	static const struct eng_mclause var##_cl[] = {                      \
		{ .funcs = ENG_MF_NAMES, .names = fns, .nnames = 1,         \
		  .point = ENG_MPT_ENTRY, .constrained = true,              \
		  .prims = mt_tstart, .nprims = 1 },                         \
		{ .funcs = ENG_MF_NAMES, .names = fns, .nnames = 1,         \
		  .point = ENG_MPT_EXIT, .constrained = true,               \
		  .prims = mt_tstop, .nprims = 1 },                          \
	};                                                                  \
	static const struct eng_mdef var = { .name = title,                 \
		.type = ENG_MVAR_WALL_TIMER, .clauses = var##_cl,           \
		.nclauses = 2 }

TIMER_DEF(sleep_def, sleep_fn, "time_in_mc_sleep");
TIMER_DEF(rec_def, rec_fn, "time_in_mc_recurse");

static struct eng_minst *enable(struct mt *t, const struct eng_mdef *d)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct hunch_err err = { 0 };
	struct eng_minst *mi = NULL;

	if (!tap_ok(eng_metric_enable(t->m, d, &all, &mi, &err) == 0,
		    "enable %s", d->name))
		tap_diag("  %s", err.msg);
	return mi;
}

/* Within 5 ms of what the program measured around the calls itself
 * (the time it really slept: a loaded machine oversleeps), and at least
 * the nominal time. */
static void near_ms(struct mt *t, int64_t ns, double want_ms,
		    const char *what)
{
	const char *l = mt_line(t, "took ");
	double ms = (double)ns / 1e6, took = l ? atof(l + 5) / 1e3 : -1;

	tap_ok(ms >= want_ms - 0.5 && ms <= took + 0.5 && ms >= took - 5,
	       "%s: %.2f ms (nominal %.0f, the program measured %.2f around "
	       "the calls)", what, ms, want_ms, took);
}

/* A prediction queues its probe; the next poll starts every queued
 * probe with the program stopped once (one stop per prediction stood a
 * search still for 0.7 s on 138 of them). */
static void probes_in_one_stop(struct mt *t)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_metric_cost c;
	uint64_t h0, h1, h2, ns;

	/* running, as a searched program is (it waits for a command) */
	if (eng_proc_stopped(t->tg.p))
		eng_ptrace_resume_all(t->tg.p, NULL);
	eng_proc_held(t->tg.p, &h0, &ns);
	eng_metric_predict(t->m, &rec_def, &all, &c, NULL);
	tap_eq(c.probing, 1, "  mc_recurse's call rate is measured too");
	eng_proc_held(t->tg.p, &h1, &ns);
	tap_eq(h1 - h0, 0, "  the predictions only queued their probes: the "
	       "program was not stopped");
	tap_eq(eng_metric_probe_running(t->m), 2, "  2 probes queued");
	eng_metric_probe_poll(t->m);
	eng_proc_held(t->tg.p, &h2, &ns);
	tap_eq(h2 - h1, 1, "  one poll started both with the program "
	       "stopped once");
	tap_eq(eng_metric_probe_running(t->m), 2, "  2 probes running");
}

static void predict(struct mt *t)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_metric_cost c1, c2;
	struct eng_metric_cal cal;
	int rc;
	struct hunch_err err = { 0 };

	tap_ok(eng_metric_predict(t->m, &sleep_def, &all, &c1, &err) == 0,
	       "predict a timer pair at the default call rate");
	tap_eq(c1.points, 2, "  2 snippet lists (entry, exit)");
	tap_eq(c1.probing, 1, "  mc_sleep's call rate is being measured (a "
	       "counter at its entry), the guess used meanwhile");
	probes_in_one_stop(t);
	tap_ok(c1.ns_per_s > 0 && c1.ns_per_s < 1e6, "  %.0f ns/s",
	       c1.ns_per_s);
	eng_metric_set_call_rate(t->m, NULL, "mc_sleep", 1e6);
	eng_metric_predict(t->m, &sleep_def, &all, &c2, &err);
	tap_ok(c2.ns_per_s > c1.ns_per_s * 900, "  a told call rate of 1e6/s "
	       "scales it by 1000: %.4f slowdown", c2.slowdown);
	rc = eng_metric_cal_run(t->m, &cal);
	tap_ok(rc == 0 && cal.add_ns > 0 &&
	       cal.add_ns < 50 && cal.wall_pair_ns < 500, "calibrated by "
	       "running generated code: counter add %.2f ns, predicate %.2f "
	       "ns, rdtsc timer pair %.2f ns", cal.add_ns, cal.if_ns,
	       cal.wall_pair_ns);
	eng_metric_predict(t->m, &sleep_def, &all, &c1, &err);
	tap_ok(c1.ns_per_s > 0, "  the timer pair at 1e6 calls/s with "
	       "measured costs: %.4f slowdown", c1.slowdown);
	/* The probe ends 30 ms after it went in (polled as a tick would). */
	for (int i = 0; eng_metric_probe_running(t->m) && i < 1000; i++) {
		usleep(10000);
		eng_metric_probe_poll(t->m);
	}
	tap_eq(eng_metric_probe_running(t->m), 0, "  the call-rate probe "
	       "ended and its counter was removed");
}

static const char *const inside_fn[] = { "mc_inside_phase" };
static const char *const counted_fn[] = { "mc_counted" };
TIMER_DEF(inside_def, inside_fn, "time_in_mc_inside_phase");
static const struct eng_mclause count_cl[] = {
	{ .funcs = ENG_MF_NAMES, .names = counted_fn, .nnames = 1,
	  .point = ENG_MPT_ENTRY, .constrained = true, .prims = mt_add1,
	  .nprims = 1 },
};
static const struct eng_mdef count_def = { .name = "mc_counted_calls",
	.type = ENG_MVAR_COUNTER, .clauses = count_cl, .nclauses = 1 };

/* Enabled while the main thread sleeps inside mc_inside_phase: its
 * constraint counter and the timer catch up (devguide §1.12). */
static void catchup(struct mt *t)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_mfocus in = { .code = ENG_CODE_FUNCTION,
		.function = "mc_inside_phase", .cons = &mt_procedure,
		.ncons = 1 };
	struct hunch_err err = { 0 };
	struct eng_minst *tm = NULL, *cn = NULL;
	struct timespec t0, t1;
	double ms;

	tap_ok(mt_start(t, "inside") == 0 && mt_wait(t, "inside", 5000) == 0,
	       "the target is inside mc_inside_phase");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (eng_metric_enable(t->m, &inside_def, &all, &tm, &err) < 0 ||
	    eng_metric_enable(t->m, &count_def, &in, &cn, &err) < 0)
		tap_diag("enable: %s", err.msg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tap_diag("two enables with catchup took %.1f ms",
		 (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		 (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	tap_ok(!eng_proc_stopped(t->tg.p), "enabling left the target running");
	tap_ok(mt_wait(t, "ok inside", 5000) == 0, "phase inside done");
	tap_eq(cn ? mt_value(t, cn) : -1, 10, "calls inside mc_inside_phase "
	       "enabled after it was entered: 10 (the constraint caught up)");
	ms = tm ? (double)mt_value(t, tm) / 1e6 : -1;
	tap_ok(ms > 700 && ms < 1100, "its wall time from enabling to "
	       "return: %.1f ms (the timer caught up)", ms);
	eng_metric_disable(t->m, tm, NULL);
	eng_metric_disable(t->m, cn, NULL);
}

static void run(const char *prog)
{
	struct mt t;
	struct eng_minst *ms, *mr;
	struct eng_metric_cost c;
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	int64_t sleep_ns = 0;

	if (mt_launch(&t, prog) < 0) {
		tap_ok(0, "launch %s", prog);
		return;
	}
	tap_diag("%s", prog);
	predict(&t);
	ms = enable(&t, &sleep_def);
	mr = enable(&t, &rec_def);
	eng_metric_predict(t.m, &sleep_def, &all, &c, NULL);
	tap_eq(c.points, 0, "predicting an enabled request costs nothing "
	       "more (shared)");
	tap_ok(mt_phase(&t, "sleep", 10000) == 0, "phase sleep");
	if (ms != NULL)
		near_ms(&t, mt_value(&t, ms), 50, "inclusive wall time of "
			"mc_sleep");
	sleep_ns = ms ? mt_value(&t, ms) : 0;
	tap_ok(mt_phase(&t, "recurse", 10000) == 0, "phase recurse");
	if (mr != NULL)
		near_ms(&t, mt_value(&t, mr), 60, "mc_recurse: 2 outermost "
			"activations of 30 ms, nested ones not added");
	if (ms != NULL)
		near_ms(&t, mt_value(&t, ms) - sleep_ns, 60, "mc_sleep inside "
			"mc_recurse: 2 x 30 ms more");
	eng_metric_disable(t.m, ms, NULL);
	eng_metric_disable(t.m, mr, NULL);
	catchup(&t);
	tap_eq(mt_code_mismatches(&t), 0, "every byte restored");
	tap_ok(mt_quit(&t) == 0, "target exits 0");
	mt_fini(&t);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		run(argv[i]);
	return tap_done();
}
