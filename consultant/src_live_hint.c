/*
 * src_live_hint.c - cheap evidence for the live source (see
 * src_live_hint.h).
 */
#include "src_live_hint.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eng_clock.h"
#include "eng_perfsample.h"
#include "eng_image.h"
#include "eng_taskstate.h"
#include "pc_where.h"
#include "src_live_hintoff.h"
#include "src_live_hintpy.h"
#include "src_live_hintwin.h"
#include "src_live_pyname.h"
#include "src_live_pyscript.h"
#include "src_live_samples.h"

#define PC_CACHE 8192         /* pc -> path id, direct-mapped */
#define PY_CACHE 1024         /* Python code object -> path id */
#define MAX_THREADS 4096
/* functions of one stack: the native frames and the Python frames
 * joined under the interpreter's */
#define MAX_STACK (ENG_PS_MAX_FRAMES + SRC_LIVE_HINTPY_DEPTH)
/* The interpreter loop under which a CPython's Python frames run. */
#define PY_EVAL_FN "_PyEval_EvalFrameDefault"

struct sobj {
	uint64_t addr, size;
	int id;                   /* interned /SyncObject path */
};

struct pc_slot {
	uint64_t pc;
	int id;                   /* -1: resolves to nothing */
	bool fn;                  /* id is a function (else a module) */
};

/* An observation resolved but not yet in the window: samples drained
 * between ticks (by catchup) wait for the next tick, so that the
 * window, and every answer taken from it, changes only at a tick: the
 * consultant asks the same question twice in one tick and the replay
 * gives the answer recorded last in that tick. */
struct pending {
	double t;
	double off_s;             /* > 0: an off-CPU observation */
	enum src_live_hintwin_kind kind;
	int nids, nstack, nleft, complete;
	int ids[ENG_PS_MAX_FRAMES + 2], stack[MAX_STACK];
	int left[ENG_PS_MAX_FRAMES];   /* frames a Python join left out */
};

struct py_slot {
	const struct eng_pycode *code;
	int id;
};

/* A blocked thread's stack, kept for the place it blocked at (its stack
 * pointer and pc at the system call) and used again whenever it is
 * found blocked at that place: a thread pool asleep, or a loop blocking
 * in the same fsync, is unwound once, not every tick.  (Two call paths
 * reaching one system call with the very same stack pointer would share
 * the first one's stack.) */
struct blocked {
	pid_t tid;
	uint64_t sp, pc;
	int nids, nstack, complete;
	int ids[ENG_PS_MAX_FRAMES], stack[ENG_PS_MAX_FRAMES];
};

struct src_live_hint {
	pid_t pid;
	uint64_t t0_ns;
	double last_tick;
	struct eng_perfsample *ps;
	struct src_live_hintwin *win;
	struct src_live_hintoff *off;   /* switch-outs, or NULL */
	src_live_hint_image_fn image_at;
	void *arg;
	struct sobj *objs;
	size_t nobjs;
	struct pc_slot cache[PC_CACHE];
	struct src_live_hint_stats st;
	bool in_tick;
	struct pending *pend;
	size_t npend, cappend;
	struct blocked *blk;
	size_t nblk, capblk;
	/* a CPython target: its Python stacks, their names, the id of
	 * the interpreter loop (-1 until a sample holds it) */
	struct src_live_hintpy *py;
	struct src_live_pyname *pyn;
	int eval_id;
	char *interp;             /* the eval loop's module, or NULL */
	bool py_retry;            /* after an exec: no CPython found yet
				   * (libpython may come with the libraries) */
	struct py_slot pycache[PY_CACHE];
	pc_disc_fn disc;
	void *disc_arg;
	struct src_live_samples *tally;   /* the whole run's, or NULL */
};

static void on_sample(void *arg, const struct eng_psample *s);

static double secs(const struct src_live_hint *h, uint64_t t_ns)
{
	return t_ns < h->t0_ns ? 0 : (double)(t_ns - h->t0_ns) / 1e9;
}

double src_live_hint_rate(const struct pc_config *cfg)
{
	return pc_tunables_find(cfg, "hintSampleRate") ?
	       pc_tunables_get(cfg, "hintSampleRate") : SRC_LIVE_HINT_HZ;
}

static void forget_pcs(struct src_live_hint *h)
{
	for (size_t i = 0; i < PC_CACHE; i++)
		h->cache[i].pc = UINT64_MAX;
}

