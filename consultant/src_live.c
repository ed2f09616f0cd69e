/*
 * src_live.c - the live source (see src_live.h).
 *
 * Discoveries are queued as owned copies and handed out by
 * poll_resources, so the engine can report at any time (inside a pump)
 * and the consultant consumes at its own pace.
 *
 * Threads are named in src_live_threads.c, exec is followed in
 * src_live_exec.c.
 */
#include "src_live_int.h"
#include "clock_mono.h"
#include "src_live_kids.h"
#include "src_live_rank.h"
#include "src_live_kidimg.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_inst.h"
#include "eng_proc.h"
#include "eng_shm.h"
#include "eng_image.h"
#include "eng_unwind.h"
#include "eng_points.h"
#include "src_live_cg.h"
#include "src_live_debug.h"
#include "src_live_hint.h"
#include "src_live_samples.h"
#include "src_live_setwall.h"
#include "src_live_pyname.h"
#include "src_live_ops.h"

static struct src_live *live_of(const struct pc_source *s)
{
	return s->impl;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void src_live_enqueue(struct src_live *l, const struct pc_discovery *d)
{
	struct queued *q;

	if (l->nqueue == l->capqueue) {
		l->capqueue = l->capqueue ? l->capqueue * 2 : 1024;
		l->queue = realloc(l->queue, l->capqueue * sizeof(*l->queue));
		if (l->queue == NULL)
			abort();
	}
	q = &l->queue[l->nqueue++];
	q->d = *d;
	q->strs[0] = dup_or_null(d->module);
	q->strs[1] = dup_or_null(d->srcfile);
	q->strs[2] = dup_or_null(d->function ? d->function : d->name);
	q->d.module = q->strs[0];
	q->d.srcfile = q->strs[1];
	if (d->function != NULL)
		q->d.function = q->strs[2];
	else
		q->d.name = q->strs[2];
	if (l->hint != NULL)
		src_live_hint_note(l->hint, d);  /* futex waits are matched to objects */
}

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* Queue the discovery (or retirement) of one function of a module. */
static void report_func(struct src_live *l, const struct live_module *m,
			struct eng_image *img, const struct eng_func *f,
			bool retired)
{
	struct pc_discovery d = {
		.kind = PC_DISC_FUNCTION,
		.retired = retired,
		.module = eng_image_name(img),
		.srcfile = basename_of(eng_sym_lazy_source_file(img, f)),
		.function = eng_sym_lazy_display_name(img, f),
		.addr = m->bias + eng_image_link_base(img) + f->addr,
	};

	src_live_enqueue(l, &d);
}

/* Queue one discovery per function of a module. */
static void report_module(struct src_live *l, struct live_module *m)
{
	m->reported = true;
	for (size_t i = 0; m->img != NULL && i < eng_image_nfuncs(m->img); i++)
		report_func(l, m, m->img, eng_image_func(m->img, i), false);
}

struct upgrade_arg {
	struct src_live *l;
	struct live_module *m;
};

static void report_renamed(void *arg, struct eng_image *img,
			   const struct eng_func *f, bool retired)
{
	struct upgrade_arg *a = arg;

	report_func(a->l, a->m, img, f, retired);
}

/* Debug files fetched from debuginfod since the modules were opened:
 * their functions gain names (src_live_debug.h). */
static void upgrade_modules(struct src_live *l)
{
	if (!src_live_debug_changed(&l->dbg_gen))
		return;
	for (size_t i = 0; i < l->nmods; i++) {
		struct live_module *m = &l->mods[i];
		struct upgrade_arg a = { l, m };
		struct eng_image *img = src_live_debug_upgrade(m->path,
			m->img, m->reported ? report_renamed : NULL, &a);

		if (img == NULL)
			continue;
		l->old_imgs = realloc(l->old_imgs,
				      (l->nold + 1) * sizeof(*l->old_imgs));
		if (l->old_imgs == NULL)
			abort();
		l->old_imgs[l->nold++] = m->img;
		m->img = img;
	}
}

int src_live_add_module(struct src_live *l, const char *path, uint64_t bias,
			struct hunch_err *err)
{
	struct live_module *m;
	int rc;

