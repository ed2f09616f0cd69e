/*
 * eng_perfsample.c - cpu-clock stack samples of a target's threads,
 * unwound with libdwfl over the copied user stack (see eng_perfsample.h).
 *
 * Why one event per thread and not one per process with inherit: an
 * inherited event cannot be mmap'ed per child, and a per-process event
 * needs a CPU-wide event (root only on most machines).  Threads are
 * followed by eng_perfsample_sync_threads instead.
 *
 * Why the stack copy and not PERF_SAMPLE_CALLCHAIN: the kernel walks user
 * call chains by frame pointers, which -O2 code does not keep, so chains
 * stop after one or two frames.  The copy costs the kernel one memcpy of
 * ENG_PS_STACK_BYTES per sample (a few hundred per second).
 */
#include "eng_perfsample.h"
#include "eng_perfring.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "eng_clock.h"
#include "eng_perfswitch.h"
#include "eng_stackwalk.h"
#include "eng_taskcpu.h"

#define RING_PAGES 64           /* data pages per thread (power of two) */
#define RING_PAGES_MIN 8        /* when mlock limits refuse 64 */
#define RESCAN_NS 10000000000ull /* re-read the map unasked: every 10 s */
#define PAIRS 64                /* clock pairs kept per thread */

/* perf's x86-64 user registers, in the order of its enum perf_event_
 * x86_regs: AX BX CX DX SI DI BP SP IP (0-8), R8-R15 (16-23). */
#define REGS_MASK (0x1ffull | (0xffull << 16))
#define NREGS ENG_DWARF_NREGS

struct pthread_ring {
	pid_t tid;
	int fd;
	void *map;
	size_t map_len;
	struct eng_psample *keep;   /* cap of them, a ring */
	size_t nkeep, next, cap;    /* how many kept, where the next goes */
	bool seen;                  /* still listed in /proc (sync pass) */
	/* The event's count and schedstat's CPU time, read together at
	 * opening (count 0) and at each drain that found samples: a
	 * piecewise-linear map from one clock to the other, which drift
	 * apart (the count includes steal time) at a rate that changes */
	uint64_t cpu0;
	uint64_t pcount[PAIRS], psched[PAIRS];
	size_t npair, pnext;
	struct eng_perfswitch *sw;  /* its switch-outs, or NULL */
};

struct eng_perfsample {
	pid_t pid;
	double hz;
	size_t keep;                /* samples kept per thread added */
	bool user_only;             /* the kernel refused kernel samples */
	bool fp_chains;             /* ENG_PS_FP_CHAINS */
	uint64_t sw_tp;             /* offcpu: sched_switch's id, else 0 */
	const char *sw_why;         /* why a thread's switches are not seen */
	struct pthread_ring *th;
	size_t nth, capth;
	struct eng_stackwalk *sw;   /* libdwfl over the target's modules */
	/* the sample being unwound */
	uint64_t cur_regs[NREGS];   /* DWARF order: rax rdx rcx rbx rsi rdi
				     * rbp rsp r8..r15 rip */
	const uint8_t *cur_stack;
	uint64_t cur_stack_len;
	struct eng_psample cur;
	struct eng_perfring_buf ring;  /* a wrapped record, put together */
	struct eng_perfsample_stats st;
	eng_psample_fn sink;        /* eng_perfsample_set_sink */
	void *sink_arg;
	uint8_t *blocked_stack;     /* eng_perfsample_unwind_blocked's copy */
};

/* ---- unwinding: libdwfl over the copied registers and stack ---- */

static bool on_frame(void *arg, int i, uint64_t pc, uint64_t sp, bool act)
{
	struct eng_psample *s = arg;

	if (i == 0)             /* a walk starts (again) */
		s->nframes = 0;
	/* frame i's CFA is the stack pointer of its caller's frame */
	if (s->nframes > 0)
		s->cfa[s->nframes - 1] = sp;
	s->pc[s->nframes] = act ? pc : pc - 1;
	s->cfa[s->nframes] = 0;
	s->nframes++;
	return s->nframes < ENG_PS_MAX_FRAMES;
}

