/* threads.c - multi-threaded target: a mutex and a condition variable.
 *
 * N workers (mt_worker) each add MT_INCREMENTS to one counter under
 * mt_lock; a producer (mt_producer) hands MT_ITEMS numbers to a consumer
 * (mt_consumer) through a one-slot buffer guarded by mt_slot_lock and the
 * condition variables mt_slot_full / mt_slot_empty.
 *
 *   threads [--threads N] [--wait-file PATH]
 *
 * With --wait-file every thread first loops (lock, tick, unlock, sleep
 * 1 ms) until PATH exists, then does its fixed work.  The idle ticks are
 * never printed, so stdout does not depend on how long the program ran.
 * "ready" goes to stderr once every thread exists.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"

#define MT_INCREMENTS 10000
#define MT_ITEMS 1000
#define MT_MAX_THREADS 64

/* Global, so hunch can name them from their data symbols. */
pthread_mutex_t mt_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t mt_slot_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t mt_slot_full = PTHREAD_COND_INITIALIZER;
pthread_cond_t mt_slot_empty = PTHREAD_COND_INITIALIZER;

long mt_counter;         /* guarded by mt_lock */
long mt_idle_ticks;      /* guarded by mt_lock; never printed */
long mt_slot;            /* guarded by mt_slot_lock */
int mt_slot_used;        /* guarded by mt_slot_lock */
const char *mt_wait_path;

struct mt_worker_arg {
	int index;
	long done;       /* increments this worker made */
};

/* Keeps the thread busy on mt_lock until the wait file exists. */
TGT_NOINLINE void mt_wait_for_file(void)
{
	const struct timespec ms = { 0, 1000000 };

	while (mt_wait_path && access(mt_wait_path, F_OK) != 0) {
		pthread_mutex_lock(&mt_lock);
		mt_idle_ticks++;
		pthread_mutex_unlock(&mt_lock);
		nanosleep(&ms, NULL);
	}
}

TGT_NOINLINE void mt_increment(void)
{
	pthread_mutex_lock(&mt_lock);
	mt_counter++;
	pthread_mutex_unlock(&mt_lock);
}

TGT_NOINLINE void *mt_worker(void *p)
{
	struct mt_worker_arg *arg = p;

	mt_wait_for_file();
	for (int i = 0; i < MT_INCREMENTS; i++) {
		mt_increment();
		arg->done++;
	}
	return NULL;
}

TGT_NOINLINE void mt_put(long value)
{
	pthread_mutex_lock(&mt_slot_lock);
	while (mt_slot_used)
		pthread_cond_wait(&mt_slot_empty, &mt_slot_lock);
	mt_slot = value;
	mt_slot_used = 1;
	pthread_cond_signal(&mt_slot_full);
	pthread_mutex_unlock(&mt_slot_lock);
}

TGT_NOINLINE long mt_take(void)
{
	long value;

	pthread_mutex_lock(&mt_slot_lock);
	while (!mt_slot_used)
		pthread_cond_wait(&mt_slot_full, &mt_slot_lock);
	value = mt_slot;
	mt_slot_used = 0;
	pthread_cond_signal(&mt_slot_empty);
	pthread_mutex_unlock(&mt_slot_lock);
	return value;
}

TGT_NOINLINE void *mt_producer(void *unused)
{
	(void)unused;
	mt_wait_for_file();
	for (long i = 1; i <= MT_ITEMS; i++)
		mt_put(i);
	return NULL;
}

/* Returns the sum of what it consumed through *result. */
TGT_NOINLINE void *mt_consumer(void *result)
{
	long sum = 0;

	mt_wait_for_file();
	for (long i = 0; i < MT_ITEMS; i++)
		sum += mt_take();
	*(long *)result = sum;
	return NULL;
}

/* Returns the thread count, or -1 on a usage error. */
TGT_NOINLINE int mt_parse_args(int argc, char **argv)
{
	int nthreads = 4;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--wait-file") == 0 && i + 1 < argc)
			mt_wait_path = argv[++i];
		else
			return -1;
	}
	return nthreads >= 1 && nthreads <= MT_MAX_THREADS ? nthreads : -1;
}

TGT_NOINLINE void mt_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
		exit(1);
	}
}

TGT_NOINLINE int main(int argc, char **argv)
{
	struct mt_worker_arg args[MT_MAX_THREADS] = { 0 };
	pthread_t workers[MT_MAX_THREADS], producer, consumer;
	long consumed = 0;
	int n = mt_parse_args(argc, argv);

	if (n < 0) {
		fprintf(stderr, "usage: threads [--threads 1..%d] [--wait-file PATH]\n",
			MT_MAX_THREADS);
		return TGT_EXIT_USAGE;
	}
	printf("threads: %d workers, %d increments each, %d items\n",
	       n, MT_INCREMENTS, MT_ITEMS);
	for (int i = 0; i < n; i++) {
		args[i].index = i;
		mt_start(&workers[i], mt_worker, &args[i]);
	}
	mt_start(&producer, mt_producer, NULL);
	mt_start(&consumer, mt_consumer, &consumed);
	fputs("ready\n", stderr);
	for (int i = 0; i < n; i++) {
		pthread_join(workers[i], NULL);
		printf("worker %d: %ld increments\n", args[i].index, args[i].done);
	}
	pthread_join(producer, NULL);
	pthread_join(consumer, NULL);
	printf("counter: %ld\n", mt_counter);
	printf("consumed: %d items, sum %ld\n", MT_ITEMS, consumed);
	return 0;
}
