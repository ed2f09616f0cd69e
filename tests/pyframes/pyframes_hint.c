/*
 * pyframes_hint.c - the hint sampler's Python frames
 * (consultant/src_live_hintpy.c, src_live_hint.c): Debian's python3.11
 * running nested.py, sampled by perf cpu-clock while its Python stacks
 * are read at 100 Hz; each CPU sample holding the interpreter loop gets
 * its thread's Python frames read nearest its time.  Checked: exactly
 * the eight Python functions on the two threads' stacks are discovered
 * (`/Code/<python>/<file>/<qualname>`), the sampled call edges are
 * main -> outer -> inner and Thread.run -> worker, inner has no
 * callee (the interpreter's C code it runs is not one), the
 * interpreter loop's callees are the
 * outermost Python functions, and the share of
 * each spinning thread's CPU samples that hold its spinning function
 * (printed, with the joins that missed).
 *
 * Usage: pyframes_hint NESTED_PY
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock_mono.h"
#include "eng_image.h"
#include "src_live_hint.h"
#include "src_live_hintpy.h"
#include "tap.h"

#define PY "/usr/bin/python3.11"
#define FN(file, name) "/Code/<python>/" file "/" name
#define EVAL "/Code/python3.11/<unknown>/_PyEval_EvalFrameDefault"

struct target {
	pid_t pid, main_tid, worker_tid;
	struct eng_image *img;
	uint64_t base;
};

struct list {
	char p[64][512];
	int n;
};

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static struct eng_image *image_at(void *arg, uint64_t addr, uint64_t *base)
{
	struct target *t = arg;

	*base = t->base;
	if (addr >= t->base &&
	    addr - t->base < eng_image_span(t->img))
		return t->img;
	return NULL;
}

static uint64_t load_base(pid_t pid)
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
			   file) == 3 && off == 0 && strcmp(file, PY) == 0)
			base = lo;
	}
	if (f != NULL)
		fclose(f);
	return base;
}

static void add(void *arg, const char *path)
{
	struct list *l = arg;

	if (l->n < 64)
		snprintf(l->p[l->n++], sizeof(l->p[0]), "%s", path);
}

static void on_disc(void *arg, const struct pc_discovery *d)
{
	char path[512];

	snprintf(path, sizeof(path), "/Code/%s/%s/%s", d->module, d->srcfile,
		 d->function);
	add(arg, path);
}

static bool has(const struct list *l, const char *path)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->p[i], path) == 0)
			return true;
	return false;
}

static void print(const char *what, const struct list *l)
{
	for (int i = 0; i < l->n; i++)
		tap_diag("%s: %s", what, l->p[i]);
}

/* Start nested.py; wait for its truth file (the threads about to spin). */
static int start(struct target *t, const char *script, const char *truth)
{
	char name[16];
	FILE *f = NULL;
	int n;

	t->pid = fork();
	if (t->pid == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL)
			_exit(126);
		execl(PY, PY, script, truth, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 3000 && f == NULL; i++)
		if ((f = fopen(truth, "r")) == NULL)
			nap_ms(10);
	if (f == NULL || fscanf(f, "%15s %d %d", name, &t->main_tid, &n) != 3)
		return -1;
	while (fscanf(f, "%15s %d %d", name, &t->worker_tid, &n) != 3 ||
	       strcmp(name, "worker") != 0)
		if (fscanf(f, "%*[^\n]\n") == EOF)
			return -1;
	fclose(f);
	t->base = load_base(t->pid);
	return eng_image_open(PY, &t->img, NULL);
}

