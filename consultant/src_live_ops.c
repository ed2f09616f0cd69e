/*
 * src_live_ops.c - the metric operations of the live source (see
 * src_live_ops.h).
 *
 * Object keys: a focus on /SyncObject/<class>/<name> or /Files/<name>
 * needs the object's address or descriptor, which only discovery knows;
 * every object seen is remembered by its resource path for that.
 *
 * Kernel CPU and run-queue wait (src_live_kernel.c): a metric with
 * "kernel" on a focus that leaves /Code and the objects unconstrained
 * is read from /proc, nothing inserted in the target.
 *
 * Children (src_live_kids.h): /Process sums the program's and every
 * followed child's counters (cpu_share too); /Process/<child> and its
 * threads read the child's; code in a child is always sampled, from the
 * child's own stack samples; anything else there is refused.  Code on
 * /Process is the program's own (instrumented, or its CPU time alone
 * times its samples' share).
 *
 * CPU used is never more than the CPUs the program may run on: a CPU
 * time (kernel or CPU timer) over an interval is at most that many CPUs
 * (one for a thread), the CPUs of the target's affinity mask.  The
 * kernel's counters lag a running thread by up to a scheduler tick, so
 * an interval can read a tick more than the CPUs ran and the next one a
 * tick less; the excess is carried into the next interval, not dropped,
 * so the values still add up to the kernel's total.
 *
 * Sampled CPU: the same metric on a focus that /Code constrains is
 * instrumented, unless that cannot be done within the cost limit (its
 * predicted slowdown is over half of costLimit, or the code cannot be
 * instrumented at all: an interpreter's eval loop whose entry needs a
 * trap, at ~100 µs a call while hunch traces it), or the code runs
 * mostly between two activations of an outer function (sum() between
 * two of python's eval loop: a timer on sum would count the loop's
 * bytecode again, the samples fold it into the loop).  Then it is estimated
 * from the hint sampler's stack samples: the kernel's CPU time of the
 * process (or of the focus thread) times the share of its CPU samples
 * that had the focus code on their stack, interval by interval.  The
 * reply says so (`sampled`), the journal keeps it and the report labels
 * the finding: an estimate from ~20 samples a tick per busy thread, not
 * a count.
 *
 * Kernel only (`src_live_ops_new_kernel`): over an image hunch cannot instrument
 * (a static program the live source followed through exec) there is no
 * sampler, instrumentation manager or compiler; kernel CPU, sampled CPU
 * and the internal metrics work as above, every other enable is refused
 * with the reason given.
 */
#include "src_live_ops_int.h"
#include "vec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "eng_clock.h"
#include "eng_inst.h"
#include "eng_metric.h"
#include "eng_proc.h"
#include "eng_sampler.h"
#include "eng_taskcpu.h"
#include "src_live_hint.h"
#include "src_live_jobcpu.h"
#include "src_live_jobsampled.h"
#include "src_live_kids.h"
#include "src_live_kidseg.h"
#include "src_live_metric.h"
#include "src_live_pyname.h"
#include "src_live_rank.h"
#include "src_live_setwall.h"
#include "src_live_share.h"

/* The sampler's rate until the consultant asks for another. */
#define DEFAULT_PERIOD_S 0.2
/* Ticks an instance waits for a timer whose thread is inside its
 * update (unread) before its older value is taken. */
#define SRC_LIVE_OPS_STALE_TICKS 5

int src_live_ops_new(struct eng_proc *p, struct eng_shm *shm,
		     const struct pc_config *cfg, uint64_t t0_ns,
		     struct src_live_ops **out, struct hunch_err *err)
{
	struct src_live_ops *o = calloc(1, sizeof(*o));
	int rc;

