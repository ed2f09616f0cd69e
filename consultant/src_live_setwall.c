/*
 * src_live_setwall.c - a wall timer over a set of functions in followed
 * child processes, from their stack samples (see src_live_setwall.h).
 */
#include "src_live_setwall.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eng_proc.h"
#include "eng_taskcpu.h"
#include "src_live_hint.h"
#include "src_live_hintwin.h"
#include "src_live_hintoff.h"
#include "src_live_kids.h"
#include "src_live_ops_int.h"
#include "src_live_rank.h"
#include "vec.h"

/* A busy rank gets a few CPU samples per sampling interval (~20 a
 * second of its CPU time), too few for a share of their own: the share
 * of its CPU time is taken over the last second of samples. */
#define SHARE_WINDOW_S 1.0
/* Each value is the estimate's rate over the last SMOOTH_S, and there
 * is none until it has counted that long: the samples of a wait arrive
 * in bursts (a thread's switch-out is known when it gets its CPU back)
 * and an MPI program's rounds alternate work and wait.  0.2 s values
 * swung from 0 to 3 and the guess flipped at each, so a clear case
 * waited for the time limit to conclude; 1 s values concluded a rank
 * false from three values read in one long compute phase (bn_mpi's
 * rounds took 1.2 s under load). */
#define SMOOTH_S 2.0
/* The program's own waits are smoothed over less: its threads are
 * sampled at their own rate (not a rank's few samples an interval),
 * each thread's interval is bounded by its length, and the search's
 * chain of I/O refinements waited SMOOTH_S at each level (bn_smallwrites'
 * small writes, a why-refinement of its sampled I/O wait, launched at
 * 3.4 s). */
#define SMOOTH_PROGRAM_S 0.8
#define SMOOTH_N 64              /* readings kept, at most */

#define SW_THREADS 64             /* threads of a child followed */

/* A thread's readings, each part counted thread by thread so that no
 * thread is given more than its own wall time: its time off a CPU comes
 * from the kernel's counts (wall time less CPU time), which nothing
 * loses, and the share of its switch-outs in the functions; its time on
 * a CPU is its CPU time times the share of its own CPU samples in them.
 * (A process-wide share times the process's CPU gave one writer thread
 * 1.08 s a second when the window's share and the interval's CPU came
 * from different threads.) */
struct swthread {
	pid_t tid;
	int64_t cpu;             /* CPU time, ns, at t */
	double t;                /* the source's seconds */
	double carry_ns;         /* time off not yet attributed */
	uint64_t after_off;      /* its off-CPU observations counted */
	int64_t on_cpu;          /* CPU time, ns, whose share is counted */
	double after_cpu;        /* the newest CPU sample counted */
	double t0;               /* the newest CPU sample when first seen */
	double over_ns;          /* counted, not yet given to an interval */
	unsigned seen;           /* the child's reading that last saw it */
};

/* One child's readings at the last estimate. */
struct swchild {
	pid_t pid;
	bool started;            /* counted from its first reading in the
				  * functions */
	struct swthread th[SW_THREADS];
	size_t nth;
	unsigned reading;        /* readings taken */
};

struct src_live_setwall {
	const char **names;      /* the functions (the metric's strings) */
	size_t nnames;
	pid_t pid, tid;
	bool program;            /* pid is the program's own process */
	char *code, *within;     /* within: the thread's /Process path */
	struct swchild *kids;
	size_t nkids, capkids;
	double acc_ns;
	bool counting;           /* some child counts */
	double rt[SMOOTH_N];     /* readings since counting: time, value */
	int64_t rv[SMOOTH_N];
	size_t nr, next;
};

/* A clause's functions: its own names, or a named list's. */
static void clause_names(const struct pc_config *cfg,
			 const struct pc_instr *c, char ***names, size_t *n)
{
	*names = c->foreach;
	*n = c->nforeach;
	if (c->foreach_list == NULL)
		return;
	*n = 0;
	for (size_t i = 0; i < cfg->nlists; i++)
		if (strcmp(cfg->lists[i].name, c->foreach_list) == 0) {
			*names = cfg->lists[i].items;
			*n = cfg->lists[i].nitems;
		}
}

