/* allocstorm.c - a program that calls malloc and free about 10^7 times a
 * second each (on this machine class), for the cost-control test
 * (test-cost.sh): an experiment on them costs far more than the cost
 * limit, and hunch must know that before launching it.
 *
 *   allocstorm [SECONDS [ROUNDS]]   default 6 s; with ROUNDS, a fixed
 *                                   amount of work (bench/cost)
 * prints "allocstorm done", and its rounds per CPU second on stderr
 *
 * Each round does a little arithmetic between the calls, so that the
 * calls are a library-heavy share of the time, not all of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void *volatile as_sink;
volatile unsigned long as_acc;

static double as_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void as_round(unsigned long i)
{
	unsigned long x = i;

	as_sink = malloc(16 + (i & 127));
	for (int k = 0; k < 128; k++) {     /* xorshift-multiply: not folded */
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ul;
	}
	as_acc += x;
	free(as_sink);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 6, t0 = as_now();
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 0, i = 0;
	struct timespec cpu;

	while (n ? i < n : as_now() - t0 < secs)
		for (int k = 0; k < 100000; k++)
			as_round(i++);
	printf("allocstorm done\n");
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	fprintf(stderr, "allocstorm: %lu rounds (malloc+free), %.0f per CPU "
		"second\n", i, (double)i / ((double)cpu.tv_sec +
					 (double)cpu.tv_nsec / 1e9));
	return 0;
}
