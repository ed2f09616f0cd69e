/*
 * fr_switch.c - a switch gcc -O2 compiles to a PIC jump table whose
 * cases are a short instruction and a `ret`: the `ret`s cannot take a
 * jmp in place (the patch would swallow the next case's first bytes, a
 * table target), so instrumenting fr_switch relocates it, table and all
 * (tests/inst/inst_funcreloc.c --switch).  Each case runs 1000 times.
 */
#include <stdio.h>

__attribute__((noinline)) long fr_switch(long x, long y)
{
	switch (x) {
	case 0: return y;
	case 1: return y + 1;
	case 2: return -y;
	case 3: return ~y;
	case 4: return y * 2;
	case 5: return y - 1;
	case 6: return y << 3;
	case 7: return y >> 1;
	case 8: return y ^ 0x55;
	default: return 0;
	}
}

int main(void)
{
	long sum[10] = { 0 };

	for (long i = 0; i < 10000; i++)
		sum[i % 10] += fr_switch(i % 10 == 9 ? 42 : i % 10, i);
	for (int k = 0; k < 10; k++)
		printf("case %d: %ld\n", k, sum[k]);
	return 0;
}