	l->mods = realloc(l->mods, (l->nmods + 1) * sizeof(*l->mods));
	if (l->mods == NULL)
		abort();
	m = &l->mods[l->nmods++];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->bias = bias;
	rc = eng_image_open(path, &m->img, err);
	if (rc < 0)
		m->img = NULL;  /* keep the module; its functions stay unknown */
	return rc;
}

/* For the hint sampler: the image mapped at a runtime address. */
struct eng_image *src_live_image_at(void *arg, uint64_t addr,
				    uint64_t *base)
{
	struct src_live *l = arg;

	for (size_t i = 0; i < l->nmods; i++) {
		struct live_module *m = &l->mods[i];

		if (m->img == NULL)
			continue;
		*base = m->bias + eng_image_link_base(m->img);
		if (addr >= *base && eng_image_func_at(m->img, addr - *base))
			return m->img;
		if (addr >= *base && eng_image_data_at(m->img, addr - *base))
			return m->img;
	}
	return NULL;
}

static void load_modules(struct src_live *l)
{
	size_t n = eng_solib_nmodules(l->proc);

	for (size_t i = 0; i < n; i++) {
		const struct eng_module *m = eng_solib_module(l->proc, i);

		src_live_add_module(l, m->path, m->bias, NULL);
	}
}

static int poll_resources(struct pc_source *s, pc_disc_fn fn, void *arg)
{
	struct src_live *l = live_of(s);
	size_t n;

	upgrade_modules(l);
	for (size_t i = 0; i < l->nmods; i++)
		if (!l->mods[i].reported)
			report_module(l, &l->mods[i]);
	n = l->nqueue;
	for (size_t i = 0; i < n; i++) {
		fn(arg, &l->queue[i].d);
		for (int k = 0; k < 3; k++)
			free(l->queue[i].strs[k]);
	}
	l->nqueue = 0;
	return (int)n;
}

static void live_close(struct pc_source *s)
{
	struct src_live *l = live_of(s);

	src_live_ops_free(l->slo, l->proc != NULL && !l->status.ended &&
					  !l->parent_ended);
	src_live_hint_free(l->hint);
	src_live_samples_free(l->tally);
	src_live_pyname_free(l->pynames);
	if (l->proc != NULL) {
		if (!l->status.ended)
			eng_detach(l->proc, NULL);
		eng_proc_free(l->proc);
	}
	eng_shm_destroy(l->shm);
	for (size_t i = 0; i < l->nmods; i++) {
		eng_image_close(l->mods[i].img);
		free(l->mods[i].path);
	}
	for (size_t i = 0; i < l->nold; i++)
		eng_image_close(l->old_imgs[i]);
	free(l->old_imgs);
	free(l->rtlib);
	free(l->kernel_why);
	free(l->dropped);
	free(l->execq);
	src_live_kids_free(l->kids);
	src_live_rank_free(l->ranks);
	src_live_kidimg_free(l->kidimgs);
	for (size_t i = 0; i < l->nqueue; i++)
		for (int k = 0; k < 3; k++)
			free(l->queue[i].strs[k]);
	for (size_t i = 0; i < l->nstarts; i++)
		free(l->starts[i]);
	free(l->starts);
	eng_points_cache_free(l->pcache);
	free(l->mods);
	free(l->queue);
	free(l->pending);
	free(l);
}

/* ---- the metric operations: src_live_ops.c once metrics are on ---- */

static double live_now(struct pc_source *s)
{
	struct src_live *l = live_of(s);

	return l->slo ? src_live_ops_now(l->slo)
		      : (double)(clock_mono_ms() * 1000000u - l->t0_ns) / 1e9;
}

static double live_predict(struct pc_source *s, const char *metric,
			   const struct pc_src_focus *f)
{
	struct src_live *l = live_of(s);

	return l->slo ? src_live_ops_predict(l->slo, metric, f) : 0;
}

/* Without the metric side every enable is answered with a refusal by
 * poll_replies: there is no request queue to keep, so refuse now. */
static int live_enable(struct pc_source *s, const char *metric,
		       const struct pc_src_focus *f, uint64_t req)
{
	struct src_live *l = live_of(s);

	if (l->slo == NULL || l->status.ended)
		return -ENOTCONN;
	return src_live_ops_enable(l->slo, metric, f, req);
}

static void live_disable(struct pc_source *s, pc_src_handle h)
{
	struct src_live *l = live_of(s);

	if (l->slo != NULL)
		src_live_ops_disable(l->slo, h);
}

/* Every request is answered: those an exec dropped with the old image's
 * metric side as refused (the consultant would otherwise wait for them
 * for ever, and share them with the new search's experiments). */
static int live_poll_replies(struct pc_source *s, pc_reply_fn fn, void *arg)
{
	struct src_live *l = live_of(s);
	int n = (int)l->ndropped;

	for (size_t i = 0; i < l->ndropped; i++) {
		struct pc_src_reply r = {
			.req = l->dropped[i], .status = -ECANCELED,
			.reason = "the program replaced its image (exec) "
				  "before this was enabled",
		};

		fn(arg, &r);
	}
	l->ndropped = 0;
	return n + (l->slo ? src_live_ops_poll_replies(l->slo, fn, arg) : 0);
}

static int live_poll_samples(struct pc_source *s, pc_sample_fn fn, void *arg)
{
	struct src_live *l = live_of(s);

	return l->slo ? src_live_ops_poll_samples(l->slo, fn, arg) : 0;
}

static double live_observed(struct pc_source *s)
{
	struct src_live *l = live_of(s);

	return l->slo ? src_live_ops_observed(l->slo) : 0;
}

static void live_held(struct pc_source *s, long *holds, double *seconds)
{
	struct src_live *l = live_of(s);
	uint64_t n = 0, ns = 0;

	if (l->proc != NULL)
		eng_proc_held(l->proc, &n, &ns);
	*holds = (long)n;
	*seconds = (double)ns / 1e9;
}

static void live_step(struct pc_source *s, bool begins)
{
	struct src_live *l = live_of(s);

	if (l->slo != NULL)
		src_live_ops_step(l->slo, begins);
}

static void live_set_period(struct pc_source *s, double seconds)
{
	struct src_live *l = live_of(s);

	if (l->slo != NULL)
		src_live_ops_set_period(l->slo, seconds);
}

/* The end of the target, once, as the consultant's target event. */
static int live_poll_events(struct pc_source *s, pc_event_fn fn, void *arg)
{
	struct src_live *l = live_of(s);
	struct pc_src_event e = { .t = live_now(s) };
	int n = src_live_exec_events(l, fn, arg);

	if (!l->status.ended || l->told_end || l->proc == NULL)
		return n;
	l->told_end = true;
	if (l->status.killed) {
		e.ev = PC_TARGET_KILLED;
		e.code = l->status.signo;
	} else if (eng_proc_ended(l->proc)) {
		e.ev = PC_TARGET_EXITED;
		e.code = l->status.exit_code;
	} else {
		e.ev = PC_TARGET_DETACHED;
	}
	fn(arg, &e);
	return n + 1;
}

/* The static call graph and the sampled edges (src_live_cg.c); with
 * path NULL, the start functions of the threads seen so far and the
 * roots of the sampled stacks they do not cover. */
static int live_callees(struct pc_source *s, const char *path,
			pc_path_fn fn, void *arg)
{
	struct src_live *l = live_of(s);
	struct src_live_cg_module *mods = calloc(l->nmods + 1, sizeof(*mods));
	int rc;

	if (mods == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < l->nmods; i++) {
		mods[i].img = l->mods[i].img;
		mods[i].name = mods[i].img ? eng_image_name(mods[i].img) : "";
	}
	if (l->pcache == NULL && eng_points_cache_new(&l->pcache, NULL) < 0)
		l->pcache = NULL;
	rc = src_live_cg_answer(l->pcache, mods, l->nmods,
				(const char *const *)l->starts, l->nstarts,
				l->hint, path, fn, arg);
	free(mods);
	src_live_fork_callees(l, path, fn, arg);   /* exec'ed children's */
	return rc;
}

static double live_hint(struct pc_source *s, const char *path)
{
	struct src_live *l = live_of(s);
	struct src_live_hint *h[64];
	size_t n;
	double v;

	/* the children's samples count with the program's: a pool's
	 * work is in its workers, where the parent's samples never go */
	if (l->hint != NULL) {
		h[0] = l->hint;
		n = 1 + src_live_fork_hints(l, h + 1, 63);
		if (l->cfg != NULL &&
		    src_live_setwall_hint(l->cfg, h, n, path, &v))
			return v;
		return src_live_hint_hint_many(h, n, path);
	}
	return l->pynames ? src_live_pyname_hint(l->pynames, path) : -1;
}

/* The hint sampler goes (the search's end): the Python names stay. */
static void free_hint(struct src_live *l)
{
	src_live_hint_free(l->hint);
	l->hint = NULL;
}

static json_t *live_stack_samples(struct pc_source *s)
{
	return src_live_samples_json(live_of(s)->tally);
}

static const struct pc_source_ops live_ops = {
	.kind = "live",
	.poll_resources = poll_resources,
	.close = live_close,
	.now = live_now,
	.predict_cost = live_predict,
	.enable = live_enable,
	.disable = live_disable,
	.poll_replies = live_poll_replies,
	.poll_samples = live_poll_samples,
	.observed_cost = live_observed,
	.held = live_held,
	.step = live_step,
	.poll_events = live_poll_events,
	.set_sample_period = live_set_period,
	.callees = live_callees,
	.hint = live_hint,
	.stack_samples = live_stack_samples,
};

static void enqueue_cb(void *arg, const struct pc_discovery *d);

int src_live_metrics_start(struct pc_source *s, const struct pc_config *cfg,
			   struct hunch_err *err)
{
	struct src_live *l = live_of(s);
	int rc;

