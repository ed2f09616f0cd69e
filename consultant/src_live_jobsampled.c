/*
 * src_live_jobsampled.c - a sampled CPU instance on code over the whole
 * job (see src_live_jobsampled.h).
 *
 * One part per process with a sampler: the program's (the metric
 * side's hints) and each followed child's (src_live_kids_hint, made once
 * the child was seen busy), and one per busy child whose sampler is to
 * come (src_live_kids_sampler_soon), whose CPU waits for it.  A part
 * remembers its process's CPU reading and the time of the last sample
 * it counted; a child that becomes busy after the enable joins from its
 * reading then.
 */
#include "src_live_jobsampled.h"
#include "src_live_ops_int.h"

#include <stdlib.h>

#include "eng_proc.h"
#include "eng_taskcpu.h"
#include "src_live_hint.h"
#include "src_live_kids.h"

/* CPU time from which a process's lack of samples holds the interval:
 * five sample periods at the slowest rate a sampler runs (10 ms), so
 * that a process that used it and shows no sample has samples not yet
 * drained (one in 150 times by chance).  Less than that, with no sample,
 * is carried into the next interval, which counts it by its samples
 * then: a pool's parent, 12 ms of CPU in a second while it waits, held
 * the job's CPU in its workers' code for five sample periods, a second
 * and more of a 6 s program. */
#define JOBSAMPLED_HOLD_NS 50000000

/* Sample periods a part's CPU time may wait for its first samples
 * before it is counted as not in the code (a sampler that stopped
 * draining). */
#define JOBSAMPLED_WAIT_TICKS 5

struct part {
	pid_t pid;          /* 0: the program itself */
	int64_t prev;       /* CPU ns at the last sample */
	double after;       /* the last sample time counted */
	int waited;         /* ticks waited for samples */
};

struct src_live_jobsampled {
	struct part *p;
	size_t n;
};

/* The part's sampler (NULL: a child's that has not come yet) and CPU
 * ns now; false when there is no reading. */
static bool part_read(struct src_live_ops *o, const struct part *p,
		      struct src_live_hint **h, int64_t *ns)
{
	if (p->pid == 0) {
		*h = o->hints;
		if (o->tc == NULL)
			return false;
		*ns = (int64_t)eng_taskcpu_process_ns(o->tc);
		return *h != NULL;
	}
	*h = src_live_kids_hint(o->kids, p->pid);
	return src_live_kids_value(o->kids, p->pid, 0, false, ns);
}

static struct part *part_add(struct src_live_jobsampled *j, pid_t pid)
{
	struct part *p = realloc(j->p, (j->n + 1) * sizeof(*p));

	if (p == NULL)
		abort();
	j->p = p;
	p = &j->p[j->n++];
	*p = (struct part){ .pid = pid };
	return p;
}

/* Children with a sampler, or busy and soon to have one, that have no
 * part yet: a part each, from now. */
static void join_new(struct src_live_ops *o, struct src_live_jobsampled *j,
		     double now)
{
	struct src_live_hint *h;

	for (size_t i = 0; i < src_live_kids_count(o->kids); i++) {
		bool have = false, ended;
		pid_t pid = src_live_kids_pid(o->kids, i, &ended);
		struct part *p;
		int64_t ns;

		for (size_t k = 0; k < j->n && !have; k++)
			have = j->p[k].pid == pid;
		if (have || ended ||
		    (src_live_kids_hint(o->kids, pid) == NULL &&
		     !src_live_kids_sampler_soon(o->kids, pid)))
			continue;
		p = part_add(j, pid);
		p->after = now;
		if (part_read(o, p, &h, &ns))
			p->prev = ns;
	}
}

struct src_live_jobsampled *src_live_jobsampled_new(struct src_live_ops *o,
						    double now)
{
	struct src_live_jobsampled *j = calloc(1, sizeof(*j));
	struct src_live_hint *h;
	struct part *p;
	int64_t ns;

	if (j == NULL)
		abort();
	p = part_add(j, 0);
	p->after = now;
	if (part_read(o, p, &h, &ns))
		p->prev = ns;
	join_new(o, j, now);
	return j;
}

void src_live_jobsampled_free(struct src_live_jobsampled *j)
{
	if (j == NULL)
		return;
	free(j->p);
	free(j);
}

/* A part's reading now: its CPU ns in the code since its last sample
 * (*in_code), and what it advances to once counted; false when it must
 * wait for samples.  A part with a little CPU time and no sample is
 * left where it was (carry): it adds nothing now and its time counts in
 * a later interval, with the samples of both. */
struct reading {
	bool have;          /* a sampler and a CPU reading, counted now */
	int64_t ns;
	double latest, in_code;
};

static bool part_sample(struct src_live_ops *o,
			const struct src_live_ops_inst *in,
			const struct part *p, struct reading *r)
{
	struct src_live_hint *h;
	size_t nw = 0, nb = 0;
	int64_t d;

	*r = (struct reading){ .latest = p->after };
	if (!part_read(o, p, &h, &r->ns))
		return true;   /* ended, or no reading: adds nothing */
	d = r->ns - p->prev;
	if (h == NULL && !src_live_kids_sampler_soon(o->kids, p->pid)) {
		r->have = true;   /* judged idle, or no sampler can be made */
		return true;
	}
	if (h != NULL)
		src_live_hint_cpu_counts(h, in->code, NULL, p->after, &nw,
					 &nb, &r->latest);
	if (nw == 0 && p->waited < JOBSAMPLED_WAIT_TICKS) {
		if (d >= JOBSAMPLED_HOLD_NS)
			return false;
		return true;   /* carried */
	}
	r->have = true;
	r->in_code = nw ? (double)d * (double)nb / (double)nw : 0;
	return true;
}

bool src_live_jobsampled_sample(struct src_live_ops *o,
				struct src_live_ops_inst *in, double now,
				double dt, double *value)
{
	struct src_live_jobsampled *j = in->jobsampled;
	struct reading *r = calloc(j->n + 1, sizeof(*r));
	double sum = 0, most = (double)o->cpus * dt * 1e9;
	bool ready = true;
	size_t n = j->n;

	if (r == NULL)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!part_sample(o, in, &j->p[i], &r[i])) {
			j->p[i].waited++;
			ready = false;
		}
	/* a part that waits holds every part: the interval is one */
	for (size_t i = 0; ready && i < n; i++) {
		if (r[i].have) {
			j->p[i].prev = r[i].ns;
			j->p[i].after = r[i].latest;
		}
		j->p[i].waited = 0;
		sum += r[i].in_code;
	}
	free(r);
	if (!ready)
		return false;
	join_new(o, j, now);
	*value = (sum < most ? sum : most) / 1e9 / dt;
	return true;
}
