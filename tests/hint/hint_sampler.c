/*
 * hint_sampler.c - the hint sampler on a real target that nobody traces
 * (so it cannot be ptrace-stopped: TracerPid stays 0): tests/hint/
 * hint_target's spinning thread, deep in a call chain in -O2 code, gives
 * its function and every caller > 0.8 of the CPU samples; a function not
 * running reads 0; the threads blocked on hint_lock and on a heap mutex
 * (known by discovery only) and the ones blocked in read() and recv()
 * name those mutexes, that FIFO and that socket; the thread that exits is
 * dropped and its share falls to 0; the sampler can say since when an
 * activation has been on the spinning thread's stack, told apart by its
 * CFA and its return address, with the thread's CPU time at each sample
 * (what catchup starts a timer from: engine/README.md, Catchup), and a
 * drain by someone else hands the samples to the owner's sink.
 *
 * usage: hint_sampler HINT_TARGET
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eng_perfsample.h"
#include "eng_image.h"
#include "eng_taskstate.h"
#include "src_live_hint.h"
#include "tap.h"

struct target {
	pid_t pid;
	int out;
	int spin, lock, read, brief, sock, heap, fd;
	void *heap_addr;
	char exe[PATH_MAX];
	struct eng_image *img;
	uint64_t base;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct eng_image *image_at(void *arg, uint64_t addr, uint64_t *base)
{
	struct target *t = arg;

	*base = t->base;
	if (addr < t->base)
		return NULL;
	if (eng_image_func_at(t->img, addr - t->base) ||
	    eng_image_data_at(t->img, addr - t->base))
		return t->img;
	return NULL;
}

/* The executable's load base: its mapping at file offset 0. */
static uint64_t load_base(pid_t pid, const char *exe)
{
	char path[64], line[PATH_MAX + 128], file[PATH_MAX];
	unsigned long lo, off;
	uint64_t base = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f != NULL && base == 0 && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %s", &lo, &off,
			   file) == 3 && off == 0 && strcmp(file, exe) == 0)
			base = lo;
	}
	if (f != NULL)
		fclose(f);
	return base;
}

