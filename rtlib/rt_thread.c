/*
 * rt_thread.c - thread indexes, thread create/exit events, fork.
 *
 * A thread claims the lowest FREE index of the shared table with a CAS
 * (the target must never wait for hunch), publishes NEW on the event ring,
 * and finds its block through rt_tls_block from then on.  At exit (pthread
 * key destructor: return, pthread_exit, cancellation) it stops writing,
 * publishes EXIT and marks the index PENDING; hunch takes the final
 * sample, cleans the block and only then makes the index FREE again
 * (devguide §1.15), so a reused index always starts with clean slots.
 *
 * Threads are registered at their start when pthread_create is
 * interposed (preload: we learn the start routine), otherwise at their
 * first primitive (threads that existed before a dlopen attach, and
 * threads created by code bound to libc's pthread_create).
 */
#include "hunchrt.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

RT_TLS char *rt_tls_block;
RT_TLS struct rt_tls rt_t;

typedef int (*rt_pthread_create_fn)(pthread_t *, const pthread_attr_t *,
				    void *(*)(void *), void *);
static rt_pthread_create_fn rt_real_create;

static void rt_ring_push(uint32_t kind, uint32_t idx, int32_t tid,
			 uint32_t gen, uint64_t start_fn)
{
	struct hunch_shm_header *h = rt_g.shm;
	uint64_t pos = __atomic_fetch_add(&h->ring_head, 1, __ATOMIC_RELAXED);
	struct hunch_ring_entry *e = &rt_g.ring[pos & rt_g.ring_mask];

	e->kind = kind;
	e->idx = idx;
	e->tid = tid;
	e->gen = gen;
	e->start_fn = start_fn;
	__atomic_store_n(&e->seq, pos + 1, __ATOMIC_RELEASE);
}

/* Lowest free index, so indexes are reused and few blocks get touched. */
static int rt_claim_index(void)
{
	uint32_t i, n = rt_g.max_threads;

	for (i = 0; i < n; i++) {
		uint32_t want = HUNCH_THR_FREE;

		if (rt_g.table[i].state != HUNCH_THR_FREE)
			continue;
		if (__atomic_compare_exchange_n(&rt_g.table[i].state, &want,
				HUNCH_THR_CLAIMING, 0, __ATOMIC_ACQUIRE,
				__ATOMIC_RELAXED))
			return (int)i;
	}
	return -1;
}

static char *rt_register_once(uint64_t start_fn)
{
	struct hunch_thread_slot *s;
	struct hunch_block_hdr *bh;
	int idx;
	char *b;

	if (rt_g.shm == NULL || rt_g.inert || rt_t.state == RT_T_DEAD ||
	    rt_t.state == RT_T_LIVE)
		return rt_tls_block;
	idx = rt_claim_index();
	if (idx < 0) {
		__atomic_fetch_add(&rt_g.shm->rt_no_index, 1, __ATOMIC_RELAXED);
		rt_t.state = RT_T_NOINDEX;
		return NULL;
	}
	s = &rt_g.table[idx];
	b = rt_g.blocks + ((uint64_t)idx << rt_g.block_shift);
	bh = (struct hunch_block_hdr *)b;
	bh->cpu_level = rt_g.cpu_hw ? HUNCH_LEVEL_HW : HUNCH_LEVEL_SW;
	rt_t.gen = s->gen + 1;
	s->gen = rt_t.gen;
	s->tid = (int32_t)gettid();
	s->start_fn = start_fn;
	s->t_create = rt_wall_now();
	s->t_exit = 0;
	rt_t.idx = idx;
	rt_ring_push(HUNCH_EV_THREAD_NEW, (uint32_t)idx, s->tid, rt_t.gen,
		     start_fn);
	__atomic_store_n(&s->state, HUNCH_THR_LIVE, __ATOMIC_RELEASE);
	/* The key value only has to be non-NULL for the destructor to run;
	 * our key is created early, so glibc stores it without allocating. */
	if (rt_g.key_ok)
		pthread_setspecific(rt_g.key, (void *)1);
	rt_t.state = RT_T_LIVE;
	rt_barrier();
	rt_tls_block = b;
	return b;
}

char *rt_thread_register(uint64_t start_fn)
{
	char *b;

	if (rt_t.registering)
		return NULL;
	rt_t.registering = 1;  /* a signal handler here gets NULL */
	rt_barrier();
	b = rt_register_once(start_fn);
	rt_barrier();
	rt_t.registering = 0;
	return b;
}

