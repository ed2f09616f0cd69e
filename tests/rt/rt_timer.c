/*
 * rt_timer.c - timer accuracy at both timer levels, and a torn-read run.
 *
 * Accuracy: 200 ms asleep in a wall timer reads the time slept between
 * the clock reads inside and outside the timer's calls (+- 1 ms); 200 ms of
 * spinning in a CPU timer reads 200 +- 10 ms of CPU; 200 ms asleep in a
 * CPU timer reads about 0; while they run, the sampler computes the
 * running part from outside (a value strictly inside (0, 200) ms is seen).
 * Torn reads: 8 threads start/stop a wall timer as fast as they can for
 * RT_TORN_SECONDS (default 10) while the sampler reads at 100 Hz: no value
 * goes backwards, none grows faster than wall time, counts stay exact.
 * The rate reached is a speed target (bench/rt/rt_bench, "sampler
 * rate"); here every thread's timer must have been checked fresh often.
 */
#include "rt_harness.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define MS 1000000LL

struct acc {
	uint32_t wall, cpu;
	int64_t wall_mid, cpu_mid;   /* a value seen while running */
};

static void acc_tick(struct rth *h, void *p)
{
	struct acc *c = p;
	struct eng_var_agg a;

	eng_sampler_var_agg(h->smp, c->wall, &a);
	if (a.max > 10 * MS && a.max < 190 * MS)
		c->wall_mid = a.max;
	eng_sampler_var_agg(h->smp, c->cpu, &a);
	if (a.max > 10 * MS && a.max < 190 * MS)
		c->cpu_mid = a.max;
}

static uint32_t level_of_threads(struct rth *h)
{
	const struct eng_shm_layout *lay = eng_shm_layout(h->shm);
	volatile struct hunch_shm_header *hd = eng_shm_header(h->shm);

	(void)lay;
	return hd->rt_cpu_level;
}

static void accuracy(const char *prog, bool sw)
{
	struct rth h;
	struct acc c = { 0 };
	char a[3][32];
	const char *args[] = { "timer", a[0], a[1], a[2], NULL };
	const char *lv = sw ? "software" : "hardware";
	uint64_t hw, hc, hc2;
	uint32_t ic2;
	struct eng_var_agg w, cp, c2;
	char line[64];
	double slept = 0, outer = 0;

	if (sw) {
		setenv(HUNCH_ENV_SW_WALL_TIMER, "1", 1);
		setenv(HUNCH_ENV_SW_CPU_TIMER, "1", 1);
	}
	rth_init(&h, prog, 100, false);
	unsetenv(HUNCH_ENV_SW_WALL_TIMER);
	unsetenv(HUNCH_ENV_SW_CPU_TIMER);
	c.wall = rth_var(&h, ENG_VAR_WALL_TIMER, &hw);
	c.cpu = rth_var(&h, ENG_VAR_CPU_TIMER, &hc);
	ic2 = rth_var(&h, ENG_VAR_CPU_TIMER, &hc2);
	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)hw);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)hc);
	snprintf(a[2], sizeof(a[2]), "%llu", (unsigned long long)hc2);
	h.on_tick = acc_tick;
	h.ctx = &c;
	rth_launch(&h, true, args);
	tap_ok(rth_wait_line(&h, "slept", line, sizeof(line), 20000) == 0 &&
	       sscanf(line, "slept %lf %lf", &slept, &outer) == 2,
	       "%s level: the sleeping thread says how long it slept", lv);
	tap_ok(rth_wait_line(&h, "done", NULL, 0, 20000) == 0,
	       "%s level: timer target finished", lv);
	rth_tick(&h);
	eng_sampler_var_agg(h.smp, c.wall, &w);
	eng_sampler_var_agg(h.smp, c.cpu, &cp);
	eng_sampler_var_agg(h.smp, ic2, &c2);
	tap_diag("%s level: wall %.3f ms, CPU spin %.3f ms, CPU asleep %.3f "
		 "ms; rtlib CPU level %u; running values seen %.1f / %.1f ms",
		 lv, w.max / 1e6, cp.max / 1e6, c2.max / 1e6,
		 level_of_threads(&h), c.wall_mid / 1e6, c.cpu_mid / 1e6);
	/* between the sleep's own clock reads and those around the timer's
	 * calls (1 ms for the TSC's conversion to ns) */
	tap_ok(slept >= 200 * MS && (double)w.max >= slept - 1 * MS &&
	       (double)w.max <= outer + 1 * MS, "%s level: 200 ms asleep in a "
	       "wall timer reads %.3f ms, the time slept (%.3f..%.3f ms) +- 1 "
	       "ms", lv, w.max / 1e6, slept / 1e6, outer / 1e6);
	tap_ok(cp.max >= 190 * MS && cp.max <= 210 * MS,
	       "%s level: 200 ms of spinning in a CPU timer reads 200 +- 10 ms",
	       lv);
	tap_ok(c2.max < 5 * MS, "%s level: 200 ms asleep in a CPU timer "
	       "reads < 5 ms of CPU", lv);
	tap_ok(c.wall_mid > 0, "%s level: a running wall timer was sampled "
	       "from outside (%.1f ms)", lv, c.wall_mid / 1e6);
	tap_ok(c.cpu_mid > 0, "%s level: a running CPU timer was sampled "
	       "from outside through schedstat (%.1f ms)", lv,
	       c.cpu_mid / 1e6);
	if (!sw)
		tap_eq(level_of_threads(&h), HUNCH_LEVEL_HW, "hardware level: "
		       "every thread got the perf task-clock CPU clock");
	rth_send(&h, "exit\n");
	rth_wait_exit(&h, 5000);
	tap_eq(eng_sampler_stats(h.smp)->rollbacks, 0, "%s level: no "
	       "rollbacks", lv);
	rth_fini(&h);
}

