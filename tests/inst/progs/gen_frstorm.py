#!/usr/bin/env python3
"""gen_frstorm.py OUT.c - 1000 functions that all need whole-function
relocation at -O0 (tests/inst/inst_funcreloc_free.c --memory): each ends
in `call; leave; ret`, an exit too small for a jmp, in one of three
shapes (arithmetic, a branch, a loop) around a call to a leaf.  Four
threads call them in chunks until stdin says stop, checking every
function's sum against their first chunk, like gen_storm.py's target:
stdout is "thread N: ok" x4 and "end", or names the first function whose
sum changed ("thread N: MISMATCH rf_K ...")."""
import sys

N = 1000
T = 4
out = []
w = out.append
w('#include <pthread.h>\n#include <stdio.h>\n#include <string.h>\n')
w('#define NOI __attribute__((noipa))\n')
w('volatile int rf_stop;\n')
w('NOI long rf_leaf(long x) { return x ^ (x >> 3); }\n')
for i in range(N):
    k = i % 3
    if k == 0:
        body = f'long y = x * {i % 7 + 3} + {i}; return rf_leaf(y);'
    elif k == 1:
        body = (f'if (x & {1 << (i % 5)}) return rf_leaf(x - {i}); '
                f'return rf_leaf(x + {i * 3});')
    else:
        body = (f'long s = 0; for (long j = 0; j < (x & 7); j++) '
                f's += j ^ {i}; return rf_leaf(s);')
    w(f'NOI long rf_{i}(long x) {{ {body} }}\n')
w(f'#define NF {N}\n#define NT {T}\n')
w('NOI long rf_chunk(long seed, long *v)\n{\n\tlong s = 0;\n')
w('\tmemset(v, 0, NF * sizeof *v);\n')
for i in range(N):
    w(f'\ts += v[{i}] += rf_{i}(seed + {i % 11});\n')
w('\treturn s;\n}\n')
w('''
static int results[NT];
static char why[NT][160];

NOI void *rf_thread(void *arg)
{
	static long want[NT][NF], got[NT][NF];
	long id = (long)arg, first = rf_chunk(id, want[id]), n = 1;

	results[id] = 1;
	while (!rf_stop || n < 3) {
		if (rf_chunk(id, got[id]) != first ||
		    memcmp(got[id], want[id], sizeof want[id]) != 0) {
			for (int i = 0; i < NF && results[id]; i++)
				if (got[id][i] != want[id][i]) {
					results[id] = 0;
					snprintf(why[id], sizeof why[id],
						 " rf_%d %ld != %ld in chunk %ld",
						 i, got[id][i], want[id][i], n);
				}
		}
		n++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NT];
	char line[64];

	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, rf_thread, (void *)i);
	if (fgets(line, sizeof line, stdin) == NULL)
		return 1;
	rf_stop = 1;
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NT; i++)
		printf("thread %d: %s%s\\n", i, results[i] ? "ok" : "MISMATCH",
		       why[i]);
	printf("end\\n");
	return 0;
}
''')
open(sys.argv[1], 'w').write(''.join(out))
