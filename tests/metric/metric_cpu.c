/*
 * metric_cpu.c - CPU timers on the start functions (cpu_inclusive at the
 * top level) against the kernel's own account of each thread's CPU time
 * (/proc/PID/task/TID/schedstat, field 1).  Target: progs/cpuspin.c.
 *
 * 1. Enabled while the program is stopped at main: main's timer holds
 *    main's CPU time since main, through blocked and spinning phases.
 * 2. Enabled later on running threads (catchup by inferior calls): the
 *    spinner's CPU time per tick interval equals its schedstat's, the
 *    three blocked threads add nothing, and the first sample counts from
 *    enabling.
 * Tolerances are for what moves between the sampler's read of schedstat
 * and the test's (a few µs of a spinning thread), not for the timer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mt_defs.h"
#include "mt_util.h"
#include "tap.h"

#define TOL_NS 2000000          /* 2 ms */
#define NTICKS 5

static const struct eng_mclause start_cl[] = {
	{ .funcs = ENG_MF_START, .point = ENG_MPT_ENTRY, .constrained = true,
	  .prims = mt_tstart, .nprims = 1 },
	{ .funcs = ENG_MF_START, .point = ENG_MPT_EXIT, .constrained = true,
	  .prims = mt_tstop, .nprims = 1 },
};
static const struct eng_mdef start_def = { .name = "cpu_inclusive",
	.type = ENG_MVAR_CPU_TIMER, .clauses = start_cl, .nclauses = 2 };

static const char *const thr_fns[] = { "cs_spinner", "cs_blocked" };
static const struct eng_mclause thr_cl[] = {
	{ .funcs = ENG_MF_NAMES, .names = thr_fns, .nnames = 2,
	  .point = ENG_MPT_ENTRY, .prims = mt_tstart, .nprims = 1 },
	{ .funcs = ENG_MF_NAMES, .names = thr_fns, .nnames = 2,
	  .point = ENG_MPT_EXIT, .prims = mt_tstop, .nprims = 1 },
};
static const struct eng_mdef thr_def = { .name = "cpu_in_thread_routines",
	.type = ENG_MVAR_CPU_TIMER, .clauses = thr_cl, .nclauses = 2 };
static const struct eng_mdef wall_def = { .name = "wall_in_thread_routines",
	.type = ENG_MVAR_WALL_TIMER, .clauses = thr_cl, .nclauses = 2 };