	if (o == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	o->proc = p;
	o->cfg = cfg;
	o->t0_ns = t0_ns;
	o->period = DEFAULT_PERIOD_S;
	o->cpus = src_live_kids_cpus_available(eng_proc_pid(p));
	rc = eng_sampler_create(shm, &o->smp, err);
	if (rc == 0) {
		eng_sampler_set_pid(o->smp, eng_proc_pid(p));
		eng_sampler_set_rate(o->smp, 1.0 / o->period, NULL);
		rc = eng_inst_create(p, shm, &o->in, err);
	}
	if (rc == 0)
		rc = eng_metric_create(p, o->in, o->smp, NULL, &o->m, err);
	if (rc < 0) {
		src_live_ops_free(o, !eng_proc_ended(p));
		return rc;
	}
	eng_sampler_tick(o->smp, NULL);
	o->last_tick = src_live_ops_now(o);
	src_live_ops_note_start(o, "main");
	*out = o;
	return 0;
}

/* Only the kernel's measures: the kernel CPU metrics, sampled CPU
 * and the internal ones; every other enable is refused with `why`. */
int src_live_ops_new_kernel(struct eng_proc *p, const struct pc_config *cfg,
			    uint64_t t0_ns, const char *why,
			    struct src_live_ops **out)
{
	struct src_live_ops *o = calloc(1, sizeof(*o));

	if (o == NULL || (o->kernel_only = strdup(why)) == NULL)
		abort();
	o->proc = p;
	o->cfg = cfg;
	o->t0_ns = t0_ns;
	o->period = DEFAULT_PERIOD_S;
	o->last_tick = src_live_ops_now(o);
	*out = o;
	return 0;
}

/* Handles are never reused, across metric sides too. */
pc_src_handle src_live_ops_last_handle(const struct src_live_ops *o)
{
	return o->next_h;
}

void src_live_ops_handles_after(struct src_live_ops *o, pc_src_handle h)
{
	if (o->next_h < h)
		o->next_h = h;
}

/* A start function runs once per thread: left at the predictor's
 * default rate (1000 calls/s), a timer on main and the thread start
 * routines looked like a 10% slowdown and CPUbound was never tested. */
void src_live_ops_note_start(struct src_live_ops *o, const char *function)
{
	if (function != NULL && o->m != NULL)
		eng_metric_set_call_rate(o->m, NULL, function, 1.0);
}

void src_live_ops_free(struct src_live_ops *o, bool target_alive)
{
	if (o == NULL)
		return;
	/* Destroying the compiler removes its code (restores the bytes). */
	(void)target_alive;
	eng_metric_destroy(o->m);
	eng_inst_destroy(o->in);
	eng_sampler_destroy(o->smp);
	for (size_t i = 0; i < o->ninst; i++) {
		free(o->inst[i].reason);
		free(o->inst[i].code);
		free(o->inst[i].within);
		free(o->inst[i].fkey);
		src_live_setwall_free(o->inst[i].setwall);
		src_live_jobsampled_free(o->inst[i].jobsampled);
	}
	for (size_t i = 0; i < o->nseen; i++)
		free(o->seen[i].path);
	free(o->inst);
	free(o->smpq);
	free(o->seen);
	free(o->sched);
	src_live_share_free(o->shares);
	src_live_jobcpu_free(o->job);
	eng_taskcpu_close(o->tc);
	free(o->kernel_only);
	free(o);
}

double src_live_ops_now(const struct src_live_ops *o)
{
	return (double)(clock_mono_ns() - o->t0_ns) / 1e9;
}

/* The key of the object a focus names, from what discovery saw. */
static void resolve(const struct src_live_ops *o, const struct pc_src_focus *f,
		    struct src_live_metric_resolved *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < o->nseen; i++) {
		if (strcmp(o->seen[i].path, f->path[2]) == 0 ||
		    strcmp(o->seen[i].path, f->path[3]) == 0) {
			r->has_key = true;
			r->key = o->seen[i].key;
		}
	}
}

static int translate(struct src_live_ops *o, const char *metric,
		     const struct pc_src_focus *f, struct src_live_metric **out,
		     struct hunch_err *err)
{
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);
	struct src_live_metric_resolved r;

	if (md == NULL)
		return hunch_err_set(err, -ENOENT, "no metric %s", metric);
	resolve(o, f, &r);
	return src_live_metric_translate(o->cfg, md, f, &r, out, err);
}

static int kernel_focus(const struct src_live_ops *o, const char *metric,
			const struct pc_src_focus *f,
			struct src_live_metric_kernel *k, struct hunch_err *err)
{
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);

	memset(k, 0, sizeof(*k));
	if (md == NULL)
		return 0;
	return src_live_metric_kernel_focus(md, f, eng_proc_pid(o->proc),
					    o->kids, k, err);
}

static bool is_internal(const struct src_live_ops *o, const char *metric)
{
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);

	return md != NULL && md->type == PC_BASE_INTERNAL;
}

