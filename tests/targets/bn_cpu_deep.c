/* bn_cpu_deep.c - bottleneck target: a CPU hotspot deep in a call
 * chain.  main -> bncpu_a -> bncpu_b -> bncpu_c -> bncpu_d ->
 * bncpu_hot_loop, where almost all the time goes; bncpu_light does a
 * little work once per round, so it is a function that runs but is not
 * the hotspot.  Single-threaded, no I/O beyond stdout.
 *
 *   bn_cpu_deep [--seconds S]     S may be fractional, default 10
 *
 * stdout: the configuration line, then "bn_cpu_deep done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

volatile unsigned long bncpu_sink;   /* keeps results alive */

/* Work done, for the throughput line on stderr at the end (bench/). */
unsigned long bncpu_done;

TGT_NOINLINE double bncpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long bncpu_hot_loop(unsigned long seed, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		seed ^= seed << 7;
		seed ^= seed >> 9;
		seed *= 0x2545F4914F6CDD1Dul;
	}
	return seed;
}

/* Each level does something after its call, so no call in the chain is
 * a tail call (a jmp): every level is a real frame at every -O level. */
TGT_NOINLINE unsigned long bncpu_d(unsigned long x)
{
	return bncpu_hot_loop(x | 1, 20000) + 1;
}

TGT_NOINLINE unsigned long bncpu_c(unsigned long x)
{
	return bncpu_d(x + 3) ^ 0x55;
}

TGT_NOINLINE unsigned long bncpu_b(unsigned long x)
{
	return bncpu_c(x ^ 5) + 1;
}

/* A little bookkeeping per round: runs often, costs little. */
TGT_NOINLINE unsigned long bncpu_light(unsigned long x)
{
	return x * 31 + 7;
}

TGT_NOINLINE void bncpu_a(double seconds)
{
	double end = bncpu_now() + seconds;
	unsigned long x = 1, y = 0;

	do {
		x = bncpu_b(x);
		y = bncpu_light(y ^ x);
		bncpu_done++;
	} while (bncpu_now() < end);
	bncpu_sink = x + y;
}

TGT_NOINLINE int bncpu_parse(int argc, char **argv, double *seconds)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			*seconds = atof(argv[++i]);
		else
			return -1;
	}
	return *seconds >= 0 ? 0 : -1;
}

TGT_NOINLINE int main(int argc, char **argv)
{
	double seconds = 10;

	if (bncpu_parse(argc, argv, &seconds)) {
		fprintf(stderr, "usage: bn_cpu_deep [--seconds S]\n");
		return TGT_EXIT_USAGE;
	}
	printf("bn_cpu_deep: %g seconds, hotspot main>a>b>c>d>hot_loop\n", seconds);
	fflush(stdout);
	bncpu_a(seconds);
	fprintf(stderr, "bn_cpu_deep: throughput %.0f chains/s\n", bncpu_done / seconds);
	printf("bn_cpu_deep done\n");
	return 0;
}