static void unwind(struct eng_perfsample *ps)
{
	struct eng_psample *s = &ps->cur;
	struct eng_walk_end end;

	s->nframes = 0;
	s->complete = 0;
	if (eng_stackwalk_dw(ps->sw, s->tid, ps->cur_regs, ps->cur_stack,
			     ps->cur_stack_len, on_frame, s, &end) < 0)
		s->nframes = 0;
	else
		s->complete = end.complete && s->nframes < ENG_PS_MAX_FRAMES;
	if (s->nframes == 0) {  /* at least where it was */
		s->pc[0] = ps->cur_regs[16];
		s->cfa[0] = 0;
		s->nframes = 1;
	}
	ps->st.frames += (uint64_t)s->nframes;
	ps->st.unwind_fail += s->nframes < 2;
}

/* ---- threads ---- */

static int open_event(struct eng_perfsample *ps, pid_t tid)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	/* cpu-clock counts nanoseconds: a fixed period, not a frequency, so
	 * the rate does not drift while the kernel adapts it */
	a.sample_period = (uint64_t)(1e9 / ps->hz);
	/* READ: the event's count, the thread's CPU time when the sample
	 * was taken (a CPU timer caught up from samples starts there) */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_READ;
	if (ps->fp_chains) {
		a.sample_type |= PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_kernel = 1;
		a.sample_max_stack = ENG_PS_MAX_FRAMES;
	} else {
		a.sample_type |= PERF_SAMPLE_REGS_USER |
				 PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = REGS_MASK;
		a.sample_stack_user = ENG_PS_STACK_BYTES;
	}
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_hv = 1;
	/* Time in system calls counts too, attributed to the user stack
	 * that made the call; without privilege, user time only. */
	a.exclude_kernel = ps->user_only;
	a.wakeup_events = 1u << 30;  /* never woken: drained by polling */
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && !ps->user_only) {
		ps->user_only = true;
		return open_event(ps, tid);
	}
	return fd < 0 ? -errno : fd;
}

static struct pthread_ring *find_thread(const struct eng_perfsample *ps,
					pid_t tid)
{
	for (size_t i = 0; i < ps->nth; i++)
		if (ps->th[i].tid == tid)
			return &ps->th[i];
	return NULL;
}

/* The ring: one header page and a power of two of data pages.  Without
 * CAP_IPC_LOCK the kernel bounds locked perf memory per user, so ask
 * again smaller before giving up. */
static int map_ring(struct pthread_ring *t, size_t nthreads)
{
	long page = sysconf(_SC_PAGESIZE);
	/* a program with hundreds of threads gets smaller rings: most of
	 * its threads wait, and those give no samples */
	size_t first = nthreads < 64 ? RING_PAGES : RING_PAGES_MIN;

	for (size_t n = first; n >= RING_PAGES_MIN; n /= 2) {
		t->map_len = (n + 1) * (size_t)page;
		t->map = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE,
			      MAP_SHARED, t->fd, 0);
		if (t->map != MAP_FAILED)
			return 0;
	}
	t->map = NULL;
	return -errno;
}

int eng_perfsample_add_thread(struct eng_perfsample *ps, pid_t tid,
			    struct hunch_err *err)
{
	struct pthread_ring t = { .tid = tid, .seen = true };
	int rc;

