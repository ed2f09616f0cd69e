/*
 * rt_prog.c - a test target that calls the runtime library's primitives
 * directly, with handles the test passes on the command line.
 *
 *   rt_prog exact  CTR SET WALL NTHREADS NOPS
 *   rt_prog timer  WALL CPU CPU2
 *   rt_prog torn   WALL CTR NTHREADS SECONDS
 *   rt_prog churn  CTR WALL NTOTAL BATCH
 *   rt_prog fork   CTR NTHREADS NOPS NCHILDREN
 *   rt_prog busy   CTR WALL NTHREADS          (until "exit" on stdin)
 *   rt_prog attach SHMNAME CTR NTHREADS NOPS  (dlopen + hunchrt_attach)
 *   rt_prog preempt CPU                       (2 threads share one CPU)
 *   rt_prog exec FD                           (what a child program sees)
 *
 * It talks to the test by lines: it prints "done ..." when its work is
 * finished and exits after reading "exit" on stdin, so that the test can
 * check live per-thread values before the threads retire.  Primitives are
 * found with dlsym, so the same binary works preloaded and attached.
 */
#include <dlfcn.h>
#include <sched.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct {
	void (*add)(uint64_t, int64_t);
	void (*set)(uint64_t, int64_t);
	void (*wstart)(uint64_t), (*wstop)(uint64_t);
	void (*cstart)(uint64_t), (*cstop)(uint64_t);
	int (*index)(void);
	int (*attach)(const char *);
	int (*genter)(void);
	void (*gleave)(void);
	void (*cost)(uint64_t);
} rt;

static uint64_t H[4];
static long NTHREADS, NOPS, ARG5;
static volatile int stop_flag;
static pthread_barrier_t bar;

static void die(const char *m)
{
	fprintf(stderr, "rt_prog: %s\n", m);
	exit(2);
}

static void *sym(void *h, const char *n)
{
	void *p = dlsym(h, n);

	if (p == NULL)
		die(n);
	return p;
}

static void resolve(void *h)
{
	rt.add = sym(h, "hunchrt_counter_add");
	rt.set = sym(h, "hunchrt_counter_set");
	rt.wstart = sym(h, "hunchrt_wall_start");
	rt.wstop = sym(h, "hunchrt_wall_stop");
	rt.cstart = sym(h, "hunchrt_cpu_start");
	rt.cstop = sym(h, "hunchrt_cpu_stop");
	rt.index = sym(h, "hunchrt_thread_index");
	rt.attach = sym(h, "hunchrt_attach");
	rt.genter = sym(h, "hunchrt_guard_enter");
	rt.gleave = sym(h, "hunchrt_guard_leave");
	rt.cost = sym(h, "hunchrt_cost_add");
}

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_exit_cmd(void)
{
	char line[64];

	while (fgets(line, sizeof(line), stdin) != NULL)
		if (strncmp(line, "exit", 4) == 0)
			return;
	exit(3);  /* the test went away */
}

static void run_threads(void *(*fn)(void *), long n)
{
	pthread_t t[256];
	long i;

	if (n > 256)
		die("too many threads");
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)i) != 0)
			die("pthread_create");
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* exact: thread i adds i+1 NOPS times, sets SET to its op count, runs
 * nested wall timers and a stop without start; then waits at a barrier
 * until the test has checked the live values. */
static volatile long guard_bad;

static void *exact_thread(void *arg)
{
	long i = (long)arg, k;

	rt.wstop(H[2]);  /* stop without start: ignored */
	for (k = 0; k < NOPS; k++) {
		rt.add(H[0], i + 1);
		rt.set(H[1], k + 1);
		if (k % 16 == 0) {
			/* As a trampoline would: guard, work, cost, unguard. */
			if (!rt.genter() || rt.genter())
				guard_bad++;
			rt.wstart(H[2]);
			rt.wstart(H[2]);
			rt.wstop(H[2]);
			rt.wstop(H[2]);
			rt.cost(1000);
			rt.gleave();
		}
	}
	pthread_barrier_wait(&bar);   /* all done */
	pthread_barrier_wait(&bar);   /* the test said exit */
	return NULL;
}

static void *(*held_fn)(void *);

static void *held_main(void *unused)
{
	(void)unused;
	run_threads(held_fn, NTHREADS);
	return NULL;
}

/* Run NTHREADS of fn; each waits at the barrier twice: when its work is
 * done, and after the test said exit. */
