/*
 * kspin.c - a target whose threads use known CPU time on command, for
 * the kernel CPU reader (engine/eng_taskcpu.h) and the kernel CPU
 * metric.  main reads one command per line on stdin and answers one
 * line on stdout; between commands it is blocked in read().
 *
 *   (start)  -> "ready PID"
 *   r        -> "run TID"           a thread spins until s
 *   s        -> "stopped TID NS"    the spinner stops, measures its own
 *                                   CPU time NS (CLOCK_THREAD_CPUTIME_ID)
 *                                   and blocks for good (pthread_cond_wait)
 *   w        -> "waiting TID"       a thread blocks until g
 *   g MS     -> "exited TID NS"     the waiting thread spins MS ms of its
 *                                   own CPU time and exits; main joins it
 *   x MS     -> "exited TID NS"     a new thread spins MS ms of CPU and
 *                                   exits; main joins it
 *   q        -> exits 0
 * NS is the thread's own CPU time when it stopped spinning: what the
 * kernel counts for it afterwards is NS plus the few µs it takes to
 * block or exit.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
/* The stopped spinner waits here, where no broadcast ever wakes it:
 * its CPU time must not move once stopped. */
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static volatile int stop_spin, go;
static long spin_tid;             /* the last thread started by start() */
static long spinner_tid, waiter_tid, burst_tid;
static int64_t spin_ns;
static long go_ms;

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spin until the thread has used `ms` ms of CPU; its CPU time then. */
__attribute__((noinline)) static int64_t ks_spin_for(long ms)
{
	volatile unsigned long x = 0;
	int64_t end = thread_cpu_ns() + ms * 1000000, now;

	while ((now = thread_cpu_ns()) < end)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
	return now;
}

__attribute__((noinline)) static void *ks_spinner(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	pthread_mutex_lock(&mu);
	spin_tid = syscall(SYS_gettid);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	while (!stop_spin)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
	pthread_mutex_lock(&mu);
	spin_ns = thread_cpu_ns();
	pthread_cond_broadcast(&cv);
	for (;;)                      /* blocked for good */
		pthread_cond_wait(&never, &mu);
	return NULL;
}

__attribute__((noinline)) static void *ks_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	spin_tid = syscall(SYS_gettid);
	pthread_cond_broadcast(&cv);
	while (!go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return (void *)(intptr_t)ks_spin_for(go_ms);
}

/* Start `fn` and wait until it has published its tid. */
static long start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	long tid;

	pthread_mutex_lock(&mu);
	spin_tid = 0;
	pthread_create(t, NULL, fn, arg);
	while (spin_tid == 0)
		pthread_cond_wait(&cv, &mu);
	tid = spin_tid;
	pthread_mutex_unlock(&mu);
	return tid;
}

/* A burst thread's tid is not needed before it ends: it reports it. */
__attribute__((noinline)) static void *ks_burst(void *arg)
{
	int64_t ns = ks_spin_for((long)(intptr_t)arg);

	pthread_mutex_lock(&mu);
	burst_tid = syscall(SYS_gettid);
	pthread_mutex_unlock(&mu);
	return (void *)(intptr_t)ns;
}

int main(void)
{
	pthread_t spinner, waiter, burst;
	char line[64];
	void *ret;
	long ms;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin) != NULL) {
		switch (line[0]) {
		case 'r':
			stop_spin = 0;
			spinner_tid = start(&spinner, ks_spinner, NULL);
			printf("run %ld\n", spinner_tid);
			break;
		case 's':
			pthread_mutex_lock(&mu);
			spin_ns = 0;
			stop_spin = 1;
			while (spin_ns == 0)
				pthread_cond_wait(&cv, &mu);
			printf("stopped %ld %lld\n", spinner_tid,
			       (long long)spin_ns);
			pthread_mutex_unlock(&mu);
			break;
		case 'w':
			go = 0;
			waiter_tid = start(&waiter, ks_waiter, NULL);
			printf("waiting %ld\n", waiter_tid);
			break;
		case 'g':
			pthread_mutex_lock(&mu);
			go_ms = atol(line + 1);
			go = 1;
			pthread_cond_broadcast(&cv);
			pthread_mutex_unlock(&mu);
			pthread_join(waiter, &ret);
			printf("exited %ld %lld\n", waiter_tid,
			       (long long)(intptr_t)ret);
			break;
		case 'x':
			ms = atol(line + 1);
			pthread_create(&burst, NULL, ks_burst,
				       (void *)(intptr_t)ms);
			pthread_join(burst, &ret);
			printf("exited %ld %lld\n", burst_tid,
			       (long long)(intptr_t)ret);
			break;
		case 'q':
			return 0;
		}
	}
	return 0;
}
