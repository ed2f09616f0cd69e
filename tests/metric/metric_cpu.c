/*
 * metric_cpu.c - CPU timers on the start functions (cpu_inclusive at the
 * top level) against the kernel's own account of each thread's CPU time
 * (/proc/PID/task/TID/schedstat, field 1).  Target: progs/cpuspin.c.
 *
 * 1. Enabled while the program is stopped at main: main's timer holds
 *    main's CPU time since main, through blocked and spinning phases.
 * 2. Enabled later on running threads (catchup by inferior calls): the
 *    first sample already holds each thread's time from the start of its
 *    routine (the rtlib records it: engine/README.md, Catchup), the
 *    spinner's CPU time per tick interval equals its schedstat's, and
 *    the three blocked threads add nothing.
 * 3. The timer enabled at main follows threads created later: their
 *    routines are instrumented and caught up where they began.
 * 4. Constrained to a function (cpu_inclusive on /Code/f): main's CPU
 *    time inside cs_main_spin; the spinner's whole CPU time when
 *    enabled later on its routine.
 * 5. On main enabled later: main's CPU time since main (launch recorded
 *    when main began).
 * Tolerances are for what moves between the sampler's read of schedstat
 * and the test's (a few µs of a spinning thread), not for the timer.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "mt_defs.h"
#include "mt_util.h"
#include "tap.h"

#define TOL_NS 2000000          /* 2 ms */
/* Between context switches the HW CPU level extends the last exact
 * reading by TSC ticks converted with hunch's calibration: over a 300 ms
 * slice that conversion may run a few µs ahead of the kernel's count
 * (rtlib/README.md gives 0.05 ms as the level's precision). */
#define TSC_SLACK_NS 50000      /* 0.05 ms */
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
static const char *const main_fn[] = { "main" };
static const struct eng_mclause main_cl[] = {
	{ .funcs = ENG_MF_NAMES, .names = main_fn, .nnames = 1,
	  .point = ENG_MPT_ENTRY, .prims = mt_tstart, .nprims = 1 },
	{ .funcs = ENG_MF_NAMES, .names = main_fn, .nnames = 1,
	  .point = ENG_MPT_EXIT, .prims = mt_tstop, .nprims = 1 },
};
static const struct eng_mdef main_def = { .name = "cpu_in_main",
	.type = ENG_MVAR_CPU_TIMER, .clauses = main_cl, .nclauses = 2 };
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

/* Wait (up to 5 s) until thread tid sleeps (state S in its stat):
 * schedstat adds a running thread's time only at scheduler ticks, so
 * read while main still runs (printing a phase's answer, on its way
 * back to read()) it lags the CPU clock by up to a tick (4 ms). */
static void wait_asleep(int pid, int tid)
{
	char path[96], buf[512], *p;

	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p == NULL || (p[1] == ' ' && p[2] == 'S'))
			return;
		usleep(1000);
	}
}

/* The same summed over every thread but main. */
static int64_t sched_others_ns(int pid)
{
	char path[64];
	struct dirent *e;
	int64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) != pid)
			sum += sched_ns(pid, atoi(e->d_name));
	closedir(d);
	return sum;
}

static bool near(int64_t a, int64_t b, int64_t tol)
{
	return a >= b - tol && a <= b + tol;
}

/* cpu_inclusive constrained to one function (MDL's procedure
 * constraint): its CPU time while it is on the stack. */
static struct eng_minst *enable_in(struct mt *t, const char *fn)
{
	struct eng_mfocus f = { .code = ENG_CODE_FUNCTION, .function = fn,
				.cons = &mt_procedure, .ncons = 1 };
	struct hunch_err err = { 0 };
	struct eng_minst *mi = NULL;

	if (!tap_ok(eng_metric_enable(t->m, &start_def, &f, &mi, &err) == 0,
		    "cpu_inclusive on /Code/%s", fn))
		tap_diag("  %s", err.msg);
	return mi;
}

/* Enabled at main on cs_main_spin: main's CPU during a spin phase, less
 * the command's parsing and answer outside the function. */
static void in_function(struct mt *t)
{
	int pid = eng_proc_pid(t->tg.p);
	struct eng_minst *mi = enable_in(t, "cs_main_spin");
	int64_t v0, s0, v, s;

	if (mi == NULL)
		return;
	wait_asleep(pid, pid);
	v0 = mt_value(t, mi);
	s0 = sched_ns(pid, pid);
	tap_ok(mt_phase(t, "spin 300", 10000) == 0, "main spun 300 ms");
	wait_asleep(pid, pid);
	v = mt_value(t, mi) - v0;
	s = sched_ns(pid, pid) - s0;
	tap_ok(v > 0 && v <= s + TSC_SLACK_NS && v >= s - TOL_NS, "  timer "
	       "%.3f ms, main's schedstat over the phase %.3f ms", v / 1e6,
	       s / 1e6);
	eng_metric_disable(t->m, mi, NULL);
}

