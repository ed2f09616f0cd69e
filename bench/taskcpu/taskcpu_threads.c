/*
 * taskcpu_threads.c - the target of bench_taskcpu: starts N threads that
 * mostly sleep (each wakes every 50 ms for a few µs of work), as a server
 * with a thread per connection does, prints "ready" once every thread
 * runs, and lives until its standard input closes.
 *
 * Usage: taskcpu_threads N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t started;

static void *sleeper(void *arg)
{
	struct timespec d = { 0, 50 * 1000 * 1000 };
	volatile unsigned long x = 0;

	(void)arg;
	pthread_barrier_wait(&started);
	for (;;) {
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i;
		nanosleep(&d, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	pthread_attr_t a;
	pthread_t t;
	char c;

	if (n < 1) {
		fprintf(stderr, "usage: taskcpu_threads N (N >= 1)\n");
		return 1;
	}
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	pthread_barrier_init(&started, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, &a, sleeper, NULL) != 0) {
			perror("taskcpu_threads: pthread_create");
			return 1;
		}
	pthread_barrier_wait(&started);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
