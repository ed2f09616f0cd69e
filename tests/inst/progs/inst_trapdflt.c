/* inst_trapdflt.c - a program that keeps SIGTRAP's default action: it
 * calls st_f (which hunch instruments through traps) 1000 times, prints
 * the sum, then raises SIGTRAP, which must kill it (core) as it would
 * without hunch. */
#include <signal.h>
#include <stdio.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

NOI long st_f(long x)
{
	return x + 1;
}

int main(void)
{
	long s = 0;

	for (int i = 0; i < 1000; i++)
		s += st_f(i);
	printf("sum %ld\n", s);
	fflush(stdout);
	raise(SIGTRAP);
	printf("survived SIGTRAP\n");
	return 0;
}
