/*
 * tree_work - a process tree for bench/fork: forks PROCS processes of
 * THREADS threads each; every thread computes ~0.2 ms, then sleeps 10 ms,
 * for SECONDS (a pool of mostly idle workers, sampled now and then).
 * It prints the children's pids, one a line, then "ready" on stdout, and
 * waits for them.
 *
 * usage: tree_work PROCS THREADS SECONDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long tw_work(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1;
	return x;
}

static void *tw_thread(void *arg)
{
	struct timespec ts = { 0, 10000000 };
	double end = now() + seconds;
	unsigned long x = (unsigned long)arg;

	while (now() < end) {
		x = tw_work(x);
		nanosleep(&ts, NULL);
	}
	sink = x;
	return NULL;
}

static void child(int threads)
{
	pthread_t t[64];

	for (int i = 1; i < threads && i < 64; i++)
		pthread_create(&t[i], NULL, tw_thread, (void *)(long)i);
	tw_thread(NULL);
	for (int i = 1; i < threads && i < 64; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

int main(int argc, char **argv)
{
	int procs, threads;

	if (argc != 4) {
		fprintf(stderr, "usage: tree_work PROCS THREADS SECONDS\n");
		return 2;
	}
	procs = atoi(argv[1]);
	threads = atoi(argv[2]);
	seconds = atof(argv[3]);
	for (int i = 0; i < procs; i++) {
		pid_t p;

		fflush(stdout);
		if ((p = fork()) == 0)
			child(threads);
		printf("%d\n", (int)p);
	}
	printf("ready\n");
	fflush(stdout);
	while (wait(NULL) > 0)
		;
	return 0;
}
