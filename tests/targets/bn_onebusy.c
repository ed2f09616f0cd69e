/* bn_onebusy.c - bottleneck target: one busy thread among idle
 * ones.  bnob_busy_worker computes all the time (bnob_busy_work);
 * N bnob_idle_worker threads wake every 10 ms for a little work
 * (bnob_idle_work) and sleep again.  main sleeps for the run time (it
 * does not wait in pthread_join, so it adds no sync waiting), then stops
 * and joins the workers.  So nearly all CPU time is the busy thread's,
 * in bnob_busy_work.
 *
 *   bn_onebusy [--seconds S] [--idle N]    S fractional, default 10;
 *                                          N 0..64, default 2
 *
 * stdout: the configuration line, then "bn_onebusy done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

#define BNOB_MAX_THREADS 64

volatile int bnob_stop;
volatile unsigned long bnob_sink;

/* Work done, for the throughput line on stderr at the end (bench/). */
unsigned long bnob_done;

TGT_NOINLINE void bnob_sleep(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0)
		;
}

TGT_NOINLINE unsigned long bnob_busy_work(unsigned long x)
{
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

TGT_NOINLINE unsigned long bnob_idle_work(unsigned long x)
{
	for (int i = 0; i < 100; i++)
		x = x * 6364136223846793005ul + 1;
	return x;
}

TGT_NOINLINE void *bnob_busy_worker(void *unused)
{
	unsigned long x = 1;

	(void)unused;
	while (!bnob_stop) {
		x = bnob_busy_work(x);
		bnob_done++;
	}
	bnob_sink = x;
	return NULL;
}

TGT_NOINLINE void *bnob_idle_worker(void *unused)
{
	unsigned long x = 1;

	(void)unused;
	while (!bnob_stop) {
		x = bnob_idle_work(x);
		bnob_sleep(0.01);
	}
	bnob_sink = x;
	return NULL;
}

TGT_NOINLINE int bnob_parse(int argc, char **argv, double *seconds, int *idle)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			*seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--idle") == 0 && i + 1 < argc)
			*idle = atoi(argv[++i]);
		else
			return -1;
	}
	return *seconds >= 0 && *idle >= 0 && *idle <= BNOB_MAX_THREADS ? 0 : -1;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	pthread_t idle[BNOB_MAX_THREADS], busy;
	double seconds = 10;
	int n = 2;

	if (bnob_parse(argc, argv, &seconds, &n)) {
		fprintf(stderr, "usage: bn_onebusy [--seconds S] [--idle 0..%d]\n",
			BNOB_MAX_THREADS);
		return TGT_EXIT_USAGE;
	}
	printf("bn_onebusy: %g seconds, 1 busy thread, %d idle threads\n", seconds, n);
	fflush(stdout);
	pthread_create(&busy, NULL, bnob_busy_worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_create(&idle[i], NULL, bnob_idle_worker, NULL);
	bnob_sleep(seconds);
	bnob_stop = 1;
	pthread_join(busy, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(idle[i], NULL);
	fprintf(stderr, "bn_onebusy: throughput %.0f busy rounds/s\n", bnob_done / seconds);
	printf("bn_onebusy done\n");
	return 0;
}
