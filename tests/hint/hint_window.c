/*
 * hint_window.c - the arithmetic of the hint window (src_live_hintwin.h):
 * exact shares per kind, inclusive /Code prefixes, thread names matched
 * by tid, duplicates counted once, expiry at the window's edge, and < 0
 * for an empty window; stacks: sampled call edges ranked by how often
 * seen, recursion folded, the roots of complete stacks that hold no
 * start function; counts of a set of functions by name (PMPI_ as MPI_);
 * the off-CPU window's sums (src_live_hintoff.c); several windows
 * counted together, of one kind or of any; a wait's share: blocked
 * threads of its kind and CPU samples inside its functions.
 */
#include <string.h>

#include "src_live_hintoff.h"

#include "src_live_hintwin.h"
#include "tap.h"

#define SPIN "/Code/t/t.c/spin"
#define MID "/Code/t/t.c/mid"
#define IDLE "/Code/t/t.c/idle"
#define LIBF "/Code/libc.so.6/<unknown>/clone3"

/* Exact doubles: every share here is a ratio of small integers. */
static void hint_is(struct src_live_hintwin *w, const char *path, double want)
{
	double got = src_live_hintwin_hint(w, path);

	if (!tap_ok(got == want, "hint(%s) = %g", path, want))
		tap_diag("  got %.17g", got);
}

struct answer {
	char s[1024];
};

static void on_path(void *arg, const char *path)
{
	struct answer *a = arg;

	if (a->s[0])
		strcat(a->s, " ");
	strcat(a->s, path);
}

static const char *callees(struct src_live_hintwin *w, const char *path)
{
	static struct answer a;

	a.s[0] = '\0';
	src_live_hintwin_callees(w, path, on_path, &a);
	return a.s;
}

static const char *roots(struct src_live_hintwin *w, const char *const *starts, size_t n)
{
	static struct answer a;

	a.s[0] = '\0';
	src_live_hintwin_roots(w, starts, n, on_path, &a);
	return a.s;
}

#define F(x) "/Code/p/p.c/" x

/* Stacks: call edges (through pointers too: the window only sees
 * neighbours), recursion folded, roots of complete stacks that hold no
 * start function. */
