/*
 * eng_sampler.c - the shared-memory sampler (see eng_sampler.h).
 *
 * Loads from the segment use __atomic builtins (a GCC/Clang extension that
 * C17 <stdatomic.h> cannot apply to the volatile, non-_Atomic fields of
 * the shared ABI header) so that the compiler keeps the protocol's order.
 */
#include "eng_sampler.h"
#include "eng_clock.h"
#include "hunch_abi.h"
#include "eng_taskcpu.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

#define TIMER_TRIES 8          /* protector mismatches before giving up */
#define RING_STUCK_TICKS 50    /* a half-written ring entry is skipped */
#define EVQ_SIZE 8192u
#define TID_MAX 4194304        /* PID_MAX_LIMIT on 64-bit Linux */

struct thr {
	bool live;
	uint32_t gen;
	int32_t tid;
	uint64_t start_fn;
	int64_t *vals;         /* per variable id */
	uint32_t vals_cap;
	/* Per variable id: 1 when the last read kept the value before (the
	 * thread is inside an update of that timer: descheduled between
	 * its prot1++ and prot2++, which retrying cannot wait out). */
	int64_t *stale;
	uint32_t stale_cap;
	int sched_fd;          /* /proc/<pid>/task/<tid>/schedstat or -1 */
	bool cpu_have;         /* cpu_ns read during this tick */
	uint64_t cpu_ns;
	uint64_t obs_last;     /* native units */
};

struct lvar {
	uint64_t off;
	uint32_t id;
	uint32_t kind;
};

struct eng_sampler {
	struct eng_shm *shm;
	struct eng_shm_layout lay;     /* our copy, never re-read */
	const struct eng_clock *clk;
	volatile unsigned char *base;
	pid_t pid;
	clockid_t pid_clock;
	bool pid_clock_ok;
	uint64_t period_ns;
	struct eng_vars *vars;
	struct lvar *lv;               /* live variables, rebuilt when dirty */
	uint32_t nlv, lv_cap;
	bool lv_dirty;
	int64_t *retired;              /* per id */
	uint32_t retired_cap;
	struct thr *thr;               /* per index */
	uint64_t ring_tail, stuck_pos;
	unsigned stuck;
	struct eng_thread_event *evq;
	uint32_t evq_head, evq_n;
	uint64_t obs_tick;             /* native, this tick */
	uint64_t last_target_cpu;
	uint64_t obs_carry;            /* native, since last_target_cpu */
	struct eng_sampler_stats st;
	char problem[256];
};

__attribute__((format(printf, 2, 3)))
static void problem(struct eng_sampler *s, const char *fmt, ...)
{
	va_list ap;

	s->st.corrupt++;
	va_start(ap, fmt);
	vsnprintf(s->problem, sizeof(s->problem), fmt, ap);
	va_end(ap);
}

static volatile struct hunch_shm_header *hdr(const struct eng_sampler *s)
{
	return (volatile struct hunch_shm_header *)s->base;
}

static volatile unsigned char *block(const struct eng_sampler *s, uint32_t i)
{
	return s->base + s->lay.blocks_off + ((uint64_t)i << s->lay.block_shift);
}

static volatile struct hunch_thread_slot *slot(const struct eng_sampler *s,
					       uint32_t i)
{
	return (volatile struct hunch_thread_slot *)(s->base +
		s->lay.table_off) + i;
}

int eng_sampler_create(struct eng_shm *shm, struct eng_sampler **out,
		       struct hunch_err *err)
{
	struct eng_sampler *s = calloc(1, sizeof(*s));
	uint32_t i;
	int rc;