/* The functions whose entry starts the timer. */
static void entry_names(const struct pc_config *cfg,
			const struct pc_metric_def *md, const char ***out,
			size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < md->ninstr; i++) {
		const struct pc_instr *c = &md->instr[i];
		bool starts = false;
		char **names;
		size_t nn;

		for (size_t p = 0; p < c->nprims; p++)
			starts |= c->prims[p].op == PC_OP_START;
		if (c->point != PC_PT_ENTRY || !starts)
			continue;
		clause_names(cfg, c, &names, &nn);
		for (size_t f = 0; f < nn; f++) {
			VEC_RESERVE(*out, cap, *n + 1);
			(*out)[(*n)++] = names[f];
		}
	}
}

bool src_live_setwall_applies(const struct pc_config *cfg,
			      const struct pc_metric_def *md)
{
	const char **names;
	size_t n;

	if (md == NULL || md->type != PC_BASE_WALL_TIMER ||
	    md->kernel != PC_KERNEL_NONE)
		return false;
	entry_names(cfg, md, &names, &n);
	free(names);
	return n > 0;
}

bool src_live_setwall_hint(const struct pc_config *cfg,
			   struct src_live_hint *const *h, size_t n,
			   const char *q, double *share)
{
	char bare[1200];
	const char *k = pc_source_hint_kind(q, bare, sizeof(bare));
	const struct pc_metric_def *md;
	const char **names;
	size_t nn;
	int kind;

	if (k == NULL || strncmp(k, PC_SRC_HINT_WAIT,
				 sizeof(PC_SRC_HINT_WAIT) - 1) != 0)
		return false;
	md = pc_metric_def_find(cfg, k + sizeof(PC_SRC_HINT_WAIT) - 1);
	if (md == NULL || !src_live_setwall_applies(cfg, md) ||
	    pc_metric_def_wait_kind(md) == PC_WAIT_NONE)
		return false;
	kind = pc_metric_def_wait_kind(md) == PC_WAIT_IO
		? SRC_LIVE_HINTWIN_IO : SRC_LIVE_HINTWIN_SYNC;
	entry_names(cfg, md, &names, &nn);
	*share = src_live_hint_wait_many(h, n, bare, kind, names, nn);
	free(names);
	return true;
}

struct src_live_setwall *src_live_setwall_new(const struct pc_config *cfg,
					      const struct pc_metric_def *md,
					      pid_t pid, pid_t tid,
					      const char *code)
{
	struct src_live_setwall *w = calloc(1, sizeof(*w));
	char path[64];

	if (w == NULL)
		abort();
	entry_names(cfg, md, &w->names, &w->nnames);
	w->pid = pid;
	w->tid = tid;
	if (code != NULL && (w->code = strdup(code)) == NULL)
		abort();
	if (tid != 0) {
		snprintf(path, sizeof(path), "/Process/%d/%d", (int)pid,
			 (int)tid);
		if ((w->within = strdup(path)) == NULL)
			abort();
	}
	return w;
}

void src_live_setwall_free(struct src_live_setwall *w)
{
	if (w == NULL)
		return;
	free(w->names);
	free(w->code);
	free(w->within);
	free(w->kids);
	free(w);
}

/* ---- a process's readings: the program's own, or a child's ---- */

static bool is_program(const struct src_live_ops *o, pid_t pid)
{
	return pid == eng_proc_pid(o->proc);
}

static struct src_live_hint *part_hint(const struct src_live_ops *o,
				       pid_t pid)
{
	return is_program(o, pid) ? o->hints : src_live_kids_hint(o->kids, pid);
}

/* CPU ns of the process (tid 0) or one of its threads, as of the last
 * refresh. */
static bool part_cpu(const struct src_live_ops *o, pid_t pid, pid_t tid,
		     int64_t *ns)
{
	const struct eng_taskcpu_thread *t;

	if (!is_program(o, pid))
		return src_live_kids_value(o->kids, pid, tid, false, ns);
	if (o->tc == NULL)
		return false;
	if (tid == 0) {
		*ns = (int64_t)eng_taskcpu_process_ns(o->tc);
		return true;
	}
	if ((t = eng_taskcpu_thread(o->tc, tid)) == NULL || !t->alive)
		return false;
	*ns = (int64_t)t->run_ns;
	return true;
}

