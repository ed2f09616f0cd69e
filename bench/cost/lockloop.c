/*
 * lockloop.c - a tight loop of pthread_mutex_lock/unlock on one mutex,
 * the worst case for instrumentation at the entry of a small library
 * function: a round is ~8 ns, nothing else runs between the calls.
 *
 *   lockloop SECONDS [WORK]
 *
 * WORK (0) volatile adds between the calls make a round longer, so that
 * a limit of 1 (100%) lets the counters run.
 * Every 0.1 s of its own CPU time it prints a line "T ROUNDS_PER_CPU_S"
 * (T: seconds of wall time since it started) to stdout, so that the
 * rate before hunch's search instruments it and the rate while it does
 * give the real slowdown (bench-lockloop.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	double secs = argc > 1 ? atof(argv[1]) : 0;
	int work = argc > 2 ? atoi(argv[2]) : 0;
	volatile unsigned long sink = 0;
	double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	unsigned long rounds = 0;

	if (!(secs > 0)) {
		fprintf(stderr, "usage: lockloop SECONDS [WORK]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		double c;

		for (int i = 0; i < 100000; i++) {
			pthread_mutex_lock(&mu);
			for (int k = 0; k < work; k++)
				sink = sink + 1;
			pthread_mutex_unlock(&mu);
		}
		rounds += 100000;
		c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		if (c - c0 >= 0.1) {
			double w = clock_s(CLOCK_MONOTONIC);

			printf("%.3f %.0f\n", w - w0, (double)rounds / (c - c0));
			rounds = 0;
			c0 = c;
			if (w - w0 >= secs)
				return 0;
		}
	}
}