/* The script a Python program runs is named before any file the
 * samples hold. */
static void name_script(struct src_live_hint *h)
{
	char path[PATH_MAX];

	if (h->py != NULL && h->pyn != NULL &&
	    src_live_pyscript_path(h->pid, path, sizeof(path)))
		src_live_pyname_first_file(h->pyn, path);
}

/* The Python reader of the program's image as it is now, if it is a
 * CPython. */
static void open_python(struct src_live_hint *h)
{
	h->py = src_live_hintpy_new(h->pid, NULL);
	if (h->py != NULL && h->pyn == NULL)
		h->pyn = src_live_pyname_new();
	name_script(h);
}

int src_live_hint_new(pid_t pid, double hz, uint64_t t0_ns, src_live_hint_image_fn image_at,
	    void *arg, struct src_live_hint **out, struct hunch_err *err)
{
	struct src_live_hint *h = calloc(1, sizeof(*h));
	int rc;

	*out = NULL;
	if (h == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	rc = eng_perfsample_open(pid, hz, &h->ps, err);
	if (rc < 0) {
		free(h);
		return rc;
	}
	h->pid = pid;
	h->t0_ns = t0_ns;
	h->image_at = image_at;
	h->arg = arg;
	h->eval_id = -1;
	open_python(h);
	h->win = src_live_hintwin_new(SRC_LIVE_HINT_WINDOW_S);
	/* catchup drains too (eng_inst_catchup): its samples come here */
	eng_perfsample_set_sink(h->ps, on_sample, h);
	forget_pcs(h);
	rc = eng_perfsample_sync_threads(h->ps);
	if (rc <= 0) {
		src_live_hint_free(h);
		return hunch_err_set(err, rc < 0 ? rc : -EPERM, "cannot sample "
				  "any thread of pid %d with perf cpu-clock "
				  "(check /proc/sys/kernel/perf_event_"
				  "paranoid)", pid);
	}
	h->last_tick = secs(h, clock_mono_ns());
	*out = h;
	return 0;
}

void src_live_hint_free(struct src_live_hint *h)
{
	if (h == NULL)
		return;
	eng_perfsample_close(h->ps);
	src_live_hintpy_free(h->py);
	src_live_pyname_free(h->pyn);
	free(h->interp);
	src_live_hintoff_free(h->off);
	src_live_hintwin_free(h->win);
	free(h->objs);
	free(h->pend);
	free(h->blk);
	free(h);
}

static const char *basename_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* The /Code path of the function holding pc, as the where axis names it
 * (pc_where.c: module, source file basename, display name); the module
 * alone when no function covers pc; -1 outside every known module. */
static int resolve_pc(struct src_live_hint *h, uint64_t pc)
{
	struct pc_slot *slot = &h->cache[(pc >> 2) % PC_CACHE];
	const struct eng_func *f;
	struct eng_image *img;
	uint64_t base;
	char path[1024];
	const char *src;

	if (slot->pc == pc)
		return slot->id;
	slot->pc = pc;
	slot->id = -1;
	slot->fn = false;
	img = h->image_at(h->arg, pc, &base);
	if (img == NULL)
		return -1;
	f = eng_image_func_at(img, pc - base);
	if (f == NULL) {
		snprintf(path, sizeof(path), "/Code/%s", eng_image_name(img));
	} else {
		src = basename_of(eng_sym_lazy_source_file(img, f));
		snprintf(path, sizeof(path), "/Code/%s/%s/%s",
			 eng_image_name(img), src ? src : PC_UNKNOWN_SRCFILE,
			 eng_sym_lazy_display_name(img, f));
		slot->fn = true;
	}
	slot->id = src_live_hintwin_intern(h->win, path);
	if (f != NULL && h->py != NULL &&
	    strcmp(eng_sym_lazy_display_name(img, f), PY_EVAL_FN) == 0) {
		h->eval_id = slot->id;
		if (h->interp == NULL)
			h->interp = strdup(eng_image_name(img));
	}
	return slot->id;
}

/* A stack's frames: the functions into stack, innermost first (the
 * window folds recursion and joins repeats, src_live_hintwin_add_stack), frames in a
 * module but no function into ids.  Returns the number of functions. */
static int resolve_stack(struct src_live_hint *h, const uint64_t *pcs, int n,
			 int *ids, int *nids, int *stack)
{
	int ns = 0;

	for (int i = 0; i < n; i++) {
		int id = resolve_pc(h, pcs[i]);

		if (id < 0)
			continue;
		if (h->cache[(pcs[i] >> 2) % PC_CACHE].fn)
			stack[ns++] = id;
		else
			ids[(*nids)++] = id;
	}
	return ns;
}

/* Into the window: an off-CPU observation (off_s > 0) with every
 * resource of its stack, or one of `kind`. */
static void add_now(struct src_live_hint *h, double t, double off_s,
		    enum src_live_hintwin_kind kind, const int *ids, int nids,
		    const int *stack, int nstack, const int *left, int nleft,
		    int complete)
{
	int all[ENG_PS_MAX_FRAMES + 2 + MAX_STACK];

	if (off_s <= 0) {
		src_live_hintwin_add_joined(h->win, t, kind, ids, nids, stack,
					    nstack, left, nleft, complete);
		return;
	}
	memcpy(all, ids, (size_t)nids * sizeof(int));
	memcpy(all + nids, stack, (size_t)nstack * sizeof(int));
	src_live_hintoff_add(h->off, t, h->last_tick, all, nids + nstack,
			     off_s);
}

static void observe_off(struct src_live_hint *h, double t, double off_s,
			enum src_live_hintwin_kind kind, const int *ids, int nids,
			const int *stack, int nstack, const int *left,
			int nleft, int complete)
{
	struct pending *p;

	if (h->in_tick) {
		add_now(h, t, off_s, kind, ids, nids, stack, nstack, left,
			nleft, complete);
		return;
	}
	if (h->npend == h->cappend) {
		h->cappend = h->cappend ? h->cappend * 2 : 64;
		h->pend = realloc(h->pend, h->cappend * sizeof(*h->pend));
		if (h->pend == NULL)
			abort();
	}
	p = &h->pend[h->npend++];
	p->t = t;
	p->off_s = off_s;
	p->kind = kind;
	p->nids = nids;
	p->nstack = nstack;
	p->nleft = nleft;
	p->complete = complete;
	memcpy(p->ids, ids, (size_t)nids * sizeof(int));
	memcpy(p->stack, stack, (size_t)nstack * sizeof(int));
	if (nleft > 0)
		memcpy(p->left, left, (size_t)nleft * sizeof(int));
}

static void observe(struct src_live_hint *h, double t, enum src_live_hintwin_kind kind,
		    const int *ids, int nids, const int *stack, int nstack,
		    int complete)
{
	observe_off(h, t, 0, kind, ids, nids, stack, nstack, NULL, 0, complete);
}

static int thread_id(struct src_live_hint *h, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/Process/%d/%d", (int)h->pid,
		 (int)tid);
	return src_live_hintwin_intern(h->win, path);
}

