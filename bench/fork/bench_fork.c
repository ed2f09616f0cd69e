/*
 * bench_fork - what following child processes costs hunch: the live
 * source's per-child work (src_live_kids.c: /proc scan for threads and
 * descendants, the kernel CPU reading, and each child's hint sampler,
 * src_live_hint.c) on PROCS processes of THREADS threads (tree_work),
 * ticked as the live source ticks it: readings at 5 Hz, the scan and
 * the hint samplers every pump (here 10 Hz, their own rate).  hunch's
 * CPU time over the run, as a share of one core, against a baseline in
 * the same run: the same loop over one process of THREADS threads.
 *
 * A third run samples the children's switch-outs too (src_live_hint_offcpu_start,
 * what a message-wait estimate in MPI ranks asks for; root only): each
 * thread's switches are sampled with their stacks, up to 200 a second.
 *
 * usage: bench_fork TREE_WORK [PROCS THREADS SECONDS]  (64 4 10)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pc_config.h"
#include "src_live_hint.h"
#include "src_live_kids.h"

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct eng_image *no_image(void *arg, uint64_t addr, uint64_t *base)
{
	(void)arg, (void)addr, (void)base;
	return NULL;
}

static uint64_t t0_ns;
static int offcpu;            /* the run samples switch-outs too */
static int offcpu_refused;
static unsigned long nsamplers, noff;   /* the last run's */

static struct src_live_hint *make_hint(void *arg, pid_t pid)
{
	struct src_live_hint *h = NULL;

	(void)arg;
	if (src_live_hint_new(pid, SRC_LIVE_HINT_HZ, t0_ns, no_image, NULL, &h, NULL) < 0)
		return NULL;
	if (offcpu && src_live_hint_offcpu_start(h, NULL) < 0)
		offcpu_refused++;
	nsamplers++;
	return h;
}

static void discard(void *arg, const struct pc_discovery *d)
{
	(*(size_t *)arg)++;
	(void)d;
}

/* One run: PROCS x THREADS followed for SECONDS; hunch's CPU share of
 * one core. */
static double run(const char *tree, int procs, int threads, double secs)
{
	char cmd[4352], line[64];
	struct src_live_kids *k = src_live_kids_new();
	double wall0, cpu0, next = 0, cpu;
	size_t nd = 0;
	FILE *f;

	nsamplers = 0;
	snprintf(cmd, sizeof(cmd), "%s %d %d %g", tree, procs, threads,
		 secs + 1);
	if ((f = popen(cmd, "r")) == NULL)
		exit(1);
	while (fgets(line, sizeof(line), f) && strcmp(line, "ready\n") != 0)
		src_live_kids_add(k, (pid_t)atoi(line), getpid());
	usleep(200000);   /* the threads started */
	wall0 = now(CLOCK_MONOTONIC);
	cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	t0_ns = (uint64_t)(wall0 * 1e9);
	while (now(CLOCK_MONOTONIC) - wall0 < secs) {
		double t = now(CLOCK_MONOTONIC);

		src_live_kids_scan(k, t0_ns, t - wall0, discard, &nd);
		src_live_kids_hints(k, make_hint, NULL);
		if (t >= next) {              /* readings at 5 Hz */
			src_live_kids_refresh(k);
			next = t + 0.2;
		}
		usleep(100000);
	}
	cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	noff = 0;
	for (size_t i = 0; i < src_live_kids_count(k); i++) {
		bool ended;
		struct src_live_hint *h = src_live_kids_hint(k, src_live_kids_pid(k, i, &ended));

		noff += h ? (unsigned long)src_live_hint_stats(h)->off_obs : 0;
	}
	src_live_kids_free(k);
	pclose(f);
	return cpu / secs;
}

int main(int argc, char **argv)
{
	int procs = argc > 2 ? atoi(argv[2]) : 64;
	int threads = argc > 3 ? atoi(argv[3]) : 4;
	double secs = argc > 4 ? atof(argv[4]) : 10, base, tree, sw;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_fork TREE_WORK [PROCS THREADS "
			"SECONDS]\n");
		return 2;
	}
	base = run(argv[1], 1, threads, secs);
	tree = run(argv[1], procs, threads, secs);
	offcpu = 1;
	sw = run(argv[1], procs, threads, secs);
	printf("following 1 x %d: %.3f%% of one core\n", threads, 100 * base);
	printf("following %d x %d: %.3f%% of one core (%.1fx the baseline; "
	       "%.4f%% per process)\n", procs, threads, 100 * tree,
	       base > 0 ? tree / base : 0, 100 * tree / procs);
	printf("goal < 2%% of one core at 5 Hz: %s\n",
	       tree < 0.02 ? "met" : "missed");
	if (offcpu_refused)
		printf("switch-outs: refused by the kernel (%d samplers; root "
		       "is needed)\n", offcpu_refused);
	else
		printf("following %d x %d with switch-outs sampled: %.3f%% of "
		       "one core (%.1fx without; %lu samplers, %lu "
		       "switch-outs, %.0f a second)\n", procs, threads,
		       100 * sw, tree > 0 ? sw / tree : 0, nsamplers, noff,
		       (double)noff / secs);
	return 0;
}
