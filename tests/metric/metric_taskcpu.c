/*
 * metric_taskcpu.c - the kernel CPU reader (engine/eng_taskcpu.h) on a
 * real program, progs/kspin.c, against the kernel's own account of each
 * thread read fresh (/proc/PID/task/TID/schedstat field 1) and the
 * threads' own CLOCK_THREAD_CPUTIME_ID:
 * 1. the opening reading is the base: one thread, nothing counted yet;
 * 2. a spinning thread born after the opening: listed as born, its
 *    reading bracketed by fresh schedstat reads before and after (it
 *    advances only at scheduler ticks, so nothing tighter is exact);
 * 3. stopped and blocked: its reading equals schedstat exactly, and its
 *    own CPU time up to the stop plus < 1 ms; the process total equals
 *    the sum over threads exactly (every thread blocked, none exited);
 * 4. a thread seen at one refresh that spins 200 ms and exits before the
 *    next: the process total over that interval holds its CPU time
 *    (its own count up to the exit, + < 2 ms for exiting and main's
 *    bracketed share), while the sum over listed threads misses it;
 *    the exited thread keeps its last reading (alive false) for one
 *    refresh, then is forgotten;
 * 5. a thread born and exited between two refreshes: never listed, and
 *    its 150 ms in the process total all the same;
 * 6. the directory is listed only when threads were born or exited.
 *
 * usage: metric_taskcpu KSPIN
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eng_taskcpu.h"
#include "kspin_drive.h"
#include "tap.h"

#define MS 1000000LL

static pid_t launch(const char *prog, struct kspin *k)
{
	int in[2], out[2];
	char buf[64];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	k->to = fdopen(in[1], "w");
	k->from = fdopen(out[0], "r");
	kspin_cmd(k, NULL, buf, sizeof buf);
	k->pid = sscanf(buf, "ready %d", &k->pid) == 1 ? k->pid : -1;
	return k->pid == pid ? pid : -1;
}

static int64_t sum_fresh(int pid, const long *tids, int n)
{
	int64_t s = 0;

	for (int i = 0; i < n; i++)
		s += kspin_sched(pid, tids[i]);
	return s;
}

struct ctx {
	struct kspin k;
	struct eng_taskcpu *tc;
	long main_tid, spin_tid;
	int64_t spin_base;
};

static void test_open(struct ctx *c)
{
	struct hunch_err err = { 0 };
	const struct eng_taskcpu_thread *m;

	if (!tap_ok(eng_taskcpu_open(c->k.pid, &c->tc, &err) == 0,
		    "the reader opens on kspin (pid %d)%s%s", c->k.pid,
		    err.msg[0] ? ": " : "", err.msg)) {
		exit(tap_done());
	}
	c->main_tid = c->k.pid;
	m = eng_taskcpu_thread(c->tc, (pid_t)c->main_tid);
	tap_eq(eng_taskcpu_nthreads(c->tc), 1, "one thread listed");
	tap_ok(m != NULL && m->alive && !m->born && m->base_ns == m->run_ns,
	       "main: alive, there at the opening, its base its reading");
	tap_eq(eng_taskcpu_process_ns(c->tc), 0, "process total starts at 0");
	tap_eq(eng_taskcpu_threads_ns(c->tc), 0, "sum over threads too");
	tap_ok(eng_taskcpu_has_process_clock(c->tc),
	       "the kernel lets hunch read the process CPU clock");
	tap_eq(eng_taskcpu_open_fds(c->tc), 1, "one schedstat descriptor");
}

static void test_spinning(struct ctx *c)
{
	const struct eng_taskcpu_thread *t;
	char buf[64];
	int64_t a, b;

	kspin_cmd(&c->k, "r", buf, sizeof buf);
	tap_ok(sscanf(buf, "run %ld", &c->spin_tid) == 1, "spinner: %s", buf);
	/* let it run past a few ticks so the bracket is not empty */
	do {
		a = kspin_sched(c->k.pid, c->spin_tid);
	} while (a >= 0 && a < 50 * MS);
	eng_taskcpu_refresh(c->tc);   /* lists it: born */
	a = kspin_sched(c->k.pid, c->spin_tid);
	eng_taskcpu_refresh(c->tc);
	b = kspin_sched(c->k.pid, c->spin_tid);
	t = eng_taskcpu_thread(c->tc, (pid_t)c->spin_tid);
	tap_ok(t != NULL && t->alive && t->born && t->base_ns == 0,
	       "the spinner is listed, born after the opening (base 0)");
	if (t != NULL && !tap_ok(a <= (int64_t)t->run_ns &&
				 (int64_t)t->run_ns <= b,
				 "running: its reading is bracketed by fresh "
				 "schedstat reads"))
		tap_diag("  %lld <= %llu <= %lld", (long long)a,
			 (unsigned long long)t->run_ns, (long long)b);
	tap_ok(t != NULL && t->run_ns >= 50 * MS,
	       "and counts its CPU time from its birth (>= 50 ms)");
}