/* The where path of a Python function, discovered the first time. */
static int py_id(struct src_live_hint *h, const struct eng_pycode *c)
{
	struct py_slot *slot = &h->pycache[((uintptr_t)c >> 4) % PY_CACHE];
	const char *file, *fn;
	char path[3 * ENG_PYF_MAX_STR];
	bool is_new;

	if (slot->code == c)
		return slot->id;
	src_live_pyname_of(h->pyn, c, &file, &fn, &is_new);
	snprintf(path, sizeof(path), "/Code/%s/%s/%s", SRC_LIVE_PYNAME_MODULE,
		 file, fn);
	slot->code = c;
	slot->id = src_live_hintwin_intern(h->win, path);
	if (is_new && h->disc != NULL)
		h->disc(h->disc_arg, &(struct pc_discovery){
			.kind = PC_DISC_FUNCTION,
			.module = SRC_LIVE_PYNAME_MODULE,
			.srcfile = file, .function = fn });
	return slot->id;
}

/* A CPU sample of a CPython thread: the Python frames read nearest its
 * time replace the interpreter loop's C-level activations they ran in
 * (each C-level call of the loop runs one group of them; the stack is
 * innermost first): the C frames inside the innermost loop stay on top,
 * the outermost loop joined stays under them.  The C frames between two
 * loops (a builtin calling back into Python: `sum` over a generator, a
 * thread's start calling its target) are left out, so that the Python
 * caller is the callee of the Python function under it, and the loop
 * is on the stack once, not folded as a recursion.  Only when the
 * groups match the loop's frames (src_live_hintpy_match): a sample no
 * read near it matches is left out, not joined wrongly.  The frames the join took off go to left: code run mostly between two
 * activations of the loop (sum) is measured by its samples, as folding
 * would have found it (src_live_ops.c).  Returns the new stack's
 * length. */