/* The hardware CPU level must leave out time a thread spends preempted
 * (perf page lock changed), not only time asleep. */
static void preempted(const char *prog)
{
	struct rth h;
	char a[32], line[64];
	const char *args[] = { "preempt", a, NULL };
	uint64_t hc;
	uint32_t ic;
	int k, good = 0, idx;
	long long own;

	rth_init(&h, prog, 100, false);
	ic = rth_var(&h, ENG_VAR_CPU_TIMER, &hc);
	snprintf(a, sizeof(a), "%llu", (unsigned long long)hc);
	rth_launch(&h, true, args);
	for (k = 0; k < 2; k++) {
		int64_t v = -1;

		if (rth_wait_line(&h, "cpu ", line, sizeof(line), 10000) != 0 ||
		    sscanf(line, "cpu %d %lld", &idx, &own) != 2)
			break;
		rth_tick(&h);
		eng_sampler_var_thread(h.smp, ic, (uint32_t)idx, &v);
		tap_diag("preempted thread %d: CPU timer %.3f ms, its own "
			 "CPU clock %.3f ms over 300 ms of wall time", idx,
			 v / 1e6, own / 1e6);
		if (v > 0 && llabs(v - own) < 5 * MS && own < 250 * MS)
			good++;
	}
	tap_eq(good, 2, "two threads sharing a CPU: each CPU timer matches "
	       "the thread's own CPU time within 5 ms (preemption left out)");
	rth_send(&h, "exit\n");
	rth_wait_exit(&h, 5000);
	rth_fini(&h);
}

struct torn {
	uint32_t wall;
	int64_t last[1024];
	uint64_t last_t[1024];   /* when last[] was read fresh */
	long too_fast, ticks;
	long fresh[1024];        /* fresh reads checked, per thread */
};