	if (l->slo != NULL)
		return 0;
	l->cfg = cfg;
	if (l->proc != NULL && l->kernel_only)
		rc = src_live_exec_kernel_side(l, err);
	else if (l->proc == NULL || !l->rtlib_ready)
		return hunch_err_set(err, -ENOTSUP, "measuring needs a running "
				  "target with the runtime library");
	else
		rc = src_live_ops_new(l->proc, l->shm, cfg, l->t0_ns, &l->slo,
				      err);
	/* Hints are only an ordering: without perf the search runs in the
	 * source's order, so a refusal is not an error. */
	if (rc == 0 && src_live_hint_rate(cfg) > 0 &&
	    src_live_hint_new(eng_proc_pid(l->proc), src_live_hint_rate(cfg),
			      l->t0_ns, src_live_image_at, l, &l->hint,
			      NULL) < 0)
		l->hint = NULL;
	if (l->hint != NULL && l->pynames == NULL)
		l->pynames = src_live_pyname_new();
	if (l->hint != NULL)   /* the job's one table of Python names */
		src_live_hint_share_names(l->hint, l->pynames);
	if (l->hint != NULL)   /* Python functions join the where axis */
		src_live_hint_set_disc(l->hint, enqueue_cb, l);
	if (l->hint != NULL && l->tally == NULL)
		l->tally = src_live_samples_new(src_live_hint_rate(cfg));
	if (l->hint != NULL)   /* the report's stack samples section */
		src_live_hint_set_tally(l->hint, l->tally);
	if (rc == 0)
		src_live_hook_hints(l);
	return rc;
}

/* catchup dates activations by the hint's stack samples */
void src_live_hook_hints(struct src_live *l)
{
	if (l->slo != NULL)   /* and the children, for kernel measures */
		src_live_ops_set_kids(l->slo, l->kids);
	if (l->hint != NULL && l->slo != NULL) {
		src_live_ops_set_psampler(l->slo,
					  src_live_hint_sampler(l->hint));
		src_live_ops_set_hints(l->slo, l->hint);
	}
}

void src_live_metrics_stop(struct pc_source *s)
{
	struct src_live *l = live_of(s);

	src_live_ops_free(l->slo, l->proc != NULL && !l->status.ended &&
					  !l->parent_ended);
	l->slo = NULL;
	l->cfg = NULL;
	free_hint(l);
}

size_t src_live_ninstances(const struct pc_source *s)
{
	const struct src_live *l = live_of(s);

	return l->slo ? src_live_ops_ninstances(l->slo) : 0;
}

static void enqueue_cb(void *arg, const struct pc_discovery *d)
{
	src_live_enqueue(arg, d);
}

static struct src_live *live_new(void)
{
	struct src_live *l = calloc(1, sizeof(*l));