static void test_stopped(struct ctx *c)
{
	const struct eng_taskcpu_thread *t;
	long tid, tids[2] = { c->main_tid, c->spin_tid };
	long long own = 0;
	char buf[64];
	int64_t s;

	kspin_cmd(&c->k, "s", buf, sizeof buf);
	tap_ok(sscanf(buf, "stopped %ld %lld", &tid, &own) == 2 &&
	       tid == c->spin_tid, "stopped: %s", buf);
	tap_ok(kspin_wait_blocked(c->k.pid, tid) == 0 &&
	       kspin_wait_blocked(c->k.pid, c->main_tid) == 0,
	       "the spinner and main are blocked");
	eng_taskcpu_refresh(c->tc);
	s = kspin_sched(c->k.pid, tid);
	t = eng_taskcpu_thread(c->tc, (pid_t)tid);
	tap_ok(t != NULL && (int64_t)t->run_ns == s,
	       "blocked: its reading equals schedstat exactly (%lld ns)",
	       (long long)s);
	if (t != NULL && !tap_ok((long long)t->run_ns >= own &&
				 (long long)t->run_ns < own + MS,
				 "= its own CPU time at the stop + < 1 ms"))
		tap_diag("  own %lld, kernel %llu", own,
			 (unsigned long long)t->run_ns);
	s = sum_fresh(c->k.pid, tids, 2) -
	    (int64_t)eng_taskcpu_thread(c->tc, (pid_t)c->main_tid)->base_ns;
	tap_eq(eng_taskcpu_process_ns(c->tc), s, "process total = sum of the "
	       "threads' schedstat since the opening, exactly");
	tap_eq(eng_taskcpu_threads_ns(c->tc), s, "= the sum over threads");
}

