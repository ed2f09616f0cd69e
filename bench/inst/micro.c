/* micro.c - the benchmark's micro target: mb_f (a small function) called
 * N times (argv[1], default 10^8); prints the loop's own ns per call,
 * in wall time and in the thread's CPU time.  With argv[2] "g": mb_g
 * instead, whose ret is a branch target with nothing to borrow (its
 * exit needs the function relocated, or a trap). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

NOI long mb_f(long x)
{
	return x * 3 + 1;
}

/* long mb_g(long x): x + 1 when x is even, else x; written by hand so
 * that the ret is the jne's target. */
long mb_g(long x);
__asm__(".text\n"
	".globl mb_g\n.type mb_g,@function\n"
	"mb_g:\n"
	"	mov %rdi,%rax\n"
	"	test $1,%dil\n"
	"	jne 1f\n"
	"	add $1,%rax\n"
	"1:	ret\n"
	".size mb_g,.-mb_g\n");

int main(int argc, char **argv)
{
	long (*fn)(long) = argc > 2 && argv[2][0] == 'g' ? mb_g : mb_f;
	long n = argc > 1 ? atol(argv[1]) : 100000000L, s = 0;
	struct timespec a, b, ca, cb;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
	for (long i = 0; i < n; i++)
		s += fn(i);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* wall time, and the thread's own CPU time (user + system: signal
	 * delivery and uprobes count, time slices of other processes on a
	 * loaded machine do not) */
	printf("ns/call %.3f cpu %.3f (sum %ld)\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 +
		(double)(b.tv_nsec - a.tv_nsec)) / (double)n,
	       ((double)(cb.tv_sec - ca.tv_sec) * 1e9 +
		(double)(cb.tv_nsec - ca.tv_nsec)) / (double)n, s);
	return 0;
}