static int start(struct target *t, const char *prog, const char *fifo)
{
	int p[2];
	char line[256];
	FILE *f;

	if (realpath(prog, t->exe) == NULL || pipe(p) < 0)
		return -1;
	t->pid = fork();
	if (t->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(t->exe, t->exe, fifo, "60", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL ||
	    sscanf(line, "tids %d %d %d %d %d %d fd %d heap %p", &t->spin,
		   &t->lock, &t->read, &t->brief, &t->sock, &t->heap, &t->fd,
		   &t->heap_addr) != 8)
		return -1;
	t->base = load_base(t->pid, t->exe);
	return eng_image_open(t->exe, &t->img, NULL);
}

static double hint(struct src_live_hint *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static double hint(struct src_live_hint *h, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	double v;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	v = src_live_hint_hint(h, path);
	tap_diag("hint(%s) = %.3f", path, v);
	return v;
}

static char tracer_state(pid_t pid)
{
	char path[64], line[256];
	int tracer = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f != NULL && fgets(line, sizeof(line), f))
		sscanf(line, "TracerPid: %d", &tracer);
	if (f != NULL)
		fclose(f);
	return (char)tracer;
}

#define CODE "/Code/hint_target/hint_target.c/"

static void check_code(struct src_live_hint *h, struct target *t)
{
	const char *chain[] = { "hint_spin_inner", "hint_spin_mid",
				"hint_spin_outer", "spinner" };

	for (int i = 0; i < 4; i++)
		tap_ok(hint(h, CODE "%s", chain[i]) > 0.8, "%s (the spinning "
		       "function or a caller) > 0.8 of the samples",
		       chain[i]);
	tap_ok(hint(h, "/Code/hint_target/hint_target.c") > 0.8,
	       "its source file > 0.8 (inclusive)");
	tap_ok(hint(h, "/Code/hint_target") > 0.8, "its module > 0.8");
	tap_ok(hint(h, "/Process/%d/%d:spinner", t->pid, t->spin) > 0.8,
	       "the spinning thread > 0.8 of the samples");
	tap_ok(hint(h, CODE "hint_idle") == 0, "a function not running "
	       "reads 0");
	tap_ok(hint(h, CODE "hint_brief") == 0, "the exited thread's "
	       "function reads 0 once its samples left the window");
	tap_ok(hint(h, "/Process/%d/%d", t->pid, t->brief) == 0,
	       "the exited thread reads 0");
	tap_ok(hint(h, "/Process/%d/%d:main", t->pid, t->pid) == 0,
	       "the sleeping main thread reads 0");
}

static void check_blocked(struct src_live_hint *h, struct target *t,
			  const char *fifo)
{
	tap_ok(src_live_hint_count(h, 1) > 0, "threads were seen blocked in sync");
	/* two threads blocked in sync, seen at the same ticks: half each */
	tap_ok(hint(h, "/SyncObject/Mutex/hint_lock") == 0.5, "half the "
	       "sync-blocked observations name /SyncObject/Mutex/hint_lock "
	       "(by its symbol)");
	tap_ok(hint(h, "/SyncObject/Mutex/heap_lock") == 0.5, "the other "
	       "half name the heap mutex as discovery named it");
	tap_ok(hint(h, "/SyncObject/Mutex") == 1.0, "and their class all");
	tap_ok(hint(h, "/Process/%d/%d", t->pid, t->lock) == 0.5,
	       "the thread blocked on hint_lock: 0.5 of the sync "
	       "observations");
	tap_ok(src_live_hint_count(h, 2) > 0, "threads were seen blocked in I/O");
	/* two threads blocked in I/O, seen at the same ticks: half each */
	tap_ok(hint(h, "/Files/%s", fifo + 1) == 0.5, "half the I/O-blocked "
	       "observations name /Files%s (fd %d)", fifo, t->fd);
	tap_ok(hint(h, "/Process/%d/%d", t->pid, t->read) == 0.5,
	       "the reader thread: 0.5 of the I/O observations");
	tap_ok(hint(h, "/Files/unix:(unnamed)") == 0.5, "the other half "
	       "name the socket by its peer, as discovery does");
	tap_ok(hint(h, "/Process/%d/%d", t->pid, t->sock) == 0.5,
	       "the socket thread: 0.5 of the I/O observations");
	tap_ok(hint(h, "/Files/dev/null") == 0, "another file reads 0");
	/* each blocked thread's stack is unwound where it waits: its start
	 * function holds its share of the observations of its kind */
	tap_ok(hint(h, CODE "locker") == 0.5 && hint(h, CODE "heaplock") ==
	       0.5, "locker and heaplock (stacks unwound while blocked in "
	       "futex): 0.5 of the sync observations each");
	tap_ok(hint(h, CODE "reader") == 0.5 && hint(h, CODE "sock") == 0.5,
	       "reader and sock (blocked in read and recv): 0.5 of the I/O "
	       "observations each");
	tap_ok(src_live_hint_stats(h)->blocked_unwinds <= 8, "each blocked thread was "
	       "unwound once per place it blocks at, not every tick (%llu "
	       "unwinds for 4 threads)",
	       (unsigned long long)src_live_hint_stats(h)->blocked_unwinds);
}

/* The off-CPU stack of the reader thread, which is not stopped: from its
 * stack pointer and pc in /proc/TID/syscall, unwound to clone3. */
static void check_blocked_stack(struct src_live_hint *h, struct target *t)
{
	const struct eng_func *f = eng_sym_lazy_func_by_name(t->img, "reader");
	uint64_t lo = t->base + f->addr, hi = lo + f->size;
	struct eng_taskstate st;
	struct eng_psample s;
	int n, at = -1;

	tap_ok(eng_taskstate_read(t->pid, t->read, &st) == 0 &&
	       st.wait == ENG_TASK_IO && st.sp != 0 && st.pc != 0,
	       "the reader thread is blocked in I/O; /proc gives its stack "
	       "pointer and pc");
	n = eng_perfsample_unwind_blocked(src_live_hint_sampler(h), t->read, st.sp,
					st.pc, &s);
	for (int i = 0; i < n; i++)
		if (s.pc[i] >= lo && s.pc[i] < hi)
			at = i;
	tap_ok(n >= 3 && at >= 1 && s.pc[0] == st.pc, "unwound while "
	       "blocked: frame 0 at the system call, reader at frame %d of "
	       "%d", at, n);
	tap_eq(s.complete, 1, "the walk reached the thread's first frame");
	tap_eq(tracer_state(t->pid), 0, "and nobody stopped the thread "
	       "(TracerPid 0)");
}

static void check_since(struct src_live_hint *h, struct target *t)
{
	struct eng_perfsample *ps = src_live_hint_sampler(h);
	const struct eng_func *f = eng_sym_lazy_func_by_name(t->img,
							   "hint_spin_mid");
	const struct eng_func *idle = eng_sym_lazy_func_by_name(t->img,
							      "hint_idle");
	const struct eng_psample *s = eng_perfsample_latest(ps, t->spin);
	uint64_t lo = t->base + f->addr, hi = lo + f->size, cfa = 0;
	uint64_t since = 0, now = mono_ns();
	int rc;

	for (int i = 0; s != NULL && i < s->nframes; i++)
		if (s->pc[i] >= lo && s->pc[i] < hi)
			cfa = s->cfa[i];
	tap_ok(cfa != 0, "the newest sample has hint_spin_mid's frame with "
	       "its CFA");
	rc = eng_perfsample_on_stack_since(ps, t->spin, lo, hi, cfa, &since);
	tap_ok(rc >= 1 && since + 1000000000ull < now, "that activation has "
	       "been on the stack for over 1 s (rc %d)", rc);
	rc = eng_perfsample_on_stack_since(ps, t->spin, lo, hi, cfa + 16,
					 &since);
	tap_eq(rc, 0, "another CFA is another activation: not on the stack");
	lo = t->base + idle->addr;
	rc = eng_perfsample_on_stack_since(ps, t->spin, lo, lo + idle->size, 0,
					 &since);
	tap_eq(rc, 0, "hint_idle is not on the stack");
	tap_eq(eng_perfsample_on_stack_since(ps, 1, lo, lo + 1, 0, &since),
	       -ENOENT, "a thread not sampled: -ENOENT");
}

static uint64_t schedstat(pid_t pid, pid_t tid)
{
	unsigned long long v = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)tid);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* The run of samples holding hint_spin_mid's activation, named by CFA
 * and return address as catchup names it. */