static void stacks(void)
{
	struct src_live_hintwin *w = src_live_hintwin_new(2.0);
	int start = src_live_hintwin_intern(w, F("_start")), main_ = src_live_hintwin_intern(w, F("main"));
	int eval = src_live_hintwin_intern(w, F("eval")), sum = src_live_hintwin_intern(w, F("sum"));
	int next = src_live_hintwin_intern(w, F("next")), add = src_live_hintwin_intern(w, F("add"));
	int cb = src_live_hintwin_intern(w, F("cb")), worker = src_live_hintwin_intern(w, F("worker"));
	int thr = src_live_hintwin_intern(w, "/Process/1/1"), lib = src_live_hintwin_intern(w, "/Code/q");
	const char *mainp = F("main");

	/* eval -> sum -> next -> eval -> add: the inner eval folded into
	 * the outer one, twice; then one sample in sum itself */
	for (int i = 0; i < 2; i++)
		src_live_hintwin_add_stack(w, 0.1 * i, SRC_LIVE_HINTWIN_CPU, (int[]){ thr, lib }, 2,
			     (int[]){ add, eval, next, sum, eval, main_,
				      start }, 7, 1);
	src_live_hintwin_add_stack(w, 0.2, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
		     (int[]){ sum, eval, main_, start }, 4, 1);
	/* a thread whose stack holds no start function: worker -> cb */
	src_live_hintwin_add_stack(w, 0.3, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
		     (int[]){ cb, worker }, 2, 1);
	src_live_hintwin_add_stack(w, 0.4, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
		     (int[]){ cb, worker }, 2, 1);
	/* cut short: its outermost function is no root */
	src_live_hintwin_add_stack(w, 0.5, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
		     (int[]){ add, next }, 2, 0);
	src_live_hintwin_add_stack(w, 0.6, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
		     (int[]){ add, next }, 2, 0);

	tap_ok(strcmp(callees(w, F("eval")), F("add") " " F("sum")) == 0,
	       "eval's sampled callees: add (2 stacks), then sum (1)");
	tap_ok(strcmp(callees(w, F("sum")), "") == 0, "sum calls nothing "
	       "seen: next -> eval was folded into the outer eval");
	tap_ok(strcmp(callees(w, F("next")), F("add")) == 0, "next calls "
	       "add (a stack cut short still has edges)");
	tap_ok(strcmp(callees(w, F("main")), F("eval")) == 0 &&
	       strcmp(callees(w, F("worker")), F("cb")) == 0 &&
	       strcmp(callees(w, F("_start")), F("main")) == 0,
	       "main calls eval, worker cb, _start main");
	tap_ok(strcmp(callees(w, F("nosuch")), "") == 0,
	       "a path never seen has no callee");
	/* direct recursion (libc's msort_with_tmp), folded: msort -> msort
	 * -> msort -> cmp gives msort no edge to itself */
	{
		struct src_live_hintwin *r = src_live_hintwin_new(2.0);
		int ms = src_live_hintwin_intern(r, F("msort")), cmp = src_live_hintwin_intern(r, F("cmp"));
		int rt = src_live_hintwin_intern(r, "/Process/1/1");

		src_live_hintwin_add_stack(r, 0.05, SRC_LIVE_HINTWIN_CPU, (int[]){ rt }, 1,
			     (int[]){ cmp, ms, ms, ms }, 4, 1);
		tap_ok(strcmp(callees(r, F("msort")), F("cmp")) == 0,
		       "a recursive function's callees: cmp, not itself");
		src_live_hintwin_free(r);
	}
	hint_is(w, F("eval"), 3.0 / 7.0);
	hint_is(w, F("sum"), 1.0 / 7.0);
	{
		size_t raw, gone;

		src_live_hintwin_count_reentered(w, SRC_LIVE_HINTWIN_CPU, F("sum"), &raw, &gone);
		tap_ok(raw == 3 && gone == 2, "sum was on 3 stacks before "
		       "folding, 2 of them only between two evals (%zu, %zu)",
		       raw, gone);
		src_live_hintwin_count_reentered(w, SRC_LIVE_HINTWIN_CPU, F("eval"), &raw, &gone);
		tap_ok(raw == 3 && gone == 0, "eval, the outer activation, "
		       "keeps all 3 (%zu, %zu)", raw, gone);
		src_live_hintwin_count_reentered(w, SRC_LIVE_HINTWIN_CPU, F("add"), &raw, &gone);
		tap_ok(raw == 4 && gone == 0, "add, below the inner eval, "
		       "keeps its 4 (%zu, %zu)", raw, gone);
		src_live_hintwin_count_reentered(w, SRC_LIVE_HINTWIN_SYNC, F("sum"), &raw, &gone);
		tap_ok(raw == 0 && gone == 0, "no sync observation holds sum");
		/* a Python join took sum and next off the stack itself
		 * (left): counted as folded away, never as on the stack */
		{
			struct src_live_hintwin *j = src_live_hintwin_new(2.0);
			int je = src_live_hintwin_intern(j, F("eval"));
			int js = src_live_hintwin_intern(j, F("sum"));
			int jn = src_live_hintwin_intern(j, F("next"));
			int jg = src_live_hintwin_intern(j, "/Code/<python>/s/gen");
			int jt = src_live_hintwin_intern(j, "/Process/1/1");

			src_live_hintwin_add_joined(j, 0.1, SRC_LIVE_HINTWIN_CPU,
				(int[]){ jt }, 1, (int[]){ jg, je }, 2,
				(int[]){ je, jn, js }, 3, 1);
			src_live_hintwin_count_reentered(j, SRC_LIVE_HINTWIN_CPU,
							 F("sum"), &raw, &gone);
			tap_ok(raw == 1 && gone == 1, "a join's left frames: sum "
			       "counted as gone (%zu, %zu)", raw, gone);
			src_live_hintwin_count_reentered(j, SRC_LIVE_HINTWIN_CPU,
							 F("eval"), &raw, &gone);
			tap_ok(raw == 1 && gone == 0, "eval, left and kept, is "
			       "on the stack (%zu, %zu)", raw, gone);
			tap_ok(src_live_hintwin_hint(j, F("sum")) == 0 &&
			       strcmp(callees(j, F("eval")),
				      "/Code/<python>/s/gen") == 0,
			       "sum holds no share and no edge; eval calls gen");
			src_live_hintwin_free(j);
		}
	}
	hint_is(w, F("add"), 4.0 / 7.0);
	hint_is(w, "/Code/q", 2.0 / 7.0);
	tap_ok(strcmp(roots(w, &mainp, 1), F("worker")) == 0, "roots with "
	       "start main: worker (2 complete stacks without main); the "
	       "stacks cut short give none");
	tap_ok(strcmp(roots(w, NULL, 0), F("_start") " " F("worker")) == 0,
	       "roots with no start function: _start (3 stacks), worker (2)");
	src_live_hintwin_add_stack(w, 0.7, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
		     (int[]){ cb, src_live_hintwin_intern(w, F("lone")) }, 2, 1);
	tap_ok(strcmp(roots(w, &mainp, 1), F("worker")) == 0, "a root of "
	       "one stack only is not given (SRC_LIVE_HINTWIN_ROOT_MIN %d)", SRC_LIVE_HINTWIN_ROOT_MIN);
	/* threads: spinner is a known start function; a thread whose start
	 * function is unknown (brief) begins in the same clone3 and
	 * start_thread: its root is brief, not clone3 */
	{
		int clone = src_live_hintwin_intern(w, F("clone3"));
		int st = src_live_hintwin_intern(w, F("start_thread"));
		int spinner = src_live_hintwin_intern(w, F("spinner"));
		int brief = src_live_hintwin_intern(w, F("brief"));
		const char *sp = F("spinner");

		for (int i = 0; i < 2; i++) {
			src_live_hintwin_add_stack(w, 0.8, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
				     (int[]){ add, spinner, st, clone }, 4, 1);
			src_live_hintwin_add_stack(w, 0.8, SRC_LIVE_HINTWIN_CPU, (int[]){ thr }, 1,
				     (int[]){ cb, brief, st, clone }, 4, 1);
		}
		tap_ok(strcmp(roots(w, &sp, 1), F("_start") " " F("worker")
			       " " F("brief")) == 0, "with spinner known: "
		       "brief is the other thread's root, not the clone3 "
		       "every thread begins in");
	}
	src_live_hintwin_expire(w, 2.35);
	tap_ok(strcmp(roots(w, &mainp, 1), F("clone3")) == 0, "expired "
	       "stacks give no root (worker's left the window); the threads' "
	       "stacks hold no main: clone3");
	tap_ok(strcmp(callees(w, F("worker")), F("cb")) == 0, "edges "
	       "outlive the window");
	src_live_hintwin_free(w);
}

