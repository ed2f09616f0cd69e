/*
 * rt_exact.c - exactness: 8 threads perform known numbers of counter and
 * timer operations while the sampler reads at 100 Hz throughout; every
 * per-thread value and the total must be exact, live and after exit.
 * The rate the sampler reaches is a speed target, measured by
 * bench/rt/rt_bench ("sampler rate"); here the sampler must only have
 * sampled the work while it ran, every sample consistent.
 */
#include "rt_harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define NTHR 8
#define NOPS 40000000L

struct ctx {
	uint32_t ctr;
	int64_t last[1024];
	long backwards;
	int64_t last_sum;   /* total of the previous tick's samples */
	long progress;      /* ticks that saw the total grow, unfinished */
	double max_obs_fraction, max_cost;
};

/* A counter that only grows must never be seen shrinking. */
static void on_tick(struct rth *h, void *p)
{
	struct ctx *c = p;
	const struct eng_sampler_stats *st = eng_sampler_stats(h->smp);
	int64_t sum = 0;
	uint32_t i;

	if (st->obs_fraction > c->max_obs_fraction)
		c->max_obs_fraction = st->obs_fraction;
	if (st->cost_fraction > c->max_cost)
		c->max_cost = st->cost_fraction;
	for (i = 0; i <= st->max_index && i < 1024; i++) {
		int64_t v;

		if (eng_sampler_var_thread(h->smp, c->ctr, i, &v) < 0) {
			c->last[i] = 0;
			continue;
		}
		if (v < c->last[i])
			c->backwards++;
		c->last[i] = v;
		sum += v;
	}
	/* The work seen in progress: more than last tick, less than all. */
	if (sum > c->last_sum && sum < NOPS * NTHR * (NTHR + 1) / 2)
		c->progress++;
	if (sum > c->last_sum)
		c->last_sum = sum;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_live(struct rth *h, uint32_t ic, uint32_t is, uint64_t hw)
{
	const struct eng_shm_layout *lay = eng_shm_layout(h->shm);
	int64_t vals[1024], v, s;
	int n = 0, nset = 0, ntimer_ok = 0, i;
	long want_prot = 4 * ((NOPS + 15) / 16);
	struct eng_var_agg a;

	for (i = 0; i <= (int)eng_sampler_stats(h->smp)->max_index; i++) {
		volatile struct hunch_timer *t;

		if (eng_sampler_var_thread(h->smp, ic, (uint32_t)i, &v) < 0 ||
		    v == 0)
			continue;
		vals[n++] = v;
		if (eng_sampler_var_thread(h->smp, is, (uint32_t)i, &s) == 0 &&
		    s == NOPS)
			nset++;
		t = (volatile void *)(eng_shm_base(h->shm) + lay->blocks_off +
				      ((uint64_t)i << lay->block_shift) + hw);
		if (t->count == 0 && t->prot1 == t->prot2 &&
		    (long)t->prot1 == want_prot)
			ntimer_ok++;
	}
	tap_eq(n, NTHR, "8 threads have a non-zero counter");
	qsort(vals, (size_t)n, sizeof(vals[0]), cmp64);
	for (i = 0; i < n && i < NTHR; i++)
		if (vals[i] != NOPS * (i + 1))
			break;
	tap_eq(i, NTHR, "thread k's counter is exactly %ld * k", NOPS);
	tap_eq(nset, NTHR, "every thread's set-counter is exactly %ld", NOPS);
	tap_eq(ntimer_ok, NTHR, "every timer is stopped, protectors equal and "
	       "counted exactly %ld operations", want_prot);
	eng_sampler_var_agg(h->smp, ic, &a);
	tap_eq(a.sum, NOPS * NTHR * (NTHR + 1) / 2, "total across threads");
	tap_eq(a.max, NOPS * NTHR, "max across threads");
}

int main(int argc, char **argv)
{
	struct rth h;
	struct ctx c = { 0 };
	char a[3][32], nops[32], line[64] = "";
	const char *args[] = { "exact", a[0], a[1], a[2], "8", nops, NULL };
	uint64_t hc, hs, hw, t0, ticks0, nticks0;
	uint32_t ic, is;
	const struct eng_sampler_stats *st;
	struct eng_var_agg ag;
	double secs;

	if (argc < 2) {
		fprintf(stderr, "usage: rt_exact RT_PROG\n");
		return 2;
	}
	rth_init(&h, argv[1], 100, false);
	ic = rth_var(&h, ENG_VAR_COUNTER, &hc);
	is = rth_var(&h, ENG_VAR_COUNTER, &hs);
	rth_var(&h, ENG_VAR_WALL_TIMER, &hw);
	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)hc);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)hs);
	snprintf(a[2], sizeof(a[2]), "%llu", (unsigned long long)hw);
	snprintf(nops, sizeof(nops), "%ld", NOPS);
	c.ctr = ic;
	h.on_tick = on_tick;
	h.ctx = &c;
	st = eng_sampler_stats(h.smp);
	t0 = rth_now_ns();
	tap_ok(rth_launch(&h, true, args) == 0, "target launched, handshake");
	ticks0 = st->ticks;
	nticks0 = h.nticks;
	tap_ok(rth_wait_line(&h, "done", line, sizeof(line), 60000) == 0,
	       "target finished its operations");
	tap_ok(strcmp(line, "done 0") == 0, "the guard flag was clear on "
	       "entry and set inside, every time (%s)", line);
	secs = (double)(rth_now_ns() - t0) / 1e9;
	tap_diag("work took %.2f s, %llu ticks (%.0f Hz), %llu timer reads, "
		 "%llu retries", secs, (unsigned long long)(st->ticks - ticks0),
		 (double)(st->ticks - ticks0) / secs,
		 (unsigned long long)st->timer_reads,
		 (unsigned long long)st->retries);
	tap_eq(st->ticks - ticks0, h.nticks - nticks0, "the sampler counted "
	       "every tick made during the work");
	/* 10 is a floor that load cannot reach (the work itself needs the
	 * CPU for about 2 s, ~200 ticks), not a rate: a sampler that stops,
	 * or reads nothing until the end, fails it. */
	tap_ok(c.progress >= 10, "the sampler saw the work in progress, the "
	       "total growing in %ld ticks", c.progress);
	rth_tick(&h);
	check_live(&h, ic, is, hw);
	tap_eq(c.backwards, 0, "no sampled counter ever went backwards");
	rth_send(&h, "exit\n");
	tap_ok(rth_wait_exit(&h, 10000) == 0 && WIFEXITED(h.status) &&
	       WEXITSTATUS(h.status) == 0, "target exited cleanly");
	eng_sampler_var_agg(h.smp, ic, &ag);
	tap_eq(ag.retired, NOPS * NTHR * (NTHR + 1) / 2,
	       "retired threads' final values sum exactly");
	tap_eq(st->threads_retired, NTHR + 1, "all 9 threads retired");
	tap_eq(st->ring_new, NTHR + 2, "thread-new events for every thread");
	tap_eq(st->ring_exit, NTHR + 1, "thread-exit events for every exit");
	tap_eq(st->rollbacks, 0, "no timer rollbacks");
	tap_eq(st->obs_cost_total, 1000 * NTHR * ((NOPS + 15) / 16),
	       "observed cost added by the threads is accounted exactly");
	tap_ok(c.max_obs_fraction > 0, "observed cost was reported as a "
	       "fraction of the target's CPU time (max %.4f)",
	       c.max_obs_fraction);
	tap_ok(c.max_cost > 0 && st->total_cpu_ns > 0, "the sampler measured "
	       "its own cost (max %.4f%% of a core, %.1f ms in all)",
	       100 * c.max_cost, st->total_cpu_ns / 1e6);
	tap_eq(st->corrupt, 0, "nothing rejected as corrupt (%s)",
	       eng_sampler_problem(h.smp));
	rth_fini(&h);
	return tap_done();
}