static double share(struct src_live_hint *h, const struct target *t,
		    pid_t tid, const char *code, double after, size_t *n)
{
	char thread[64];
	size_t both;
	double latest;

	snprintf(thread, sizeof(thread), "/Process/%d/%d", (int)t->pid,
		 (int)tid);
	src_live_hint_cpu_counts(h, code, thread, after, n, &both, &latest);
	return *n ? (double)both / (double)*n : 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/pyframes-hint-XXXXXX", truth[128];
	struct target t = { 0 };
	struct src_live_hint *h = NULL;
	struct src_live_hintpy_stats ps;
	struct list disc = { .n = 0 }, l;
	uint64_t t0 = clock_mono_ns();
	size_t nm = 0, nw = 0;
	double sm, sw;
	int st;

	if (argc != 2 || mkdtemp(dir) == NULL)
		return fprintf(stderr, "usage: pyframes_hint NESTED_PY\n"), 2;
	snprintf(truth, sizeof(truth), "%s/truth", dir);
	if (!tap_ok(start(&t, argv[1], truth) == 0 && t.base != 0,
		    "%s runs nested.py, its threads about to spin", PY))
		return kill(t.pid, SIGKILL), tap_done();
	tap_ok(src_live_hint_new(t.pid, 99, t0, image_at, &t, &h, NULL) == 0,
	       "perf cpu-clock samples its threads");
	if (h == NULL)
		return kill(t.pid, SIGKILL), tap_done();
	src_live_hint_set_disc(h, on_disc, &disc);
	tap_ok(src_live_hint_python(h) != NULL,
	       "its Python stacks are read");
	/* 60 samples of each thread at least (the window is 3 s; the two
	 * threads share the GIL): up to 60 s on a loaded box */
	for (int i = 0; i < 3000 && (nm < 60 || nw < 60); i++) {
		nap_ms(20);
		src_live_hint_tick(h, 0);
		share(h, &t, t.main_tid, FN("nested.py", "inner"), 0.5, &nm);
		share(h, &t, t.worker_tid, FN("nested.py", "worker"), 0.5, &nw);
	}
	src_live_hint_tick(h, 1);
	print("discovered", &disc);
	tap_eq(disc.n, 8, "eight Python functions discovered");
	tap_ok(has(&disc, FN("nested.py", "<module>")) &&
	       has(&disc, FN("nested.py", "main")) &&
	       has(&disc, FN("nested.py", "outer")) &&
	       has(&disc, FN("nested.py", "inner")) &&
	       has(&disc, FN("nested.py", "worker")),
	       "nested.py's <module>, main, outer, inner, worker");
	tap_ok(has(&disc, FN("threading.py", "Thread.run")) &&
	       has(&disc, FN("threading.py", "Thread._bootstrap_inner")) &&
	       has(&disc, FN("threading.py", "Thread._bootstrap")),
	       "threading.py's Thread.run, _bootstrap_inner, _bootstrap");
	l.n = 0;
	src_live_hint_callees(h, FN("nested.py", "main"), add, &l);
	tap_ok(l.n == 1 && has(&l, FN("nested.py", "outer")),
	       "main's sampled callees: outer");
	l.n = 0;
	src_live_hint_callees(h, FN("nested.py", "outer"), add, &l);
	tap_ok(l.n == 1 && has(&l, FN("nested.py", "inner")),
	       "outer's sampled callees: inner");
	l.n = 0;
	src_live_hint_callees(h, FN("threading.py", "Thread.run"), add, &l);
	tap_ok(l.n == 1 && has(&l, FN("nested.py", "worker")),
	       "Thread.run's sampled callees: worker");
	l.n = 0;
	src_live_hint_callees(h, FN("nested.py", "inner"), add, &l);
	print("inner's callees", &l);
	tap_eq(l.n, 0, "inner's callees: none (it calls no Python function, "
	       "and the interpreter's C code its bytecode runs is not a "
	       "where below it, src_live_pyname_refines)");
	l.n = 0;
	src_live_hint_callees(h, EVAL, add, &l);
	print("the loop's callees", &l);
	tap_ok(has(&l, FN("nested.py", "<module>")) &&
	       has(&l, FN("threading.py", "Thread._bootstrap")) &&
	       !has(&l, FN("nested.py", "inner")) &&
	       !has(&l, FN("nested.py", "worker")),
	       "the interpreter loop's callees hold the outermost Python "
	       "functions, not the inner ones");
	sm = share(h, &t, t.main_tid, FN("nested.py", "inner"), 0.5, &nm);
	sw = share(h, &t, t.worker_tid, FN("nested.py", "worker"), 0.5, &nw);
	src_live_hintpy_stats(src_live_hint_python(h), &ps);
	tap_diag("main thread: %.3f of %zu CPU samples in inner; second "
		 "thread: %.3f of %zu in worker", sm, nm, sw, nw);
	tap_diag("Python stacks: %llu passes, %llu stacks, %llu dropped, "
		 "%.1f us CPU a pass; samples joined %llu, missed %llu",
		 (unsigned long long)ps.reads, (unsigned long long)ps.stacks,
		 (unsigned long long)ps.dropped,
		 ps.reads ? (double)ps.read_ns / 1e3 / (double)ps.reads : 0,
		 (unsigned long long)ps.joined, (unsigned long long)ps.missed);
	tap_ok(nm > 0 && sm >= 0.9, "inner holds >= 0.9 of the main thread's "
	       "CPU samples (%.3f)", sm);
	tap_ok(nw > 0 && sw >= 0.9, "worker holds >= 0.9 of the second "
	       "thread's CPU samples (%.3f)", sw);
	src_live_hint_free(h);
	kill(t.pid, SIGUSR1);
	tap_ok(waitpid(t.pid, &st, 0) == t.pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0, "nested.py exits 0 on SIGUSR1");
	eng_image_close(t.img);
	unlink(truth);
	rmdir(dir);
	return tap_done();
}