/* src_live_hintwin_count_after, the sampled CPU estimate's counts: by the samples'
 * own times, in a thread or in all, each counted once when the caller
 * passes back the latest time it was given. */
static void counts_after(struct src_live_hintwin *w)
{
	size_t nw, nb;
	double latest;

	src_live_hintwin_count_after(w, SRC_LIVE_HINTWIN_CPU, -1, SPIN, NULL, &nw, &nb, &latest);
	tap_ok(nw == 4 && nb == 3 && latest == 0.1 * 3, "count after: 4 CPU samples, 3 "
	       "with spin, the newest at 0.3 s");
	src_live_hintwin_count_after(w, SRC_LIVE_HINTWIN_CPU, 0.1, SPIN, "/Process/10/11:worker", &nw,
		       &nb, &latest);
	tap_ok(nw == 2 && nb == 1, "count after 0.1 s in thread 11: 2 "
	       "samples, 1 with spin (the one at 0.2 s)");
	src_live_hintwin_count_after(w, SRC_LIVE_HINTWIN_CPU, 0.1, SPIN, "/Process/10/12", &nw, &nb,
		       &latest);
	tap_ok(nw == 0 && nb == 0 && latest == 0.1 * 3, "thread 12 has no "
	       "CPU sample: none, and the latest time is still the newest "
	       "CPU sample's (a drain brings every thread's samples up to "
	       "its time)");
	src_live_hintwin_count_after(w, SRC_LIVE_HINTWIN_CPU, 0.1 * 3, MID, NULL, &nw, &nb, &latest);
	tap_ok(nw == 0 && latest == 0.1 * 3, "nothing newer than the newest");
	src_live_hintwin_count_after(w, SRC_LIVE_HINTWIN_SYNC, 0.55, "/SyncObject/Mutex/m", NULL, &nw,
		       &nb, &latest);
	tap_ok(nw == 2 && nb == 1, "another kind: 2 sync observations after "
	       "0.55 s, 1 in the mutex");
}

