/* bn_condvar.c - bottleneck target: producer/consumer where the
 * consumers mostly wait on a condition variable.  One bncv_producer makes
 * an item every 2 ms (bncv_produce: nanosleep, as if waiting for a slow
 * source, plus a little work) and queues it under bncv_lock, signalling
 * bncv_ready; N bncv_consumer threads wait on bncv_ready (with bncv_lock)
 * and do a little work per item (bncv_consume).  So the consumers spend
 * nearly all their time in pthread_cond_wait on bncv_ready; nobody uses
 * much CPU.  main sleeps for the run time, then stops everybody
 * (broadcast) and joins.
 *
 *   bn_condvar [--seconds S] [--consumers N]   S fractional, default 10;
 *                                               N 1..64, default 3
 *
 * stdout: the configuration line, then "bn_condvar done".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

#define BNCV_MAX_THREADS 64

pthread_mutex_t bncv_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t bncv_ready = PTHREAD_COND_INITIALIZER;
unsigned long bncv_queued;           /* items waiting; guarded by bncv_lock */
int bncv_stop;                       /* guarded by bncv_lock */
volatile unsigned long bncv_sink;

/* Work done, for the throughput line on stderr at the end (bench/). */
unsigned long bncv_done;

TGT_NOINLINE void bncv_sleep(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The slow part: waits 2 ms for the "source", then a little work. */
TGT_NOINLINE unsigned long bncv_produce(unsigned long x)
{
	bncv_sleep(0.002);
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ul + 1;
	return x;
}

TGT_NOINLINE unsigned long bncv_consume(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2862933555777941757ul + 3;
	return x;
}

TGT_NOINLINE void *bncv_producer(void *unused)
{
	unsigned long x = 1;
	int stop = 0;

	(void)unused;
	while (!stop) {
		x = bncv_produce(x);
		pthread_mutex_lock(&bncv_lock);
		bncv_queued++;
		pthread_cond_signal(&bncv_ready);
		stop = bncv_stop;
		pthread_mutex_unlock(&bncv_lock);
	}
	bncv_sink = x;
	return NULL;
}

TGT_NOINLINE void *bncv_consumer(void *unused)
{
	unsigned long x = 1;

	(void)unused;
	pthread_mutex_lock(&bncv_lock);
	for (;;) {
		while (bncv_queued == 0 && !bncv_stop)
			pthread_cond_wait(&bncv_ready, &bncv_lock);
		if (bncv_queued == 0)
			break;
		bncv_queued--;
		bncv_done++;
		pthread_mutex_unlock(&bncv_lock);
		x = bncv_consume(x);
		pthread_mutex_lock(&bncv_lock);
	}
	pthread_mutex_unlock(&bncv_lock);
	bncv_sink = x;
	return NULL;
}

TGT_NOINLINE int bncv_parse(int argc, char **argv, double *seconds, int *consumers)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			*seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--consumers") == 0 && i + 1 < argc)
			*consumers = atoi(argv[++i]);
		else
			return -1;
	}
	return *seconds >= 0 && *consumers >= 1 && *consumers <= BNCV_MAX_THREADS ? 0 : -1;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	pthread_t consumers[BNCV_MAX_THREADS], producer;
	double seconds = 10;
	int n = 3;

	if (bncv_parse(argc, argv, &seconds, &n)) {
		fprintf(stderr, "usage: bn_condvar [--seconds S] [--consumers 1..%d]\n",
			BNCV_MAX_THREADS);
		return TGT_EXIT_USAGE;
	}
	printf("bn_condvar: %g seconds, 1 slow producer, %d consumers wait on bncv_ready\n",
		seconds, n);
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_create(&consumers[i], NULL, bncv_consumer, NULL);
	pthread_create(&producer, NULL, bncv_producer, NULL);
	bncv_sleep(seconds);
	pthread_mutex_lock(&bncv_lock);
	bncv_stop = 1;
	pthread_cond_broadcast(&bncv_ready);
	pthread_mutex_unlock(&bncv_lock);
	pthread_join(producer, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(consumers[i], NULL);
	fprintf(stderr, "bn_condvar: throughput %.0f items/s\n", bncv_done / seconds);
	printf("bn_condvar done\n");
	return 0;
}