	if (find_thread(ps, tid) != NULL)
		return 0;
	t.fd = open_event(ps, tid);
	if (t.fd < 0)
		return hunch_err_set(err, t.fd,
				     "cannot sample thread %d of pid "
				     "%d with perf cpu-clock: %s (check "
				     "/proc/sys/kernel/perf_event_paranoid and "
				     "that hunch may trace the process)",
				     tid, ps->pid, strerror(-t.fd));
	t.cpu0 = eng_taskcpu_thread_ns(ps->pid, tid);
	rc = map_ring(&t, ps->nth);
	t.cap = ps->keep;
	t.keep = calloc(t.cap, sizeof(*t.keep));
	if (rc < 0 || t.keep == NULL) {
		close(t.fd);
		free(t.keep);
		return hunch_err_set(err, rc < 0 ? rc : -ENOMEM,
				     "cannot map the "
				     "perf ring buffer of thread %d of pid %d: "
				     "%s",
				     tid, ps->pid,
				     strerror(rc < 0 ? -rc : ENOMEM));
	}
	if (ps->sw_tp != 0 &&
	    eng_perfswitch_open(tid, ps->sw_tp, REGS_MASK, &t.sw,
				&ps->sw_why) < 0)
		t.sw = NULL;
	if (ps->nth == ps->capth) {
		ps->capth = ps->capth ? ps->capth * 2 : 16;
		ps->th = realloc(ps->th, ps->capth * sizeof(*ps->th));
		if (ps->th == NULL)
			abort();
	}
	ps->th[ps->nth++] = t;
	return 0;
}

static void free_thread(struct pthread_ring *t)
{
	eng_perfswitch_close(t->sw);
	munmap(t->map, t->map_len);
	close(t->fd);
	free(t->keep);
}

void eng_perfsample_drop_thread(struct eng_perfsample *ps, pid_t tid)
{
	struct pthread_ring *t = find_thread(ps, tid);

	if (t == NULL)
		return;
	free_thread(t);
	*t = ps->th[--ps->nth];
}

int eng_perfsample_sync_threads(struct eng_perfsample *ps)
{
	char path[64];
	struct dirent *e;
	size_t i;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)ps->pid);
	d = opendir(path);
	if (d == NULL)
		return -ESRCH;
	for (i = 0; i < ps->nth; i++)
		ps->th[i].seen = false;
	while ((e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct pthread_ring *t;

		if (tid <= 0)
			continue;
		t = find_thread(ps, tid);
		if (t != NULL)
			t->seen = true;
		else
			eng_perfsample_add_thread(ps, tid, NULL);
	}
	closedir(d);
	for (i = ps->nth; i-- > 0;)
		if (!ps->th[i].seen)
			eng_perfsample_drop_thread(ps, ps->th[i].tid);
	return (int)ps->nth;
}

size_t eng_perfsample_nthreads(const struct eng_perfsample *ps)
{
	return ps->nth;
}

size_t eng_perfsample_threads(const struct eng_perfsample *ps, pid_t *tids,
			    size_t max)
{
	size_t n = 0;

	for (; n < ps->nth && n < max; n++)
		tids[n] = ps->th[n].tid;
	return n;
}

void eng_perfsample_modules_changed(struct eng_perfsample *ps)
{
	eng_stackwalk_maps_changed(ps->sw);
}

/* ---- reading the rings ---- */

/* Registers as perf lays them out (REGS_MASK bit order) into DWARF
 * order. */
static void regs_to_dwarf(const uint64_t *r, uint64_t *dw)
{
	static const int from[NREGS] = {
		0 /* ax */, 3 /* dx */, 2 /* cx */, 1 /* bx */, 4 /* si */,
		5 /* di */, 6 /* bp */, 7 /* sp */,
		9, 10, 11, 12, 13, 14, 15, 16 /* r8..r15 */, 8 /* ip */,
	};

	for (int i = 0; i < NREGS; i++)
		dw[i] = r[from[i]];
}

/* One PERF_RECORD_SAMPLE: ip, pid/tid, time, read (the count),
 * regs_user (abi + regs), stack_user (size, data, dyn_size). */