	if (s == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	s->shm = shm;
	s->lay = *eng_shm_layout(shm);
	s->clk = eng_shm_clock(shm);
	s->base = eng_shm_base(shm);
	s->period_ns = (uint64_t)(1e9 / ENG_SAMPLER_DEFAULT_HZ);
	s->thr = calloc(s->lay.max_threads, sizeof(*s->thr));
	s->evq = calloc(EVQ_SIZE, sizeof(*s->evq));
	if (s->thr == NULL || s->evq == NULL) {
		eng_sampler_destroy(s);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < s->lay.max_threads; i++)
		s->thr[i].sched_fd = -1;
	rc = eng_rt_vars_create(1ull << s->lay.block_shift, &s->vars, err);
	if (rc < 0) {
		eng_sampler_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

void eng_sampler_destroy(struct eng_sampler *s)
{
	uint32_t i;

	if (s == NULL)
		return;
	for (i = 0; s->thr != NULL && i < s->lay.max_threads; i++) {
		free(s->thr[i].vals);
		free(s->thr[i].stale);
		if (s->thr[i].sched_fd >= 0)
			close(s->thr[i].sched_fd);
	}
	free(s->thr);
	free(s->evq);
	free(s->lv);
	free(s->retired);
	eng_rt_vars_destroy(s->vars);
	free(s);
}

void eng_sampler_set_pid(struct eng_sampler *s, pid_t pid)
{
	s->pid = pid;
	s->pid_clock_ok = clock_getcpuclockid(pid, &s->pid_clock) == 0;
	s->last_target_cpu = 0;
	s->obs_carry = 0;
}

int eng_sampler_set_rate(struct eng_sampler *s, double hz,
			 struct hunch_err *err)
{
	if (!(hz >= 0.1 && hz <= 1000.0))
		return hunch_err_set(err, -EINVAL,
				     "sampling rate %g Hz is out of "
				     "range: use 0.1 to 1000 Hz",
				     hz);
	s->period_ns = (uint64_t)(1e9 / hz);
	return 0;
}

/* ---- variables ---- */

static int grow_i64(int64_t **a, uint32_t *cap, uint32_t want)
{
	uint32_t nc = *cap ? *cap : 256;
	int64_t *na;

	if (want <= *cap)
		return 0;
	while (nc < want)
		nc *= 2;
	na = realloc(*a, nc * sizeof(*na));
	if (na == NULL)
		return -ENOMEM;
	memset(na + *cap, 0, (nc - *cap) * sizeof(*na));
	*a = na;
	*cap = nc;
	return 0;
}

int eng_sampler_var_alloc(struct eng_sampler *s, enum eng_var_kind kind,
			  uint32_t *id, uint64_t *handle, struct hunch_err *err)
{
	uint32_t i;
	int rc = eng_rt_vars_alloc(s->vars, kind, id, err);

	if (rc < 0)
		return rc;
	if (grow_i64(&s->retired, &s->retired_cap, *id + 1) < 0) {
		eng_rt_vars_release(s->vars, *id);
		return hunch_err_set(err, -ENOMEM, "out of memory");
	}
	s->retired[*id] = 0;
	for (i = 0; i < s->lay.max_threads; i++) {
		if (s->thr[i].vals_cap > *id)
			s->thr[i].vals[*id] = 0;
		if (s->thr[i].stale_cap > *id)
			s->thr[i].stale[*id] = 0;
	}
	*handle = eng_rt_vars_handle(s->vars, *id);
	s->lv_dirty = true;
	return 0;
}

/* The caller promises no instrumentation still writes this handle, so
 * the slot is zeroed in every block that can have been written: every
 * index a thread holds, adopted or not.  A thread that registered since
 * the last tick (a dlopen'ed runtime library registers threads at their
 * first primitive, which may be the very instrumentation being removed)
 * has written its block before the sampler adopted it; left there, its
 * value would be read as the next owner's of the slot (a call-rate
 * probe's mutex address, seen again through a condition variable's
 * discovery ring).  Blocks of FREE indexes are clean (new, or cleaned
 * at retirement). */
void eng_sampler_var_free(struct eng_sampler *s, uint32_t id)
{
	enum eng_var_kind k = eng_rt_vars_kind(s->vars, id);
	uint64_t off = eng_rt_vars_handle(s->vars, id);
	size_t len = k == ENG_VAR_COUNTER ? HUNCH_COUNTER_SIZE : HUNCH_TIMER_SIZE;
	uint32_t i;

	if (k == ENG_VAR_NONE)
		return;
	for (i = 0; i < s->lay.max_threads; i++)
		if (s->thr[i].live ||
		    LD(&slot(s, i)->state) != HUNCH_THR_FREE)
			memset((void *)(block(s, i) + off), 0, len);
	s->retired[id] = 0;
	eng_rt_vars_release(s->vars, id);
	s->lv_dirty = true;
}

static int rebuild_lv(struct eng_sampler *s)
{
	uint32_t cap = eng_rt_vars_cap(s->vars), id, n = 0;

	if (cap > s->lv_cap) {
		struct lvar *nl = realloc(s->lv, cap * sizeof(*nl));

		if (nl == NULL)
			return -ENOMEM;
		s->lv = nl;
		s->lv_cap = cap;
	}
	for (id = 0; id < cap; id++) {
		enum eng_var_kind k = eng_rt_vars_kind(s->vars, id);

		if (k == ENG_VAR_NONE)
			continue;
		s->lv[n].off = eng_rt_vars_handle(s->vars, id);
		s->lv[n].id = id;
		s->lv[n].kind = (uint32_t)k;
		n++;
	}
	s->nlv = n;
	s->lv_dirty = false;
	return 0;
}

/* ---- reading ---- */

struct tsnap {
	uint64_t total, start;
	int64_t count;
};

/* Figure 11 of the devguide: prot2, fields, prot1; retry on mismatch. */
static bool read_timer(struct eng_sampler *s, volatile struct hunch_timer *t,
		       struct tsnap *o)
{
	int i;

	s->st.timer_reads++;
	for (i = 0; i < TIMER_TRIES; i++) {
		uint64_t p2 = LD(&t->prot2);

		o->total = LD(&t->total);
		o->count = LD(&t->count);
		o->start = LD(&t->start);
		if (LD(&t->prot1) == p2)
			return true;
		s->st.retries++;
	}
	s->st.skipped++;
	return false;
}

/* Field 1 of schedstat: ns on the CPU, the base of CLOCK_THREAD_CPUTIME_ID. */
static bool thread_cpu(struct eng_sampler *s, struct thr *t, uint64_t *ns)
{
	char path[96];
	uint64_t wait;

	if (t->cpu_have) {
		*ns = t->cpu_ns;
		return true;
	}
	if (t->sched_fd < 0) {
		if (s->pid <= 0 || t->tid <= 0)
			return false;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat",
			 (int)s->pid, (int)t->tid);
		t->sched_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (t->sched_fd < 0)
			return false;
	}
	if (!eng_taskcpu_read_fd(t->sched_fd, &t->cpu_ns, &wait))
		return false;
	t->cpu_have = true;
	*ns = t->cpu_ns;
	return true;
}

static int64_t timer_value(struct eng_sampler *s, struct thr *t,
			   volatile struct hunch_timer *tm, uint32_t kind,
			   int64_t prev, bool *kept)
{
	struct tsnap o;
	uint64_t now, v;

	if (!read_timer(s, tm, &o)) {
		*kept = true;  /* the value before; read again next tick */
		return prev;
	}
	if (o.count < 0) {
		problem(s, "a timer of thread %d has a negative nesting count",
			(int)t->tid);
		o.count = 0;
	}
	v = o.total;
	if (kind == ENG_VAR_WALL_TIMER) {
		if (o.count > 0) {
			now = eng_clock_wall_native(s->clk);
			v += now > o.start ? now - o.start : 0;
		}
		v = eng_clock_wall_to_ns(s->clk, v);
	} else if (o.count > 0 && thread_cpu(s, t, &now)) {
		v += now > o.start ? now - o.start : 0;
	}
	if ((int64_t)v < prev) {
		s->st.rollbacks++;
		return prev;  /* clamped, not passed on */
	}
	return (int64_t)v;
}

static int grow_vals(struct eng_sampler *s, struct thr *t)
{
	uint32_t cap = eng_rt_vars_cap(s->vars);

	if (grow_i64(&t->vals, &t->vals_cap, cap) < 0 ||
	    grow_i64(&t->stale, &t->stale_cap, cap) < 0)
		return -ENOMEM;
	return 0;
}

/* Variable `id` of thread t now, into t->vals[id] and t->stale[id]. */
static void read_var(struct eng_sampler *s, struct thr *t,
		     volatile unsigned char *b, uint64_t off, uint32_t kind,
		     uint32_t id)
{
	bool kept = false;

	if (kind == ENG_VAR_COUNTER)
		t->vals[id] = LD((volatile int64_t *)(b + off));
	else
		t->vals[id] = timer_value(s, t, (volatile struct hunch_timer *)
					  (b + off), kind, t->vals[id], &kept);
	t->stale[id] = kept;
}

static void sample_thread(struct eng_sampler *s, uint32_t i)
{
	struct thr *t = &s->thr[i];
	volatile unsigned char *b = block(s, i);
	volatile struct hunch_block_hdr *bh = (volatile void *)b;
	uint64_t obs;
	uint32_t k;

	if (grow_vals(s, t) < 0)
		return;
	t->cpu_have = false;
	for (k = 0; k < s->nlv; k++)
		read_var(s, t, b, s->lv[k].off, s->lv[k].kind, s->lv[k].id);
	obs = LD(&bh->obs_cost);
	if (obs >= t->obs_last)
		s->obs_tick += obs - t->obs_last;
	else
		problem(s, "the observed cost of thread %d went backwards",
			(int)t->tid);
	t->obs_last = obs;
}

/* One variable of every adopted thread, read now (outside a tick: no
 * ring, no cost accounting). */
/* Threads registered since the last tick, adopted now: a thread that
 * existed before the runtime library was loaded (attach, or the program
 * after an exec) registers at its first primitive, and a read between
 * two ticks must count it (a call-rate probe's 30 ms window on the
 * program's main thread read 0 calls of a function called 30000 times a
 * second, right after an exec). */
static void adopt(struct eng_sampler *s, uint32_t i,
		  volatile struct hunch_thread_slot *ts, uint32_t gen);

static void adopt_new(struct eng_sampler *s)
{
	for (uint32_t i = 0; i < s->lay.max_threads; i++) {
		volatile struct hunch_thread_slot *ts = slot(s, i);

		if (!s->thr[i].live && LD(&ts->state) == HUNCH_THR_LIVE)
			adopt(s, i, ts, LD(&ts->gen));
	}
}

int eng_sampler_var_refresh(struct eng_sampler *s, uint32_t id)
{
	enum eng_var_kind k = eng_rt_vars_kind(s->vars, id);
	uint64_t off = eng_rt_vars_handle(s->vars, id);
	uint32_t i;

	if (k == ENG_VAR_NONE)
		return -ENOENT;
	adopt_new(s);
	for (i = 0; i <= s->st.max_index && i < s->lay.max_threads; i++) {
		struct thr *t = &s->thr[i];
		volatile unsigned char *b = block(s, i);

		if (!t->live || grow_vals(s, t) < 0)
			continue;
		t->cpu_have = false;
		read_var(s, t, b, off, (uint32_t)k, id);
	}
	return 0;
}

/* ---- threads ---- */

static void push_event(struct eng_sampler *s, enum eng_thread_event_kind k,
		       uint32_t i)
{
	struct eng_thread_event *e;
	struct thr *t = &s->thr[i];

	if (s->evq_n == EVQ_SIZE) {
		s->st.events_dropped++;
		return;
	}
	e = &s->evq[(s->evq_head + s->evq_n++) % EVQ_SIZE];
	e->kind = k;
	e->t.idx = i;
	e->t.gen = t->gen;
	e->t.tid = t->tid;
	e->t.start_fn = t->start_fn;
}

static void adopt(struct eng_sampler *s, uint32_t i,
		  volatile struct hunch_thread_slot *ts, uint32_t gen)
{
	struct thr *t = &s->thr[i];
	int32_t tid = LD(&ts->tid);

	if (tid <= 0 || tid > TID_MAX) {
		problem(s, "thread index %u has an impossible tid %d", i,
			(int)tid);
		tid = 0;
	}
	t->live = true;
	t->gen = gen;
	t->tid = tid;
	t->start_fn = LD(&ts->start_fn);
	t->obs_last = 0;
	if (t->vals != NULL)
		memset(t->vals, 0, t->vals_cap * sizeof(*t->vals));
	if (t->stale != NULL)
		memset(t->stale, 0, t->stale_cap * sizeof(*t->stale));
	if (t->sched_fd >= 0)
		close(t->sched_fd);
	t->sched_fd = -1;
	if (i > s->st.max_index)
		s->st.max_index = i;
	s->st.threads_new++;
	push_event(s, ENG_THREAD_NEW, i);
}

static void forget(struct eng_sampler *s, uint32_t i)
{
	struct thr *t = &s->thr[i];

	t->live = false;
	if (t->sched_fd >= 0)
		close(t->sched_fd);
	t->sched_fd = -1;
}

/* Zero everything a variable was ever allocated in; whole pages are
 * punched out of the memfd so retired threads give their memory back. */
static void clean_block(struct eng_sampler *s, uint32_t i)
{
	uint64_t ext = eng_rt_vars_extent(s->vars);
	uint64_t off = s->lay.blocks_off + ((uint64_t)i << s->lay.block_shift);
	uint64_t pages = ext / 4096 * 4096;

	if (pages >= 2 * 4096 &&
	    fallocate(eng_shm_fd(s->shm), FALLOC_FL_PUNCH_HOLE |
		      FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)pages) == 0) {
		memset((void *)(s->base + off + pages), 0, ext - pages);
		return;
	}
	memset((void *)(s->base + off), 0, ext);
}

/* Devguide §1.15: final sample (done by the caller), clean, then free. */
static void retire(struct eng_sampler *s, uint32_t i,
		   volatile struct hunch_thread_slot *ts)
{
	struct thr *t = &s->thr[i];
	uint32_t k, want = HUNCH_THR_PENDING;

	for (k = 0; k < s->nlv; k++)
		s->retired[s->lv[k].id] += t->vals[s->lv[k].id];
	push_event(s, ENG_THREAD_EXIT, i);
	forget(s, i);
	clean_block(s, i);
	s->st.threads_retired++;
	__atomic_compare_exchange_n(&ts->state, &want, HUNCH_THR_FREE, false,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static void scan_thread(struct eng_sampler *s, uint32_t i)
{
	volatile struct hunch_thread_slot *ts = slot(s, i);
	struct thr *t = &s->thr[i];
	uint32_t state = LD(&ts->state), gen;

	if (state == HUNCH_THR_FREE || state == HUNCH_THR_CLAIMING) {
		if (t->live) {
			problem(s, "thread index %u became free without "
				"exiting", i);
			forget(s, i);
		}
		return;
	}
	if (state != HUNCH_THR_LIVE && state != HUNCH_THR_PENDING) {
		if (t->live)
			forget(s, i);
		problem(s, "thread index %u has an impossible state %u", i,
			state);
		return;
	}
	gen = LD(&ts->gen);
	if (t->live && t->gen != gen) {
		problem(s, "thread index %u changed generation while live", i);
		forget(s, i);
	}
	if (!t->live)
		adopt(s, i, ts, gen);
	sample_thread(s, i);
	if (state == HUNCH_THR_PENDING)
		retire(s, i, ts);
	else
		s->st.live_threads++;
}

static void consume_event(struct eng_sampler *s,
			  volatile struct hunch_ring_entry *e)
{
	uint32_t kind = LD(&e->kind), idx = LD(&e->idx);

	if (idx >= s->lay.max_threads)
		problem(s, "thread event names index %u of %u", idx,
			s->lay.max_threads);
	else if (kind == HUNCH_EV_THREAD_NEW)
		s->st.ring_new++;
	else if (kind == HUNCH_EV_THREAD_EXIT)
		s->st.ring_exit++;
	else if (kind != HUNCH_EV_FORK)
		problem(s, "thread event of unknown kind %u", kind);
}

/* Bounded: at most ring_size entries per tick, whatever head says. */
static void drain_ring(struct eng_sampler *s)
{
	volatile struct hunch_ring_entry *ring = (volatile void *)(s->base +
		s->lay.ring_off);
	uint64_t n = s->lay.ring_size, head = LD(&hdr(s)->ring_head), k;

	if (head < s->ring_tail) {
		problem(s, "the thread-event ring went backwards");
		s->ring_tail = head;
		return;
	}
	if (head - s->ring_tail > n) {
		s->st.ring_lost += head - s->ring_tail - n;
		s->ring_tail = head - n;
	}
	for (k = 0; k < n && s->ring_tail < head; k++) {
		volatile struct hunch_ring_entry *e =
			&ring[s->ring_tail & (n - 1)];
		uint64_t seq = LD(&e->seq);

		if (seq == s->ring_tail + 1) {
			consume_event(s, e);
		} else if (seq <= s->ring_tail) {
			/* Being written; skip it if it never completes. */
			if (s->stuck_pos != s->ring_tail) {
				s->stuck_pos = s->ring_tail;
				s->stuck = 0;
			}
			if (++s->stuck <= RING_STUCK_TICKS)
				break;
			s->st.ring_lost++;
		} else {
			s->st.ring_lost++;  /* overwritten by a later lap */
		}
		s->ring_tail++;
	}
}

static void check_header(struct eng_sampler *s)
{
	volatile struct hunch_shm_header *h = hdr(s);

	if (LD(&h->magic) != HUNCH_ABI_MAGIC ||
	    LD(&h->abi_version) != HUNCH_ABI_VERSION)
		problem(s, "the segment header was overwritten (magic or "
			"version changed); sampling goes on with hunch's copy "
			"of the layout");
	s->st.rt_no_index = LD(&h->rt_no_index);
}

/* A tick in which the target ran less CPU than this (it was stopped to
 * insert code, or other programs held the CPUs) is not a ratio of its
 * own: its instrumentation cost is carried to the next tick.  A cost
 * over a few microseconds of CPU can read as anything up to the
 * figure's 100x cap. */
#define OBS_MIN_CPU_NS 2000000u

static void observed_cost(struct eng_sampler *s)
{
	struct timespec ts;
	uint64_t cpu;

	s->st.obs_cost_total += s->obs_tick;
	s->obs_carry += s->obs_tick;
	if (!s->pid_clock_ok || clock_gettime(s->pid_clock, &ts) != 0) {
		s->st.obs_cost_ns = s->st.target_cpu_ns = 0;
		s->st.obs_fraction = s->st.obs_slowdown = 0;
		return;
	}
	cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (s->last_target_cpu == 0 || cpu < s->last_target_cpu) {
		s->last_target_cpu = cpu;
		s->obs_carry = 0;
		return;
	}
	if (cpu - s->last_target_cpu < OBS_MIN_CPU_NS)
		return;   /* the last tick's figures stand */
	s->st.obs_cost_ns = eng_clock_wall_to_ns(s->clk, s->obs_carry);
	s->st.target_cpu_ns = cpu - s->last_target_cpu;
	s->st.obs_fraction = (double)s->st.obs_cost_ns /
			     (double)s->st.target_cpu_ns;
	/* A 5% limit means 5% slower: cost over the time without it.  (As
	 * a share of the time with it, a cost of 50% of the CPU read as 0.5
	 * where the program ran 2x slower.) */
	s->st.obs_slowdown = s->st.obs_fraction >= 1 - 1e-9 ?
		ENG_SAMPLER_MAX_SLOWDOWN :
		s->st.obs_fraction / (1 - s->st.obs_fraction);
	if (s->st.obs_slowdown > ENG_SAMPLER_MAX_SLOWDOWN)
		s->st.obs_slowdown = ENG_SAMPLER_MAX_SLOWDOWN;
	s->last_target_cpu = cpu;
	s->obs_carry = 0;
}

int eng_sampler_tick(struct eng_sampler *s, struct hunch_err *err)
{
	uint64_t c0 = eng_clock_thread_cpu_ns(), w0 = clock_mono_ns();
	uint32_t i;

	if (s->lv_dirty && rebuild_lv(s) < 0)
		return hunch_err_set(err, -ENOMEM,
				     "out of memory while sampling");
	check_header(s);
	drain_ring(s);
	s->obs_tick = 0;
	s->st.live_threads = 0;
	for (i = 0; i < s->lay.max_threads; i++)
		scan_thread(s, i);
	observed_cost(s);
	s->st.ticks++;
	s->st.last_cpu_ns = eng_clock_thread_cpu_ns() - c0;
	s->st.last_wall_ns = clock_mono_ns() - w0;
	s->st.total_cpu_ns += s->st.last_cpu_ns;
	s->st.cost_fraction = (double)s->st.last_cpu_ns / (double)s->period_ns;
	return 0;
}

/* ---- results ---- */

int eng_sampler_var_agg(const struct eng_sampler *s, uint32_t id,
			struct eng_var_agg *a)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	if (eng_rt_vars_kind(s->vars, id) == ENG_VAR_NONE)
		return -ENOENT;
	for (i = 0; i <= s->st.max_index && i < s->lay.max_threads; i++) {
		const struct thr *t = &s->thr[i];
		int64_t v;

		if (!t->live || t->vals_cap <= id)
			continue;
		v = t->vals[id];
		if (a->nlive == 0 || v < a->min)
			a->min = v;
		if (a->nlive == 0 || v > a->max)
			a->max = v;
		a->live_sum += v;
		a->nlive++;
		a->nstale += t->stale_cap > id && t->stale[id] != 0;
	}
	a->retired = s->retired[id];
	a->sum = a->live_sum + a->retired;
	a->avg = a->nlive ? (double)a->live_sum / a->nlive : 0.0;
	return 0;
}

int eng_sampler_var_thread(const struct eng_sampler *s, uint32_t id,
			   uint32_t idx, int64_t *v)
{
	const struct thr *t;

	if (idx >= s->lay.max_threads || eng_rt_vars_kind(s->vars, id) ==
	    ENG_VAR_NONE)
		return -ENOENT;
	t = &s->thr[idx];
	if (!t->live)
		return -ENOENT;
	*v = t->vals_cap > id ? t->vals[id] : 0;
	return 0;
}

bool eng_sampler_var_stale(const struct eng_sampler *s, uint32_t id,
			   uint32_t idx)
{
	const struct thr *t = idx < s->lay.max_threads ? &s->thr[idx] : NULL;

	return t != NULL && t->live && t->stale_cap > id && t->stale[id] != 0;
}

int eng_sampler_thread(const struct eng_sampler *s, uint32_t idx,
		       struct eng_thread_info *ti)
{
	const struct thr *t;

	if (idx >= s->lay.max_threads || !s->thr[idx].live)
		return -ENOENT;
	t = &s->thr[idx];
	ti->idx = idx;
	ti->gen = t->gen;
	ti->tid = t->tid;
	ti->start_fn = t->start_fn;
	return 0;
}

int eng_sampler_next_event(struct eng_sampler *s, struct eng_thread_event *e)
{
	if (s->evq_n == 0)
		return 0;
	*e = s->evq[s->evq_head];
	s->evq_head = (s->evq_head + 1) % EVQ_SIZE;
	s->evq_n--;
	return 1;
}

const struct eng_sampler_stats *eng_sampler_stats(const struct eng_sampler *s)
{
	return &s->st;
}

const char *eng_sampler_problem(const struct eng_sampler *s)
{
	return s->problem;
}