/* Main's timer, enabled at main: main's CPU time since then. */
static void at_main(struct mt *t, int64_t s0, struct eng_minst **out)
{
	int pid = eng_proc_pid(t->tg.p);
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct hunch_err err = { 0 };
	struct eng_minst_info info;
	struct eng_minst *mi = NULL;
	int64_t v, s;

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
	wait_asleep(pid, pid);
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

/* The spinner's and the blocked threads' timers, enabled by catchup
 * while they run: each thread is inside its start routine, whose
 * beginning the rtlib recorded, so the timers count from there. */
static void later(struct mt *t, int spin_tid)
{
	int pid = eng_proc_pid(t->tg.p);
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct hunch_err err = { 0 };
	struct eng_minst_info info;
	struct eng_minst *mi = NULL;
	int64_t v[NTICKS + 1], s[NTICKS + 1], sb[NTICKS + 1], all0, alo;
	int64_t vb = -1;
	int bad = 0;

	if (!tap_ok(eng_metric_enable(t->m, &thr_def, &all, &mi, &err) == 0,
		    "CPU timer on cs_spinner and cs_blocked, enabled while "
		    "they run"))
		tap_diag("  %s", err.msg);
	if (mi == NULL)
		return;
	eng_metric_info(t->m, mi, &info);
	tap_eq(info.functions, 4, "  both routines instrumented (entry and "
	       "exit clauses of each)");
	tap_ok(info.caught_from_begin == 4 && info.caught_from_enable == 0,
	       "  catchup started the 4 threads' timers where their routines "
	       "began (%u), none at enabling (%u)", info.caught_from_begin,
	       info.caught_from_enable);
	eng_metric_value(t->m, mi, &vb);   /* no tick since enabling */
	/* The spinner runs on while this test reads: each value is
	 * bracketed by schedstat read before (sb, alo) and after (s, all0),
	 * as a preempted test may read the second long after the first. */
	for (int i = 0; i <= NTICKS; i++) {
		if (i > 0)
			mt_pump(t, 200);
		if (i == 0)
			alo = sched_others_ns(pid);
		sb[i] = sched_ns(pid, spin_tid);
		v[i] = mt_value(t, mi);
		s[i] = sched_ns(pid, spin_tid);
		if (i == 0)
			all0 = sched_others_ns(pid);
	}
	/* Before its routine a thread only ran clone's return and the
	 * rtlib's registration: well under a millisecond each. */
	tap_ok(v[0] <= all0 && v[0] >= alo - 4000000, "  first sample "
	       "%.2f ms: the four threads' whole CPU time, %.2f..%.2f ms (the "
	       "spinner's %.2f), from before enabling too", v[0] / 1e6,
	       alo / 1e6, all0 / 1e6, s[0] / 1e6);
	/* A rate taken from enabling must not count that time again. */
	tap_ok(vb > 0 && vb <= v[0] && v[0] - vb < 50000000, "  the value "
	       "already reads %.2f ms right after enabling, before any tick "
	       "(a rate's baseline)", vb / 1e6);
	for (int i = 1; i <= NTICKS; i++) {
		int64_t dv = v[i] - v[i - 1], lo = sb[i] - s[i - 1];
		int64_t hi = s[i] - sb[i - 1];

		if (dv < lo - TOL_NS || dv > hi + TOL_NS) {
			tap_diag("  interval %d: timer %.2f ms, schedstat "
				 "%.2f..%.2f ms", i, dv / 1e6, lo / 1e6,
				 hi / 1e6);
			bad++;
		}
	}
	tap_eq(bad, 0, "  each of %d intervals of 200 ms: the timer grew by "
	       "the spinner's schedstat (%.2f ms in all, %.2f ms timer), "
	       "the blocked threads by nothing", NTICKS,
	       (s[NTICKS] - s[0]) / 1e6, (v[NTICKS] - v[0]) / 1e6);
	eng_metric_disable(t->m, mi, NULL);
}

/* A CPU timer on main enabled long after main began (launch recorded
 * when): the first sample holds main's CPU time since main. */
static void main_later(struct mt *t, int64_t s0)
{
	int pid = eng_proc_pid(t->tg.p);
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_minst_info info;
	struct eng_minst *mi = NULL;
	int64_t v, s;

	eng_metric_enable(t->m, &main_def, &all, &mi, NULL);
	if (!tap_ok(mi != NULL, "CPU timer on main, enabled while main "
		    "waits in fgets"))
		return;
	eng_metric_info(t->m, mi, &info);
	tap_ok(info.caught_from_begin == 1 && info.caught_from_enable == 0,
	       "  catchup started it where main began (%u), not at enabling "
	       "(%u)", info.caught_from_begin, info.caught_from_enable);
	v = mt_value(t, mi);
	s = sched_ns(pid, pid) - s0;
	tap_ok(near(v, s, TOL_NS), "  first sample %.2f ms = main's "
	       "schedstat since main %.2f ms", v / 1e6, s / 1e6);
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
 * on all four where their routines began, between t_a and t_b. */
static void no_seen(void *arg, const struct eng_seen *s)
{
	(void)arg;
	(void)s;
}

/* The start-function timer enabled at main follows the threads created
 * since: their routines are instrumented at the next poll and caught up
 * where they began, so it holds every thread's CPU time. */
static void follows(struct mt *t, struct eng_minst *mi, int64_t s0)
{
	int pid = eng_proc_pid(t->tg.p);
	struct eng_minst_info info;
	int64_t v, s, s_lo;

	if (mi == NULL)
		return;
	mt_pump(t, 50);   /* the sampler adopts the new threads */
	eng_metric_seen_poll(t->m, no_seen, NULL);
	eng_metric_info(t->m, mi, &info);
	tap_eq(info.functions, 6, "the start-function timer now also covers "
	       "cs_blocked and cs_spinner (entry and exit clauses)");
	tap_ok(info.caught_from_begin == 4 && info.caught_from_enable == 0,
	       "  their 4 threads caught up where their routines began (%u, "
	       "%u at enabling)", info.caught_from_begin,
	       info.caught_from_enable);
	mt_pump(t, 300);
	/* The spinner runs on while we read: bracket the value between
	 * schedstat read just before and just after it, so a preempted
	 * test does not count the spinner's CPU time meanwhile as an error. */
	s_lo = sched_ns(pid, pid) - s0 + sched_others_ns(pid);
	v = mt_value(t, mi);
	s = sched_ns(pid, pid) - s0 + sched_others_ns(pid);
	tap_ok(v <= s + TSC_SLACK_NS && v >= s_lo - 4000000, "  %.2f ms: "
	       "main's CPU time since main and every thread's since it "
	       "began, %.2f..%.2f ms", v / 1e6, s_lo / 1e6, s / 1e6);
}

/* Enabled later on cs_spinner: catchup on its outermost activation. */
static void in_routine(struct mt *t, int spin_tid)
{
	int pid = eng_proc_pid(t->tg.p);
	struct eng_minst *mi = enable_in(t, "cs_spinner");
	struct eng_minst_info info;
	int64_t v, s, s_lo;

	if (mi == NULL)
		return;
	eng_metric_info(t->m, mi, &info);
	tap_ok(info.caught_from_begin == 1 && info.caught_from_enable == 0,
	       "  caught up where the spinner's routine began");
	mt_pump(t, 200);
	/* bracketed: the spinner runs on while a preempted test reads */
	s_lo = sched_ns(pid, spin_tid);
	v = mt_value(t, mi);
	s = sched_ns(pid, spin_tid);
	tap_ok(v <= s + TSC_SLACK_NS && v >= s_lo - 1000000, "  %.2f ms: "
	       "the spinner's whole CPU time, %.2f..%.2f ms", v / 1e6,
	       s_lo / 1e6, s / 1e6);
	eng_metric_disable(t->m, mi, NULL);
}

static void blocked_wall(struct mt *t, uint64_t t_a, uint64_t t_b)
{
	struct eng_mfocus all = { .code = ENG_CODE_ALL };
	struct eng_minst_info info;
	struct eng_minst *mi = NULL;
	int n = 0, bad = 0;

	eng_metric_enable(t->m, &wall_def, &all, &mi, NULL);
	if (!tap_ok(mi != NULL, "wall timer on the routines, enabled later"))
		return;
	eng_metric_info(t->m, mi, &info);
	mt_pump(t, 300);
	mt_value(t, mi);
	for (uint32_t i = 0; i < 64; i++) {
		int64_t v;
		uint64_t now = mono_ns();

		if (eng_sampler_var_thread(t->tg.smp, info.var_id, i, &v) < 0)
			continue;
		if (i == 0)
			continue;   /* main: not in a routine */
		n++;
		/* The sample is a moment older than `now`: 20 ms. */
		if (v < (int64_t)(now - t_b) - 20000000 ||
		    v > (int64_t)(now - t_a)) {
			tap_diag("  thread index %u: %.1f ms, want %.1f..%.1f",
				 i, v / 1e6, (now - t_b) / 1e6, (now - t_a) / 1e6);
			bad++;
		}
	}
	tap_ok(n == 4 && bad == 0, "  each of the %d threads (3 blocked in "
	       "the kernel) counts wall time since its routine began, from "
	       "before enabling", n);
	eng_metric_disable(t->m, mi, NULL);
}

static void run(const char *prog)
{
	struct eng_minst *mi = NULL;
	struct mt t;
	const char *l;
	uint64_t t_a, t_b;
	int64_t s0;

	if (mt_launch(&t, prog) < 0) {
		tap_ok(0, "launch %s", prog);
		return;
	}
	tap_diag("%s", prog);
	s0 = sched_ns(eng_proc_pid(t.tg.p), eng_proc_pid(t.tg.p));
	at_main(&t, s0, &mi);
	in_function(&t);
	t_a = mono_ns();
	tap_ok(mt_phase(&t, "threads", 10000) == 0, "threads started");
	t_b = mono_ns();
	follows(&t, mi, s0);
	l = mt_line(&t, "spinner ");
	if (l != NULL)
		later(&t, atoi(l + 8));
	if (l != NULL)
		in_routine(&t, atoi(l + 8));
	blocked_wall(&t, t_a, t_b);
	main_later(&t, s0);
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