/* src_live_hintwin_count_funcs_after, the message-wait estimate's CPU counts: a sample
 * is in the set when a function of that name is on its stack in any
 * module, MPI's PMPI_ names matching their MPI_ ones; the code and
 * thread filters combine with it. */
static void counts_funcs(void)
{
	static const char *const set[] = { "MPI_Barrier", "MPI_Recv" };
	struct src_live_hintwin *w = src_live_hintwin_new(2.0);
	int t1 = src_live_hintwin_intern(w, "/Process/20/21");
	int t2 = src_live_hintwin_intern(w, "/Process/20/22");
	int bar = src_live_hintwin_intern(w, "/Code/libmpi.so.40/<unknown>/PMPI_Barrier");
	int recv = src_live_hintwin_intern(w, "/Code/libmpi.so.40/<unknown>/MPI_Recv");
	int yld = src_live_hintwin_intern(w, "/Code/libc.so.6/<unknown>/sched_yield");
	int work = src_live_hintwin_intern(w, F("work")), mn = src_live_hintwin_intern(w, F("main"));
	int other = src_live_hintwin_intern(w, "/Code/p/p.c/MPI_Barrier_helper");
	size_t nw, nb;
	double latest;

	src_live_hintwin_add(w, 0.1, SRC_LIVE_HINTWIN_CPU, (int[]){ t1, yld, bar, mn }, 4);
	src_live_hintwin_add(w, 0.2, SRC_LIVE_HINTWIN_CPU, (int[]){ t1, work, mn }, 3);
	src_live_hintwin_add(w, 0.3, SRC_LIVE_HINTWIN_CPU, (int[]){ t2, recv, mn }, 3);
	src_live_hintwin_add(w, 0.4, SRC_LIVE_HINTWIN_CPU, (int[]){ t2, other, work }, 3);
	src_live_hintwin_count_funcs_after(w, SRC_LIVE_HINTWIN_CPU, -1, set, 2, NULL, NULL, &nw, &nb,
			     &latest);
	tap_ok(nw == 4 && nb == 2 && latest == 0.4, "funcs: 4 CPU samples, "
	       "2 in MPI_Barrier (as PMPI_Barrier) or MPI_Recv; not in a "
	       "function whose name only begins the same; newest 0.4 s");
	src_live_hintwin_count_funcs_after(w, SRC_LIVE_HINTWIN_CPU, -1, set, 2, NULL, "/Process/20/21",
			     &nw, &nb, &latest);
	tap_ok(nw == 2 && nb == 1, "funcs in thread 21: 2 samples, 1 in "
	       "the set");
	src_live_hintwin_count_funcs_after(w, SRC_LIVE_HINTWIN_CPU, 0.2, set, 2, F("main"), NULL, &nw,
			     &nb, &latest);
	tap_ok(nw == 2 && nb == 1, "funcs after 0.2 s within main: 2 "
	       "samples, 1 in the set with main on its stack");
	src_live_hintwin_count_funcs_after(w, SRC_LIVE_HINTWIN_CPU, -1, set, 1, NULL, NULL, &nw, &nb,
			     &latest);
	tap_ok(nb == 1, "funcs of MPI_Barrier alone: 1 sample");
	src_live_hintwin_free(w);
}