static size_t part_threads(const struct src_live_ops *o, pid_t pid,
			   pid_t *tids, size_t max)
{
	size_t n = 0;

	if (!is_program(o, pid))
		return src_live_kids_threads(o->kids, pid, tids, max);
	for (size_t i = 0; o->tc != NULL && i < eng_taskcpu_nthreads(o->tc) &&
	     n < max; i++) {
		const struct eng_taskcpu_thread *t =
			eng_taskcpu_thread_at(o->tc, i);

		if (t->alive)
			tids[n++] = t->tid;
	}
	return n;
}

/* A child's entry, made when first seen. */
static struct swchild *child_of(struct src_live_setwall *w, pid_t pid)
{
	struct swchild *c;

	for (size_t i = 0; i < w->nkids; i++)
		if (w->kids[i].pid == pid)
			return &w->kids[i];
	VEC_RESERVE(w->kids, w->capkids, w->nkids + 1);
	c = &w->kids[w->nkids++];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	return c;
}

/* Starts counting the child once its window shows it (or the thread)
 * in one of the functions, from the samples after that reading. */
static void start_child(struct src_live_setwall *w, struct src_live_hint *h,
			struct swchild *c)
{
	struct src_live_hintoff_query q = { .names = w->names,
		.nnames = w->nnames, .within = w->within };
	struct src_live_hintoff_sums off;
	size_t nw, nb;
	double latest;

	src_live_hint_funcs_counts(h, w->names, w->nnames, NULL, w->within, -1, &nw,
			 &nb, &latest);
	src_live_hint_off_sums(h, &q, &off);
	c->started = nb > 0 || off.n_in > 0;
}

/* A thread's entry, or NULL when first seen: its entry is made then,
 * with its first readings, and it counts from them. */
static struct swthread *thread_of(struct src_live_setwall *w,
				  struct src_live_hint *h, struct swchild *c,
				  pid_t tid, int64_t cpu, double now,
				  const char *within)
{
	struct src_live_hintoff_query q = { .after = UINT64_MAX,
		.names = w->names, .nnames = w->nnames, .code = w->code,
		.within = within };
	struct src_live_hintoff_sums s;
	size_t nw, nb;
	double latest;

	struct swthread *t = NULL;

	for (size_t i = 0; i < c->nth && t == NULL; i++)
		if (c->th[i].tid == tid)
			t = &c->th[i];
	/* a thread id used again: its CPU time starts over */
	if (t != NULL && cpu >= t->cpu) {
		t->seen = c->reading;
		return t;
	}
	if (t == NULL && c->nth == SW_THREADS)
		return NULL;
	if (t == NULL)
		t = &c->th[c->nth++];
	src_live_hint_off_sums(h, &q, &s);
	src_live_hint_funcs_counts(h, w->names, w->nnames, NULL, within, -1,
				   &nw, &nb, &latest);
	*t = (struct swthread){ .tid = tid, .cpu = cpu, .t = now,
		.after_off = s.latest, .on_cpu = cpu, .after_cpu = latest,
		.t0 = latest, .seen = c->reading };
	return NULL;
}

/* The threads this reading did not see have ended: what they had
 * counted and not yet given to an interval is given now, and their
 * entries make room (a pool's short-lived threads filled the table). */
static void forget_ended(struct src_live_setwall *w, struct swchild *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nth; i++) {
		if (c->th[i].seen != c->reading) {
			w->acc_ns += c->th[i].over_ns;
			continue;
		}
		c->th[k++] = c->th[i];
	}
	c->nth = k;
}

/* A thread's time off a CPU since its last reading (wall less CPU), and
 * the part its switch-outs drained since then put in the functions:
 * each switch-out counts its own time off, so their share of the time
 * off is the functions'.  Time off with no switch-out drained yet (a
 * thread still off, or a drain late) waits for the next ones, and the
 * switch-outs a full ring lost only thin the share out. */
static double thread_off(struct src_live_setwall *w, struct src_live_hint *h,
			 struct swthread *t, const char *within, int64_t cpu,
			 double now)
{
	struct src_live_hintoff_query q = { .after = t->after_off,
		.names = w->names, .nnames = w->nnames, .code = w->code,
		.within = within };
	struct src_live_hintoff_sums s;
	double off = (now - t->t) * 1e9 - (double)(cpu - t->cpu);

	t->carry_ns += off > 0 ? off : 0;
	t->cpu = cpu;
	t->t = now;
	src_live_hint_off_sums(h, &q, &s);
	t->after_off = s.latest;
	if (s.off_all <= 0)
		return 0;
	off = t->carry_ns * s.off_in / s.off_all;
	t->carry_ns = 0;
	return off;
}

