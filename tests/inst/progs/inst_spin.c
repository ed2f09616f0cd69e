/* inst_spin.c - catchup target: main prints "spinning", spends 3 s in
 * cu_spin (a loop calling cu_work), prints "done", waits for a line. */
#include <stdio.h>
#include <time.h>

#if defined(__clang__)
#define NOI __attribute__((noinline))
#else
#define NOI __attribute__((noipa))
#endif

NOI double cu_work(double x)
{
	return x * 1.0000001 + 1e-9;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

NOI long cu_spin(double secs)
{
	double start = now(), x = 1;

	while (now() - start < secs)
		for (int i = 0; i < 1000; i++)
			x = cu_work(x);
	return x > 0;
}

int main(void)
{
	char line[16];
	long r;

	printf("spinning\n");
	fflush(stdout);
	r = cu_spin(3.0);
	printf("done %ld\n", r);
	fflush(stdout);
	return fgets(line, sizeof line, stdin) == NULL;
}
