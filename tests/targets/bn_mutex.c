/* bn_mutex.c - bottleneck target: a contended global mutex.
 * N threads (bnmx_worker) loop: lock bnmx_lock, do ~0.1 ms of work in
 * bnmx_locked_work, unlock, do a little work outside (bnmx_outside_work,
 * about 1/20 of the locked work).  Only one thread can hold the lock, so
 * each worker spends about (N-1)/N of its time waiting for bnmx_lock and
 * the process uses at most about one CPU whatever the number of cores.
 * main sleeps for the run time (it does not wait in pthread_join), then
 * stops and joins the workers.
 *
 *   bn_mutex [--seconds S] [--threads N]     S fractional, default 10;
 *                                            N 2..64, default 8
 *
 * stdout: the configuration line, then "bn_mutex done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

#define BNMX_MAX_THREADS 64

pthread_mutex_t bnmx_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned long bnmx_shared;           /* guarded by bnmx_lock */
volatile int bnmx_stop;              /* set by main when time is up */
volatile unsigned long bnmx_sink;

/* Work done, for the throughput line on stderr at the end (bench/). */
unsigned long bnmx_done;

TGT_NOINLINE unsigned long bnmx_locked_work(unsigned long x)
{
	for (int i = 0; i < 40000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

TGT_NOINLINE unsigned long bnmx_outside_work(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

TGT_NOINLINE void *bnmx_worker(void *unused)
{
	unsigned long mine = 1;

	(void)unused;
	while (!bnmx_stop) {
		pthread_mutex_lock(&bnmx_lock);
		bnmx_shared = bnmx_locked_work(bnmx_shared);
		bnmx_done++;
		pthread_mutex_unlock(&bnmx_lock);
		mine = bnmx_outside_work(mine);
	}
	bnmx_sink = mine;
	return NULL;
}

TGT_NOINLINE void bnmx_sleep(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0)
		;
}

TGT_NOINLINE int bnmx_parse(int argc, char **argv, double *seconds, int *threads)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			*seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			*threads = atoi(argv[++i]);
		else
			return -1;
	}
	return *seconds >= 0 && *threads >= 2 && *threads <= BNMX_MAX_THREADS ? 0 : -1;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	pthread_t workers[BNMX_MAX_THREADS];
	double seconds = 10;
	int nthreads = 8;

	if (bnmx_parse(argc, argv, &seconds, &nthreads)) {
		fprintf(stderr, "usage: bn_mutex [--seconds S] [--threads 2..%d]\n",
			BNMX_MAX_THREADS);
		return TGT_EXIT_USAGE;
	}
	printf("bn_mutex: %g seconds, %d workers contend bnmx_lock\n", seconds, nthreads);
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&workers[i], NULL, bnmx_worker, NULL);
	bnmx_sleep(seconds);
	bnmx_stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(workers[i], NULL);
	fprintf(stderr, "bn_mutex: throughput %.0f locked sections/s\n", bnmx_done / seconds);
	printf("bn_mutex done\n");
	return 0;
}