/* The off-CPU window: each switch-out counts its time off; sums by
 * order of arrival (a late arrival with an early time still counts
 * once), by thread, by function set, clipped at `from`, expired at the
 * window's edge. */
static void offcpu_sums(void)
{
	static const char *const set[] = { "MPI_Barrier" };
	struct src_live_hintwin *w = src_live_hintwin_new(2.0);
	struct src_live_hintoff *o = src_live_hintoff_new(2.0);
	int t1 = src_live_hintwin_intern(w, "/Process/20/21");
	int t2 = src_live_hintwin_intern(w, "/Process/20/22");
	int bar = src_live_hintwin_intern(w, "/Code/libmpi.so.40/<unknown>/PMPI_Barrier");
	int mn = src_live_hintwin_intern(w, F("main")), work = src_live_hintwin_intern(w, F("work"));
	struct src_live_hintoff_query q = { .names = set, .nnames = 1 };
	struct src_live_hintoff_sums s;
	uint64_t seen;

	src_live_hintoff_add(o, 0.5, 0.5, (int[]){ t1, bar, mn }, 3, 0.30);
	src_live_hintoff_add(o, 0.7, 0.7, (int[]){ t1, work, mn }, 3, 0.10);
	src_live_hintoff_add(o, 0.6, 0.7, (int[]){ t2, bar, mn }, 3, 0.20);
	src_live_hintoff_sum_after(o, w, &q, &s);
	seen = s.latest;
	tap_ok(s.off_all > 0.599 && s.off_all < 0.601 && s.off_in > 0.499 &&
	       s.off_in < 0.501 && s.n_in == 2 && seen == 3, "off-CPU: 0.6 s "
	       "off in all, 0.5 s of it in MPI_Barrier (2 switch-outs), 3 "
	       "seen");
	q.within = "/Process/20/22";
	src_live_hintoff_sum_after(o, w, &q, &s);
	tap_ok(s.off_all > 0.199 && s.off_all < 0.201 && s.off_in > 0.199 &&
	       s.off_in < 0.201,
	       "off-CPU in thread 22: 0.2 s, all in MPI_Barrier");
	q.within = "/Process/20/21";
	q.from = 0.6;
	src_live_hintoff_sum_after(o, w, &q, &s);
	tap_ok(s.off_in > 0.199 && s.off_in < 0.201 && s.off_all > 0.299 &&
	       s.off_all < 0.301,
	       "off-CPU from 0.6 s: the 0.3 s left at 0.5 counts 0.2");
	src_live_hintoff_add(o, 0.55, 0.8, (int[]){ t1, bar }, 2, 0.05);
	q = (struct src_live_hintoff_query){ .after = seen, .names = set,
					     .nnames = 1 };
	src_live_hintoff_sum_after(o, w, &q, &s);
	tap_ok(s.n_in == 1 && s.off_in > 0.049 && s.off_in < 0.051 &&
	       s.latest == 4,
	       "off-CPU after the 3rd: the late arrival (left at 0.55 s) "
	       "alone");
	src_live_hintoff_expire(o, 2.75);
	tap_ok(src_live_hintoff_count(o) == 1, "off-CPU at 2.75 s: those "
	       "that arrived before 0.75 s are gone, 1 left (left its CPU at "
	       "0.55, arrived at 0.8)");
	src_live_hintoff_free(o);
	src_live_hintwin_free(w);
}

