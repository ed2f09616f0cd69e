/* bn_sleepy.c - target with no bottleneck: main -> bnsl_run
 * sleeps 50 ms at a time (nanosleep) and does a little work
 * (bnsl_tick) at each wake-up.  It uses almost no CPU, takes no locks
 * and does no I/O besides stdout.  Single-threaded.
 *
 *   bn_sleepy [--seconds S]     S fractional, default 10
 *
 * stdout: the configuration line, then "bn_sleepy done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

volatile unsigned long bnsl_sink;

/* Work done, for the throughput line on stderr at the end (bench/). */
unsigned long bnsl_done;

TGT_NOINLINE double bnsl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long bnsl_tick(unsigned long x)
{
	for (int i = 0; i < 100; i++)
		x = x * 6364136223846793005ul + 1;
	return x;
}

TGT_NOINLINE void bnsl_run(double seconds)
{
	double end = bnsl_now() + seconds, left;
	unsigned long x = 1;
	struct timespec ts;

	while ((left = end - bnsl_now()) > 0) {
		x = bnsl_tick(x);
		bnsl_done++;
		if (left > 0.05)
			left = 0.05;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
	}
	bnsl_sink = x;
}

TGT_NOINLINE int bnsl_parse(int argc, char **argv, double *seconds)
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

	if (bnsl_parse(argc, argv, &seconds)) {
		fprintf(stderr, "usage: bn_sleepy [--seconds S]\n");
		return TGT_EXIT_USAGE;
	}
	printf("bn_sleepy: %g seconds, mostly asleep\n", seconds);
	fflush(stdout);
	bnsl_run(seconds);
	fprintf(stderr, "bn_sleepy: throughput %.0f ticks/s\n", bnsl_done / seconds);
	printf("bn_sleepy done\n");
	return 0;
}