static bool parse_sample(struct eng_perfsample *ps, const uint8_t *p,
			 const uint8_t *end)
{
	uint64_t abi, size, dyn;
	const uint8_t *data;

	if (end - p < 8 + 8 + 8 + 8 + 8)
		return false;
	p += 8;                                   /* ip */
	ps->cur.tid = (pid_t)((const uint32_t *)p)[1];
	p += 8;
	memcpy(&ps->cur.t_ns, p, 8);
	p += 8;
	memcpy(&ps->cur.cpu_ns, p, 8);
	p += 8;
	memcpy(&abi, p, 8);
	p += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return false;  /* a kernel thread, or no user context */
	if (end - p < NREGS * 8 + 8)
		return false;
	regs_to_dwarf((const uint64_t *)p, ps->cur_regs);
	p += NREGS * 8;
	memcpy(&size, p, 8);
	p += 8;
	data = p;
	if (size > 0) {
		if ((uint64_t)(end - p) < size + 8)
			return false;
		memcpy(&dyn, p + size, 8);
		size = dyn < size ? dyn : size;
	}
	ps->cur_stack = data;
	ps->cur_stack_len = size;
	ps->cur.off_ns = 0;
	return true;
}

/* A PERF_SAMPLE_CALLCHAIN sample: ip, pid/tid, time, read, nr, ips[nr]; the
 * chain's context markers (PERF_CONTEXT_USER...) are skipped. */
static bool parse_chain(struct eng_perfsample *ps, const uint8_t *p,
			const uint8_t *end)
{
	struct eng_psample *s = &ps->cur;
	uint64_t nr, ip;

	if (end - p < 40)
		return false;
	p += 8;
	s->tid = (pid_t)((const uint32_t *)p)[1];
	memcpy(&s->t_ns, p + 8, 8);
	memcpy(&s->cpu_ns, p + 16, 8);
	memcpy(&nr, p + 24, 8);
	p += 32;
	s->nframes = 0;
	s->complete = 0;
	for (uint64_t i = 0; i < nr && end - p >= 8; i++, p += 8) {
		memcpy(&ip, p, 8);
		if (ip >= (uint64_t)-4095 || s->nframes == ENG_PS_MAX_FRAMES)
			continue;
		s->pc[s->nframes] = s->nframes > 0 ? ip - 1 : ip;
		s->cfa[s->nframes++] = 0;
	}
	ps->st.frames += (uint64_t)s->nframes;
	ps->st.unwind_fail += s->nframes < 2;
	return s->nframes > 0;
}

/* The sample into ps->cur, unwound; false: nothing usable. */
static bool read_sample(struct eng_perfsample *ps, const uint8_t *p,
			const uint8_t *end)
{
	if (ps->fp_chains)
		return parse_chain(ps, p, end);
	if (!parse_sample(ps, p, end))
		return false;
	unwind(ps);
	return true;
}

static void keep_sample(struct pthread_ring *t, const struct eng_psample *s)
{
	t->keep[t->next] = *s;
	t->next = (t->next + 1) % t->cap;
	if (t->nkeep < t->cap)
		t->nkeep++;
}

static void add_pair(struct eng_perfsample *ps, struct pthread_ring *t)
{
	uint64_t c;

	if (read(t->fd, &c, sizeof(c)) != sizeof(c))
		return;
	t->pcount[t->pnext] = c;
	t->psched[t->pnext] = eng_taskcpu_thread_ns(ps->pid, t->tid);
	t->pnext = (t->pnext + 1) % PAIRS;
	if (t->npair < PAIRS)
		t->npair++;
}

struct drain_ctx {
	struct eng_perfsample *ps;
	struct pthread_ring *t;
	eng_psample_fn fn;
	void *arg;
	int n;
};

static void on_record(void *arg, const struct perf_event_header *h,
		      const uint8_t *body, const uint8_t *end)
{
	struct drain_ctx *c = arg;
	struct eng_perfsample *ps = c->ps;

	if (h->type == PERF_RECORD_SAMPLE && read_sample(ps, body, end)) {
		keep_sample(c->t, &ps->cur);
		if (c->fn != NULL)
			c->fn(c->arg, &ps->cur);
		c->n++;
	} else if (h->type == PERF_RECORD_LOST) {
		uint64_t lost;

		memcpy(&lost, body + 8, 8);
		ps->st.lost += lost;
		/* the retained samples no longer end where the next
		 * begins: a run of them must not bridge the hole */
		c->t->nkeep = 0;
	}
}