static int add_python(struct src_live_hint *h, const struct eng_psample *s,
		      int *stack, int ns, int *left, int *nleft)
{
	struct src_live_hintpy_stack py;
	int evals[ENG_PS_MAX_FRAMES], starts[SRC_LIVE_HINTPY_DEPTH + 1];
	int out[MAX_STACK], m = 0, use, no = 0;

	for (int i = 0; i < ns; i++)
		if (stack[i] == h->eval_id)
			evals[m++] = i;
	if (m == 0)
		return ns;
	use = src_live_hintpy_match(h->py, s->tid, s->t_ns, m, s->complete,
				    &py, starts);
	if (use == 0)
		return ns;
	for (int i = 0; i < evals[0]; i++)
		out[no++] = stack[i];
	for (int f = 0; f < starts[use]; f++)   /* names (discovers) first */
		out[no++] = py_id(h, py.f[f].code);
	for (int f = 0; f < starts[use]; f++) {
		src_live_pyname_line_seen(h->pyn, py.f[f].code, py.f[f].line);
		src_live_pyname_caller_seen(h->pyn, py.f[f].code,
			f + 1 < starts[use] ? py.f[f + 1].code : NULL);
	}
	for (int i = evals[0]; i < evals[use - 1]; i++)
		left[(*nleft)++] = stack[i];
	for (int i = evals[use - 1]; i < ns && no < MAX_STACK; i++)
		out[no++] = stack[i];
	memcpy(stack, out, (size_t)no * sizeof(int));
	h->st.py_joined++;
	return no;
}

/* A CPU sample into the whole run's tally: its innermost frame's
 * function (or module) and the functions of its stack. */
static void tally(struct src_live_hint *h, const struct eng_psample *s,
		  const int *stack, int ns)
{
	const char *paths[MAX_STACK];
	int self = s->nframes > 0 ? resolve_pc(h, s->pc[0]) : -1;

	for (int i = 0; i < ns; i++)
		paths[i] = src_live_hintwin_path(h->win, stack[i]);
	src_live_samples_add(h->tally, secs(h, s->t_ns),
			     src_live_hintwin_path(h->win, self), paths, ns);
}

static void on_sample(void *arg, const struct eng_psample *s)
{
	struct src_live_hint *h = arg;
	int ids[ENG_PS_MAX_FRAMES + 1], stack[MAX_STACK], n = 0, ns;
	int left[ENG_PS_MAX_FRAMES], nleft = 0;

	ids[n++] = thread_id(h, s->tid);
	ns = resolve_stack(h, s->pc, s->nframes, ids, &n, stack);
	if (h->py != NULL && h->eval_id >= 0 && s->off_ns == 0)
		ns = add_python(h, s, stack, ns, left, &nleft);
	if (s->off_ns > 0 && h->off != NULL) {
		observe_off(h, secs(h, s->t_ns), (double)s->off_ns / 1e9,
			    SRC_LIVE_HINTWIN_CPU, ids, n, stack, ns, NULL, 0,
			    s->complete);
		h->st.off_obs++;
		return;
	}
	if (s->off_ns > 0)
		return;
	observe_off(h, secs(h, s->t_ns), 0, SRC_LIVE_HINTWIN_CPU, ids, n,
		    stack, ns, left, nleft, s->complete);
	if (h->tally != NULL)
		tally(h, s, stack, ns);
	h->st.cpu_obs++;
}

/* How many bytes a sync object of a class covers (glibc x86-64). */
static uint64_t class_size(const char *cls)
{
	if (strcmp(cls, "CondVar") == 0)
		return 48;
	if (strcmp(cls, "RWLock") == 0)
		return 56;
	if (strcmp(cls, "Barrier") == 0 || strcmp(cls, "Semaphore") == 0)
		return 32;
	return 40;  /* Mutex */
}

/* The class of an undiscovered object from its symbol's size. */
static const char *class_of_size(uint64_t size)
{
	switch (size) {
	case 48: return "CondVar";
	case 56: return "RWLock";
	case 32: return "Semaphore";
	default: return "Mutex";
	}
}

/* The /SyncObject path of the futex at uaddr: a discovered object that
 * covers it, else the data symbol there; -1 when neither is known (a
 * pthread_join, a lock in the heap not discovered yet). */
