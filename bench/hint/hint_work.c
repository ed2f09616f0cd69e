/*
 * hint_work - a CPU-bound workload for bench/hint: THREADS threads run a
 * five-deep call chain for SECONDS, then it prints
 *   "iters N cpu S"
 * (iterations done, and the process's CPU seconds, so that the work per
 * CPU second can be compared with and without sampling even when other
 * programs share the machine).
 *
 * usage: hint_work THREADS SECONDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int stop;
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long work5(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

#define LEVEL(name, next) \
	__attribute__((noinline)) static unsigned long name(unsigned long x) \
	{ unsigned long r = next(x + 1); sink = r; return r + 1; }
LEVEL(work4, work5)
LEVEL(work3, work4)
LEVEL(work2, work3)
LEVEL(work1, work2)

static void *worker(void *arg)
{
	unsigned long n = 0, x = 1;

	while (!stop) {
		x = work1(x);
		n++;
	}
	sink = x;
	*(unsigned long *)arg = n;
	return NULL;
}

int main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 2;
	struct timespec ts = { argc > 2 ? atoi(argv[2]) : 3, 0 };
	pthread_t t[64];
	unsigned long n[64] = { 0 }, total = 0;

	if (nt < 1 || nt > 64)
		return 2;
	for (int i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, &n[i]);
	nanosleep(&ts, NULL);
	stop = 1;
	for (int i = 0; i < nt; i++) {
		pthread_join(t[i], NULL);
		total += n[i];
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	printf("iters %lu cpu %.6f\n", total,
	       (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	return 0;
}