static int run_held(void *(*fn)(void *))
{
	pthread_t m;

	held_fn = fn;
	pthread_barrier_init(&bar, NULL, (unsigned)NTHREADS + 1);
	pthread_create(&m, NULL, held_main, NULL);
	pthread_barrier_wait(&bar);
	printf("done %ld\n", guard_bad);
	fflush(stdout);
	wait_exit_cmd();
	pthread_barrier_wait(&bar);
	pthread_join(m, NULL);
	return 0;
}

static void spin_cpu(double sec)
{
	double c0 = now_s(CLOCK_THREAD_CPUTIME_ID);

	while (now_s(CLOCK_THREAD_CPUTIME_ID) - c0 < sec)
		;
}

static void *timer_thread(void *arg)
{
	struct timespec d = { 0, 200 * 1000000L };
	long i = (long)arg;

	if (i == 0) {          /* 200 ms asleep inside a wall timer */
		/* A loaded machine oversleeps, and may preempt this thread
		 * next to the timer's start or stop: say how long the sleep
		 * took inside the timer's calls and outside them, so the test
		 * brackets the timer with the truth. */
		double o0 = now_s(CLOCK_MONOTONIC), i0, i1;

		rt.wstart(H[0]);
		i0 = now_s(CLOCK_MONOTONIC);
		nanosleep(&d, NULL);
		i1 = now_s(CLOCK_MONOTONIC);
		rt.wstop(H[0]);
		printf("slept %.0f %.0f\n", (i1 - i0) * 1e9,
		       (now_s(CLOCK_MONOTONIC) - o0) * 1e9);
		fflush(stdout);
	} else if (i == 1) {   /* 200 ms of CPU inside a CPU timer */
		rt.cstart(H[1]);
		spin_cpu(0.2);
		rt.cstop(H[1]);
	} else {               /* 200 ms asleep inside a CPU timer */
		rt.cstart(H[2]);
		nanosleep(&d, NULL);
		rt.cstop(H[2]);
	}
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	return NULL;
}


static long torn_iters[256];

static void *torn_thread(void *arg)
{
	long i = (long)arg, n = 0;

	while (!stop_flag) {
		rt.wstart(H[0]);
		rt.wstop(H[0]);
		rt.add(H[1], 1);
		n++;
	}
	torn_iters[i] = n;
	return NULL;
}

static int mode_torn(void)
{
	pthread_t t[256];
	long i, total = 0;
	double t0 = now_s(CLOCK_MONOTONIC);

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, torn_thread, (void *)i);
	while (now_s(CLOCK_MONOTONIC) - t0 < (double)NOPS)
		usleep(10000);
	stop_flag = 1;
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		total += torn_iters[i];
	}
	printf("done %ld\n", total);
	fflush(stdout);
	wait_exit_cmd();
	return 0;
}

static void *churn_thread(void *arg)
{
	int k;

	(void)arg;
	for (k = 0; k < 100; k++)
		rt.add(H[0], 1);
	rt.wstart(H[1]);
	rt.wstop(H[1]);
	return NULL;
}

static int mode_churn(void)
{
	long done = 0, b;

	while (done < NTHREADS) {
		b = NTHREADS - done < NOPS ? NTHREADS - done : NOPS;
		run_threads(churn_thread, b);
		done += b;
	}
	printf("done %ld\n", done);
	fflush(stdout);
	wait_exit_cmd();
	return 0;
}

static void *adder_thread(void *arg)
{
	long k;

	(void)arg;
	for (k = 0; k < NOPS; k++)
		rt.add(H[0], 1);
	return NULL;
}

/* Children keep calling primitives on the parent's handles (and start a
 * thread); the parent's counts must not change. */
static int mode_fork(void)
{
	pthread_t t[256];
	long i, ok = 0;
	int st;

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, adder_thread, NULL);
	for (i = 0; i < ARG5; i++) {
		pid_t p = fork();

		if (p == 0) {
			pthread_t c;

			adder_thread(NULL);
			pthread_create(&c, NULL, adder_thread, NULL);
			pthread_join(c, NULL);
			_exit(rt.index() == -1 ? 0 : 1);
		}
		rt.add(H[0], 1);   /* the parent's main thread: ARG5 adds */
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			ok++;
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("done %ld\n", ok);
	fflush(stdout);
	wait_exit_cmd();
	return 0;
}

static void *busy_thread(void *arg)
{
	(void)arg;
	while (!stop_flag) {
		rt.add(H[0], 1);
		rt.wstart(H[1]);
		rt.wstop(H[1]);
	}
	return NULL;
}