/* A thread's CPU time since it was last counted times the share of its
 * CPU samples over the last second in the functions.  Its CPU time is
 * held while none of its samples has been drained since (they come a
 * little after the time they sample), unless the process has ended. */
static double thread_on(struct src_live_setwall *w, struct src_live_hint *h,
			struct swthread *t, const char *within, int64_t cpu,
			bool ended)
{
	size_t nw, nb;
	double latest, from, part = 0;

	if (cpu == t->on_cpu)
		return 0;
	src_live_hint_funcs_counts(h, w->names, w->nnames, w->code, within,
				   t->after_cpu, &nw, &nb, &latest);
	if (nw == 0 && !ended)
		return 0;
	from = latest - SHARE_WINDOW_S;
	src_live_hint_funcs_counts(h, w->names, w->nnames, w->code, within,
				   from > t->t0 ? from : t->t0, &nw, &nb,
				   &(double){ 0 });
	if (nw > 0)
		part = (double)(cpu - t->on_cpu) * (double)nb / (double)nw;
	t->on_cpu = cpu;
	t->after_cpu = latest;
	return part;
}

/* One thread's part since its last reading, at most the interval's
 * length: the CPU time and time off held until their samples came are
 * counted late, and an interval given all of them at once read 1.01 s a
 * second for one writer thread.  What is over waits for the next
 * intervals, where the thread had time to spare, so nothing is lost. */
static double read_thread(struct src_live_setwall *w, struct src_live_hint *h,
			  const struct src_live_ops *o, struct swchild *c,
			  pid_t tid, bool ended, double now)
{
	char within[64];
	struct swthread *t;
	double room, part;
	int64_t cpu;

	if (!part_cpu(o, c->pid, tid, &cpu))
		return 0;
	snprintf(within, sizeof(within), "/Process/%d/%d", (int)c->pid,
		 (int)tid);
	if ((t = thread_of(w, h, c, tid, cpu, now, within)) == NULL)
		return 0;
	room = (now - t->t) * 1e9;
	part = t->over_ns + thread_on(w, h, t, within, cpu, ended) +
	       thread_off(w, h, t, within, cpu, now);
	t->over_ns = part > room && !ended ? part - room : 0;
	return part - t->over_ns;
}

/* One child's part since its last reading: each of its threads' (or
 * the one thread's) time on and off a CPU in the functions.  Its
 * threads' entries are made at the reading that starts it. */
static void read_child(struct src_live_setwall *w, const struct src_live_ops *o,
		       struct swchild *c, bool ended, double now)
{
	struct src_live_hint *h = part_hint(o, c->pid);
	pid_t tids[SW_THREADS];
	size_t n = 1;

	if (h == NULL || src_live_hint_offcpu_start(h, NULL) < 0)
		return;
	if (!c->started) {
		start_child(w, h, c);
		w->counting |= c->started;
		if (!c->started)
			return;
	}
	if (w->tid != 0)
		tids[0] = w->tid;
	else
		n = part_threads(o, c->pid, tids, SW_THREADS);
	c->reading++;
	for (size_t i = 0; i < n; i++)
		w->acc_ns += read_thread(w, h, o, c, tids[i], ended, now);
	forget_ended(w, c);
}

bool src_live_setwall_read(struct src_live_setwall *w,
			   const struct src_live_ops *o, double now, int64_t *ns)
{
	bool was = w->counting;

	/* the program's CPU times are as of their reading, maybe a tick's
	 * other instance's (refresh): its wall time is taken then too */
	if (w->program)
		read_child(w, o, child_of(w, w->pid), false,
			   o->tc != NULL ? o->tc_t : now);
	for (size_t i = 0; !w->program && i < src_live_kids_count(o->kids);
	     i++) {
		bool ended;
		pid_t p = src_live_kids_pid(o->kids, i, &ended);

		if (w->pid == 0 || p == w->pid)
			read_child(w, o, child_of(w, p), ended, now);
	}
	*ns = (int64_t)w->acc_ns;
	/* the reading that starts the count counted nothing yet: its
	 * interval is unknown, not 0 */
	return was;
}

/* ---- the live source's instances ---- */

