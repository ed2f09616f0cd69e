/*
 * src_live_share.c - cpu_share per focus for the live source (see
 * src_live_share.h): of the CPU a focus's threads wanted over a tick
 * (time on a CPU plus run-queue wait, schedstat), the fraction they got.
 *
 * CPUdemand divides CPU time by it, so its value is the CPU the focus
 * used or waited for.  Rules keep that value possible:
 * - the share is the focus's own: one thread's for a thread, its
 *   process's threads' for a process (a thread that got its CPU divided
 *   by a process share dragged down by other threads read more than one
 *   CPU);
 * - on a function of a process, the share is that of the threads the
 *   function ran in, each weighted by the function's CPU in it (its CPU
 *   samples there): the demand is each thread's CPU in the function
 *   divided by that thread's own share, summed.  Divided by the whole
 *   process's share, the demo's hot loop (one thread, main) read 1.32
 *   CPUs: the process's share was pulled down by lock workers queued
 *   for a CPU, a wait that was not the loop's;
 * - a thread's demand over a tick is at most the tick: the kernel adds
 *   a run-queue wait to schedstat only when the thread gets a CPU, so a
 *   wait that began in one tick can be counted whole in the next and
 *   push run + wait over the elapsed time.  That excess is measurement
 *   lag, not demand, and is dropped;
 * - a process's (or a function's) demand is at most the CPUs it may
 *   run on: given the CPUs it waits for it could use no more.
 * The numerator is the same counter as the CPU time it divides: the
 * process CPU clock for a process, the thread's schedstat time for a
 * thread, the process clock times the share of its samples in the
 * function for a function (as a sampled CPU instance counts it), so
 * used ÷ (used ÷ demand) is the demand, at most one CPU per thread.
 * When nothing ran the share is 1 (the value is 0 either way).
 */
#include "src_live_share.h"
#include "vec.h"

#include <stdio.h>
#include <stdlib.h>

#include "eng_taskcpu.h"
#include "src_live_hint.h"

struct src_live_share_thread {
	pid_t tid;
	uint64_t run_ns, wait_ns;   /* readings at the last tick */
	double drun, demand;        /* this tick: ns ran, ns wanted */
};

struct src_live_share {
	struct src_live_share_thread *t;
	size_t n;
	uint64_t clock_ns;          /* process CPU clock at the last tick */
	double dclock;              /* its advance over this tick */
	double t_last;              /* time of the last reading, s */
	double dt;                  /* the last tick's length, s */
	int cpus;                   /* CPUs the process may run on */
	bool have;
};

struct src_live_share *src_live_share_new(void)
{
	struct src_live_share *s = calloc(1, sizeof(*s));

	if (s == NULL)
		abort();
	return s;
}

void src_live_share_free(struct src_live_share *s)
{
	if (s == NULL)
		return;
	free(s->t);
	free(s);
}

static const struct src_live_share_thread *find(const struct src_live_share *s,
						pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	return NULL;
}

/* One alive thread's reading against its previous one (from birth, or
 * from the reader's base when it was there before hunch looked). */
static struct src_live_share_thread delta(const struct src_live_share *s,
					  const struct eng_taskcpu_thread *t,
					  double dt)
{
	const struct src_live_share_thread *p = find(s, t->tid);
	uint64_t r0 = p ? p->run_ns : t->base_ns;
	uint64_t w0 = p ? p->wait_ns : t->wait_base_ns;
	struct src_live_share_thread d = { .tid = t->tid,
					   .run_ns = t->run_ns,
					   .wait_ns = t->wait_ns };
	double most = dt * 1e9;

	if (r0 > t->run_ns || w0 > t->wait_ns)
		r0 = w0 = 0;
	d.drun = (double)(t->run_ns - r0);
	d.demand = d.drun + (double)(t->wait_ns - w0);
	if (d.demand > most)
		d.demand = most;
	return d;
}