/* Two windows counted together (a job: the parent blocked in read,
 * a worker computing in work): each kind's observations summed over
 * both; of the CPU kind alone, the blocked read has no share. */
static void many_windows(void)
{
	struct src_live_hintwin *a = src_live_hintwin_new(2.0);
	struct src_live_hintwin *b = src_live_hintwin_new(2.0);
	const struct src_live_hintwin *both[] = { a, NULL, b };
	int rd = src_live_hintwin_intern(a, F("read"));
	int pa = src_live_hintwin_intern(a, F("main"));
	int wk = src_live_hintwin_intern(b, F("work"));
	int pb = src_live_hintwin_intern(b, F("main"));

	src_live_hintwin_add(a, 0.1, SRC_LIVE_HINTWIN_IO, (int[]){ rd, pa }, 2);
	src_live_hintwin_add(a, 0.2, SRC_LIVE_HINTWIN_CPU, (int[]){ pa }, 1);
	for (int i = 0; i < 3; i++)
		src_live_hintwin_add(b, 0.1 * i, SRC_LIVE_HINTWIN_CPU,
				     (int[]){ wk, pb }, 2);
	tap_ok(src_live_hintwin_hint_many(both, 3, F("work"), -1) == 0.75,
	       "two windows: work holds 3 of the 4 CPU samples (0.75)");
	tap_ok(src_live_hintwin_hint_many(both, 3, F("read"), -1) == 1.0,
	       "two windows, any kind: read holds the one I/O wait (1)");
	tap_ok(src_live_hintwin_hint_many(both, 3, F("read"),
					  SRC_LIVE_HINTWIN_CPU) == 0,
	       "two windows, CPU samples alone: read holds none (0)");
	tap_ok(src_live_hintwin_hint_many(both, 3, F("main"),
					  SRC_LIVE_HINTWIN_CPU) == 1.0,
	       "two windows, CPU samples alone: main holds all 4 (1)");
	tap_ok(src_live_hintwin_hint_many((const struct src_live_hintwin *[]){
		NULL }, 1, F("main"), -1) < 0, "no window: unknown (< 0)");
	src_live_hintwin_free(a);
	src_live_hintwin_free(b);
}

/* A wait's share (src_live_hintwin_wait_many) over one window, with
 * the I/O functions write and read (the first n of them); want < 0:
 * unknown. */
static void wait_is(const struct src_live_hintwin *const *one,
		    const char *path, enum src_live_hintwin_kind kind,
		    size_t n, double want, const char *what)
{
	static const char *const io[] = { "write", "read" };
	double got = src_live_hintwin_wait_many(one, 1, path, kind, io, n);

	if (!tap_ok(want < 0 ? got < 0 : got == want, "wait: %s", what))
		tap_diag("  got %.17g", got);
}

/* A wait's share (src_live_hintwin_wait_many), the demo's shape: a
 * writer in write() to the page cache (CPU samples, never blocked),
 * lock workers blocked in sync, a hot loop computing.  For I/O, the
 * writer holds all of it (the CPU samples inside write()), the workers
 * and the hot loop none; once a reader is seen blocked in I/O too, it
 * counts beside them; a file is named by blocked threads alone; no wait
 * at all is unknown. */
