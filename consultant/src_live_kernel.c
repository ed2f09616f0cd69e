/*
 * src_live_kernel.c - the live source's kernel-side measures (see
 * src_live_ops_int.h).
 *
 * Kernel CPU: a metric with "kernel": "cpu" on a focus that leaves /Code
 * (and the objects) unconstrained is the kernel's count of the threads'
 * CPU time (engine/eng_taskcpu.h): the process CPU clock for /Process
 * and /Process/<pid>, one thread's schedstat for a thread.  Nothing is
 * inserted in the target, so it is predicted to cost nothing and needs
 * no symbols.  A "kernel": "runqueue" metric reads the same reader's
 * run-queue waits (schedstat's second field): the process's summed over
 * its threads, or one thread's; so does cpu_share.
 *
 * Sampled CPU (when src_live_ops.c decides for it): the kernel's CPU
 * time of the process (or of the focus thread) times the share of its
 * CPU samples that had the focus code on their stack, interval by
 * interval; on the whole job of several processes, each process's
 * (src_live_jobsampled.h).
 */
#include "src_live_ops_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_proc.h"
#include "eng_taskcpu.h"
#include "src_live_hint.h"
#include "src_live_jobcpu.h"
#include "src_live_jobsampled.h"
#include "src_live_kids.h"
#include "src_live_share.h"

static const struct task_sched *prev_sched(const struct src_live_ops *o,
					   int tid);

/* Read the kernel's counters now, opening the reader the first time. */
int src_live_kernel_refresh(struct src_live_ops *o, struct hunch_err *err)
{
	int rc;

	if (o->tc == NULL)
		rc = eng_taskcpu_open(eng_proc_pid(o->proc), &o->tc, err);
	else
		rc = eng_taskcpu_refresh(o->tc);
	if (rc == 0)
		o->tc_t = src_live_ops_now(o);
	else if (err != NULL && err->msg[0] == '\0')
		hunch_err_set(err, rc, "cannot read the CPU time of process %d "
			   "from /proc: %s", eng_proc_pid(o->proc),
			   strerror(-rc));
	return rc;
}


void src_live_kernel_job_refresh(struct src_live_ops *o)
{
	if (o->kids == NULL || src_live_kids_count(o->kids) == 0)
		return;
	if (o->job == NULL)
		o->job = src_live_jobcpu_new(eng_proc_pid(o->proc));
	src_live_jobcpu_read(o->job, o->kids);
}

/* The kernel's CPU ns (or run-queue wait ns) of an instance's process
 * or thread; false when the thread is not (or no longer) listed.  The
 * whole job's CPU, once the program has children, counts the children
 * that ended between two readings too (src_live_jobcpu.c). */
bool src_live_kernel_value(const struct src_live_ops *o,
			   const struct src_live_ops_inst *in, int64_t *ns)
{
	const struct eng_taskcpu_thread *t;
	int64_t kids = 0;

	if (in->kpid != 0 && in->kpid != eng_proc_pid(o->proc))
		return src_live_kids_value(o->kids, in->kpid, in->ktid,
					   in->wait, ns);
	if (in->kpid == 0 && in->ktid == 0 && !in->wait && o->job != NULL) {
		*ns = (int64_t)src_live_jobcpu_ns(o->job);
		return true;
	}
	if (o->tc == NULL)   /* the program ended first: its children's */
		return in->kpid == 0 && in->ktid == 0 &&
		       src_live_kids_value(o->kids, 0, 0, in->wait, ns);
	if (in->ktid == 0) {
		if (in->kpid == 0)  /* every process: the children's too */
			src_live_kids_value(o->kids, 0, 0, in->wait, &kids);
		*ns = kids + (int64_t)(in->wait ?
			eng_taskcpu_process_wait_ns(o->tc) :
			eng_taskcpu_process_ns(o->tc));
		return true;
	}
	t = eng_taskcpu_thread(o->tc, in->ktid);
	if (t == NULL)
		return false;
	*ns = (int64_t)(in->wait ? t->wait_ns : t->run_ns);
	return true;
}


/* A kernel CPU (or run-queue wait) instance: the thread must be there;
 * its value starts from a reading taken now. */
int src_live_kernel_enable(struct src_live_ops *o, struct src_live_ops_inst *in,
			   const struct src_live_metric_kernel *k, bool wait)
{
	pid_t tid = k->tid;
	struct hunch_err err = { 0 };
	const struct eng_taskcpu_thread *t;
	char msg[200];

	in->kernel = true;
	in->wait = wait;
	in->cpu = !wait;
	in->ktid = tid;
	in->kpid = k->pid;
	in->scale = 1e9;
	in->status = src_live_kernel_refresh(o, &err);
	src_live_kids_refresh(o->kids);
	src_live_kernel_job_refresh(o);
	if (in->status < 0 &&
	    (k->child || (!k->pid && !tid && src_live_kids_live(o->kids))))
		in->status = 0;   /* the program ended: its children are read */
	if (in->status == 0 &&
	    (k->child ? !src_live_kernel_value(o, in, &in->prev) :
	     tid != 0 && ((t = eng_taskcpu_thread(o->tc, tid)) == NULL ||
			  !t->alive))) {
		snprintf(msg, sizeof(msg), "thread %d of process %d has "
			 "exited (or never was): no CPU time to read",
			 (int)tid, k->pid ? (int)k->pid : eng_proc_pid(o->proc));
		in->status = -ESRCH;
		in->reason = strdup(msg);
		return 0;
	}
	if (in->status < 0) {
		in->reason = strdup(err.msg[0] ? err.msg : "refused");
		return 0;
	}
	src_live_kernel_value(o, in, &in->prev);
	in->h = ++o->next_h;
	in->live = true;
	in->prev_t = o->tc_t;
	return 0;
}