static int drain_thread(struct eng_perfsample *ps, struct pthread_ring *t,
			eng_psample_fn fn, void *arg)
{
	struct drain_ctx c = { ps, t, fn, arg, 0 };

	eng_perfring_drain(t->map, &ps->ring, on_record, &c);
	if (c.n > 0)
		add_pair(ps, t);
	return c.n;
}

/* A switch-out, unwound as a CPU sample is (eng_perfswitch_unwind_fn). */
static int unwind_switch(void *arg, pid_t tid, uint64_t t_ns,
			 const uint64_t *regs, const uint8_t *stack,
			 size_t len, struct eng_psample *out)
{
	struct eng_perfsample *ps = arg;

	regs_to_dwarf(regs, ps->cur_regs);
	ps->cur.tid = tid;
	ps->cur.t_ns = t_ns;
	ps->cur.cpu_ns = 0;
	ps->cur_stack = stack;
	ps->cur_stack_len = len;
	unwind(ps);
	*out = ps->cur;
	return 1;
}

int eng_perfsample_drain(struct eng_perfsample *ps, eng_psample_fn fn,
		       void *arg)
{
	uint64_t t0 = eng_clock_thread_cpu_ns();
	/* switch-outs go to the owner (the sink) when there is one: a
	 * catchup drain wants the newest CPU samples alone */
	eng_psample_fn sfn = ps->sink ? ps->sink : fn;
	void *sarg = ps->sink ? ps->sink_arg : arg;
	int n = 0;

	if (fn == NULL) {
		fn = ps->sink;
		arg = ps->sink_arg;
	}
	for (size_t i = 0; i < ps->nth; i++) {
		n += drain_thread(ps, &ps->th[i], fn, arg);
		if (ps->th[i].sw != NULL)
			ps->st.off_samples += (uint64_t)eng_perfswitch_drain(
				ps->th[i].sw, unwind_switch, ps, sfn, sarg);
	}
	ps->st.samples += (uint64_t)n;
	ps->st.drain_ns += eng_clock_thread_cpu_ns() - t0;
	ps->st.drains++;
	return n;
}

/* ---- questions about the recent samples ---- */

/* Does sample s hold the activation: a frame in [lo, hi) with CFA `cfa`
 * (0: any) returning to `ra` (0: any)?  pc[i + 1] is the return address
 * minus one (see struct eng_psample). */
static bool has_activation(const struct eng_psample *s, uint64_t lo,
			   uint64_t hi, uint64_t cfa, uint64_t ra)
{
	for (int i = 0; i < s->nframes; i++) {
		if (s->pc[i] < lo || s->pc[i] >= hi ||
		    (cfa != 0 && s->cfa[i] != cfa))
			continue;
		if (ra == 0 || (i + 1 < s->nframes && s->pc[i + 1] + 1 == ra))
			return true;
	}
	return false;
}

int eng_perfsample_activation_run(const struct eng_perfsample *ps, pid_t tid,
				uint64_t lo, uint64_t hi, uint64_t cfa,
				uint64_t ra, struct eng_ps_run *run)
{
	const struct pthread_ring *t = find_thread(ps, tid);
	size_t k;

	memset(run, 0, sizeof(*run));
	if (t == NULL || t->nkeep == 0)
		return -ENOENT;
	for (k = 0; k < t->nkeep; k++) {
		const struct eng_psample *s =
			&t->keep[(t->next + t->cap - 1 - k) % t->cap];

		if (!has_activation(s, lo, hi, cfa, ra))
			break;
		if (k == 0) {
			run->last_ns = s->t_ns;
			run->last_cpu = s->cpu_ns;
		}
		run->first_ns = s->t_ns;
		run->first_cpu = s->cpu_ns;
	}
	run->n = (unsigned)k;
	run->to_oldest = k > 0 && k == t->nkeep;
	if (k == 0)
		return 0;
	return run->to_oldest ? 2 : 1;
}

