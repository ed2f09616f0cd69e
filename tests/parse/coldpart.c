/*
 * coldpart.c - a function gcc splits into a hot part and `cp_work.cold`
 * at -O2 (the __builtin_expect branch).  tests/parse/meson.build builds
 * it with -rdynamic (cp_work exported) and strips a copy of every other
 * symbol, so the cold part has no symbol left (test_coldpart.c,
 * tests/inst/inst_funcreloc.c --cold).
 *
 * Prints the sum; cp_work runs 1000 times, its cold path 10 times.
 */
#include <stdio.h>
#include <stdlib.h>

/* Cold: gcc moves the blocks that call it into cp_work.cold. */
static __attribute__((cold, noinline)) long cp_rare(long x)
{
	return x / 5 + (getenv("CP_NEVER_SET_42") != NULL);
}

__attribute__((noinline)) long cp_work(long x)
{
	long r = x * 3 + 1;

	if (__builtin_expect(x % 100 == 7, 0))
		r += cp_rare(x) * (x | 3) + (x >> 3);
	return r ^ (x >> 2);
}

int main(void)
{
	long sum = 0;

	for (long i = 0; i < 1000; i++)
		sum += cp_work(i);
	printf("sum %ld\n", sum);
	return 0;
}