/* A thread that found the table full retries every 1024th primitive, so
 * it gets an index soon after one is freed without paying a table scan
 * on every call meanwhile. */
char *rt_thread_block_slow(void)
{
	if (rt_g.shm == NULL || rt_g.inert || rt_t.state == RT_T_DEAD)
		return NULL;
	if (rt_t.state == RT_T_NOINDEX && (++rt_t.noindex_calls & 1023) != 0)
		return NULL;
	return rt_thread_register(0);
}

/* Thread exit: after this function the thread never writes its block. */
static void rt_thread_exit(void *unused)
{
	struct hunch_thread_slot *s;

	(void)unused;
	if (rt_t.state != RT_T_LIVE || rt_g.inert || rt_g.shm == NULL) {
		rt_t.state = RT_T_DEAD;
		return;
	}
	rt_cpu_close();
	rt_tls_block = NULL;
	rt_t.state = RT_T_DEAD;
	rt_barrier();
	s = &rt_g.table[rt_t.idx];
	s->t_exit = rt_wall_now();
	rt_ring_push(HUNCH_EV_THREAD_EXIT, (uint32_t)rt_t.idx, s->tid,
		     rt_t.gen, 0);
	__atomic_store_n(&s->state, HUNCH_THR_PENDING, __ATOMIC_RELEASE);
}

/* The child must not write into the parent's slots.  A hunch that
 * follows it has, at the fork stop, mapped a segment of the child's own
 * over the inherited one at the same address and written the child's
 * pid in its header (engine/eng_fork_shm.c): then the forking thread
 * keeps its index and block (zeroed, its own now) and only drops the
 * parent's perf event, to open its own at its next CPU read.  Otherwise
 * the segment is still the parent's: the child goes inert (no block
 * pointer, no registration, perf event closed, segment unmapped). */
static void rt_atfork_child(void)
{
	struct hunch_shm_header *h = rt_g.shm;

	rt_cpu_forked();
	if (h != NULL && h->rt_pid == getpid()) {
		rt_t.cpu_tried = 0;
		return;
	}
	rt_g.inert = 1;
	rt_tls_block = NULL;
	rt_t.state = RT_T_DEAD;
	rt_t.cpu_tried = 1;  /* never reopen: inert */
	rt_barrier();
	rt_g.shm = NULL;
	if (h != NULL)
		munmap(h, rt_g.shm_size);
}

int rt_thread_init(void)
{
	static int done;

	if (done)
		return 0;
	rt_cpu_init();
	if (pthread_key_create(&rt_g.key, rt_thread_exit) != 0)
		return -1;
	rt_g.key_ok = 1;
	if (pthread_atfork(NULL, NULL, rt_atfork_child) != 0)
		return -1;
	if (rt_real_create == NULL)
		rt_real_create = (rt_pthread_create_fn)dlsym(RTLD_NEXT,
							     "pthread_create");
	done = 1;
	return 0;
}

struct rt_start {
	void *(*fn)(void *);
	void *arg;
};

static void *rt_start_thunk(void *p)
{
	struct rt_start st = *(struct rt_start *)p;

	free(p);
	rt_thread_register((uint64_t)(uintptr_t)st.fn);
	rt_cpu_mark_activation();
	return st.fn(st.arg);
}

/* Interposed (preload) to register threads at their start and learn
 * their start routine; without a segment it is a plain forward. */
RT_EXPORT int pthread_create(pthread_t *thr, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	struct rt_start *st;
	int rc;

	if (rt_real_create == NULL)
		rt_real_create = (rt_pthread_create_fn)dlsym(RTLD_NEXT,
							     "pthread_create");
	if (rt_real_create == NULL)
		return EAGAIN;
	if (rt_g.shm == NULL || rt_g.inert)
		return rt_real_create(thr, attr, fn, arg);
	st = malloc(sizeof(*st));
	if (st == NULL)
		return rt_real_create(thr, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	rc = rt_real_create(thr, attr, rt_start_thunk, st);
	if (rc != 0)
		free(st);
	return rc;
}

int hunchrt_thread_index(void)
{
	return rt_block() != NULL ? rt_t.idx : -1;
}

void *hunchrt_block(void)
{
	return rt_block();
}