int eng_perfsample_on_stack_since(const struct eng_perfsample *ps, pid_t tid,
				uint64_t lo, uint64_t hi, uint64_t cfa,
				uint64_t *since_ns)
{
	struct eng_ps_run run;
	int rc = eng_perfsample_activation_run(ps, tid, lo, hi, cfa, 0, &run);

	if (rc > 0)
		*since_ns = run.first_ns;
	return rc;
}

/* schedstat's CPU time when the event's count was `count`: interpolated
 * between the pairs around it (opening, drains, now). */
static uint64_t sched_at(const struct pthread_ring *t, uint64_t count,
			 uint64_t cnow, uint64_t snow)
{
	uint64_t c0 = 0, s0 = t->cpu0;

	for (size_t k = 0; k <= t->npair; k++) {
		size_t i = (t->pnext + PAIRS - t->npair + k) % PAIRS;
		uint64_t c1 = k < t->npair ? t->pcount[i] : cnow;
		uint64_t s1 = k < t->npair ? t->psched[i] : snow;

		if (c1 < c0 || s1 < s0)
			continue;  /* a pair out of order: skipped */
		if (c1 >= count)
			return c1 == c0 ? s1 : s0 + (uint64_t)((long double)
			       (count - c0) * (s1 - s0) / (c1 - c0));
		c0 = c1;
		s0 = s1;
	}
	return s0;
}

int eng_perfsample_cpu_since(const struct eng_perfsample *ps, pid_t tid,
			   uint64_t count, uint64_t cpu_now, uint64_t *elapsed)
{
	const struct pthread_ring *t = find_thread(ps, tid);
	uint64_t now, then;

	if (t == NULL)
		return -ENOENT;
	if (read(t->fd, &now, sizeof(now)) != sizeof(now))
		return -EIO;
	if (count > now || cpu_now < t->cpu0 || t->cpu0 == 0)
		return -ERANGE;
	then = sched_at(t, count, now, cpu_now);
	*elapsed = cpu_now > then ? cpu_now - then : 0;
	return 0;
}

int eng_perfsample_unwind_stopped(struct eng_perfsample *ps, pid_t tid,
				const struct user_regs_struct *r,
				const void *stack, size_t len,
				struct eng_psample *out)
{
	const uint64_t dw[NREGS] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rip,
	};

	if (ps->fp_chains)
		return -ENOTSUP;
	memcpy(ps->cur_regs, dw, sizeof(dw));
	ps->cur.tid = tid;
	ps->cur.t_ns = clock_mono_ns();
	ps->cur.cpu_ns = 0;
	ps->cur.off_ns = 0;
	ps->cur_stack = stack;
	ps->cur_stack_len = len;
	unwind(ps);
	*out = ps->cur;
	return out->nframes;
}

int eng_perfsample_unwind_blocked(struct eng_perfsample *ps, pid_t tid,
				uint64_t sp, uint64_t pc,
				struct eng_psample *out)
{
	uint64_t dw[NREGS] = { 0 };
	struct iovec local, remote;
	struct eng_walk_end end;
	uint8_t *stack;
	ssize_t got;

	if (ps->fp_chains || sp == 0 || pc == 0)
		return -EINVAL;
	if (ps->blocked_stack == NULL &&
	    (ps->blocked_stack = malloc(ENG_PS_STACK_BYTES)) == NULL)
		return -ENOMEM;
	stack = ps->blocked_stack;
	local = (struct iovec){ stack, ENG_PS_STACK_BYTES };
	remote = (struct iovec){ (void *)(uintptr_t)sp, ENG_PS_STACK_BYTES };
	/* short when the stack's mapping ends within the copy (the top of
	 * the main thread's stack): the walk stops where the copy does */
	got = process_vm_readv(ps->pid, &local, 1, &remote, 1, 0);
	if (got <= 0)
		return got < 0 ? -errno : -EFAULT;
	dw[7] = sp;
	dw[16] = pc;
	memset(out, 0, sizeof(*out));
	out->tid = tid;
	out->t_ns = clock_mono_ns();
	if (eng_stackwalk_dw_known(ps->sw, tid, dw, 1u << 7 | 1u << 16, stack,
				   (size_t)got, on_frame, out, &end) < 0 ||
	    out->nframes == 0) {
		out->pc[0] = pc;
		out->nframes = 1;
	} else {
		out->complete = end.complete &&
				out->nframes < ENG_PS_MAX_FRAMES;
	}
	return out->nframes;
}