bool src_live_setwall_launcher(const struct src_live_ops *o, const char *metric,
			       const struct pc_src_focus *f)
{
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);
	char *why = NULL;
	bool yes;

	if (o->kids == NULL)
		return false;
	for (int i = 1; i < 4; i++)
		if (f->path[i] != NULL && strchr(f->path[i] + 1, '/') != NULL)
			return false;
	yes = src_live_setwall_applies(o->cfg, md) &&
	      src_live_rank_refuse_launcher(o->proc, md, &why);
	free(why);
	return yes;
}

/* The readings of the process(es) an instance counts, now: the
 * program's, once a tick (read for the tick's other instances, or for
 * the one before, within READ_FRESH_S). */
#define READ_FRESH_S 0.005
static void refresh(struct src_live_ops *o, pid_t pid)
{
	if (pid != 0 && is_program(o, pid)) {
		if (o->tc == NULL || src_live_ops_now(o) - o->tc_t > READ_FRESH_S)
			(void)src_live_kernel_refresh(o, NULL);
	}
	else
		src_live_kids_refresh(o->kids);
}

int src_live_setwall_enable(struct src_live_ops *o, struct src_live_ops_inst *in,
			    const struct pc_src_focus *f, const char *metric,
			    pid_t pid, pid_t tid)
{
	const struct pc_metric_def *md = pc_metric_def_find(o->cfg, metric);
	struct src_live_hint *h = pid != 0 ? part_hint(o, pid) : NULL;
	struct hunch_err err = { 0 };
	char buf[1600];
	size_t i = 0;
	pid_t first;
	bool ended;

	/* the whole job: asked of the first child sampled, if any yet */
	if (pid == 0)
		h = src_live_kids_sampled(o->kids, &i, &first, &ended);

	if (h != NULL && src_live_hint_offcpu_start(h, &err) < 0) {
		snprintf(buf, sizeof(buf), "metric %s cannot be estimated in "
			 "%s: %s", metric, f->path[1], err.msg);
		in->status = -ENOTSUP;
		if ((in->reason = strdup(buf)) == NULL)
			abort();
		return 0;
	}
	refresh(o, pid);
	in->setwall = src_live_setwall_new(o->cfg, md, pid, tid,
		f->path[0] != NULL && strchr(f->path[0] + 1, '/') != NULL ?
		f->path[0] : NULL);
	in->setwall->program = pid != 0 && is_program(o, pid);
	in->sampled = true;
	in->scale = 1e9;
	(void)src_live_setwall_read(in->setwall, o, src_live_ops_now(o),
				    &in->prev);
	in->h = ++o->next_h;
	in->live = true;
	in->prev_t = src_live_ops_now(o);
	return 0;
}

static void keep_reading(struct src_live_setwall *w, double t, int64_t v)
{
	w->rt[w->next] = t;
	w->rv[w->next] = v;
	w->next = (w->next + 1) % SMOOTH_N;
	if (w->nr < SMOOTH_N)
		w->nr++;
}

/* The reading (now, v) kept; into *rate the rate since the newest
 * reading at least SMOOTH_S (SMOOTH_PROGRAM_S) old.  False while there
 * is none. */
static bool smoothed(struct src_live_setwall *w, double now, int64_t v,
		     int64_t prev, double dt, double *rate)
{
	double over = w->program ? SMOOTH_PROGRAM_S : SMOOTH_S;

	if (w->nr == 0)   /* the first: the reading it started from */
		keep_reading(w, now - dt, prev);
	keep_reading(w, now, v);

	for (size_t k = 1; k < w->nr; k++) {
		size_t i = (w->next + SMOOTH_N - 1 - k) % SMOOTH_N;

		if (now - w->rt[i] >= over - 1e-6) {
			*rate = (double)(v - w->rv[i]) / (now - w->rt[i]);
			return true;
		}
	}
	return false;
}

bool src_live_setwall_sample(struct src_live_ops *o, struct src_live_ops_inst *in, double dt,
			     double *value)
{
	int64_t v, prev;

	refresh(o, in->setwall->program ? in->setwall->pid : 0);
	if (!src_live_setwall_read(in->setwall, o, src_live_ops_now(o), &v)) {
		in->prev = v;
		return false;
	}
	prev = in->prev;
	in->prev = v;
	if (!smoothed(in->setwall, src_live_ops_now(o), v, prev, dt, value))
		return false;
	*value /= in->scale;
	return true;
}