static void check_run(struct src_live_hint *h, struct target *t)
{
	struct eng_perfsample *ps = src_live_hint_sampler(h);
	const struct eng_func *f = eng_sym_lazy_func_by_name(t->img,
							   "hint_spin_mid");
	const struct eng_psample *s = eng_perfsample_latest(ps, t->spin);
	uint64_t lo = t->base + f->addr, hi = lo + f->size, cfa = 0, ra = 0;
	uint64_t since = 0;
	struct eng_ps_run run, other;
	double per, period = 1e9 / SRC_LIVE_HINT_HZ;
	int rc;

	for (int i = 0; s != NULL && i + 1 < s->nframes; i++)
		if (s->pc[i] >= lo && s->pc[i] < hi) {
			cfa = s->cfa[i];
			ra = s->pc[i + 1] + 1;
		}

	eng_perfsample_on_stack_since(ps, t->spin, lo, hi, cfa, &since);
	rc = eng_perfsample_activation_run(ps, t->spin, lo, hi, cfa, ra, &run);
	tap_ok(rc >= 1 && run.n >= 2 && run.first_ns == since, "with its "
	       "return address too: the same run, %u samples", run.n);
	tap_ok(s != NULL && run.last_ns == s->t_ns && run.last_cpu ==
	       s->cpu_ns, "  ending at the newest sample");
	per = run.n > 1 ? (double)(run.last_cpu - run.first_cpu) /
			  (run.n - 1) : 0;
	tap_ok(per >= 0.9 * period && per <= 1.5 * period, "  its samples "
	       "are a period of the thread's CPU apart: %.3f ms (period "
	       "%.3f ms)", per / 1e6, period / 1e6);
	eng_perfsample_activation_run(ps, t->spin, lo, hi, cfa, ra + 1, &other);
	tap_eq(other.n, 0, "another return address is another activation");
}

/* Right after a drain the spinning thread's newest sample is at most a
 * sample period of its CPU old, so schedstat read then and again later
 * brackets its CPU time since that sample, whatever the drift between
 * the event's count and schedstat (steal time). */
static void check_cpu_since(struct src_live_hint *h, struct target *t)
{
	struct eng_perfsample *ps = src_live_hint_sampler(h);
	const struct eng_psample *s;
	double period = 1e9 / SRC_LIVE_HINT_HZ;
	uint64_t s1, s2, c, el = 0;
	int rc;

	/* Under load the spinner may not have run a sample period since
	 * the last drain: wait (up to 5 s) for a drain that holds one. */
	for (int i = 0; i < 50; i++) {
		uint64_t before = schedstat(t->pid, t->spin);

		usleep(100000);
		eng_perfsample_drain(ps, NULL, NULL);
		s = eng_perfsample_latest(ps, t->spin);
		if (s != NULL && s->cpu_ns > 0 &&
		    schedstat(t->pid, t->spin) - before >= period)
			break;
	}
	s1 = schedstat(t->pid, t->spin);
	s = eng_perfsample_latest(ps, t->spin);
	c = s != NULL ? s->cpu_ns : UINT64_MAX;
	usleep(300000);
	s2 = schedstat(t->pid, t->spin);
	rc = eng_perfsample_cpu_since(ps, t->spin, c, s2, &el);
	tap_ok(rc == 0 && el >= s2 - s1 &&
	       (double)el <= (double)(s2 - s1) + 1.2 * period + 2e6,
	       "the thread's CPU time since its newest sample, in "
	       "schedstat's units: %.3f ms (%.3f..%.3f)", (double)el / 1e6,
	       (double)(s2 - s1) / 1e6,
	       ((double)(s2 - s1) + 1.2 * period + 2e6) / 1e6);
}