int eng_perfsample_set_keep(struct eng_perfsample *ps, size_t n)
{
	if (n < 2 || n > 65536)
		return -EINVAL;
	ps->keep = n;
	return 0;
}

void eng_perfsample_set_sink(struct eng_perfsample *ps, eng_psample_fn fn,
			   void *arg)
{
	ps->sink = fn;
	ps->sink_arg = arg;
}

const struct eng_psample *eng_perfsample_latest(const struct eng_perfsample *ps,
					      pid_t tid)
{
	const struct pthread_ring *t = find_thread(ps, tid);

	if (t == NULL || t->nkeep == 0)
		return NULL;
	return &t->keep[(t->next + t->cap - 1) % t->cap];
}

int eng_perfsample_offcpu_start(struct eng_perfsample *ps,
				struct hunch_err *err)
{
	if (ps->sw_tp != 0 || ps->sw_why != NULL)
		return ps->sw_why ? hunch_err_set(err, -ENOTSUP, "%s",
					       ps->sw_why) : 0;
	if (ps->fp_chains)
		ps->sw_why = "frame-pointer chains sample CPU alone";
	else
		ps->sw_tp = eng_perfswitch_tracepoint();
	for (size_t i = 0; ps->sw_tp != 0 && i < ps->nth; i++)
		if (eng_perfswitch_open(ps->th[i].tid, ps->sw_tp, REGS_MASK,
					&ps->th[i].sw, &ps->sw_why) < 0)
			ps->th[i].sw = NULL;
	if (ps->sw_why == NULL)
		return 0;
	return hunch_err_set(err, -ENOTSUP, "cannot sample where the threads "
			  "of pid %d leave their CPU: %s", ps->pid,
			  ps->sw_why);
}

const struct eng_perfsample_stats *
eng_perfsample_stats(const struct eng_perfsample *ps)
{
	return &ps->st;
}

/* ---- lifetime ---- */

int eng_perfsample_open(pid_t pid, double hz, struct eng_perfsample **out,
		      struct hunch_err *err)
{
	return eng_perfsample_open_flags(pid, hz, 0, out, err);
}

int eng_perfsample_open_flags(pid_t pid, double hz, unsigned flags,
			    struct eng_perfsample **out, struct hunch_err *err)
{
	struct eng_perfsample *ps;

	*out = NULL;
	if (!(hz >= 1 && hz <= 10000))
		return hunch_err_set(err, -EINVAL, "sample rate %g Hz out of "
				  "range (1..10000)", hz);
	ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	ps->pid = pid;
	ps->hz = hz;
	ps->keep = ENG_PS_KEEP;
	ps->fp_chains = flags & ENG_PS_FP_CHAINS;
	if (eng_stackwalk_open(pid, RESCAN_NS, &ps->sw) < 0) {
		free(ps);
		return hunch_err_set(err, -ESRCH,
				     "cannot read the memory map of "
				     "pid %d (/proc/%d/maps) to unwind its "
				     "samples; check that it still exists",
				     pid, pid);
	}
	*out = ps;
	return 0;
}

void eng_perfsample_close(struct eng_perfsample *ps)
{
	if (ps == NULL)
		return;
	for (size_t i = 0; i < ps->nth; i++)
		free_thread(&ps->th[i]);
	eng_stackwalk_close(ps->sw);
	free(ps->th);
	free(ps->ring.rec);
	free(ps->blocked_stack);
	free(ps);
}
