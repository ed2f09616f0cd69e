/* bn_forkers.c - bottleneck target: the CPU work is done by child
 * processes.  main forks BNFK_WORKERS workers and waits for them in
 * waitpid; each worker computes in bnfk_work for the run time and
 * exits.  So the program's CPU time is the workers', in bnfk_work, and
 * the parent only waits.
 *
 *   bn_forkers [--seconds S] [--delay D]   S fractional, default 10;
 *                                          D: main computes D seconds
 *                                          (bnfk_prepare) before it
 *                                          forks, default 0
 *   --no-wait: main exits as soon as it has forked (the workers,
 *   orphaned, go on computing)
 *
 *   --calls N: counted calls instead of time, for exact checks: main
 *   reads a line from stdin (hunch instruments meanwhile), calls
 *   bnfk_work N times, forks the workers, worker i calls bnfk_work
 *   (i+1)*N times (bnfk_count_worker) and exits; main waits for them,
 *   prints "bn_forkers done" and reads another line before it exits.
 *   --wait-file F (with --calls): each worker waits until file F exists
 *   before its calls, and until F.end exists after them.
 *
 * stdout: the configuration line, then "bn_forkers done" (the workers
 * print nothing).  stderr: "worker <i> pid <pid>" for each worker, in
 * order, as the parent forked them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "targets.h"

#define BNFK_WORKERS 3

volatile unsigned long bnfk_sink;

static double bnfk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TGT_NOINLINE unsigned long bnfk_work(unsigned long x)
{
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

TGT_NOINLINE void bnfk_worker(double seconds)
{
	double end = bnfk_now() + seconds;
	unsigned long x = 1;

	while (bnfk_now() < end)
		x = bnfk_work(x);
	bnfk_sink = x;
	_exit(0);
}

static void bnfk_wait_file(const char *path, const char *suffix)
{
	struct timespec ts = { 0, 10000000L };
	char p[4096];

	if (path == NULL)
		return;
	snprintf(p, sizeof(p), "%s%s", path, suffix);
	while (access(p, F_OK) != 0)
		nanosleep(&ts, NULL);
}

/* --calls: exactly n calls of bnfk_work in this worker (with
 * --wait-file: between the two files). */
TGT_NOINLINE void bnfk_count_worker(long n, const char *wait_file)
{
	unsigned long x = 5;

	bnfk_wait_file(wait_file, "");
	for (long i = 0; i < n; i++)
		x = bnfk_work(x);
	bnfk_sink = x;
	bnfk_wait_file(wait_file, ".end");
	_exit(0);
}

/* The parent's own work before it forks (instrumented by then). */
TGT_NOINLINE void bnfk_prepare(double seconds)
{
	double end = bnfk_now() + seconds;
	unsigned long x = 3;

	while (bnfk_now() < end)
		x = bnfk_work(x);
	bnfk_sink = x;
}

int main(int argc, char **argv)
{
	double seconds = 10, delay = 0;
	int no_wait = 0;
	long calls = 0;
	const char *wait_file = NULL;
	char line[64];
	pid_t pid[BNFK_WORKERS];
	int bad = 0, st;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (strcmp(argv[i], "--no-wait") == 0) {
			no_wait = 1;
		} else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
			calls = atol(argv[++i]);
		} else if (strcmp(argv[i], "--wait-file") == 0 && i + 1 < argc) {
			wait_file = argv[++i];
		} else if (strcmp(argv[i], "--delay") == 0 && i + 1 < argc) {
			delay = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: bn_forkers [--seconds S] "
				"[--delay D] [--no-wait] [--calls N [--wait-file F]]\n");
			return 2;
		}
	}
	printf("bn_forkers workers=%d seconds=%g\n", BNFK_WORKERS, seconds);
	fflush(stdout);
	if (calls > 0 && fgets(line, sizeof(line), stdin) == NULL)
		return 1;
	for (long i = 0; i < calls; i++)
		bnfk_sink = bnfk_work(bnfk_sink);
	bnfk_prepare(delay);
	for (int i = 0; i < BNFK_WORKERS; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("bn_forkers: fork");
			return 1;
		}
		if (pid[i] == 0 && calls > 0)
			bnfk_count_worker(calls * (i + 1), wait_file);
		if (pid[i] == 0)
			bnfk_worker(seconds);
		fprintf(stderr, "worker %d pid %d\n", i, (int)pid[i]);
	}
	for (int i = 0; i < BNFK_WORKERS && !no_wait; i++) {
		while (waitpid(pid[i], &st, 0) < 0)
			;
		bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	printf("bn_forkers done\n");
	fflush(stdout);
	if (calls > 0 && fgets(line, sizeof(line), stdin) == NULL)
		return 1;
	return bad != 0;
}