static void torn_tick(struct rth *h, void *p)
{
	struct torn *c = p;
	uint64_t now = rth_now_ns();
	uint32_t i, max = eng_sampler_stats(h->smp)->max_index;

	for (i = 0; i <= max && i < 1024; i++) {
		int64_t v;

		if (eng_sampler_var_thread(h->smp, c->wall, i, &v) < 0)
			continue;
		if (v == c->last[i])
			continue;  /* read thrown away (protectors differed) */
		/* One thread's timer cannot outrun the wall clock.  Each
		 * read happened somewhere between its tick's start and the
		 * end (now), and the sampler may be preempted in between on
		 * a loaded machine, so the bound is from the start of the
		 * tick of the previous read to now (plus 1 ms of slack). */
		if (c->last_t[i] && c->last[i] && v - c->last[i] >
		    (int64_t)(now - c->last_t[i]) + MS)
			c->too_fast++;
		c->last[i] = v;
		c->last_t[i] = h->tick_start_ns;
		c->fresh[i]++;
	}
	c->ticks++;
}

static void torn(const char *prog)
{
	struct rth h;
	static struct torn c;
	char a[2][32], secs[16], line[64];
	const char *env = getenv("RT_TORN_SECONDS");
	const char *args[] = { "torn", a[0], a[1], "8", secs, NULL };
	uint64_t hw, hc;
	uint32_t ic;
	struct eng_var_agg ag;
	const struct eng_sampler_stats *st;
	long total = -1;
	int nthr = 0, checked = 0;
	uint64_t ticks0;

	snprintf(secs, sizeof(secs), "%d", env ? atoi(env) : 10);
	rth_init(&h, prog, 100, false);
	c.wall = rth_var(&h, ENG_VAR_WALL_TIMER, &hw);
	ic = rth_var(&h, ENG_VAR_COUNTER, &hc);
	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)hw);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)hc);
	h.on_tick = torn_tick;
	h.ctx = &c;
	rth_launch(&h, true, args);
	ticks0 = eng_sampler_stats(h.smp)->ticks;
	tap_ok(rth_wait_line(&h, "done", line, sizeof(line), 60000) == 0 &&
	       sscanf(line, "done %ld", &total) == 1, "torn: 8 threads ran "
	       "for %s s", secs);
	rth_tick(&h);
	st = eng_sampler_stats(h.smp);
	eng_sampler_var_agg(h.smp, ic, &ag);
	tap_diag("torn: %ld start/stop pairs, %ld ticks, %llu timer reads, "
		 "%llu retries, %llu given up", total, c.ticks,
		 (unsigned long long)st->timer_reads,
		 (unsigned long long)st->retries,
		 (unsigned long long)st->skipped);
	tap_eq(st->rollbacks, 0, "torn: no timer value ever went backwards");
	tap_eq(c.too_fast, 0, "torn: no timer value grew faster than wall "
	       "time (no torn read)");
	tap_eq(st->ticks - ticks0, (uint64_t)c.ticks, "torn: the sampler "
	       "counted every tick (%ld)", c.ticks);
	for (uint32_t i = 0; i < 1024; i++) {
		nthr += c.fresh[i] > 0;
		checked += c.fresh[i] >= 10;
	}
	/* 10 fresh reads per thread over the run is a floor, not a rate: a
	 * sampler that stopped, or whose every read was thrown away, fails. */
	tap_eq(checked, 8, "torn: each of the 8 threads' timers was checked "
	       "fresh at least 10 times (%d threads seen)", nthr);
	tap_ok(st->retries > 0, "torn: the protector protocol had to retry "
	       "(the test really raced)");
	tap_eq(ag.sum, total, "torn: counter total equals the pairs done");
	rth_send(&h, "exit\n");
	rth_wait_exit(&h, 5000);
	rth_fini(&h);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rt_timer RT_PROG\n");
		return 2;
	}
	accuracy(argv[1], false);
	accuracy(argv[1], true);
	preempted(argv[1]);
	torn(argv[1]);
	return tap_done();
}
