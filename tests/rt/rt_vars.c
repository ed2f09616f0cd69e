/*
 * rt_vars.c - hunch's variable allocator and slot cleaning, in-process
 * (this test maps its own segment with hunchrt_attach, so it is both
 * hunch and target): 100,000 timers and 100,000 counters fit one default
 * segment; freed slots are zeroed in live blocks and reused, also in the
 * block of a thread that wrote it before hunch's sampler adopted the
 * thread; a full block is a clear error; handles out of range stay
 * inside the caller's block; a read of one variable between two ticks
 * counts a thread registered since the last tick; a timer read while
 * its thread is inside an update keeps its value, marked stale.
 */
#include "eng_sampler.h"
#include "eng_shm.h"
#include "hunchrt.h"
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 100000

static void capacity(void)
{
	struct hunch_err e = { 0 };
	struct eng_shm *shm;
	struct eng_sampler *s;
	uint32_t id, i, ok = 0;
	uint64_t h, maxh = 0;

	if (eng_shm_create(0, false, &shm, &e) < 0 ||
	    eng_sampler_create(shm, &s, &e) < 0) {
		tap_ok(0, "create: %s", e.msg);
		return;
	}
	for (i = 0; i < N; i++) {
		if (eng_sampler_var_alloc(s, ENG_VAR_WALL_TIMER, &id, &h, &e) == 0)
			ok++;
		if (h > maxh)
			maxh = h;
		if (eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &id, &h, &e) == 0)
			ok++;
	}
	tap_eq(ok, 2 * N, "100,000 timers and 100,000 counters allocated");
	tap_ok(maxh % 64 == 0 && maxh < (1u << 23), "timers are 64-byte "
	       "aligned, inside the 8 MiB block");
	eng_sampler_destroy(s);
	eng_shm_destroy(shm);
}

static void full(void)
{
	struct hunch_err e = { 0 };
	struct eng_shm *shm;
	struct eng_sampler *s;
	uint32_t id, i, n = 0;
	uint64_t h;
	int rc = 0;

	eng_shm_create_layout(2, 12, false, &shm, &e);
	eng_sampler_create(shm, &s, &e);
	for (i = 0; i < 100 && rc == 0; i++)
		if ((rc = eng_sampler_var_alloc(s, ENG_VAR_CPU_TIMER, &id, &h,
						&e)) == 0)
			n++;
	tap_eq(n, 63, "a 4 KiB block holds 63 timers after its header");
	tap_ok(rc == -ENOSPC && strstr(e.msg, "larger blocks") != NULL,
	       "the 64th is a clear error: %s", e.msg);
	eng_sampler_destroy(s);
	eng_shm_destroy(shm);
}

/* A timer whose total goes backwards is reported and clamped. */
static void rollback(struct eng_sampler *s, struct eng_shm *shm, int idx)
{
	const struct eng_shm_layout *lay = eng_shm_layout(shm);
	struct hunch_err e = { 0 };
	volatile struct hunch_timer *t;
	uint32_t id;
	uint64_t h;
	int64_t v1 = -1, v2 = -1;

	eng_sampler_var_alloc(s, ENG_VAR_WALL_TIMER, &id, &h, &e);
	hunchrt_wall_start(h);
	usleep(2000);
	hunchrt_wall_stop(h);
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, id, (uint32_t)idx, &v1);
	t = (volatile void *)(eng_shm_base(shm) + lay->blocks_off +
			      ((uint64_t)idx << lay->block_shift) + h);
	t->total /= 2;
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, id, (uint32_t)idx, &v2);
	tap_ok(v1 >= 2000000 && v2 == v1, "a timer set back is clamped to its "
	       "last value (%lld ns)", (long long)v2);
	tap_eq(eng_sampler_stats(s)->rollbacks, 1, "and the rollback counted");
}

/* A thread descheduled inside a timer's update (prot1 one ahead of
 * prot2, its total already added): the tick keeps the value before and
 * says it is stale, for that thread and in the sum; once the update
 * ends, the next tick reads it all and the mark is gone. */
static void stale(struct eng_sampler *s, struct eng_shm *shm, int idx)
{
	const struct eng_shm_layout *lay = eng_shm_layout(shm);
	struct hunch_err e = { 0 };
	volatile struct hunch_timer *t;
	struct eng_var_agg a;
	uint32_t id;
	uint64_t h;
	int64_t v1 = -1, v2 = -1, v3 = -1;

	eng_sampler_var_alloc(s, ENG_VAR_WALL_TIMER, &id, &h, &e);
	hunchrt_wall_start(h);
	hunchrt_wall_stop(h);
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, id, (uint32_t)idx, &v1);
	t = (volatile void *)(eng_shm_base(shm) + lay->blocks_off +
			      ((uint64_t)idx << lay->block_shift) + h);
	t->prot1++;
	t->total += 5000000;   /* 5 ms, in native units at most as many ns */
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, id, (uint32_t)idx, &v2);
	eng_sampler_var_agg(s, id, &a);
	tap_ok(v2 == v1 && eng_sampler_var_stale(s, id, (uint32_t)idx) &&
	       a.nstale == 1, "a timer read mid-update keeps its value "
	       "(%lld ns) and is marked stale, in the sum too (%u)",
	       (long long)v2, a.nstale);
	t->prot2++;
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, id, (uint32_t)idx, &v3);
	eng_sampler_var_agg(s, id, &a);
	tap_ok(v3 > v1 && !eng_sampler_var_stale(s, id, (uint32_t)idx) &&
	       a.nstale == 0, "once the update ends it is read whole "
	       "(%lld ns more) and no longer stale", (long long)(v3 - v1));
	eng_sampler_var_free(s, id);
}