/* The instrumentation's predicted slowdown, PC_SRC_MEASURING while
 * call rates are being measured, or -2 when it cannot be compiled. */
static double predict_inst(struct src_live_ops *o, const char *metric,
			   const struct pc_src_focus *f)
{
	struct eng_metric_cost c;
	struct src_live_metric *s;
	double cost = 0;

	if (o->m == NULL || translate(o, metric, f, &s, NULL) < 0)
		return -2;
	if (eng_metric_predict(o->m, src_live_metric_def(s),
			       src_live_metric_focus(s), &c, NULL) == 0)
		cost = c.probing ? PC_SRC_MEASURING : c.slowdown;
	src_live_metric_free(s);
	return cost;
}

/* Code on the whole job while a followed child has a sampler, or is
 * busy and will have one within half a second: an
 * inclusive timer inserted now never starts in a child already inside
 * the function (no catchup runs in children), so a pool's workers,
 * forked inside `main`, read 0 there and the job's CPU was never
 * refined into its code; the samples count every process
 * (src_live_jobsampled.h). */
static bool job_of_kids(const struct src_live_ops *o,
			const struct src_live_metric_kernel *k)
{
	size_t i = 0;
	pid_t pid;
	bool ended;

	if (!k->job)
		return false;
	while (src_live_kids_sampled(o->kids, &i, &pid, &ended) != NULL)
		if (!ended)
			return true;
	for (i = 0; i < src_live_kids_count(o->kids); i++)
		if (src_live_kids_sampler_soon(o->kids,
				src_live_kids_pid(o->kids, i, &ended)))
			return true;
	return false;
}

/* Sampled instead of instrumented (the header comment says when)? */
static bool use_samples(struct src_live_ops *o,
			const struct src_live_metric_kernel *k,
			double inst_cost)
{
	struct src_live_hint *h =
		k->child ? src_live_kids_hint(o->kids, k->pid) : o->hints;

	/* Half: a prediction rests on call rates probed for 20 ms of the
	 * target's CPU, which read 1.5-2.5 times low while hunch was busy
	 * enabling other experiments; sqlite3's CPU timers on its hottest
	 * functions, predicted at 4-5% of a 5% limit, were observed at
	 * 7.4-7.8% before they were shed.  Samples cost nothing. */
	return k->can_sample && h != NULL && (k->child || inst_cost == -2 ||
	       inst_cost > pc_tunables_get(o->cfg, "costLimit") / 2 ||
	       job_of_kids(o, k));
}

/* A wall timer over a set of functions in the program (I/O calls, lock
 * waits) estimated from its stack samples instead (src_live_setwall.h):
 * when its instrumentation is predicted over half the cost limit, as
 * for CPU above.  1-byte writes at 3 million a second take a timer
 * pair each: 12% of the program, predicted; the samples cost nothing.
 * Not where the timer cannot be compiled at all (-2) or the program
 * can only be measured by the kernel (an exec'd static or 32-bit
 * program): the hypothesis is refused there, with the reason.  Waits
 * only (I/O, locks): time in malloc is not a wait, and its cost control
 * is what e2e_cost_storm checks. */
static bool use_wall_samples(struct src_live_ops *o,
			     const struct src_live_metric_kernel *k,
			     const char *metric, double inst_cost)
{
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);

	return k->can_sample_wall && o->hints != NULL &&
	       o->kernel_only == NULL && inst_cost != PC_SRC_MEASURING &&
	       src_live_setwall_applies(o->cfg, md) &&
	       pc_metric_def_wait_kind(md) != PC_WAIT_NONE &&
	       inst_cost > pc_tunables_get(o->cfg, "costLimit") / 2;
}

/* Code that runs mostly between two activations of an outer function
 * (SRC_LIVE_OPS_REENTERED of the window's CPU samples that hold it, at least
 * SRC_LIVE_OPS_REENTERED_MIN), as sum() and the generator do between two
 * activations of python's eval loop: an inclusive timer there counts
 * the outer function's time again (the loop's bytecode, run below
 * sum), so it reads the whole program where the samples, folded, give
 * it its own part; sampled, it is measured as the outer function is
 * (src_live_hintwin.h, src_live_hintwin_add_stack). */
