/* demo.c - hunch's bundled demo (installed as hunch-demo).
 *
 * Three bottlenecks at once, each easy to see and to name:
 *   - CPU: main -> demo_run -> demo_step -> demo_transform ->
 *     demo_hot_loop, where almost all of main's time goes;
 *   - a lock: worker threads (demo_worker) contend one global mutex,
 *     demo_lock, holding it while they do a little work;
 *   - small writes: demo_writer write()s one byte at a time to a
 *     temporary file (/tmp/hunch-demo-XXXXXX, removed at the end).
 *
 *   hunch-demo [--seconds S] [--threads N]     S may be fractional
 *
 * stdout is the configuration and "demo done": nothing that depends on
 * time or scheduling.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"

#define DEMO_MAX_THREADS 32

pthread_mutex_t demo_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned long demo_shared;           /* guarded by demo_lock */
volatile int demo_stop;              /* set by main when time is up */
unsigned long demo_sink;             /* keeps the hot loop's result alive */
char demo_file[] = "/tmp/hunch-demo-XXXXXX";

TGT_NOINLINE double demo_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long demo_hot_loop(unsigned long seed, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		seed ^= seed << 7;
		seed ^= seed >> 9;
		seed *= 0x2545F4914F6CDD1Dul;
	}
	return seed;
}

TGT_NOINLINE unsigned long demo_transform(unsigned long x)
{
	return demo_hot_loop(x | 1, 20000);
}

TGT_NOINLINE unsigned long demo_step(unsigned long x)
{
	return demo_transform(x) + 1;
}

TGT_NOINLINE void demo_run(double seconds)
{
	double end = demo_now() + seconds;
	unsigned long x = 1;

	do
		x = demo_step(x);
	while (demo_now() < end);
	demo_sink = x;
}

/* The work done under demo_lock.  Not demo_hot_loop, so the CPU
 * hotspot and the lock show up in different functions. */
TGT_NOINLINE unsigned long demo_locked_work(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

/* Holds demo_lock while doing some work, so the others wait for it. */
TGT_NOINLINE void *demo_worker(void *unused)
{
	(void)unused;
	while (!demo_stop) {
		pthread_mutex_lock(&demo_lock);
		demo_shared = demo_locked_work(demo_shared);
		pthread_mutex_unlock(&demo_lock);
	}
	return NULL;
}

TGT_NOINLINE void *demo_writer(void *unused)
{
	int fd = mkstemp(demo_file);
	char c = 'x';

	(void)unused;
	if (fd < 0) {
		perror("hunch-demo: mkstemp");
		return NULL;
	}
	while (!demo_stop)
		if (write(fd, &c, 1) != 1)
			break;
	close(fd);
	unlink(demo_file);
	return NULL;
}

/* Parses the options into *seconds and *threads; 0 on success. */
TGT_NOINLINE int demo_parse(int argc, char **argv, double *seconds, int *threads)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			*seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			*threads = atoi(argv[++i]);
		else
			return -1;
	}
	return *seconds >= 0 && *threads >= 1 && *threads <= DEMO_MAX_THREADS ? 0 : -1;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	pthread_t workers[DEMO_MAX_THREADS], writer;
	double seconds = 10;
	int nthreads = 4;

	if (demo_parse(argc, argv, &seconds, &nthreads)) {
		fprintf(stderr, "usage: hunch-demo [--seconds S] [--threads 1..%d]\n",
			DEMO_MAX_THREADS);
		return TGT_EXIT_USAGE;
	}
	printf("demo: %g seconds, %d lock workers, 1 writer\n", seconds, nthreads);
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&workers[i], NULL, demo_worker, NULL);
	pthread_create(&writer, NULL, demo_writer, NULL);
	demo_run(seconds);
	demo_stop = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(workers[i], NULL);
	pthread_join(writer, NULL);
	printf("demo done\n");
	return 0;
}
