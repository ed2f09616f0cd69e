/*
 * cpu_at_exit.c - LD_PRELOAD'ed into a benchmarked program: at exit,
 * appends the process' own CPU time (user + system, seconds, from
 * getrusage) and its wall time since the library was loaded to the
 * file named by $COST_BENCH_CPU_FILE, after the program's name (hunch
 * itself, which inherits the variable, writes a line too).  The same number for the program
 * run directly and under hunch, measured by the program itself: hunch's
 * own CPU (its tracer thread, the sampler) is not in it, the
 * instrumentation's is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static struct timespec cae_t0;

__attribute__((constructor)) static void cae_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &cae_t0);
}

__attribute__((destructor)) static void cae_report(void)
{
	const char *path = getenv("COST_BENCH_CPU_FILE");
	struct rusage ru;
	struct timespec t1;
	FILE *f;

	if (path == NULL || getrusage(RUSAGE_SELF, &ru) != 0 ||
	    (f = fopen(path, "a")) == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(f, "%s %.6f %.6f\n", program_invocation_short_name,
		(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
		(double)(t1.tv_sec - cae_t0.tv_sec) +
		(t1.tv_nsec - cae_t0.tv_nsec) / 1e9);
	fclose(f);
}