#define SRC_LIVE_OPS_REENTERED 0.25
#define SRC_LIVE_OPS_REENTERED_MIN 3
static bool reentered(struct src_live_ops *o,
		      const struct src_live_metric_kernel *k, const char *code)
{
	struct src_live_hint *h =
		k->child ? src_live_kids_hint(o->kids, k->pid) : o->hints;
	size_t raw, gone;

	if (!k->can_sample || h == NULL || code == NULL)
		return false;
	src_live_hint_cpu_reentered(h, code, &raw, &gone);
	return gone >= SRC_LIVE_OPS_REENTERED_MIN &&
	       (double)gone >= SRC_LIVE_OPS_REENTERED * (double)raw;
}

double src_live_ops_predict(struct src_live_ops *o, const char *metric,
			    const struct pc_src_focus *f)
{
	struct src_live_metric_kernel k;
	double cost;

	if (is_internal(o, metric))
		return 0;  /* computed by hunch from what it reads anyway */
	if (kernel_focus(o, metric, f, &k, NULL) < 0 || k.use || k.child ||
	    reentered(o, &k, f->path[0]) ||
	    (k.can_sample && src_live_pyname_is_code(f->path[0])))
		return 0;  /* the kernel counts it (or samples); or refused */
	cost = predict_inst(o, metric, f);
	if (cost == PC_SRC_MEASURING || use_samples(o, &k, cost) ||
	    use_wall_samples(o, &k, metric, cost))
		return cost == PC_SRC_MEASURING ? cost : 0;
	return cost < 0 ? 0 : cost;   /* < 0: enable refuses, says why */
}

static struct src_live_ops_inst *new_inst(struct src_live_ops *o, uint64_t req)
{
	struct src_live_ops_inst *in;

	VEC_RESERVE(o->inst, o->capinst, o->ninst + 1);
	in = &o->inst[o->ninst++];
	memset(in, 0, sizeof(*in));
	in->req = req;
	in->prev_t = src_live_ops_now(o);
	return in;
}

/* Timers count ns; the consultant wants seconds per second. */
static double scale_of(const struct pc_metric_def *md)
{
	return md->type == PC_BASE_WALL_TIMER ||
	       md->type == PC_BASE_CPU_TIMER ? 1e9 : 1.0;
}

int src_live_ops_enable(struct src_live_ops *o, const char *metric,
			const struct pc_src_focus *f, uint64_t req)
{
	struct src_live_ops_inst *in = new_inst(o, req);
	struct hunch_err err = { 0 };
	struct src_live_metric *s = NULL;

	if (asprintf(&in->fkey, "%s\n%s\n%s\n%s", f->path[0], f->path[1],
		     f->path[2], f->path[3]) < 0)
		abort();   /* a cpu_share finds its CPU by it */
	in->internal = is_internal(o, metric);
	in->processes = strcmp(metric, "active_processes") == 0;
	in->share = strcmp(metric, "cpu_share") == 0;
	if (in->internal && strcmp(metric, "active_threads") != 0 &&
	    !in->processes && !in->share) {
		in->status = -ENOTSUP;
		in->reason = strdup("internal metric not measured by the "
				    "live source");
		return 0;
	}
	if (!in->internal) {
		struct src_live_metric_kernel k;
		double cost;

		in->status = kernel_focus(o, metric, f, &k, &err);
		if (k.child && !k.use &&
		    src_live_kidseg_enable(o, in, metric, f)) {
			in->status = 0;   /* from what the child inherited */
			return 0;
		}
		if (in->status == 0 && k.use)
			return src_live_kernel_enable(o, in, &k,
				pc_metric_def_find(o->cfg, metric)->kernel ==
				PC_KERNEL_RUNQUEUE);
		/* predicted once: it compiles the metric */
		cost = in->status == 0 && !k.sample_wall ?
		       predict_inst(o, metric, f) : 0;
		if (in->status == 0 && (k.sample_wall ||
		    use_wall_samples(o, &k, metric, cost)))
			return src_live_setwall_enable(o, in, f, metric,
						       k.pid, k.tid);
		if (in->status == 0 && k.can_sample &&
		    (reentered(o, &k, f->path[0]) ||
		     src_live_pyname_is_code(f->path[0]) ||   /* no code to patch */
		     use_samples(o, &k, k.child ? 0 : cost)))
			return src_live_kernel_enable_sampled(o, in, f, &k);
	}
	if (in->status < 0) {
		in->reason = strdup(err.msg[0] ? err.msg : "refused");
		return 0;
	}
	if (!in->internal && o->kernel_only != NULL) {
		in->status = -ENOTSUP;
		in->reason = strdup(o->kernel_only);
		return 0;
	}
	if (!in->internal && src_live_setwall_launcher(o, metric, f))
		return src_live_setwall_enable(o, in, f, metric, 0, 0);
	if (!in->internal &&
	    src_live_rank_refuse_launcher(o->proc,
					  pc_metric_def_find(o->cfg, metric),
					  &in->reason)) {
		in->status = -ENOTSUP;   /* its 0 would not be the ranks' */
		return 0;
	}
	if (!in->internal) {
		in->status = translate(o, metric, f, &s, &err);
		if (in->status == 0)
			in->status =
				eng_metric_enable(o->m, src_live_metric_def(s),
						  src_live_metric_focus(s),
						  &in->mi, &err);
		src_live_metric_free(s);
		if (in->status < 0) {
			in->reason = strdup(err.msg[0] ? err.msg : "refused");
			return 0;
		}
		in->scale = scale_of(pc_metric_def_find(o->cfg, metric));
		in->cpu = pc_metric_def_find(o->cfg, metric)->type ==
			  PC_BASE_CPU_TIMER;
		in->job = f->path[1] != NULL &&
			  strcmp(f->path[1], "/Process") == 0;
		in->stepped = o->stepping;
		o->nstepped += in->stepped;
		if (!in->stepped)
			src_live_ops_step_start(o, in);
	}
	in->h = ++o->next_h;
	in->live = true;
	in->prev_t = src_live_ops_now(o);
	if (in->share) {
		if (o->shares == NULL)
			o->shares = src_live_share_new();
		src_live_kernel_share_focus(o, in, f);
		src_live_kernel_share_start(o, in);
	}
	return 0;
}

