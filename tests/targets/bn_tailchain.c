/* bn_tailchain.c - bottleneck target: a CPU hotspot below a tail call.
 * main -> bntc_a -> bntc_b -> (tail call: jmp) bntc_c -> bntc_hot,
 * where almost all the time goes.  bntc_b's last act is to call
 * bntc_c, so at -O2 it is `jmp bntc_c`: bntc_b has no frame while
 * bntc_c runs, and bntc_c returns straight to bntc_a.  bntc_ping and
 * bntc_pong tail-call each other (mutual recursion through jmps) and
 * end in bntc_hot too, for a little of the time.  Single-threaded.
 *
 *   bn_tailchain [--seconds S]     S may be fractional, default 10
 *
 * stdout: the configuration line, then "bn_tailchain done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

volatile unsigned long bntc_sink;   /* keeps results alive */

TGT_NOINLINE double bntc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long bntc_hot(unsigned long seed, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		seed ^= seed << 7;
		seed ^= seed >> 9;
		seed *= 0x2545F4914F6CDD1Dul;
	}
	return seed;
}

/* A real frame: work after the call. */
TGT_NOINLINE unsigned long bntc_c(unsigned long x)
{
	return bntc_hot(x | 1, 20000) + 1;
}

/* Its last act is the call: a jmp at -O2. */
TGT_NOINLINE unsigned long bntc_b(unsigned long x)
{
	return bntc_c(x ^ 5);
}

/* Mutual recursion through tail calls: ping(n) -> pong(n-1) -> ... */
TGT_NOINLINE unsigned long bntc_pong(unsigned long x, int n);

TGT_NOINLINE unsigned long bntc_ping(unsigned long x, int n)
{
	if (n <= 0)
		return bntc_hot(x | 1, 200);
	return bntc_pong(x + 1, n - 1);
}

TGT_NOINLINE unsigned long bntc_pong(unsigned long x, int n)
{
	if (n <= 0)
		return bntc_hot(x | 3, 200);
	return bntc_ping(x ^ 3, n - 1);
}

TGT_NOINLINE void bntc_a(double seconds)
{
	double end = bntc_now() + seconds;
	unsigned long x = 1, y = 0;

	do {
		x = bntc_b(x);
		y += bntc_ping(y, 5);
	} while (bntc_now() < end);
	bntc_sink = x + y;
}

TGT_NOINLINE int bntc_parse(int argc, char **argv, double *seconds)
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

	if (bntc_parse(argc, argv, &seconds)) {
		fprintf(stderr, "usage: bn_tailchain [--seconds S]\n");
		return TGT_EXIT_USAGE;
	}
	printf("bn_tailchain: %g seconds, hotspot main>a>b>(jmp)c>hot\n",
	       seconds);
	fflush(stdout);
	bntc_a(seconds);
	printf("bn_tailchain done\n");
	return 0;
}
