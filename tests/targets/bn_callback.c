/* bn_callback.c - bottleneck target: a CPU hotspot in a callback called
 * through a table of function pointers.  main -> bncb_run ->
 * bncb_dispatch -> (call *table[i]) bncb_heavy, where almost all the
 * time goes; bncb_light and bncb_mid are called through the same table
 * as often and cost little.  The table is filled at run time, so the
 * compiler cannot turn the indirect call into a direct one.
 * Single-threaded.
 *
 *   bn_callback [--seconds S]     S may be fractional, default 10
 *
 * stdout: the configuration line, then "bn_callback done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

typedef unsigned long (*bncb_fn)(unsigned long);

volatile unsigned long bncb_sink;   /* keeps results alive */
bncb_fn bncb_table[3];

TGT_NOINLINE double bncb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long bncb_light(unsigned long x)
{
	return x * 31 + 7;
}

TGT_NOINLINE unsigned long bncb_mid(unsigned long x)
{
	for (int i = 0; i < 20; i++)
		x = x * 6364136223846793005ul + 1;
	return x;
}

TGT_NOINLINE unsigned long bncb_heavy(unsigned long x)
{
	for (int i = 0; i < 20000; i++) {
		x ^= x << 7;
		x ^= x >> 9;
		x *= 0x2545F4914F6CDD1Dul;
	}
	return x;
}

/* Every callback of the table once, through its pointer. */
TGT_NOINLINE unsigned long bncb_dispatch(unsigned long x)
{
	for (int i = 0; i < 3; i++)
		x = bncb_table[i](x) + 1;
	return x;
}

TGT_NOINLINE void bncb_run(double seconds)
{
	double end = bncb_now() + seconds;
	unsigned long x = 1;

	do
		x = bncb_dispatch(x);
	while (bncb_now() < end);
	bncb_sink = x;
}

TGT_NOINLINE int bncb_parse(int argc, char **argv, double *seconds)
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

	if (bncb_parse(argc, argv, &seconds)) {
		fprintf(stderr, "usage: bn_callback [--seconds S]\n");
		return TGT_EXIT_USAGE;
	}
	bncb_table[0] = bncb_light;
	bncb_table[argc > 99 ? 0 : 1] = bncb_heavy;
	bncb_table[2] = bncb_mid;
	printf("bn_callback: %g seconds, hotspot main>run>dispatch>(pointer)heavy\n",
	       seconds);
	fflush(stdout);
	bncb_run(seconds);
	printf("bn_callback done\n");
	return 0;
}