static int sync_id(struct src_live_hint *h, uint64_t uaddr)
{
	const struct eng_datasym *d;
	struct eng_image *img;
	uint64_t base, off;
	char path[700];

	for (size_t i = 0; i < h->nobjs; i++)
		if (uaddr >= h->objs[i].addr &&
		    uaddr < h->objs[i].addr + h->objs[i].size)
			return h->objs[i].id;
	img = h->image_at(h->arg, uaddr, &base);
	d = img ? eng_image_data_at(img, uaddr - base) : NULL;
	if (d == NULL)
		return -1;
	off = uaddr - base - d->addr;
	if (off < class_size(class_of_size(d->size)))
		snprintf(path, sizeof(path), "/SyncObject/%s/%s",
			 class_of_size(d->size), d->name);
	else
		snprintf(path, sizeof(path), "/SyncObject/Mutex/%s+%#" PRIx64,
			 d->name, off);
	return src_live_hintwin_intern(h->win, path);
}

/* The /Files path of a descriptor, named as discovery names files. */
static int file_id(struct src_live_hint *h, int fd)
{
	char name[512], path[600];

	if (eng_taskstate_fd_path(h->pid, fd, name, sizeof(name)) < 0)
		return -1;
	snprintf(path, sizeof(path), "/Files/%s",
		 name[0] == '/' ? name + 1 : name);
	return src_live_hintwin_intern(h->win, path);
}

static struct blocked *blocked_of(struct src_live_hint *h, pid_t tid)
{
	for (size_t i = 0; i < h->nblk; i++)
		if (h->blk[i].tid == tid)
			return &h->blk[i];
	if (h->nblk == h->capblk) {
		h->capblk = h->capblk ? h->capblk * 2 : 16;
		h->blk = realloc(h->blk, h->capblk * sizeof(*h->blk));
		if (h->blk == NULL)
			abort();
	}
	h->blk[h->nblk] = (struct blocked){ .tid = tid };
	return &h->blk[h->nblk++];
}

/* The functions on a blocked thread's stack (the system call's wrapper
 * in libc, its callers), unwound once per place it blocks at. */
static const struct blocked *blocked_stack(struct src_live_hint *h,
					   const struct eng_taskstate *st)
{
	struct blocked *b = blocked_of(h, st->tid);
	struct eng_psample s;

	if (b->sp == st->sp && b->pc == st->pc && b->sp != 0)
		return b;
	b->sp = st->sp;
	b->pc = st->pc;
	b->nids = b->nstack = b->complete = 0;
	if (eng_perfsample_unwind_blocked(h->ps, st->tid, st->sp, st->pc,
					&s) > 0) {
		b->nstack = resolve_stack(h, s.pc, s.nframes, b->ids,
					  &b->nids, b->stack);
		b->complete = s.complete;
	}
	h->st.blocked_unwinds++;
	return b;
}

static void observe_thread(struct src_live_hint *h, pid_t tid, double now)
{
	struct eng_taskstate st;
	const struct blocked *b;
	int ids[ENG_PS_MAX_FRAMES + 2], n = 0;
	enum src_live_hintwin_kind kind;

	if (eng_taskstate_read(h->pid, tid, &st) < 0 ||
	    (st.wait != ENG_TASK_SYNC && st.wait != ENG_TASK_IO))
		return;
	ids[n++] = thread_id(h, tid);
	if (st.wait == ENG_TASK_SYNC) {
		ids[n] = sync_id(h, st.args[0]);
		kind = SRC_LIVE_HINTWIN_SYNC;
		h->st.sync_obs++;
	} else {
		ids[n] = file_id(h, (int)st.args[0]);
		kind = SRC_LIVE_HINTWIN_IO;
		h->st.io_obs++;
	}
	n += ids[n] >= 0;
	b = blocked_stack(h, &st);
	memcpy(ids + n, b->ids, (size_t)b->nids * sizeof(int));
	observe(h, now, kind, ids, n + b->nids, b->stack, b->nstack,
		b->complete);
}

/* Threads gone: their cached stacks go. */
static void forget_blocked(struct src_live_hint *h, const pid_t *tids, size_t n)
{
	for (size_t i = h->nblk; i-- > 0;) {
		bool alive = false;

		for (size_t k = 0; k < n && !alive; k++)
			alive = tids[k] == h->blk[i].tid;
		if (!alive)
			h->blk[i] = h->blk[--h->nblk];
	}
}