void src_live_ops_disable(struct src_live_ops *o, pc_src_handle h)
{
	for (size_t i = 0; i < o->ninst; i++) {
		struct src_live_ops_inst *in = &o->inst[i];

		if (in->h != h || !in->live)
			continue;
		in->live = false;
		src_live_jobsampled_free(in->jobsampled);
		in->jobsampled = NULL;
		src_live_kidseg_forget(o, in->mi);
		if (in->mi != NULL && !eng_proc_ended(o->proc))
			eng_metric_disable(o->m, in->mi, NULL);
		in->mi = NULL;
	}
}

void src_live_ops_unanswered(const struct src_live_ops *o, uint64_t **reqs,
			     size_t *n)
{
	for (size_t i = 0; i < o->ninst; i++) {
		if (o->inst[i].replied)
			continue;
		*reqs = realloc(*reqs, (*n + 1) * sizeof(**reqs));
		if (*reqs == NULL)
			abort();
		(*reqs)[(*n)++] = o->inst[i].req;
	}
}

int src_live_ops_poll_replies(struct src_live_ops *o, pc_reply_fn fn, void *arg)
{
	int n = 0;

	for (size_t i = 0; i < o->ninst; i++) {
		struct src_live_ops_inst *in = &o->inst[i];
		struct pc_src_reply r = {
			.req = in->req, .status = in->status,
			.handle = in->h, .reason = in->reason,
			.sampled = in->sampled,
		};

		if (in->replied)
			continue;
		in->replied = true;
		fn(arg, &r);
		n++;
	}
	return n;
}

int src_live_ops_poll_samples(struct src_live_ops *o, pc_sample_fn fn,
			      void *arg)
{
	size_t n = o->nsmp;

	for (size_t i = 0; i < n; i++)
		fn(arg, &o->smpq[i]);
	o->nsmp = 0;
	return (int)n;
}

/* The observed cost: the largest slowdown of any process of the job,
 * the program's (its sampler's figure) or a followed child's, each
 * figured at the last tick. */
double src_live_ops_observed(const struct src_live_ops *o)
{
	double prog = o->smp ? eng_sampler_stats(o->smp)->obs_slowdown : 0;

	return prog > o->kids_slowdown ? prog : o->kids_slowdown;
}