	if (l == NULL)
		abort();
	l->src.ops = &live_ops;
	l->src.impl = l;
	l->t0_ns = clock_mono_ms() * 1000000u;
	return l;
}

int src_live_open_file(const char *path, struct pc_source **out,
		       struct hunch_err *err)
{
	struct src_live *l = live_new();
	int rc = src_live_add_module(l, path, 0, err);

	if (rc < 0) {
		live_close(&l->src);
		return rc;
	}
	*out = &l->src;
	return 0;
}

/* The process is stopped: read its modules and threads once.  An
 * image it execs is followed (src_live_exec.c). */
static int finish_open(struct src_live *l, const char *rtlib,
		       struct pc_source **out)
{
	l->rtlib_ready = rtlib != NULL;
	l->rtlib = rtlib ? strdup(rtlib) : NULL;
	eng_exec_follow(l->proc, true);
	l->kids = src_live_kids_new();
	l->ranks = src_live_rank_new();
	l->kidimgs = src_live_kidimg_new();
	src_live_fork_follow(l, eng_proc_launched(l->proc));
	load_modules(l);
	src_live_threads_report_process(l);
	*out = &l->src;
	return 0;
}

int src_live_launch(const struct src_live_launch *o, struct pc_source **out,
		    struct hunch_err *err)
{
	struct src_live *l = live_new();
	struct eng_launch_opts lo = {
		.path = o->argv[0], .argv = o->argv, .envp = o->envp,
		.cwd = o->cwd, .stdin_fd = o->stdin_fd,
		.stdout_fd = o->stdout_fd, .stderr_fd = o->stderr_fd,
		.rtlib_path = o->rtlib,
	};
	int rc;