void src_live_hint_tick(struct src_live_hint *h, int force)
{
	uint64_t c0 = eng_clock_thread_cpu_ns();
	double now = secs(h, clock_mono_ns());
	pid_t tids[MAX_THREADS];
	size_t n;

	if (!force && now - h->last_tick < SRC_LIVE_HINT_TICK_S)
		return;
	h->last_tick = now;
	h->in_tick = true;
	for (size_t i = 0; i < h->npend; i++)
		add_now(h, h->pend[i].t, h->pend[i].off_s, h->pend[i].kind,
			h->pend[i].ids, h->pend[i].nids, h->pend[i].stack,
			h->pend[i].nstack, h->pend[i].left, h->pend[i].nleft,
			h->pend[i].complete);
	h->npend = 0;
	/* drain before following threads: an exited thread's last samples
	 * are still in its ring */
	eng_perfsample_drain(h->ps, on_sample, h);
	eng_perfsample_sync_threads(h->ps);
	n = eng_perfsample_threads(h->ps, tids, MAX_THREADS);
	forget_blocked(h, tids, n);
	for (size_t i = 0; i < n; i++)
		observe_thread(h, tids[i], now);
	src_live_hintwin_expire(h->win, now);
	if (h->off != NULL)
		src_live_hintoff_expire(h->off, now);
	h->in_tick = false;
	h->st.ticks++;
	h->st.tick_cpu_ns += eng_clock_thread_cpu_ns() - c0;
}

void src_live_hint_thread_new(struct src_live_hint *h, pid_t tid)
{
	eng_perfsample_add_thread(h->ps, tid, NULL);
}

void src_live_hint_set_disc(struct src_live_hint *h, pc_disc_fn fn, void *arg)
{
	h->disc = fn;
	h->disc_arg = arg;
}

void src_live_hint_set_tally(struct src_live_hint *h, struct src_live_samples *t)
{
	h->tally = t;
}

void src_live_hint_share_names(struct src_live_hint *h,
			       struct src_live_pyname *names)
{
	src_live_pyname_free(h->pyn);
	h->pyn = src_live_pyname_share(names);
	name_script(h);
}

struct src_live_hintpy *src_live_hint_python(struct src_live_hint *h)
{
	return h->py;
}

void src_live_hint_modules_changed(struct src_live_hint *h)
{
	eng_perfsample_modules_changed(h->ps);
	/* a pc with no module before may be in the new one */
	forget_pcs(h);
	if (h->py_retry && h->py == NULL)
		open_python(h);
	h->py_retry = h->py == NULL;
}

void src_live_hint_exec(struct src_live_hint *h)
{
	/* the old image's code objects and addresses name nothing now */
	src_live_hintpy_free(h->py);
	h->py = NULL;
	memset(h->pycache, 0, sizeof(h->pycache));
	if (h->pyn != NULL)
		src_live_pyname_forget_codes(h->pyn);
	h->eval_id = -1;
	free(h->interp);
	h->interp = NULL;
	h->py_retry = true;
	src_live_hint_modules_changed(h);
}

void src_live_hint_note(struct src_live_hint *h, const struct pc_discovery *d)
{
	char path[700];
	struct sobj *o;

	if (d->kind != PC_DISC_SYNCOBJ || d->retired || d->name == NULL ||
	    d->sync_class == NULL)
		return;
	snprintf(path, sizeof(path), "/SyncObject/%s/%s", d->sync_class,
		 d->name);
	h->objs = realloc(h->objs, (h->nobjs + 1) * sizeof(*h->objs));
	if (h->objs == NULL)
		abort();
	o = &h->objs[h->nobjs++];
	o->addr = d->addr;
	o->size = class_size(d->sync_class);
	o->id = src_live_hintwin_intern(h->win, path);
}

double src_live_hint_hint(struct src_live_hint *h, const char *path)
{
	return src_live_hint_hint_many(&h, 1, path);
}