/* A thread seen alive at one refresh, exited before the next. */
static void test_exit_mid_interval(struct ctx *c)
{
	const struct eng_taskcpu_thread *t;
	int64_t p1, s1, m1, m2, dp, dm, w1 = 0;
	long tid, tid2;
	long long own = 0;
	char buf[64];

	kspin_cmd(&c->k, "w", buf, sizeof buf);
	tap_ok(sscanf(buf, "waiting %ld", &tid) == 1, "waiter: %s", buf);
	kspin_wait_blocked(c->k.pid, tid);
	kspin_wait_blocked(c->k.pid, c->main_tid);
	eng_taskcpu_refresh(c->tc);
	t = eng_taskcpu_thread(c->tc, (pid_t)tid);
	tap_ok(t != NULL && t->alive && t->born, "the waiter is listed");
	w1 = t != NULL ? (int64_t)t->run_ns : 0;   /* counted before R1 */
	p1 = (int64_t)eng_taskcpu_process_ns(c->tc);
	s1 = (int64_t)eng_taskcpu_threads_ns(c->tc);
	m1 = kspin_sched(c->k.pid, c->main_tid);
	kspin_cmd(&c->k, "g 200", buf, sizeof buf);
	tap_ok(sscanf(buf, "exited %ld %lld", &tid2, &own) == 2 &&
	       tid2 == tid && own >= 200 * MS, "it spun 200 ms and exited: %s",
	       buf);
	kspin_wait_blocked(c->k.pid, c->main_tid);
	m2 = kspin_sched(c->k.pid, c->main_tid);
	eng_taskcpu_refresh(c->tc);
	dp = (int64_t)eng_taskcpu_process_ns(c->tc) - p1;
	dm = m2 - m1;
	if (!tap_ok(dp >= own - w1 + dm && dp < own - w1 + dm + 2 * MS,
		    "the process total over the interval holds the exited "
		    "thread's CPU time since the last refresh (+ main's, "
		    "+ < 2 ms)"))
		tap_diag("  delta %lld, thread %lld - %lld, main %lld",
			 (long long)dp, own, (long long)w1, (long long)dm);
	tap_eq((int64_t)eng_taskcpu_threads_ns(c->tc) - s1, dm,
	       "the sum over listed threads misses it: it grew by main's "
	       "time alone (what the process clock is for)");
	t = eng_taskcpu_thread(c->tc, (pid_t)tid);
	tap_ok(t != NULL && !t->alive, "it keeps its last reading one "
	       "refresh, marked exited");
	eng_taskcpu_refresh(c->tc);
	tap_ok(eng_taskcpu_thread(c->tc, (pid_t)tid) == NULL,
	       "then it is forgotten");
	tap_eq(eng_taskcpu_nthreads(c->tc), 2, "main and the spinner remain");
}

/* Born and exited between two refreshes: never listed. */
static void test_unseen(struct ctx *c)
{
	int64_t p1, m1, m2, dp, dm;
	long tid;
	long long own = 0;
	char buf[64];

	kspin_wait_blocked(c->k.pid, c->main_tid);
	eng_taskcpu_refresh(c->tc);
	p1 = (int64_t)eng_taskcpu_process_ns(c->tc);
	m1 = kspin_sched(c->k.pid, c->main_tid);
	kspin_cmd(&c->k, "x 150", buf, sizeof buf);
	tap_ok(sscanf(buf, "exited %ld %lld", &tid, &own) == 2 &&
	       own >= 150 * MS, "a burst thread spun 150 ms: %s", buf);
	kspin_wait_blocked(c->k.pid, c->main_tid);
	m2 = kspin_sched(c->k.pid, c->main_tid);
	eng_taskcpu_refresh(c->tc);
	tap_ok(eng_taskcpu_thread(c->tc, (pid_t)tid) == NULL,
	       "it was never listed");
	dp = (int64_t)eng_taskcpu_process_ns(c->tc) - p1;
	dm = m2 - m1;
	if (!tap_ok(dp >= own + dm && dp < own + dm + 2 * MS,
		    "its CPU time is in the process total all the same"))
		tap_diag("  delta %lld, thread %lld, main %lld", (long long)dp,
			 own, (long long)dm);
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	char buf[64];
	int st;

	if (argc < 2 || launch(argv[1], &c.k) < 0) {
		tap_ok(0, "kspin starts");
		return tap_done();
	}
	test_open(&c);
	test_spinning(&c);
	test_stopped(&c);
	test_exit_mid_interval(&c);
	test_unseen(&c);
	/* exits show as failed reads; the burst thread was born and gone
	 * between two refreshes, so the count did not change */
	tap_eq(eng_taskcpu_listings(c.tc), 3, "the threads were listed at 3 "
	       "refreshes: the opening and the two births seen");
	eng_taskcpu_close(c.tc);
	kspin_cmd(&c.k, "q", buf, sizeof buf);
	waitpid(c.k.pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kspin exits 0");
	return tap_done();
}