	if (o->rtlib != NULL) {
		rc = eng_shm_create(0, false, &l->shm, err);
		if (rc < 0)
			goto fail;
		lo.shm = l->shm;
		eng_inst_warm();   /* not while the program waits at main */
	}
	rc = eng_launch(&lo, &l->proc, err);
	if (rc < 0)
		goto fail;
	return finish_open(l, o->rtlib, out);
fail:
	live_close(&l->src);
	return rc;
}

int src_live_attach(pid_t pid, const char *rtlib, struct pc_source **out,
		    struct hunch_err *err)
{
	struct src_live *l = live_new();
	int rc;

	if (rtlib != NULL) {
		rc = eng_shm_create(0, true, &l->shm, err);
		if (rc < 0)
			goto fail;
	}
	rc = eng_attach(pid, rtlib, l->shm, &l->proc, err);
	if (rc < 0)
		goto fail;
	return finish_open(l, rtlib, out);
fail:
	live_close(&l->src);
	return rc;
}

int src_live_resume(struct pc_source *s, struct hunch_err *err)
{
	return eng_ptrace_resume_all(live_of(s)->proc, err);
}

/* Does the program catch or ignore signal sig?  From the SigCgt and
 * SigIgn masks of /proc/PID/status (hex, bit sig-1). */
static bool sig_handled(pid_t pid, int sig)
{
	char path[64], line[256];
	bool handled = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "SigCgt:", 7) == 0 ||
		    strncmp(line, "SigIgn:", 7) == 0)
			handled |= (strtoull(line + 7, NULL, 16) >>
				    (sig - 1)) & 1;
	}
	fclose(f);
	return handled;
}

/* A signal the program received: SIGSTOP always stops it; SIGTSTP,
 * SIGTTIN and SIGTTOU stop it when left to their default action;
 * SIGCONT makes it run again (the kernel resumes it whatever its
 * disposition). */
static void note_stop_signal(struct src_live *l, int sig)
{
	if (sig == SIGCONT)
		l->status.stopped = false;
	else if (sig == SIGSTOP)
		l->status.stopped = true;
	else if ((sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) &&
		 !sig_handled(eng_proc_pid(l->proc), sig))
		l->status.stopped = true;
}

/* The process ended: it and every thread it still had are retired
 * (the kernel reports no exit for the last threads one by one). */
static void retire_process(struct src_live *l, const struct eng_event *ev)
{
	struct pc_discovery d = {
		.kind = PC_DISC_PROCESS, .retired = true,
		.pid = eng_proc_pid(l->proc),
		.end = ev->kind == ENG_EV_KILLED ? 's' : 'x',
		.end_code = ev->kind == ENG_EV_KILLED ? ev->signo : ev->status,
		.end_t = (double)(clock_mono_ms() * 1000000u - l->t0_ns) / 1e9,
	};

	if (!l->status.ended) {
		src_live_fork_tick(l, true);   /* the children's ends first */
		src_live_enqueue(l, &d);
	}
}