double src_live_hint_hint_many(struct src_live_hint *const *h, size_t n,
			       const char *path)
{
	const struct src_live_hintwin *w[64];
	double py = n > 0 && h[0]->pyn ? src_live_pyname_hint(h[0]->pyn, path) : -1;
	char bare[1200];
	int kind = -1;
	const char *q = pc_source_hint_kind(path, bare, sizeof(bare));

	if (py >= 0)   /* a Python function's line or caller */
		return py;
	if (q != NULL) {
		path = bare;   /* a wait asked here: of any kind */
		if (strcmp(q, PC_SRC_HINT_CPU) == 0)
			kind = SRC_LIVE_HINTWIN_CPU;   /* CPU samples alone */
	}
	for (size_t i = 0; i < n && i < 64; i++)
		w[i] = h[i] != NULL ? h[i]->win : NULL;
	return src_live_hintwin_hint_many(w, n < 64 ? n : 64, path, kind);
}

double src_live_hint_wait_many(struct src_live_hint *const *h, size_t n,
			       const char *path, int kind,
			       const char *const *names, size_t nnames)
{
	const struct src_live_hintwin *w[64];

	for (size_t i = 0; i < n && i < 64; i++)
		w[i] = h[i] != NULL ? h[i]->win : NULL;
	return src_live_hintwin_wait_many(w, n < 64 ? n : 64, path,
					  (enum src_live_hintwin_kind)kind,
					  names, nnames);
}

struct py_callees {
	const char *caller, *interp;
	pc_path_fn fn;
	void *arg;
};

/* A Python function's callees without the interpreter's C code
 * (src_live_pyname_refines says why). */
static void py_callee(void *arg, const char *path)
{
	struct py_callees *c = arg;

	if (src_live_pyname_refines(c->caller, path, c->interp))
		c->fn(c->arg, path);
}

void src_live_hint_callees(struct src_live_hint *h, const char *path, pc_path_fn fn, void *arg)
{
	struct py_callees c = { path, h->interp, fn, arg };

	src_live_hintwin_callees(h->win, path, py_callee, &c);
}

void src_live_hint_roots(struct src_live_hint *h, const char *const *starts, size_t nstarts,
	       pc_path_fn fn, void *arg)
{
	src_live_hintwin_roots(h->win, starts, nstarts, fn, arg);
}

const struct src_live_hint_stats *src_live_hint_stats(const struct src_live_hint *h)
{
	return &h->st;
}

void src_live_hint_cpu_counts(const struct src_live_hint *h, const char *path,
		    const char *within, double after, size_t *n_within,
		    size_t *n_both, double *latest)
{
	src_live_hintwin_count_after(h->win, SRC_LIVE_HINTWIN_CPU, after, path, within, n_within, n_both,
		       latest);
}

void src_live_hint_cpu_counts_threads(const struct src_live_hint *h, const char *path,
			    const char *const *threads, size_t n, double after,
			    size_t *n_in, size_t *n_code, double *latest)
{
	src_live_hintwin_count_threads(h->win, SRC_LIVE_HINTWIN_CPU, after, path,
				       threads, n, n_in, n_code, latest);
}

void src_live_hint_cpu_reentered(const struct src_live_hint *h, const char *path, size_t *n_raw,
		       size_t *n_gone)
{
	src_live_hintwin_count_reentered(h->win, SRC_LIVE_HINTWIN_CPU, path, n_raw, n_gone);
}

struct eng_perfsample *src_live_hint_sampler(struct src_live_hint *h)
{
	return h->ps;
}

size_t src_live_hint_count(const struct src_live_hint *h, int kind)
{
	return src_live_hintwin_count(h->win, (enum src_live_hintwin_kind)kind);
}

void src_live_hint_funcs_counts(const struct src_live_hint *h, const char *const *names,
		      size_t nnames, const char *code, const char *within,
		      double after, size_t *n_within, size_t *n_both,
		      double *latest)
{
	src_live_hintwin_count_funcs_after(h->win, SRC_LIVE_HINTWIN_CPU, after, names, nnames, code,
			     within, n_within, n_both, latest);
}

int src_live_hint_offcpu_start(struct src_live_hint *h, struct hunch_err *err)
{
	int rc = eng_perfsample_offcpu_start(h->ps, err);

	if (rc == 0 && h->off == NULL)
		h->off = src_live_hintoff_new(SRC_LIVE_HINT_WINDOW_S);
	return rc;
}

void src_live_hint_off_sums(const struct src_live_hint *h,
			    const struct src_live_hintoff_query *q,
			    struct src_live_hintoff_sums *out)
{
	if (h->off == NULL) {
		*out = (struct src_live_hintoff_sums){ .latest = q->after };
		return;
	}
	src_live_hintoff_sum_after(h->off, h->win, q, out);
}