void src_live_ops_set_period(struct src_live_ops *o, double seconds)
{
	if (seconds < 0.001)
		seconds = 0.001;
	if (o->smp == NULL ||
	    eng_sampler_set_rate(o->smp, 1.0 / seconds, NULL) == 0)
		o->period = seconds;
}

void src_live_ops_set_hints(struct src_live_ops *o, struct src_live_hint *h)
{
	o->hints = h;
}

void src_live_ops_set_psampler(struct src_live_ops *o,
			       struct eng_perfsample *ps)
{
	if (o->in != NULL)
		eng_inst_catchup_set_psampler(o->in, ps);
}

static int sample_due_ms(const struct src_live_ops *o)
{
	double left = o->last_tick + o->period - src_live_ops_now(o);

	return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

int src_live_ops_due_ms(const struct src_live_ops *o)
{
	int probe = o->m ? eng_metric_probe_due_ms(o->m) : -1;
	int ms = sample_due_ms(o);

	return probe >= 0 && probe < ms ? probe : ms;
}

static void push_sample(struct src_live_ops *o, const struct pc_src_sample *s)
{
	VEC_RESERVE(o->smpq, o->capsmp, o->nsmp + 1);
	o->smpq[o->nsmp++] = *s;
}

/* What an instance counted since its last sample, advancing its
 * reading: for CPU time at most the CPUs available over the interval
 * (one for a thread), the rest carried into the next interval (the
 * header comment says why), but never more than one interval's worth:
 * a count that keeps running ahead of the CPUs is not time to repay. */
static int64_t counted(const struct src_live_ops *o,
		       struct src_live_ops_inst *in, int64_t v, double dt)
{
	int64_t d = v - in->prev, most;

	if (in->cpu) {
		most = (int64_t)((in->kernel && in->ktid ? 1 : o->cpus) * dt *
				 in->scale);
		if (d > 2 * most)
			in->prev = v - 2 * most;
		if (d > most)
			d = most;
	}
	in->prev += d;
	return d;
}

/* Whether an instrumented instance's value is not known this tick: a
 * thread was descheduled inside an update of its timer, so the sampler
 * kept that thread's reading before (eng_metric_stale).  Its interval
 * then waits for the next tick, which counts the time of both: a rate of
 * 0 then twice the real one made one thread block 1.9 s per second on
 * the demo's writer and in a lock worker's wait.  A thread stopped there
 * for good (SIGSTOP) leaves the old value after SRC_LIVE_OPS_STALE_TICKS. */
static bool unread(const struct src_live_ops *o, struct src_live_ops_inst *in)
{
	if (in->kidpid == 0 && in->mi != NULL && eng_metric_stale(o->m, in->mi) &&
	    in->stale < SRC_LIVE_OPS_STALE_TICKS) {
		in->stale++;
		return true;
	}
	in->stale = 0;
	return false;
}

static void sample_inst(struct src_live_ops *o, struct src_live_ops_inst *in,
			double now, double nthreads, double share)
{
	struct pc_src_sample s = {
		.handle = in->h, .t0 = in->prev_t, .t1 = now,
	};
	double dt = now - in->prev_t;
	int64_t v, d, prev;

	if (dt < 1e-6)
		return;
	if (in->internal) {
		s.value = in->processes ? 1 : !in->share ? nthreads : share;
		if (in->share && src_live_kernel_own_share(o, in) &&
		    !src_live_kernel_focus_share(o, in, now, &s.value))
			return;   /* as the sampled CPU it divides */
	} else if (in->setwall != NULL) {
		if (!src_live_setwall_sample(o, in, dt, &s.value)) {
			in->prev_t = now;   /* unknown, not 0 */
			return;
		}
	} else if (in->jobsampled != NULL) {
		if (!src_live_jobsampled_sample(o, in, now, dt, &s.value))
			return;
	} else if (in->kernel) {
		/* an exited thread adds nothing after its last reading */
		if (!src_live_kernel_value(o, in, &v))
			v = in->prev;
		prev = in->prev;
		d = counted(o, in, v, dt);
		s.value = (double)d / in->scale / dt;
		if (in->sampled &&
		    !src_live_kernel_sampled_share(in, v != prev, &s.value)) {
			in->prev = prev;
			return;
		}
	} else {
		if (unread(o, in))
			return;
		if (src_live_kidseg_value(o, in, &v) < 0)
			return;
		if (in->rebase) {
			in->rebase = false;
			in->prev = v;
			in->prev_t = now;
			return;
		}
		s.value = (double)counted(o, in, v, dt) / in->scale / dt;
	}
	in->prev_t = now;
	in->rate = s.value;
	in->rate_t = now;
	push_sample(o, &s);
}

struct seen_ctx {
	struct src_live_ops *o;
	pc_disc_fn fn;
	void *arg;
};

/* Remember the object's key by path (resolve), and report it. */
static void on_seen(void *arg, const struct eng_seen *s)
{
	struct seen_ctx *c = arg;
	struct src_live_ops *o = c->o;
	bool file = s->cls == ENG_SEEN_FILE;
	const char *name = file && s->name[0] == '/' ? s->name + 1 : s->name;
	struct pc_discovery d = {
		.kind = file ? PC_DISC_FILE : PC_DISC_SYNCOBJ,
		.sync_class = file ? NULL : s->class_name,
		.name = s->name, .addr = s->value,
		.pid = eng_proc_pid(o->proc),
	};
	char path[600];

	if (file)
		snprintf(path, sizeof(path), "/Files/%s", name);
	else
		snprintf(path, sizeof(path), "/SyncObject/%s/%s",
			 s->class_name, name);
	o->seen = realloc(o->seen, (o->nseen + 1) * sizeof(*o->seen));
	if (o->seen == NULL)
		abort();
	o->seen[o->nseen].path = strdup(path);
	o->seen[o->nseen++].key = s->value;
	c->fn(c->arg, &d);
}

void src_live_ops_tick(struct src_live_ops *o, pc_disc_fn fn, void *arg)
{
	struct seen_ctx c = { .o = o, .fn = fn, .arg = arg };
	double now, nthreads, share;
	bool want_share = false, want_kernel = false;

	if (!eng_proc_ended(o->proc) && o->m != NULL)
		eng_metric_probe_poll(o->m);   /* call-rate probes end on time */
	if (sample_due_ms(o) > 0 ||
	    (eng_proc_ended(o->proc) && src_live_kids_live(o->kids) == 0))
		return;
	if (o->smp != NULL)
		eng_sampler_tick(o->smp, NULL);
	if (o->kids != NULL)
		o->kids_slowdown = src_live_kidseg_slowdown(
			src_live_kids_segs(o->kids));
	now = src_live_ops_now(o);
	o->last_tick = now;
	o->cpus = src_live_kids_cpus_available(eng_proc_pid(o->proc));
	/* /proc is read only when an instance wants the thread count */
	nthreads = 0;
	for (size_t i = 0; i < o->ninst; i++) {
		const struct src_live_ops_inst *in = &o->inst[i];

		want_kernel |= in->live && in->kernel;
		if (!in->live || !in->internal || in->processes)
			continue;
		if (in->share)
			want_share = true;
		else if (nthreads == 0)
			nthreads = src_live_kids_active_threads(
				eng_proc_pid(o->proc));
	}
	if (want_share || want_kernel)
		/* a failure keeps the last values */
		src_live_kernel_refresh(o, NULL);
	if (want_kernel || want_share) {
		src_live_kids_refresh(o->kids);
		src_live_kernel_job_refresh(o);
	}
	share = want_share ? src_live_kernel_cpu_share(o) : 1;
	if (want_share)
		src_live_share_read(o->shares, o->tc, o->tc_t, o->cpus);
	/* shares last: a focus's share is bounded by its CPU's value */
	for (int shares = 0; shares < 2; shares++)
		for (size_t i = 0; i < o->ninst; i++)
			if (o->inst[i].live && o->inst[i].share == shares)
				sample_inst(o, &o->inst[i], now, nthreads,
					    share);
	if (o->m != NULL)
		eng_metric_seen_poll(o->m, on_seen, &c);
}

void src_live_ops_set_kids(struct src_live_ops *o, struct src_live_kids *kids)
{
	o->kids = kids;
}

struct eng_inst *src_live_ops_engine_inst(const struct src_live_ops *o)
{
	return o->in;
}

size_t src_live_ops_ninstances(const struct src_live_ops *o)
{
	size_t n = 0;

	for (size_t i = 0; i < o->ninst; i++)
		n += o->inst[i].live && !o->inst[i].internal &&
		     !o->inst[i].kernel;
	return n;
}