static void wait_share(void)
{
	struct src_live_hintwin *w = src_live_hintwin_new(2.0);
	const struct src_live_hintwin *one[] = { w };
	int wr = src_live_hintwin_intern(w, F("writer"));
	int wf = src_live_hintwin_intern(w, "/Code/libc.so.6/write.c/write");
	int wk = src_live_hintwin_intern(w, F("worker"));
	int hot = src_live_hintwin_intern(w, F("hot"));
	int rd = src_live_hintwin_intern(w, F("reader"));
	int f = src_live_hintwin_intern(w, "/Files/tmp/x");

	wait_is(one, F("writer"), SRC_LIVE_HINTWIN_IO, 2, -1,
		"an empty window is unknown (< 0)");
	for (int i = 0; i < 3; i++) {
		src_live_hintwin_add(w, 0.1 * i, SRC_LIVE_HINTWIN_CPU,
				     (int[]){ wf, wr }, 2);
		src_live_hintwin_add(w, 0.1 * i, SRC_LIVE_HINTWIN_SYNC,
				     (int[]){ wk }, 1);
		src_live_hintwin_add(w, 0.1 * i, SRC_LIVE_HINTWIN_CPU,
				     (int[]){ hot }, 1);
	}
	wait_is(one, F("writer"), SRC_LIVE_HINTWIN_IO, 2, 1.0,
		"the writer holds all the I/O (its samples in write)");
	wait_is(one, F("worker"), SRC_LIVE_HINTWIN_IO, 2, 0,
		"the lock workers hold none of the I/O");
	wait_is(one, F("hot"), SRC_LIVE_HINTWIN_IO, 2, 0,
		"the hot loop holds none of the I/O");
	wait_is(one, F("worker"), SRC_LIVE_HINTWIN_SYNC, 0, 1.0,
		"the workers hold all the sync waiting");
	wait_is(one, "/Files/tmp/x", SRC_LIVE_HINTWIN_IO, 2, -1,
		"no thread seen blocked in I/O: a file is unknown");
	src_live_hintwin_add(w, 0.4, SRC_LIVE_HINTWIN_IO, (int[]){ rd, f }, 2);
	wait_is(one, F("reader"), SRC_LIVE_HINTWIN_IO, 2, 0.25,
		"the reader's one blocked read beside 3 samples in write (1/4)");
	wait_is(one, "/Files/tmp/x", SRC_LIVE_HINTWIN_IO, 2, 1.0,
		"the file holds the one blocked read (1), samples aside");
	src_live_hintwin_free(w);
}