static int mode_busy(void)
{
	pthread_t t[256];
	long i;

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, busy_thread, NULL);
	printf("done\n");
	fflush(stdout);
	wait_exit_cmd();
	stop_flag = 1;
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Threads exist before the library is loaded; they register lazily at
 * their first primitive after the attach. */
static void *attach_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);
	adder_thread(NULL);
	pthread_barrier_wait(&bar);
	return NULL;
}

static int mode_attach(const char *name)
{
	pthread_t t[256];
	void *h;
	long i;

	pthread_barrier_init(&bar, NULL, (unsigned)NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, attach_thread, NULL);
	h = dlopen(getenv("HUNCHRT"), RTLD_NOW);
	if (h == NULL)
		die(dlerror());
	resolve(h);
	if (rt.attach(name) != 0)
		die("hunchrt_attach failed");
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	printf("done\n");
	fflush(stdout);
	wait_exit_cmd();
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Two threads pinned to one CPU spin 300 ms of wall time each inside a
 * CPU timer: each is preempted by the other about every tick, so the
 * timer must leave out the time the thread waited.  Each prints its index
 * and its own CLOCK_THREAD_CPUTIME_ID delta for comparison. */
static void *preempt_thread(void *arg)
{
	cpu_set_t set;
	double c0, w0, c1;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(&bar);
	c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	w0 = now_s(CLOCK_MONOTONIC);
	rt.cstart(H[0]);
	while (now_s(CLOCK_MONOTONIC) - w0 < 0.3)
		;
	rt.cstop(H[0]);
	c1 = now_s(CLOCK_THREAD_CPUTIME_ID);
	printf("cpu %d %lld\n", rt.index(), (long long)((c1 - c0) * 1e9));
	fflush(stdout);
	while (!stop_flag)   /* stay live until the test has read us */
		usleep(1000);
	return NULL;
}

static int mode_preempt(void)
{
	pthread_t t[2];

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t[0], NULL, preempt_thread, NULL);
	pthread_create(&t[1], NULL, preempt_thread, NULL);
	wait_exit_cmd();
	stop_flag = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	return 0;
}

/* exec drops everything: the program's own children see neither our
 * environment nor the segment's descriptor nor the library. */
static int mode_exec(int fd)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "echo \"env:${LD_PRELOAD:-none}:"
		 "${HUNCH_SHM_FD:-none} fd:$(test -e /proc/self/fd/%d && "
		 "echo open || echo closed) lib:$(grep -c hunchrt "
		 "/proc/self/maps)\"", fd);
	return system(cmd) == 0 ? 0 : 1;
}

static uint64_t num(char **argv, int argc, int i)
{
	if (i >= argc)
		die("missing argument: see the usage in rt_prog.c");
	return strtoull(argv[i], NULL, 0);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (strcmp(m, "attach") == 0) {
		H[0] = num(argv, argc, 3);
		NTHREADS = (long)num(argv, argc, 4);
		NOPS = (long)num(argv, argc, 5);
		return mode_attach(argv[2]);
	}
	resolve(RTLD_DEFAULT);
	if (strcmp(m, "exact") == 0) {
		H[0] = num(argv, argc, 2);
		H[1] = num(argv, argc, 3);
		H[2] = num(argv, argc, 4);
		NTHREADS = (long)num(argv, argc, 5);
		NOPS = (long)num(argv, argc, 6);
		return run_held(exact_thread);
	}
	if (strcmp(m, "timer") == 0) {
		H[0] = num(argv, argc, 2);
		H[1] = num(argv, argc, 3);
		H[2] = num(argv, argc, 4);
		NTHREADS = 3;
		return run_held(timer_thread);
	}
	H[0] = num(argv, argc, 2);
	if (strcmp(m, "preempt") == 0)
		return mode_preempt();
	if (strcmp(m, "exec") == 0)
		return mode_exec((int)H[0]);
	if (strcmp(m, "fork") == 0) {
		NTHREADS = (long)num(argv, argc, 3);
		NOPS = (long)num(argv, argc, 4);
		ARG5 = (long)num(argv, argc, 5);
		return mode_fork();
	}
	H[1] = num(argv, argc, 3);
	NTHREADS = (long)num(argv, argc, 4);
	if (strcmp(m, "busy") == 0)
		return mode_busy();
	NOPS = (long)num(argv, argc, 5);
	if (strcmp(m, "torn") == 0)
		return mode_torn();
	if (strcmp(m, "churn") == 0)
		return mode_churn();
	die("unknown mode");
	return 2;
}
