/*
 * fr_postcall.c - after-call points (tests/inst/inst_funcreloc_free.c
 * --postcall): pc_caller calls pc_leaf, then pc_jump, which leaves by
 * longjmp for every fourth caller argument (i % 4 == 2), past the call
 * site, back to main's setjmp.  With stdin "go", main calls pc_caller(i)
 * for i = 0..999: 1000 returns from pc_leaf, 750 from pc_jump, 250
 * longjmps; it prints the sums and "done", then waits for a line before
 * exiting 0.
 */
#include <setjmp.h>
#include <stdio.h>

#define NOI __attribute__((noipa))

static jmp_buf pc_jb;

NOI long pc_leaf(long x)
{
	return x * 3 + 1;
}

NOI long pc_jump(long x)
{
	if (x % 4 == 3)
		longjmp(pc_jb, 1);
	return x + 7;
}

NOI long pc_caller(long x)
{
	long a = pc_leaf(x);
	long b = pc_jump(a);

	return a * b;
}

int main(void)
{
	char line[64];
	volatile long sum = 0, jumps = 0;

	printf("ready\n");
	fflush(stdout);
	if (fgets(line, sizeof line, stdin) == NULL)
		return 1;
	for (volatile long i = 0; i < 1000; i++) {
		if (setjmp(pc_jb) == 0)
			sum += pc_caller(i);
		else
			jumps++;
	}
	printf("sum %ld jumps %ld\ndone\n", (long)sum, (long)jumps);
	fflush(stdout);
	if (fgets(line, sizeof line, stdin) == NULL)
		return 1;
	printf("end\n");
	return 0;
}