static void handle_event(struct src_live *l, const struct eng_event *ev)
{
	struct pc_discovery d = { .pid = eng_proc_pid(l->proc) };

	switch (ev->kind) {
	case ENG_EV_THREAD_NEW:
		l->status.nthreads++;
		src_live_threads_new(l, ev->tid);
		if (l->hint != NULL)
			src_live_hint_thread_new(l->hint, ev->tid);
		break;
	case ENG_EV_THREAD_EXIT:
		l->status.nthreads--;
		if (!src_live_threads_gone(l, ev->tid)) {
			d.kind = PC_DISC_THREAD;
			d.tid = ev->tid;
			d.retired = true;
			src_live_enqueue(l, &d);
		}
		break;
	case ENG_EV_LIB_LOAD:
		src_live_add_module(l, ev->path, ev->bias, NULL);
		if (l->hint != NULL)
			src_live_hint_modules_changed(l->hint);
		break;
	case ENG_EV_LIB_UNLOAD:
		if (l->hint != NULL)
			src_live_hint_modules_changed(l->hint);
		d.kind = PC_DISC_FUNCTION;
		d.retired = true;
		d.module = basename_of(ev->path);
		src_live_enqueue(l, &d);
		break;
	case ENG_EV_EXITED:
		retire_process(l, ev);
		src_live_fork_parent_end(l);
		l->status.stopped = false;
		l->status.exit_code = ev->status;
		break;
	case ENG_EV_KILLED:
		retire_process(l, ev);
		src_live_fork_parent_end(l);
		l->status.stopped = false;
		l->status.killed = true;
		l->status.signo = ev->signo;
		l->status.core = ev->core;
		break;
	case ENG_EV_SIGNAL:
		note_stop_signal(l, ev->signo);
		break;
	case ENG_EV_EXEC:
		src_live_exec_begin(l, ev);
		break;
	case ENG_EV_EXEC_ENTRY:
		src_live_exec_entry(l);
		break;
	case ENG_EV_FORK:
		src_live_fork_event(l, ev);
		break;
	}
}

int src_live_pump(struct pc_source *s, int timeout_ms,
		  struct src_live_status *st)
{
	struct src_live *l = live_of(s);
	struct eng_event evs[16];
	int n;

	if (l->parent_ended && !l->status.ended && timeout_ms > 0)
		src_live_fork_wait(timeout_ms);  /* the engine has none */
	do {
		n = eng_ptrace_poll_events(l->proc, evs, 16, timeout_ms);
		for (int i = 0; i < n; i++)
			handle_event(l, &evs[i]);
		timeout_ms = 0;
	} while (n == 16);
	upgrade_modules(l);
	if (l->npending > 0)
		src_live_threads_name_pending(l);
	if (l->slo != NULL && !l->status.ended)
		src_live_ops_tick(l->slo, enqueue_cb, l);
	if (l->hint != NULL && !l->status.ended && !l->parent_ended)
		src_live_hint_tick(l->hint, 0);
	src_live_fork_tick(l, false);
	if (l->parent_ended && src_live_kids_live(l->kids) == 0)
		l->status.ended = true;   /* the last process of the job */
	*st = l->status;
	return n < 0 ? n : 0;
}

int src_live_detach(struct pc_source *s, struct hunch_err *err)
{
	struct src_live *l = live_of(s);
	int rc;

	if (l->status.ended)
		return 0;
	if (l->parent_ended) {   /* its children run untraced already */
		l->status.ended = true;
		return 0;
	}
	/* Every instrumented byte goes back before the target runs alone. */
	src_live_ops_free(l->slo, true);
	l->slo = NULL;
	free_hint(l);
	rc = eng_detach(l->proc, err);
	if (rc == 0)
		l->status.ended = true;  /* nothing more will be reported */
	return rc;
}

int src_live_kill(struct pc_source *s)
{
	if (eng_proc_launched(live_of(s)->proc))   /* its children too */
		src_live_kids_kill(live_of(s)->kids);
	return eng_detach_kill(live_of(s)->proc);
}

pid_t src_live_pid(const struct pc_source *s)
{
	const struct src_live *l = live_of(s);

	return l->proc ? eng_proc_pid(l->proc) : 0;
}

bool src_live_rtlib_ready(const struct pc_source *s)
{
	return live_of(s)->rtlib_ready;
}

int src_live_due_ms(const struct pc_source *s)
{
	const struct src_live *l = live_of(s);

	return l->slo ? src_live_ops_due_ms(l->slo) : -1;
}