/* A sampled CPU instance: a kernel one whose value is scaled by the
 * share of the samples that hold the focus code. */
int src_live_kernel_enable_sampled(struct src_live_ops *o, struct src_live_ops_inst *in,
				   const struct pc_src_focus *f,
				   const struct src_live_metric_kernel *k)
{
	struct src_live_metric_kernel own = *k;   /* the program's code: its CPU alone */
	pid_t tid = k->tid;

	if (!k->child)
		own.pid = eng_proc_pid(o->proc);
	src_live_kernel_enable(o, in, &own, false);
	if (in->status < 0)
		return 0;
	in->sampled = true;
	in->hints = k->child ? src_live_kids_hint(o->kids, k->pid) : o->hints;
	/* the whole job, children followed: every process's code */
	if (k->job && o->kids != NULL)
		in->jobsampled = src_live_jobsampled_new(o, in->prev_t);
	in->code = strdup(f->path[0]);
	in->within = tid ? strdup(f->path[1]) : NULL;
	in->hw_after = in->prev_t;
	if (in->code == NULL || (tid && in->within == NULL))
		abort();
	return 0;
}


/* The first cpu_share instance starts from the threads' readings now,
 * so its first sample covers the same interval as the CPU time it
 * divides (from the enable to the tick), not each thread's whole life:
 * over a whole life the share is not this interval's, and CPUbound's
 * first value was off by a third on a loaded machine.  Later instances
 * share the readings (one cpu_share per tick for all). */
void src_live_kernel_share_start(struct src_live_ops *o,
				 struct src_live_ops_inst *in)
{
	for (size_t i = 0; i < o->ninst; i++)
		if (&o->inst[i] != in && o->inst[i].live && o->inst[i].share)
			return;
	if (src_live_kernel_refresh(o, NULL) < 0)
		return;
	(void)src_live_kernel_cpu_share(o);
	src_live_share_read(o->shares, o->tc, o->tc_t, o->cpus);
	in->prev_t = o->tc_t;
}


/* cpu_share on a process of the program or one of its threads is that
 * focus's own (src_live_share.h); on a followed child, or when the
 * focus cannot be read, it is the job's (a child's bounded so that its
 * CPU demand is at most what it can want). */
void src_live_kernel_share_focus(struct src_live_ops *o,
				 struct src_live_ops_inst *in,
				 const struct pc_src_focus *f)
{
	struct pc_metric_def md = *pc_metric_def_find(o->cfg, "cpu_share");
	struct src_live_metric_kernel k;

	md.kernel = PC_KERNEL_CPU;
	if (src_live_metric_kernel_focus(&md, &(struct pc_src_focus){
		    .path = { NULL, f->path[1], NULL, NULL } },
		    eng_proc_pid(o->proc), o->kids, &k, NULL) < 0)
		return;
	in->share_own = true;
	in->ktid = k.tid;
	in->kpid = k.pid;
	if (k.child) {
		in->share_kid = true;
		return;
	}
	if (k.tid == 0 && o->hints != NULL && f->path[0] != NULL &&
	    strcmp(f->path[0], "/Code") != 0) {
		in->code = strdup(f->path[0]);   /* weighted by its samples */
		in->hints = o->hints;
		in->hw_after = o->tc_t;
		if (in->code == NULL)
			abort();
	}
}

/* The CPU instance on a share's focus that pushed a value this tick
 * (`now`): NULL when none did. */
static const struct src_live_ops_inst *cpu_of(const struct src_live_ops *o,
					      const struct src_live_ops_inst *sh,
					      double now, bool *waits)
{
	*waits = false;
	for (size_t i = 0; i < o->ninst; i++) {
		const struct src_live_ops_inst *in = &o->inst[i];

		if (!in->live || !in->cpu || in->wait || in->fkey == NULL ||
		    strcmp(in->fkey, sh->fkey) != 0)
			continue;
		if (in->rate_t == now)
			return in;
		*waits = true;
	}
	return NULL;
}

/* An own cpu_share instance's value: a function's share over the
 * threads it ran in (src_live_share_code), its thread's or process's
 * otherwise.  The CPU it divides, on the same focus, was sampled first
 * this tick: the share is raised so that CPU ÷ share is at most the
 * CPUs the focus can want (src_live_share_most), whatever the two
 * counters' timing (a thread's CPU read late by a tick, then twice in
 * one, read 1.97 CPUs).  False: the value waits for the next tick, as
 * that CPU does (no sample yet, or it waits itself). */
