/*
 * src_live_hintpy.c - Python stacks read on their own clock for the hint
 * sampler (see src_live_hintpy.h): one thread of hunch owns the reader
 * (eng_pyframes is not shared) and keeps each target thread's recent
 * stacks in a ring, which the hint sampler's thread searches under a
 * mutex.
 */
#include "src_live_hintpy.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_mono.h"

#define RING 64            /* stacks kept per thread: 0.64 s of reads */
#define MAX_RINGS 512      /* threads followed */
#define FORGET_NS 2000000000ull   /* a thread unread this long is gone */

struct ring {
	pid_t tid;
	uint64_t last_ns;
	unsigned head, n;      /* next slot; slots filled */
	struct src_live_hintpy_stack s[RING];
};

struct src_live_hintpy {
	struct eng_pyframes *pf;
	pthread_t th;
	atomic_bool stop;
	pthread_mutex_t mu;
	struct ring *rings[MAX_RINGS];
	size_t nrings;
	struct src_live_hintpy_stats st;
};

static struct ring *ring_of(struct src_live_hintpy *hp, pid_t tid)
{
	for (size_t i = 0; i < hp->nrings; i++)
		if (hp->rings[i]->tid == tid)
			return hp->rings[i];
	if (hp->nrings == MAX_RINGS)
		return NULL;
	hp->rings[hp->nrings] = calloc(1, sizeof(struct ring));
	if (hp->rings[hp->nrings] == NULL)
		return NULL;
	hp->rings[hp->nrings]->tid = tid;
	return hp->rings[hp->nrings++];
}

/* Python frames split at each entry frame: group g runs in the g-th
 * C-level call of the interpreter loop (innermost first).  starts[g]
 * is the first frame of group g, starts[ngroups] the frame count. */
static int groups_of(const struct src_live_hintpy_stack *py, int *starts)
{
	int k = 0;

	starts[k++] = 0;
	for (int i = 0; i + 1 < py->nframes; i++)
		if (py->f[i].entry)
			starts[k++] = i + 1;
	starts[k] = py->nframes;
	return k;
}

/* One stack read (called by eng_pyframes_read, under the mutex), with
 * its groups counted once for the matches that try it. */
static void keep(void *arg, const struct eng_pystack *s)
{
	struct src_live_hintpy *hp = arg;
	struct ring *r = ring_of(hp, s->tid);
	struct src_live_hintpy_stack *o;
	int n = s->nframes < SRC_LIVE_HINTPY_DEPTH ? s->nframes :
		SRC_LIVE_HINTPY_DEPTH;
	int starts[SRC_LIVE_HINTPY_DEPTH + 1];

	if (r == NULL)
		return;
	o = &r->s[r->head];
	r->head = (r->head + 1) % RING;
	r->n += r->n < RING;
	o->t_ns = clock_mono_ns();
	r->last_ns = o->t_ns;
	o->nframes = n;
	o->cut = s->nframes > n;
	memcpy(o->f, s->f, (size_t)n * sizeof(o->f[0]));
	o->ngroups = n > 0 ? groups_of(o, starts) : 0;
}