/* Field 1 of /proc/PID/task/TID/schedstat: ns on a CPU. */
static int64_t sched_ns(int pid, int tid)
{
	char path[96];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static bool near(int64_t a, int64_t b, int64_t tol)
{
	return a >= b - tol && a <= b + tol;
}

/* Main's timer, enabled at main: main's CPU time since then. */
static void at_main(struct mt *t, struct eng_minst **out)
{
	int pid = eng_proc_pid(t->p);
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct hunch_err err = { 0 };
	struct eng_minst_info info;
	struct eng_minst *mi = NULL;
	int64_t s0 = sched_ns(pid, pid), v, s;

	if (!tap_ok(eng_metric_enable(t->m, &start_def, &all, &mi, &err) == 0,
		    "CPU timer on the start functions, enabled at main"))
		tap_diag("  %s", err.msg);
	*out = mi;
	if (mi == NULL)
		return;
	eng_metric_info(t->m, mi, &info);
	tap_eq(info.functions, 2, "  one start function yet: main (its "
	       "entry clause and its exit clause)");
	tap_ok(mt_phase(t, "spin 600", 10000) == 0, "main spun 600 ms");
	v = mt_value(t, mi);
	s = sched_ns(pid, pid) - s0;
	tap_ok(near(v, s, TOL_NS), "  main's timer %.2f ms = main's "
	       "schedstat since main %.2f ms", v / 1e6, s / 1e6);
	/* Under load main gets a share of a CPU, not 600 ms of it. */
	tap_ok(s >= 20000000, "  (main did spin: %.2f ms of CPU)", s / 1e6);
	mt_pump(t, 300);
	tap_ok(near(mt_value(t, mi), sched_ns(pid, pid) - s0, TOL_NS),
	       "  blocked in fgets: still equal (%.2f ms)",
	       mt_value(t, mi) / 1e6);
}

/* The spinner's and the blocked threads' timers, enabled by catchup. */
static void later(struct mt *t, int spin_tid)
{
	int pid = eng_proc_pid(t->p);
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct hunch_err err = { 0 };
	struct eng_minst_info info;
	struct eng_minst *mi = NULL;
	int64_t before, after, v[NTICKS + 1], s[NTICKS + 1];
	int bad = 0;

	before = sched_ns(pid, spin_tid);
	if (!tap_ok(eng_metric_enable(t->m, &thr_def, &all, &mi, &err) == 0,
		    "CPU timer on cs_spinner and cs_blocked, enabled while "
		    "they run"))
		tap_diag("  %s", err.msg);
	after = sched_ns(pid, spin_tid);
	if (mi == NULL)
		return;
	eng_metric_info(t->m, mi, &info);
	tap_eq(info.functions, 4, "  both routines instrumented (entry and "
	       "exit clauses of each)");
	for (int i = 0; i <= NTICKS; i++) {
		if (i > 0)
			mt_pump(t, 200);
		v[i] = mt_value(t, mi);
		s[i] = sched_ns(pid, spin_tid);
	}
	tap_ok(v[0] >= s[0] - after - TOL_NS && v[0] <= s[0] - before +
	       TOL_NS, "  first sample %.2f ms: the spinner's CPU since "
	       "enabling (%.2f..%.2f ms)", v[0] / 1e6,
	       (s[0] - after) / 1e6, (s[0] - before) / 1e6);
	for (int i = 1; i <= NTICKS; i++) {
		int64_t dv = v[i] - v[i - 1], ds = s[i] - s[i - 1];

		if (!near(dv, ds, TOL_NS)) {
			tap_diag("  interval %d: timer %.2f ms, schedstat "
				 "%.2f ms", i, dv / 1e6, ds / 1e6);
			bad++;
		}
	}
	tap_eq(bad, 0, "  each of %d intervals of 200 ms: the timer grew by "
	       "the spinner's schedstat (%.2f ms in all, %.2f ms timer), "
	       "the blocked threads by nothing", NTICKS,
	       (s[NTICKS] - s[0]) / 1e6, (v[NTICKS] - v[0]) / 1e6);
	eng_metric_disable(t->m, mi, NULL);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A wall timer on the routines, enabled while the spinner runs and the
 * others sleep in pthread_cond_wait (in the kernel): catchup starts it
 * on all four, so each thread's slot grows with the wall clock. */
static void blocked_wall(struct mt *t)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_minst_info info;
	struct eng_minst *mi = NULL;
	uint64_t t0, t1;
	int n = 0, bad = 0;

	t0 = mono_ns();
	eng_metric_enable(t->m, &wall_def, &all, &mi, NULL);
	t1 = mono_ns();
	if (!tap_ok(mi != NULL, "wall timer on the routines, enabled later"))
		return;
	eng_metric_info(t->m, mi, &info);
	mt_pump(t, 300);
	mt_value(t, mi);
	for (uint32_t i = 0; i < 64; i++) {
		int64_t v;
		uint64_t now = mono_ns();

		if (eng_sampler_var_thread(t->smp, info.var_id, i, &v) < 0)
			continue;
		if (i == 0)
			continue;   /* main: not in a routine */
		n++;
		if (v < (int64_t)(now - t1) - 50000000 ||
		    v > (int64_t)(now - t0)) {
			tap_diag("  thread index %u: %.1f ms, want %.1f..%.1f",
				 i, v / 1e6, (now - t1) / 1e6, (now - t0) / 1e6);
			bad++;
		}
	}
	tap_ok(n == 4 && bad == 0, "  each of the %d threads (3 blocked in "
	       "the kernel) counts wall time from enabling", n);
	eng_metric_disable(t->m, mi, NULL);
}

static void run(const char *prog)
{
	struct eng_minst *mi = NULL;
	struct mt t;
	const char *l;

	if (mt_launch(&t, prog) < 0) {
		tap_ok(0, "launch %s", prog);
		return;
	}
	tap_diag("%s", prog);
	at_main(&t, &mi);
	tap_ok(mt_phase(&t, "threads", 10000) == 0, "threads started");
	l = mt_line(&t, "spinner ");
	if (l != NULL)
		later(&t, atoi(l + 8));
	blocked_wall(&t);
	eng_metric_disable(t.m, mi, NULL);
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
