/*
 * src_live_metric.h - the seam between the consultant's metric
 * definitions (pc_config.h: MDL in JSON) and the engine's metric compiler
 * (eng_metric.h).  The live source translates a metric and a focus with
 * src_live_metric_translate and hands the result to eng_metric_enable.
 *
 * Rules of the translation (hypotheses/README.md):
 * - foreach lists expand from `lists`; `$procedures`, `$start_functions`
 *   and `$focus` become the engine's built-in function sets.
 * - For each hierarchy the focus constrains (its path is not the root),
 *   the metric must list a constraint of that hierarchy whose `match`
 *   has as many components as the path; otherwise the focus cannot be
 *   measured for this metric, and the reason says so.
 * - A constraint with clauses and no `replace` becomes a nesting-counter
 *   constraint over the focus' functions; one without clauses (thread)
 *   is the sampler's thread view; a `replace` constraint replaces the
 *   base clause when its variable type is the metric's.  When the types
 *   differ (sync_object's wall timer on the counter sync_ops) the base
 *   clause cannot be replaced, so the object is compared instead in
 *   every constrained clause of the metric's own base (`$argN` taken
 *   from the constraint's `$argN == $resource.key` predicate).
 * - A source file (/Code/<module>/<file>) with no constraint of its own
 *   takes the module's (`$focus` = the file's functions).
 * - Two levels restrict without a constraint of their own: /Process/<pid>
 *   is the whole program (hunch follows one process), /SyncObject/<class>
 *   keeps the metric's functions of that class (pthread_mutex_* for
 *   Mutex, ...) when the metric accepts a /SyncObject constraint.
 * - A metric with "kernel": "runqueue" (the threads' run-queue wait)
 *   is only read from the kernel, on the program, process or a thread.
 * - A metric with "kernel": "cpu" is read from the kernel where the
 *   focus leaves /Code, /SyncObject and /Files unconstrained
 *   (src_live_metric_kernel_focus); src_live_metric_translate still compiles its base clause
 *   for the foci that need instrumentation.
 * - `internal` metrics (active_threads, observed_cost) are hunch's own
 *   and have nothing to compile: refused with that reason.
 */
#ifndef SRC_LIVE_METRIC_H
#define SRC_LIVE_METRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"
#include "eng_metric.h"
#include "pc_config.h"
#include "pc_source.h"

/* What the live source resolved about a focus beyond its paths: the
 * thread's tid, and an object's key (a sync object's address, a file's
 * descriptor) from what it discovered. */
struct src_live_metric_resolved {
	pid_t tid;              /* 0: take it from /Process/<pid>/<tid:...> */
	bool has_key;
	uint64_t key;
};

struct src_live_metric;

/* A metric with "kernel": "cpu" on a focus whose /Code, /SyncObject and
 * /Files are all the root is the kernel's CPU time of the whole process
 * (/Process, /Process/<pid>) or of one thread (/Process/<pid>/<tid>...),
 * not instrumentation.  Where /Code (or an object) constrains the focus,
 * the base clause and the constraints apply as for any metric. */
struct src_live_metric_kernel {
	bool use;               /* false: instrument (src_live_metric_translate) */
	/* /Code constrains the focus and the rest is this process or one
	 * of its threads: the CPU time in that code can also be estimated
	 * from stack samples (the live source's fallback) */
	bool can_sample;
	pid_t tid;              /* 0: every thread of the process */
	pid_t pid;              /* the focus's process, 0: every process */
	bool job;               /* the focus is every process of the job
				 * (pid and tid 0, not a child's): the one
				 * answer to "the whole job?" that sampling
				 * and the per-process parts both use */
	bool child;             /* pid is a child followed (src_live_kids.h)
				 * rather than the program hunch traces */
	/* a wall timer in a child that has stack samples: estimated from
	 * them when it times a set of functions (src_live_setwall.h) */
	bool sample_wall;
	/* a wall timer in the program itself, on no object: it may be
	 * estimated from the program's stack samples the same way, when
	 * instrumenting its functions would cost too much (1-byte writes
	 * at 3 million a second) */
	bool can_sample_wall;
};

/* Decides for `md` on `f` in process `pid` (or one of its children
 * `kids`, which only the kernel's measures reach: any other metric, or
 * one that /Code or an object constrains, is refused there with why).  Returns 0 (k->use says
 * which way), or < 0 with the reason when the focus names another
 * process or is not /Process/<pid>/<tid>[:<start function>].  A
 * "kernel": "runqueue" metric is always read from the kernel: a focus
 * that /Code, /SyncObject or /Files constrains is refused with why. */
struct src_live_kids;
int src_live_metric_kernel_focus(const struct pc_metric_def *md,
				 const struct pc_src_focus *f, pid_t pid,
				 const struct src_live_kids *kids,
				 struct src_live_metric_kernel *k,
				 struct hunch_err *err);

int src_live_metric_translate(const struct pc_config *cfg,
			      const struct pc_metric_def *md,
			      const struct pc_src_focus *f,
			      const struct src_live_metric_resolved *r,
			      struct src_live_metric **out,
			      struct hunch_err *err);
const struct eng_mdef *src_live_metric_def(const struct src_live_metric *s);
const struct eng_mfocus *src_live_metric_focus(const struct src_live_metric *s);
void src_live_metric_free(struct src_live_metric *s);

#endif