static void forget_gone(struct src_live_hintpy *hp, uint64_t now)
{
	for (size_t i = hp->nrings; i-- > 0;)
		if (now - hp->rings[i]->last_ns > FORGET_NS) {
			free(hp->rings[i]);
			hp->rings[i] = hp->rings[--hp->nrings];
		}
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000ull),
			       (long)(t_ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void *reader(void *arg)
{
	struct src_live_hintpy *hp = arg;
	uint64_t period = (uint64_t)(SRC_LIVE_HINTPY_PERIOD_S * 1e9);
	uint64_t next = clock_mono_ns();

	while (!atomic_load(&hp->stop)) {
		const struct eng_pyframes_stats *ps;
		int rc;

		pthread_mutex_lock(&hp->mu);
		rc = eng_pyframes_read(hp->pf, NULL, 0, keep, hp);
		ps = eng_pyframes_stats(hp->pf);
		hp->st.reads = ps->reads;
		hp->st.stacks = ps->stacks;
		hp->st.dropped = ps->dropped;
		hp->st.read_ns = ps->read_ns;
		forget_gone(hp, clock_mono_ns());
		pthread_mutex_unlock(&hp->mu);
		if (rc < 0)
			break;   /* the process is gone */
		next += period;
		if (next < clock_mono_ns())   /* late (a loaded machine): */
			next = clock_mono_ns();   /* no burst to catch up */
		sleep_until(next);
	}
	return NULL;
}

struct src_live_hintpy *src_live_hintpy_new(pid_t pid,
					    enum eng_pyframes_why *why)
{
	struct src_live_hintpy *hp;
	struct eng_pyframes *pf;
	enum eng_pyframes_why w = eng_pyframes_open(pid, &pf, NULL);

	if (why != NULL)
		*why = w;
	if (w != ENG_PYF_OK)
		return NULL;
	hp = calloc(1, sizeof(*hp));
	if (hp == NULL) {
		eng_pyframes_close(pf);
		return NULL;
	}
	hp->pf = pf;
	pthread_mutex_init(&hp->mu, NULL);
	if (pthread_create(&hp->th, NULL, reader, hp) != 0) {
		pthread_mutex_destroy(&hp->mu);
		eng_pyframes_close(pf);
		free(hp);
		return NULL;
	}
	return hp;
}

void src_live_hintpy_free(struct src_live_hintpy *hp)
{
	if (hp == NULL)
		return;
	atomic_store(&hp->stop, true);
	pthread_join(hp->th, NULL);
	for (size_t i = 0; i < hp->nrings; i++)
		free(hp->rings[i]);
	pthread_mutex_destroy(&hp->mu);
	eng_pyframes_close(hp->pf);
	free(hp);
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* The groups of a stack read match a sample's `loops` activations one
 * to one, or as far as one of the two stacks was cut. */
static bool fits(const struct src_live_hintpy_stack *py, int loops,
		 bool complete)
{
	int k = py->ngroups;

	if (py->nframes == 0)
		return false;
	return k == loops || (py->cut && k < loops) || (!complete && loops < k);
}

int src_live_hintpy_match(struct src_live_hintpy *hp, pid_t tid,
			  uint64_t t_ns, int loops, bool complete,
			  struct src_live_hintpy_stack *out, int *starts)
{
	uint64_t bound = (uint64_t)(SRC_LIVE_HINTPY_BOUND_S * 1e9);
	const struct src_live_hintpy_stack *best = NULL;
	struct ring *r = NULL;
	int k;

	pthread_mutex_lock(&hp->mu);
	for (size_t i = 0; i < hp->nrings && r == NULL; i++)
		if (hp->rings[i]->tid == tid)
			r = hp->rings[i];
	for (unsigned i = 0; r != NULL && i < r->n; i++) {
		const struct src_live_hintpy_stack *s = &r->s[i];

		if (dist(s->t_ns, t_ns) <= bound &&
		    (best == NULL || dist(s->t_ns, t_ns) <
				     dist(best->t_ns, t_ns)) &&
		    fits(s, loops, complete))
			best = s;
	}
	if (best != NULL) {
		memcpy(out, best, sizeof(*out));
		hp->st.joined++;
	} else {
		hp->st.missed++;
	}
	pthread_mutex_unlock(&hp->mu);
	if (best == NULL)
		return 0;
	k = groups_of(out, starts);
	return k < loops ? k : loops;
}

void src_live_hintpy_stats(struct src_live_hintpy *hp,
			   struct src_live_hintpy_stats *out)
{
	pthread_mutex_lock(&hp->mu);
	*out = hp->st;
	pthread_mutex_unlock(&hp->mu);
}
