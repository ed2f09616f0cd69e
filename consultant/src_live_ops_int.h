/*
 * src_live_ops_int.h - the live source's metric operations' state,
 * shared by src_live_ops.c (instances: enable, disable, sample, tick)
 * and src_live_kernel.c (the kernel's measures: CPU time and run-queue
 * wait from /proc, CPU estimated from stack samples, cpu_share).
 * Internal to the live source.
 */
#ifndef SRC_LIVE_OPS_INT_H
#define SRC_LIVE_OPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "pc_source.h"
#include "src_live_metric.h"
#include "src_live_ops.h"

struct src_live_ops_inst {
	pc_src_handle h;
	uint64_t req;
	struct eng_minst *mi;    /* NULL: internal (active_*) */
	bool internal, live, replied;
	bool processes;          /* internal: active_processes */
	bool share;              /* internal: cpu_share */
	bool share_own;          /* cpu_share: the focus's own (sls), on
				  * ktid, or the process with ktid 0 */
	bool share_kid;          /* ... of a followed child (kpid) or its
				  * thread: the job's, bounded */
	bool kernel;             /* the kernel's CPU time (eng_taskcpu) */
	bool wait;               /* kernel: run-queue wait, not CPU time */
	bool cpu;                /* CPU time: at most `cpus` per second */
	pid_t ktid;              /* kernel: the thread, 0 the process */
	pid_t kpid;              /* kernel: the process, 0 all of them */
	bool sampled;            /* kernel time × share of stack samples */
	bool job;                /* on /Process: children's slots added */
	pid_t kidpid, kidtid;    /* read in this child's own segment (of
				  * that thread, kidtid 0: all of them) */
	struct src_live_setwall *setwall; /* a wall timer estimated from
				  * children's samples, or NULL */
	char *code, *within;     /* sampled: the /Code path, the thread's */
	struct src_live_hint *hints;       /* sampled: the process's stack samples */
	struct src_live_jobsampled *jobsampled; /* sampled on the whole job
				  * of several processes: each one's CPU and
				  * samples (src_live_jobsampled.h), or NULL */
	double hw_after;         /* sampled: the last sample time counted */
	int status;
	char *reason;
	int64_t prev;            /* value at prev_t (ns for timers) */
	double prev_t;
	double scale;            /* value units per reported unit */
	char *fkey;              /* its focus, the paths joined by '\n' */
	double rate, rate_t;     /* the value pushed last, and when */
	int stale;               /* ticks in a row its timer kept an older
				  * reading (eng_metric_stale) */
	bool rebase;             /* the reading at enabling was stale: the
				  * first fresh one is the start */
	bool stepped;            /* enabled in a step: its values start
				  * at the step's end (src_live_ops_step) */
};

/* src_live_ops_step.c: an enabled instance's values start now (at
 * once, or at the end of the step it was enabled in). */
void src_live_ops_step_start(struct src_live_ops *o,
			     struct src_live_ops_inst *in);

/* A thread's schedstat at the last cpu_share reading. */
struct task_sched {
	int tid;
	uint64_t run_ns, wait_ns;
};

struct seen_obj {
	char *path;              /* "/SyncObject/Mutex/x", "/Files/dev/null" */
	uint64_t key;
};

struct src_live_ops {
	struct eng_proc *proc;
	struct eng_sampler *smp;
	struct eng_inst *in;
	struct eng_metric *m;
	bool stepping;           /* in a step of the search: enables and
				  * disables batched (src_live_ops_step) */
	size_t nstepped;         /* instances enabled in this step */
	const struct pc_config *cfg;
	uint64_t t0_ns;
	double period, last_tick;
	pc_src_handle next_h;
	struct src_live_ops_inst *inst;
	size_t ninst, capinst;
	struct pc_src_sample *smpq;
	size_t nsmp, capsmp;
	struct seen_obj *seen;
	size_t nseen;
	struct task_sched *sched;    /* cpu_share's previous readings */
	struct src_live_share *shares;          /* cpu_share per focus */
	size_t nsched;
	struct eng_taskcpu *tc;      /* opened at the first kernel read */
	struct src_live_hint *hints;           /* stack samples, or NULL */
	double tc_t;                 /* src_live_ops_now() of its last refresh */
	int cpus;                    /* CPUs the target may run on */
	struct src_live_kids *kids;            /* the children followed, or NULL */
	double kids_slowdown;        /* the largest child's, last tick */
	struct src_live_jobcpu *job;  /* the whole job's CPU, once children */
	char *kernel_only;           /* no instrumentation (m, in, smp NULL):
				      * why, for every refused enable */
};

/* Read the kernel's counters now, opening the reader the first time. */
int src_live_kernel_refresh(struct src_live_ops *o, struct hunch_err *err);
/* Read the whole job's CPU now, once the program has children (after
 * src_live_kids_refresh). */
void src_live_kernel_job_refresh(struct src_live_ops *o);
/* The kernel's CPU ns (or run-queue wait ns) of an instance's process
 * or thread; false when the thread is not (or no longer) listed. */
bool src_live_kernel_value(const struct src_live_ops *o,
			   const struct src_live_ops_inst *in, int64_t *ns);
/* A kernel CPU (or run-queue wait) instance; 0, its status in in. */
int src_live_kernel_enable(struct src_live_ops *o, struct src_live_ops_inst *in,
			   const struct src_live_metric_kernel *k, bool wait);
/* A sampled CPU instance of focus f. */
int src_live_kernel_enable_sampled(struct src_live_ops *o,
				   struct src_live_ops_inst *in,
				   const struct pc_src_focus *f,
				   const struct src_live_metric_kernel *k);
/* cpu_share's instances: their focus, and the first one's start. */
void src_live_kernel_share_focus(struct src_live_ops *o,
				 struct src_live_ops_inst *in,
				 const struct pc_src_focus *f);
void src_live_kernel_share_start(struct src_live_ops *o,
				 struct src_live_ops_inst *in);
/* Whether a cpu_share instance reads its focus's own share. */
bool src_live_kernel_own_share(const struct src_live_ops *o,
			       const struct src_live_ops_inst *in);
/* Scale a sampled instance's CPU rate by its samples' share; false:
 * wait for samples (CPU time used, none drained yet). */
bool src_live_kernel_sampled_share(struct src_live_ops_inst *in, bool used,
				   double *value);
/* An own cpu_share instance's value (src_live_kernel.c). */
bool src_live_kernel_focus_share(struct src_live_ops *o,
				 struct src_live_ops_inst *in, double now,
				 double *v);
/* cpu_share over every process of the job, since the last call. */
double src_live_kernel_cpu_share(struct src_live_ops *o);

#endif
