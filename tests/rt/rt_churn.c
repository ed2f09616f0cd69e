/*
 * rt_churn.c - 10,000 short-lived threads (16 at a time) while sampling
 * at 100 Hz: every thread is registered and retired, indexes are reused,
 * no index or slot leaks, and the counts stay exact.
 */
#include "rt_harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define NTOTAL 10000

struct ctx {
	long ev_new, ev_exit;
};

static void drain(struct rth *h, void *p)
{
	struct ctx *c = p;
	struct eng_thread_event e;

	while (eng_sampler_next_event(h->smp, &e) == 1) {
		if (e.kind == ENG_THREAD_NEW)
			c->ev_new++;
		else
			c->ev_exit++;
	}
}

/* Free indexes have their table entry free and their block zero over
 * everything a variable was ever allocated in. */
static void check_clean(struct rth *h, uint64_t extent, int *nfree,
			int *dirty)
{
	const struct eng_shm_layout *lay = eng_shm_layout(h->shm);
	volatile unsigned char *base = eng_shm_base(h->shm);
	uint32_t i, max = eng_sampler_stats(h->smp)->max_index;
	uint64_t k;

	*nfree = *dirty = 0;
	for (i = 0; i <= max; i++) {
		volatile struct hunch_thread_slot *s = (volatile void *)(base +
			lay->table_off) + i * sizeof(*s);
		volatile unsigned char *b = base + lay->blocks_off +
			((uint64_t)i << lay->block_shift);

		if (s->state != HUNCH_THR_FREE)
			continue;
		(*nfree)++;
		for (k = 0; k < extent; k++)
			if (b[k] != 0) {
				(*dirty)++;
				break;
			}
	}
}

/* A table of 4 threads with 16 at a time: threads that find it full run
 * uninstrumented (and say so) without harm, and get an index later. */
static void small_table(const char *prog)
{
	struct rth h;
	struct hunch_err e = { 0 };
	char a[2][32];
	const char *args[] = { "churn", a[0], a[1], "400", "16", NULL };
	uint64_t hc, hw;
	uint32_t ic;
	struct eng_var_agg ag;
	const struct eng_sampler_stats *st;

	memset(&h, 0, sizeof(h));
	rth_init(&h, prog, 100, false);
	eng_sampler_destroy(h.smp);
	eng_shm_destroy(h.shm);
	if (eng_shm_create_layout(4, 12, false, &h.shm, &e) < 0 ||
	    eng_sampler_create(h.shm, &h.smp, &e) < 0) {
		tap_ok(0, "small segment: %s", e.msg);
		return;
	}
	ic = rth_var(&h, ENG_VAR_COUNTER, &hc);
	rth_var(&h, ENG_VAR_WALL_TIMER, &hw);
	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)hc);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)hw);
	rth_launch(&h, true, args);
	tap_ok(rth_wait_line(&h, "done", NULL, 0, 30000) == 0,
	       "4-thread table, 400 threads 16 at a time: target finished");
	rth_run(&h, 30);
	st = eng_sampler_stats(h.smp);
	eng_sampler_var_agg(h.smp, ic, &ag);
	tap_diag("small table: %llu registrations found it full; %llu "
		 "threads registered; count %lld of %d", (unsigned long long)
		 st->rt_no_index, (unsigned long long)st->threads_new,
		 (long long)ag.sum, 400 * 100);
	tap_ok(st->rt_no_index > 0, "small table: the target reported "
	       "threads that found the table full");
	tap_ok(st->max_index < 4, "small table: no index beyond the table");
	tap_ok(ag.sum > 0 && ag.sum < 400 * 100 && ag.sum % 100 == 0,
	       "small table: instrumented threads counted whole");
	rth_send(&h, "exit\n");
	tap_ok(rth_wait_exit(&h, 5000) == 0 && WIFEXITED(h.status) &&
	       WEXITSTATUS(h.status) == 0, "small table: target exited "
	       "cleanly");
	rth_fini(&h);
}

int main(int argc, char **argv)
{
	struct rth h;
	struct ctx c = { 0 };
	char a[2][32], n[16];
	const char *args[] = { "churn", a[0], a[1], n, "16", NULL };
	uint64_t hc, hw, t0;
	uint32_t ic, iw;
	const struct eng_sampler_stats *st;
	struct eng_var_agg ag, aw;
	int nfree, dirty;

	if (argc < 2) {
		fprintf(stderr, "usage: rt_churn RT_PROG\n");
		return 2;
	}
	rth_init(&h, argv[1], 100, false);
	ic = rth_var(&h, ENG_VAR_COUNTER, &hc);
	iw = rth_var(&h, ENG_VAR_WALL_TIMER, &hw);
	snprintf(a[0], sizeof(a[0]), "%llu", (unsigned long long)hc);
	snprintf(a[1], sizeof(a[1]), "%llu", (unsigned long long)hw);
	snprintf(n, sizeof(n), "%d", NTOTAL);
	h.on_tick = drain;
	h.ctx = &c;
	st = eng_sampler_stats(h.smp);
	t0 = rth_now_ns();
	rth_launch(&h, true, args);
	tap_ok(rth_wait_line(&h, "done", NULL, 0, 60000) == 0,
	       "10,000 threads created and joined");
	tap_diag("churn took %.2f s; highest index used %u; %llu ticks",
		 (rth_now_ns() - t0) / 1e9, st->max_index,
		 (unsigned long long)st->ticks);
	rth_run(&h, 50);
	eng_sampler_var_agg(h.smp, ic, &ag);
	eng_sampler_var_agg(h.smp, iw, &aw);
	tap_eq(st->threads_retired, NTOTAL, "every thread was retired");
	tap_eq(st->threads_new, NTOTAL + 1, "every thread was registered "
	       "(and the main thread)");
	tap_eq(c.ev_new, NTOTAL + 1, "a new-thread event for each");
	tap_eq(c.ev_exit, NTOTAL, "an exit event for each");
	tap_eq(st->ring_new, NTOTAL + 1, "the target's ring said new for each");
	tap_eq(st->ring_exit, NTOTAL, "the target's ring said exit for each");
	tap_eq(st->ring_lost, 0, "no ring events lost");
	tap_eq(st->rt_no_index, 0, "no thread ever found the table full");
	/* Retirement happens at ticks (100 Hz) and ~10 threads exit per ms,
	 * so a few hundred indexes are in flight; reuse keeps it far below
	 * 10,000 and below the table size. */
	tap_ok(st->max_index < 512, "indexes were reused (highest %u of "
	       "10,000 threads)", st->max_index);
	tap_eq(ag.sum, (long long)NTOTAL * 100, "counter total is exact");
	tap_eq(ag.retired, (long long)NTOTAL * 100, "all of it from retired "
	       "threads");
	tap_ok(aw.retired > 0, "the wall timers of retired threads add up "
	       "(%.3f ms)", aw.retired / 1e6);
	tap_eq(st->live_threads, 1, "only the main thread is live");
	check_clean(&h, 4096, &nfree, &dirty);
	tap_eq(nfree, (int)st->max_index, "every other index is free");
	tap_eq(dirty, 0, "every free block is clean (no slot leaks)");
	tap_eq(st->corrupt, 0, "nothing rejected (%s)",
	       eng_sampler_problem(h.smp));
	rth_send(&h, "exit\n");
	tap_ok(rth_wait_exit(&h, 5000) == 0 && WIFEXITED(h.status) &&
	       WEXITSTATUS(h.status) == 0, "target exited cleanly");
	rth_fini(&h);
	small_table(argv[1]);
	return tap_done();
}
