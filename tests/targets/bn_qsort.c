/* bn_qsort.c - bottleneck target: a CPU hotspot in a qsort comparator.
 * main -> bnqs_run -> bnqs_sort -> (tail call through the PLT: jmp
 * qsort@plt) qsort (libc) -> ... -> bnqs_cmp, where almost
 * all the time goes: the comparator hashes both keys at length before
 * comparing.  libc calls bnqs_cmp through a pointer, so no call
 * instruction of the program names it: only the stacks show the edge.
 * Single-threaded.
 *
 *   bn_qsort [--seconds S]     S may be fractional, default 10
 *
 * stdout: the configuration line, then "bn_qsort done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "targets.h"

#define BNQS_N 256

volatile unsigned long bnqs_sink;   /* keeps results alive */
unsigned long bnqs_keys[BNQS_N];

TGT_NOINLINE double bnqs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An expensive ordering: by a hash of each key, 8000 rounds (some
 * microseconds a call: a timer at its entry and exit costs little). */
TGT_NOINLINE int bnqs_cmp(const void *pa, const void *pb)
{
	unsigned long a = *(const unsigned long *)pa;
	unsigned long b = *(const unsigned long *)pb;

	for (int i = 0; i < 8000; i++) {
		a ^= a << 13;
		a ^= a >> 7;
		b ^= b << 13;
		b ^= b >> 7;
	}
	return a < b ? -1 : a > b;
}

/* Fills the keys in a fresh order each round. */
TGT_NOINLINE void bnqs_fill(unsigned long seed)
{
	for (int i = 0; i < BNQS_N; i++) {
		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		bnqs_keys[i] = seed >> 11;
	}
}

/* Its last act is the call into libc: `jmp qsort@plt` at -O2, a tail
 * call through the PLT. */
TGT_NOINLINE void bnqs_sort(void)
{
	qsort(bnqs_keys, BNQS_N, sizeof(bnqs_keys[0]), bnqs_cmp);
}

TGT_NOINLINE void bnqs_run(double seconds)
{
	double end = bnqs_now() + seconds;
	unsigned long round = 1;

	do {
		bnqs_fill(round++);
		bnqs_sort();
		bnqs_sink += bnqs_keys[BNQS_N / 2];
	} while (bnqs_now() < end);
}

TGT_NOINLINE int bnqs_parse(int argc, char **argv, double *seconds)
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

	if (bnqs_parse(argc, argv, &seconds)) {
		fprintf(stderr, "usage: bn_qsort [--seconds S]\n");
		return TGT_EXIT_USAGE;
	}
	printf("bn_qsort: %g seconds, hotspot main>run>sort>(jmp)qsort>(pointer)cmp\n",
	       seconds);
	fflush(stdout);
	bnqs_run(seconds);
	printf("bn_qsort done\n");
	return 0;
}