void src_live_share_read(struct src_live_share *s, const struct eng_taskcpu *tc,
			 double now, int cpus)
{
	size_t nt = tc != NULL ? eng_taskcpu_nthreads(tc) : 0;
	struct src_live_share_thread *t = calloc(nt + 1, sizeof(*t));
	double dt = s->have ? now - s->t_last : 0;
	uint64_t clock = tc != NULL ? eng_taskcpu_process_ns(tc) : 0;
	size_t n = 0;

	if (t == NULL)
		abort();
	for (size_t i = 0; i < nt; i++) {
		const struct eng_taskcpu_thread *th =
			eng_taskcpu_thread_at(tc, i);

		if (th->alive)
			t[n++] = delta(s, th, dt);
	}
	free(s->t);
	s->t = t;
	s->n = n;
	s->dclock = s->have && clock >= s->clock_ns ?
		    (double)(clock - s->clock_ns) : 0;
	s->clock_ns = clock;
	s->dt = dt;
	s->cpus = cpus > 0 ? cpus : 1;
	s->t_last = now;
	s->have = true;
}

/* A demand over the last tick, at most the process's CPUs' worth. */
static double at_most_cpus(const struct src_live_share *s, double demand)
{
	double most = s->dt * 1e9 * s->cpus;

	return most > 0 && demand > most ? most : demand;
}

static double ratio(double used, double wanted)
{
	if (used <= 0 || wanted <= 0)
		return 1;
	return used >= wanted ? 1 : used / wanted;
}

double src_live_share_share(const struct src_live_share *s, pid_t tid)
{
	double demand = 0;

	if (tid != 0) {
		const struct src_live_share_thread *t = find(s, tid);

		return t ? ratio(t->drun, t->demand) : 1;
	}
	for (size_t i = 0; i < s->n; i++)
		demand += s->t[i].demand;
	return ratio(s->dclock, at_most_cpus(s, demand));
}

/* The threads' /Process paths, as the stack samples name them. */
static char **thread_paths(const struct src_live_share *s, pid_t pid)
{
	char **p = calloc(s->n + 1, sizeof(*p));

	if (p == NULL)
		abort();
	for (size_t i = 0; i < s->n; i++)
		if (asprintf(&p[i], "/Process/%d/%d", (int)pid,
			     (int)s->t[i].tid) < 0)
			abort();
	return p;
}

bool src_live_share_code(const struct src_live_share *s,
			 const struct src_live_hint *h, const char *code,
			 pid_t pid, double *after, double *share)
{
	char **paths = thread_paths(s, pid);
	size_t *n_in = calloc(s->n + 1, sizeof(size_t));
	size_t *n_code = calloc(s->n + 1, sizeof(size_t));
	size_t all = 0, in = 0;
	double demand = 0, latest;

	if (n_in == NULL || n_code == NULL)
		abort();
	src_live_hint_cpu_counts_threads(h, code, (const char *const *)paths,
					 s->n, *after, n_in, n_code, &latest);
	for (size_t i = 0; i < s->n; i++) {
		all += n_in[i];
		in += n_code[i];
		if (n_code[i])
			demand += s->t[i].demand * (double)n_code[i] /
				  (double)n_in[i];
		free(paths[i]);
	}
	free(paths);
	free(n_in);
	free(n_code);
	if (all == 0)
		return false;
	*after = latest;
	*share = ratio(s->dclock * (double)in / (double)all,
		       at_most_cpus(s, demand));
	return true;
}

/* Threads in the last second's samples that hold `code`. */
static size_t code_threads(const struct src_live_share *s,
			   const struct src_live_hint *h, const char *code,
			   pid_t pid)
{
	char **paths = thread_paths(s, pid);
	size_t *n_in = calloc(s->n + 1, sizeof(size_t));
	size_t *n_code = calloc(s->n + 1, sizeof(size_t));
	size_t k = 0;
	double latest;

	if (n_in == NULL || n_code == NULL)
		abort();
	src_live_hint_cpu_counts_threads(h, code, (const char *const *)paths,
					 s->n, s->t_last - 1.0, n_in, n_code,
					 &latest);
	for (size_t i = 0; i < s->n; i++) {
		k += n_code[i] > 0;
		free(paths[i]);
	}
	free(paths);
	free(n_in);
	free(n_code);
	return k;
}

double src_live_share_most(const struct src_live_share *s,
			   const struct src_live_hint *h, const char *code,
			   pid_t pid, pid_t tid)
{
	size_t k = tid != 0 ? 1 : code != NULL && h != NULL ?
		   code_threads(s, h, code, pid) : s->n;

	if (k == 0)
		k = 1;
	return (double)(k < (size_t)s->cpus ? k : (size_t)s->cpus);
}