bool src_live_kernel_focus_share(struct src_live_ops *o,
				 struct src_live_ops_inst *in, double now,
				 double *v)
{
	pid_t pid = in->kpid ? in->kpid : eng_proc_pid(o->proc);
	const struct src_live_ops_inst *cpu;
	bool waits;
	double most;

	if (in->share_kid) {
		/* a followed child's: the job's (*v already), only bounded
		 * below.  Its own run-queue share would make each MPI rank
		 * spinning in MPI_Barrier want a whole CPU, as it is always
		 * runnable, and hide that rank 0 computes three times as
		 * long; the job's keeps the ranks' CPU in proportion.  But
		 * divided by the job's alone, one worker thread read 1.08
		 * CPUs: the bound below keeps it at one. */
	} else if (in->code != NULL) {
		if (!src_live_share_code(o->shares, in->hints, in->code, pid,
					 &in->hw_after, v))
			return false;
	} else {
		*v = src_live_share_share(o->shares, in->ktid);
	}
	cpu = cpu_of(o, in, now, &waits);
	if (cpu == NULL)
		return !waits;
	most = !in->share_kid ? src_live_share_most(o->shares, in->hints,
						    in->code, pid, in->ktid) :
	       in->ktid != 0 ? 1 : o->cpus;
	if (cpu->rate > *v * most)
		*v = cpu->rate / most;
	return true;
}


/* Scale a sampled instance's CPU rate by the share of its samples that
 * hold its code.  CPU time used with no sample drained yet (the hint
 * sampler drains every 0.1 s) waits for the next tick, which then covers
 * both intervals; samples are counted by their own time, each once. */
bool src_live_kernel_sampled_share(struct src_live_ops_inst *in, bool used,
				   double *value)
{
	size_t nw, nb;
	double latest;

	src_live_hint_cpu_counts(in->hints, in->code, in->within, in->hw_after,
				 &nw, &nb, &latest);
	if (nw == 0 && used)
		return false;
	*value = nw ? *value * (double)nb / (double)nw : 0;
	in->hw_after = latest;
	return true;
}


/* A focus's own share, unless it is the whole job and children are
 * followed (their threads are not in the program's reader). */
bool src_live_kernel_own_share(const struct src_live_ops *o,
			       const struct src_live_ops_inst *in)
{
	return in->share_own && (in->kpid != 0 || in->ktid != 0 ||
				 src_live_kids_live(o->kids) == 0);
}


/* active_processes: always 1 (the job: values of /Process are summed
 * over every process followed); what the default hypotheses divide by,
 * as Paradyn's did (hypotheses/README.md says why).
 *
 * active_threads: the threads running or runnable now, at least one.
 * Threads blocked in a lock, a read or a sleep are not active: CPUbound
 * divides CPU time by this, so a program whose one busy thread is
 * surrounded by waiting ones is CPU bound in that thread (its waits are
 * the sync and I/O hypotheses' business).  The floor of one keeps a
 * program that only waits from dividing by zero, so its waits still
 * count as a whole thread's time. */
static const struct task_sched *prev_sched(const struct src_live_ops *o,
					   int tid)
{
	for (size_t i = 0; i < o->nsched; i++)
		if (o->sched[i].tid == tid)
			return &o->sched[i];
	return NULL;
}


/* cpu_share: of the time the program's threads were runnable since the
 * last reading, the fraction they actually ran: run time ÷ (run time +
 * run-queue wait), summed over the threads (schedstat, through the
 * kernel CPU reader refreshed this tick).  1 on an idle machine; 0.25
 * when a busy thread gets a quarter of a CPU because four tasks share
 * it.  CPUbound divides CPU time by it, so the value is the CPU time
 * the code used or waited for, and a hot loop reads the same on a
 * loaded machine as on a quiet one (hypotheses/README.md).  A thread's
 * first reading counts from its birth; threads that exited between
 * readings are not counted.  No CPU time at all reads 1. */
double src_live_kernel_cpu_share(struct src_live_ops *o)
{
	size_t nt = o->tc != NULL ? eng_taskcpu_nthreads(o->tc) : 0;
	struct task_sched *now = calloc(nt + 1, sizeof(*now));
	uint64_t run = 0, wait = 0;
	size_t n = 0;

	if (now == NULL)
		abort();
	for (size_t i = 0; i < nt; i++) {
		const struct eng_taskcpu_thread *t =
			eng_taskcpu_thread_at(o->tc, i);
		const struct task_sched *p, born = { 0 };

		if (!t->alive)
			continue;
		p = prev_sched(o, t->tid);
		if (p == NULL || p->run_ns > t->run_ns ||
		    p->wait_ns > t->wait_ns)
			p = &born;
		run += t->run_ns - p->run_ns;
		wait += t->wait_ns - p->wait_ns;
		now[n++] = (struct task_sched){ .tid = t->tid,
			.run_ns = t->run_ns, .wait_ns = t->wait_ns };
	}
	free(o->sched);
	o->sched = now;
	o->nsched = n;
	src_live_kids_share_delta(o->kids, &run, &wait);  /* the children's too */
	return run == 0 ? 1 : (double)run / (double)(run + wait);
}