static void count_sample(void *arg, const struct eng_psample *s)
{
	(void)s;
	(*(int *)arg)++;
}

/* A drain that names no function (as catchup's) feeds the sink. */
static void check_sink(struct src_live_hint *h)
{
	struct eng_perfsample *ps = src_live_hint_sampler(h);
	int seen = 0, n = 0;

	eng_perfsample_set_sink(ps, count_sample, &seen);
	for (int i = 0; i < 50 && n == 0; i++) {
		usleep(20000);
		n = eng_perfsample_drain(ps, NULL, NULL);
	}
	tap_ok(n > 0 && seen == n, "a drain without a function hands its %d "
	       "samples to the sink (%d)", n, seen);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/hint-XXXXXX", fifo[PATH_MAX];
	struct target t = { 0 };
	struct hunch_err err = { 0 };
	struct src_live_hint *h = NULL;
	size_t most = 0;
	uint64_t end;

	if (argc != 2 || mkdtemp(dir) == NULL)
		return 1;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	if (mkfifo(fifo, 0600) < 0 || start(&t, argv[1], fifo) < 0) {
		printf("Bail out! cannot start %s\n", argv[1]);
		return 1;
	}
	if (!tap_ok(src_live_hint_new(t.pid, SRC_LIVE_HINT_HZ, mono_ns(), image_at, &t, &h,
			    &err) == 0, "sampling pid %d", t.pid)) {
		tap_diag("%s", err.msg);
		return tap_done();
	}
	/* what the live source passes on when a sync metric discovers the
	 * heap mutex (src_live.c enqueue) */
	src_live_hint_note(h, &(struct pc_discovery){ .kind = PC_DISC_SYNCOBJ,
		 .sync_class = "Mutex", .name = "heap_lock",
		 .addr = (uint64_t)(uintptr_t)t.heap_addr, .pid = t.pid });
	/* 4.5 s: the brief thread's 0.5 s of spinning leaves the 3 s window */
	end = mono_ns() + 4500000000ull;
	while (mono_ns() < end) {
		usleep(100000);
		src_live_hint_tick(h, 1);
		if (eng_perfsample_nthreads(src_live_hint_sampler(h)) > most)
			most = eng_perfsample_nthreads(src_live_hint_sampler(h));
	}
	tap_eq(tracer_state(t.pid), 0, "the target is traced by nobody "
	       "(TracerPid 0): sampling needs no ptrace stop");
	tap_ok(most == 7 || most == 6, "threads sampled at most: %zu", most);
	tap_eq(eng_perfsample_nthreads(src_live_hint_sampler(h)), 6, "the exited thread "
	       "is no longer sampled");
	tap_ok(src_live_hint_count(h, 0) >= 10, "CPU samples in the window: %zu",
	       src_live_hint_count(h, 0));
	tap_diag("samples %llu lost %llu frames %llu one-frame %llu",
		 (unsigned long long)eng_perfsample_stats(src_live_hint_sampler(h))->samples,
		 (unsigned long long)eng_perfsample_stats(src_live_hint_sampler(h))->lost,
		 (unsigned long long)eng_perfsample_stats(src_live_hint_sampler(h))->frames,
		 (unsigned long long)
		 eng_perfsample_stats(src_live_hint_sampler(h))->unwind_fail);
	tap_diag("hunch CPU per tick %.0f us over %llu ticks (one thread "
		 "spinning, four blocked, their stacks unwound %llu times)",
		 (double)src_live_hint_stats(h)->tick_cpu_ns / 1e3 /
		 (double)(src_live_hint_stats(h)->ticks ? src_live_hint_stats(h)->ticks : 1),
		 (unsigned long long)src_live_hint_stats(h)->ticks,
		 (unsigned long long)src_live_hint_stats(h)->blocked_unwinds);
	check_code(h, &t);
	check_blocked(h, &t, fifo);
	check_blocked_stack(h, &t);
	check_since(h, &t);
	check_run(h, &t);
	check_cpu_since(h, &t);
	check_sink(h);
	tap_eq(kill(t.pid, 0), 0, "the target still runs");
	src_live_hint_free(h);
	kill(t.pid, SIGKILL);
	waitpid(t.pid, NULL, 0);
	eng_image_close(t.img);
	unlink(fifo);
	rmdir(dir);
	return tap_done();
}
