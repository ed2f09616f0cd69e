/*
 * hint_fnptr.c - a hot function the static call graph cannot reach: the
 * ground truth for the sampled call edges (tests/hint/README.md).
 *
 * main -> fnp_run -> fnp_dispatch, which calls through fnp_table (a
 * writable table indexed by a volatile: no compiler can resolve it) the
 * function fnp_hot, where nearly all the CPU goes.  fnp_dispatch's calls
 * are all indirect, so the parser gives it no callee at all.
 *
 *   hint_fnptr [SECONDS]      default 30; "hint_fnptr running" on stdout
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "targets.h"

typedef unsigned long (*fnp_op)(unsigned long);

unsigned long fnp_sink;
volatile int fnp_pick = 1;

TGT_NOINLINE unsigned long fnp_cheap(unsigned long x)
{
	return x + 1;
}

/* xorshift rounds: pure CPU, no calls */
TGT_NOINLINE unsigned long fnp_hot(unsigned long x)
{
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

fnp_op fnp_table[2] = { fnp_cheap, fnp_hot };

TGT_NOINLINE unsigned long fnp_dispatch(unsigned long x)
{
	for (int i = 0; i < 16; i++)
		x += fnp_table[fnp_pick](x);
	return x;
}

TGT_NOINLINE double fnp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE void fnp_run(double seconds)
{
	double end = fnp_now() + seconds;

	do
		fnp_sink += fnp_dispatch(fnp_sink | 1);
	while (fnp_now() < end);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;

	printf("hint_fnptr running\n");
	fflush(stdout);
	fnp_run(seconds);
	printf("hint_fnptr done %lu\n", fnp_sink & 1);
	return 0;
}