/* A thread that writes a slot between two ticks (not adopted yet). */
struct writer {
	uint64_t h;
	int idx;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int wrote, done;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	hunchrt_counter_add(w->h, 9);
	pthread_mutex_lock(&w->mu);
	w->idx = hunchrt_thread_index();
	w->wrote = 1;
	pthread_cond_broadcast(&w->cv);
	while (!w->done)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Start the writer thread and wait until it has written its 9. */
static bool writer_start(struct writer *w, pthread_t *t)
{
	if (pthread_create(t, NULL, writer_main, w) != 0) {
		tap_ok(0, "pthread_create");
		return false;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->wrote)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	return true;
}

static void writer_stop(struct writer *w, pthread_t t)
{
	pthread_mutex_lock(&w->mu);
	w->done = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(t, NULL);
}

/* The slot a not yet adopted thread wrote is zeroed at free: the next
 * owner of the slot reads 0 in that thread, not the old value. */
static void reuse_unadopted(struct eng_sampler *s)
{
	struct writer w = { .mu = PTHREAD_MUTEX_INITIALIZER,
			    .cv = PTHREAD_COND_INITIALIZER, .idx = -1 };
	struct hunch_err e = { 0 };
	uint32_t a, b;
	uint64_t hb;
	int64_t v = -1;
	pthread_t t;

	eng_sampler_tick(s, &e);   /* every earlier thread adopted */
	eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &a, &w.h, &e);
	if (!writer_start(&w, &t))
		return;
	tap_ok(w.idx >= 0, "the writer thread has an index (%d)", w.idx);
	/* No tick between the write and the free: not adopted. */
	eng_sampler_var_free(s, a);
	eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &b, &hb, &e);
	tap_ok(hb == w.h, "the slot the writer wrote is handed out again");
	eng_sampler_tick(s, &e);
	tap_eq(eng_sampler_var_thread(s, b, (uint32_t)w.idx, &v), 0,
	       "the writer is adopted at the next tick");
	tap_eq(v, 0, "the new owner of the slot reads 0 in the thread that "
	       "wrote it before it was adopted, not its old value 9");
	writer_stop(&w, t);
	eng_sampler_var_free(s, b);
}

/* A thread that registers and counts between two ticks (a thread of a
 * program after an exec registers at its first primitive): a refresh of
 * the variable, with no tick, counts it. */
static void refresh_unadopted(struct eng_sampler *s)
{
	struct writer w = { .mu = PTHREAD_MUTEX_INITIALIZER,
			    .cv = PTHREAD_COND_INITIALIZER, .idx = -1 };
	struct hunch_err e = { 0 };
	struct eng_var_agg a;
	uint32_t id;
	pthread_t t;

	eng_sampler_tick(s, &e);   /* every earlier thread adopted */
	eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &id, &w.h, &e);
	if (!writer_start(&w, &t))
		return;
	tap_eq(eng_sampler_var_refresh(s, id), 0, "refresh between ticks");
	eng_sampler_var_agg(s, id, &a);
	tap_eq(a.sum, 9, "it counts the 9 of a thread registered since the "
	       "last tick");
	tap_eq(eng_sampler_var_thread(s, id, (uint32_t)w.idx, &a.sum), 0,
	       "that thread is adopted by the refresh");
	writer_stop(&w, t);
	eng_sampler_tick(s, &e);   /* the writer retired */
	eng_sampler_var_free(s, id);
}

static void reuse_in_process(void)
{
	struct hunch_err e = { 0 };
	struct eng_shm *shm;
	struct eng_sampler *s;
	uint32_t a, b, c;
	uint64_t ha, hb, hc;
	int64_t v = -1;
	const struct eng_shm_layout *lay;
	volatile int64_t *slot;
	int idx;

	if (eng_shm_create(0, true, &shm, &e) < 0 ||
	    hunchrt_attach(eng_shm_name(shm)) != 0 ||
	    eng_sampler_create(shm, &s, &e) < 0) {
		tap_ok(0, "self-attach: %s", e.msg);
		return;
	}
	eng_shm_unlink(shm);
	eng_sampler_set_pid(s, getpid());
	eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &a, &ha, &e);
	eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &b, &hb, &e);
	hunchrt_counter_add(ha, 5);
	hunchrt_counter_add(hb, 7);
	idx = hunchrt_thread_index();
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, b, (uint32_t)idx, &v);
	tap_eq(v, 7, "this thread's counter sampled");
	eng_sampler_var_free(s, b);
	lay = eng_shm_layout(shm);
	slot = (volatile int64_t *)(eng_shm_base(shm) + lay->blocks_off +
		((uint64_t)idx << lay->block_shift) + hb);
	tap_eq(*slot, 0, "freeing zeroed the slot in the live thread's block");
	eng_sampler_var_alloc(s, ENG_VAR_COUNTER, &c, &hc, &e);
	tap_ok(hc == hb, "the freed slot is handed out again");
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, c, (uint32_t)idx, &v);
	tap_eq(v, 0, "and starts from zero");
	eng_sampler_var_thread(s, a, (uint32_t)idx, &v);
	tap_eq(v, 5, "its neighbour is untouched");
	/* A handle beyond the block wraps into the caller's own block. */
	hunchrt_counter_add(ha + (1ull << lay->block_shift), 1);
	eng_sampler_tick(s, &e);
	eng_sampler_var_thread(s, a, (uint32_t)idx, &v);
	tap_eq(v, 6, "an out-of-range handle stays inside the own block");
	tap_eq(eng_sampler_stats(s)->corrupt, 0, "nothing rejected");
	rollback(s, shm, idx);
	stale(s, shm, idx);
	reuse_unadopted(s);
	refresh_unadopted(s);
	eng_sampler_destroy(s);
}

int main(void)
{
	capacity();
	full();
	reuse_in_process();
	return tap_done();
}
