#!/usr/bin/env python3
"""gen_storm.py OUT.c - the storm target: 1000 small functions of a few
shapes (leaf arithmetic, branches, loops, calls to another function, tail
calls), called by 8 threads in fixed chunks until stdin says stop.

Every thread checks that every chunk gives every function the same sum
as its first one and prints "thread N: ok" at the end, so stdout is
deterministic however long the program ran; a corrupted instruction in
any function shows as a crash or as "thread N: MISMATCH sf_K ..." naming
the first function whose sum changed (callers of a broken function
differ too: the lowest index is the one to look at)."""
import sys

N = 1000
out = []
w = out.append
w('#include <pthread.h>\n#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n')
w('#if defined(__clang__)\n#define NOI __attribute__((noinline))\n#else\n#define NOI __attribute__((noipa))\n#endif\n')
w('volatile int sf_stop;\n')
for i in range(N):
    k = i % 5
    if k == 0:
        body = f'return x * {i % 7 + 3} + {i};'
    elif k == 1:
        body = f'if (x & {1 << (i % 5)}) return x - {i}; return x + {i * 3};'
    elif k == 2:
        body = f'long s = 0; for (long j = 0; j < (x & 7); j++) s += j ^ {i}; return s;'
    elif k == 3:
        body = f'return sf_{i - 1}(x + 1) + {i};'
    else:
        body = f'return sf_{i - 2}(x ^ {i});'   # a tail call
    w(f'NOI long sf_{i}(long x) {{ {body} }}\n')
w(f'#define NF {N}\n')
w('NOI long sf_chunk(long seed, long *v)\n{\n\tlong s = 0;\n')
w('\tmemset(v, 0, NF * sizeof *v);\n')
w(f'\tfor (long r = 0; r < 4; r++) {{\n')
for i in range(N):
    w(f'\t\ts += v[{i}] += sf_{i}(seed + r);\n')
w('\t}\n\treturn s;\n}\n')
w('''
static int results[8];
static char why[8][160];

/* The first function whose sum differs from the first chunk's. */
static void mismatch(long id, const long *want, const long *got, long n)
{
	int bad = 0, first = -1;

	for (int i = 0; i < NF; i++)
		if (want[i] != got[i] && bad++ == 0)
			first = i;
	results[id] = 0;
	if (why[id][0] == 0 && first >= 0)
		snprintf(why[id], sizeof why[id], " sf_%d %ld != %ld in chunk "
			 "%ld (%d functions differ)", first, got[first],
			 want[first], n, bad);
}

NOI void *sf_thread(void *arg)
{
	static long want[8][NF], got[8][NF];
	long id = (long)arg, first = sf_chunk(id, want[id]), n = 1;

	results[id] = 1;
	while (!sf_stop || n < 3) {
		if (sf_chunk(id, got[id]) != first ||
		    memcmp(got[id], want[id], sizeof want[id]) != 0)
			mismatch(id, want[id], got[id], n);
		n++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[8];
	char line[64];

	(void)argc;
	(void)argv;
	for (long i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, sf_thread, (void *)i);
	fprintf(stderr, "ready\\n");
	if (fgets(line, sizeof line, stdin) == NULL)
		return 1;
	sf_stop = 1;
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 8; i++)
		printf("thread %d: %s%s\\n", i, results[i] ? "ok" : "MISMATCH",
		       why[i]);
	printf("end\\n");
	return 0;
}
''')
open(sys.argv[1], 'w').write(''.join(out))
