/* inst_calls.c - a multi-threaded target whose call counts are known
 * exactly (tests/inst/README.md):
 *
 *   per worker i (0..7):  ic_worker 1, ic_mid (i+1)*1000,
 *                         ic_leaf 2.5*(i+1)*1000 (2 per ic_mid, and
 *                         ic_jcc's tail call for odd arguments),
 *                         ic_jcc (i+1)*1000, ic_branchy (i+1)*1000,
 *                         pad_tiny (i+1)*1000,
 *                         ic_rec 100*11 (recursion depth 10, 100 times)
 *   main thread:          main 1, ic_report 8, ic_args 8 (with
 *                         (i, 2i, 3i, 4i, 5i, 6i) for i = 0..7)
 *
 * The workers finish their work, then wait on a barrier; main prints
 * every result and "done", reads one line from stdin, then releases and
 * joins them, prints "joined", reads another line and prints "end".
 * stdout is deterministic.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

#define NTHREADS 8

static pthread_barrier_t work_done, release;
static long results[NTHREADS];

NOI long ic_leaf(long x)
{
	return x * 3 + 1;
}

/* long ic_jcc(long x): if (x & 1) tail-calls ic_leaf(x), else returns
 * 0 -- an exit that is a conditional jump out of the function (compilers
 * rarely emit one for such code, so it is written by hand). */
long ic_jcc(long x);
__asm__(".text\n"
	".globl ic_jcc\n.type ic_jcc,@function\n"
	"ic_jcc:\n"
	"	test $1,%dil\n"
	"	jne ic_leaf\n"
	"	xor %eax,%eax\n"
	"	ret\n"
	".size ic_jcc,.-ic_jcc\n");

/* long pad_tiny(void): returns 0 in 3 bytes, then alignment padding:
 * too small for a jump, its entry and exit borrow the padding after
 * its end (arch/x86_64/README.md). */
long pad_tiny(void);
__asm__(".text\n"
	".p2align 4\n"
	".globl pad_tiny\n.type pad_tiny,@function\n"
	"pad_tiny:\n"
	"	xor %eax,%eax\n"
	"	ret\n"
	".size pad_tiny,.-pad_tiny\n"
	".p2align 4\n");

NOI long ic_mid(long x)
{
	return ic_leaf(x) + ic_leaf(x + 1);
}

NOI long ic_branchy(long x)
{
	if (x & 1)
		return x;
	return -x;
}

NOI long ic_rec(long n)
{
	long r;

	if (n <= 0)
		return 0;
	r = ic_rec(n - 1);
	__asm__ __volatile__("" : "+r"(r));   /* no accumulator loop */
	return r + 1;
}

NOI void *ic_worker(void *arg)
{
	long i = (long)arg, s = 0;

	for (long k = 0; k < (i + 1) * 1000; k++) {
		s += ic_mid(k);
		s += ic_branchy(k);
		s += ic_jcc(k);
		s += pad_tiny();
	}
	for (int k = 0; k < 100; k++)
		s += ic_rec(10);
	results[i] = s;
	pthread_barrier_wait(&work_done);
	pthread_barrier_wait(&release);
	return NULL;
}

NOI long ic_args(long a, long b, long c, long d, long e, long f)
{
	return a + b + c + d + e + f;
}

NOI void ic_report(int i)
{
	printf("worker %d: %ld %ld\n", i, results[i],
	       ic_args(i, 2 * i, 3 * i, 4 * i, 5 * i, 6 * i));
}

int main(void)
{
	pthread_t t[NTHREADS];
	char line[64];

	pthread_barrier_init(&work_done, NULL, NTHREADS + 1);
	pthread_barrier_init(&release, NULL, NTHREADS + 1);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, ic_worker, (void *)i);
	pthread_barrier_wait(&work_done);
	for (int i = 0; i < NTHREADS; i++)
		ic_report(i);
	printf("done\n");
	fflush(stdout);
	if (fgets(line, sizeof line, stdin) == NULL)
		return 1;
	pthread_barrier_wait(&release);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("joined\n");
	fflush(stdout);
	if (fgets(line, sizeof line, stdin) == NULL)
		return 1;
	printf("end\n");
	return 0;
}