int main(void)
{
	struct src_live_hintwin *w = src_live_hintwin_new(2.0);
	int spin = src_live_hintwin_intern(w, SPIN), mid = src_live_hintwin_intern(w, MID);
	int lib = src_live_hintwin_intern(w, LIBF), idle = src_live_hintwin_intern(w, IDLE);
	int t1 = src_live_hintwin_intern(w, "/Process/10/11");
	int t2 = src_live_hintwin_intern(w, "/Process/10/12");
	int mtx = src_live_hintwin_intern(w, "/SyncObject/Mutex/m");
	int f = src_live_hintwin_intern(w, "/Files/tmp/x");

	tap_eq(src_live_hintwin_intern(w, SPIN), spin, "interning the same path twice "
	       "gives the same id");
	tap_ok(idle != spin, "different paths, different ids");
	tap_ok(src_live_hintwin_hint(w, "/Code") < 0, "an empty window is unknown (< 0)");

	/* t=0..0.9: thread 11 in spin (called by mid) 3 times out of 4,
	 * once in mid itself; thread 12 blocked in the mutex 2 times, in a
	 * read of /Files/tmp/x once and on an unknown futex once. */
	for (int i = 0; i < 4; i++) {
		int a[] = { t1, spin, mid, lib, spin /* a recursion */ };
		int b[] = { t1, mid, lib };

		if (i < 3)
			src_live_hintwin_add(w, 0.1 * i, SRC_LIVE_HINTWIN_CPU, a, 5);
		else
			src_live_hintwin_add(w, 0.1 * i, SRC_LIVE_HINTWIN_CPU, b, 3);
	}
	src_live_hintwin_add(w, 0.5, SRC_LIVE_HINTWIN_SYNC, (int[]){ t2, mtx }, 2);
	src_live_hintwin_add(w, 0.6, SRC_LIVE_HINTWIN_SYNC, (int[]){ t2, mtx }, 2);
	src_live_hintwin_add(w, 0.7, SRC_LIVE_HINTWIN_SYNC, (int[]){ t2 }, 1);
	src_live_hintwin_add(w, 0.9, SRC_LIVE_HINTWIN_IO, (int[]){ t2, f }, 2);

	tap_eq(src_live_hintwin_count(w, SRC_LIVE_HINTWIN_CPU), 4, "4 CPU samples in the window");
	tap_eq(src_live_hintwin_count(w, SRC_LIVE_HINTWIN_SYNC), 3, "3 sync observations");
	tap_eq(src_live_hintwin_count(w, SRC_LIVE_HINTWIN_IO), 1, "1 I/O observation");
	tap_eq(src_live_hintwin_count_in(w, SRC_LIVE_HINTWIN_CPU, SPIN), 3, "a sample with spin twice "
	       "on its stack counts once");
	hint_is(w, SPIN, 0.75);
	hint_is(w, MID, 1.0);
	hint_is(w, IDLE, 0.0);
	hint_is(w, "/Code/t/t.c", 1.0);
	hint_is(w, "/Code/t", 1.0);
	hint_is(w, "/Code/t/t.c/spi", 0.0);   /* a prefix of a name only */
	hint_is(w, "/Code/libc.so.6", 1.0);
	hint_is(w, "/Code", 1.0);
	hint_is(w, "/Process/10/11:worker", 1.0);
	hint_is(w, "/Process/10/12:reader", 1.0);
	hint_is(w, "/Process/10/13:gone", 0.0);
	hint_is(w, "/SyncObject/Mutex/m", 2.0 / 3.0);
	hint_is(w, "/SyncObject/Mutex", 2.0 / 3.0);
	hint_is(w, "/SyncObject/Mutex/n", 0.0);
	hint_is(w, "/Files/tmp/x", 1.0);
	hint_is(w, "/Files/tmp/y", 0.0);
	counts_after(w);
	counts_funcs();
	offcpu_sums();

	/* The window is 2 s: at 2.15 the samples at 0 and 0.1 are gone. */
	src_live_hintwin_expire(w, 2.15);
	tap_eq(src_live_hintwin_count(w, SRC_LIVE_HINTWIN_CPU), 2, "at 2.15 s, the samples older than "
	       "0.15 s are forgotten");
	hint_is(w, SPIN, 0.5);
	src_live_hintwin_expire(w, 2.25);
	tap_eq(src_live_hintwin_count(w, SRC_LIVE_HINTWIN_CPU), 1, "at 2.25 s, one CPU sample is left");
	hint_is(w, SPIN, 0.0);
	hint_is(w, MID, 1.0);
	src_live_hintwin_expire(w, 2.5);
	tap_eq(src_live_hintwin_count(w, SRC_LIVE_HINTWIN_SYNC), 3, "at 2.5 s the observation at "
	       "exactly 0.5 is still in the window");
	hint_is(w, "/SyncObject/Mutex/m", 2.0 / 3.0);
	src_live_hintwin_expire(w, 2.55);
	hint_is(w, "/SyncObject/Mutex/m", 0.5);
	hint_is(w, SPIN, 0.0);
	src_live_hintwin_expire(w, 10);
	tap_ok(src_live_hintwin_hint(w, "/Code") < 0, "everything expired: unknown again");
	/* Only CPU samples: no thread seen blocked, so what a file or a
	 * mutex costs is unknown, not 0 (page-cache writes never block). */
	src_live_hintwin_add(w, 10, SRC_LIVE_HINTWIN_CPU, (int[]){ t1, spin }, 2);
	hint_is(w, SPIN, 1.0);
	tap_ok(src_live_hintwin_hint(w, "/Files/tmp/x") < 0, "no I/O wait seen: a file's "
	       "evidence is unknown");
	tap_ok(src_live_hintwin_hint(w, "/SyncObject/Mutex/m") < 0, "no sync wait seen: "
	       "a mutex's evidence is unknown");
	src_live_hintwin_free(w);
	stacks();
	many_windows();
	wait_share();
	return tap_done();
}
