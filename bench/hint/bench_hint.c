/*
 * bench_hint - the cost of the hint sampler (src_live_hint.h): the
 * target's work per CPU second with every thread sampled at SRC_LIVE_HINT_HZ
 * (cpu-clock, 8 KiB stack copies, drained and unwound every 0.1 s,
 * thread states read) against an unsampled copy run beside it; and
 * hunch's own CPU per tick and per sample.
 *
 * Each round runs two copies of the workload at the same time, one of
 * them sampled (the first copy in odd rounds, the second in even ones),
 * so that both meet the same neighbours.
 *
 * Work per CPU second, not per wall second: the machine is shared, so
 * wall throughput moves with the neighbours' load, while the sampler's
 * cost to the target (timer interrupts and stack copies, charged to the
 * sampled thread) shows as more CPU for the same work.
 *
 * A rate ten times the default (HZ 990) shows the per-sample cost above
 * the noise of a shared machine: the slowdown at SRC_LIVE_HINT_HZ is a tenth of it.
 *
 * With "fp" last, the samples carry the kernel's frame-pointer call
 * chains instead of stack copies (ENG_PS_FP_CHAINS: cheaper, but hint_work
 * is built -O2, so the chains stop short: compare frames/sample), read
 * by the sampler alone.
 *
 * usage: bench_hint HINT_WORK [THREADS [SECONDS [ROUNDS [HZ [fp]]]]]
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eng_perfsample.h"
#include "eng_image.h"
#include "src_live_hint.h"

struct run {
	double iters, cpu;
};

struct img {
	struct eng_image *img;
	uint64_t base;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct eng_image *image_at(void *arg, uint64_t addr, uint64_t *base)
{
	struct img *m = arg;

	*base = m->base;
	if (addr >= m->base && eng_image_func_at(m->img, addr - m->base))
		return m->img;
	return NULL;
}

static uint64_t load_base(pid_t pid, const char *exe)
{
	char path[64], line[PATH_MAX + 128], file[PATH_MAX];
	unsigned long lo, off;
	uint64_t base = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f != NULL && base == 0 && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %s", &lo, &off,
			   file) == 3 && off == 0 && strcmp(file, exe) == 0)
			base = lo;
	}
	if (f != NULL)
		fclose(f);
	return base;
}

/* One run of the workload; with `sampled`, sampled until it ends. */
static double hz = SRC_LIVE_HINT_HZ;
static bool fp;

/* The frame-pointer variant: the sampler alone, drained every 0.1 s. */
static int sample_fp(pid_t pid, struct src_live_hint_stats *hs,
		     struct eng_perfsample_stats *ps)
{
	struct eng_perfsample *s;
	int st;

	if (eng_perfsample_open_flags(pid, hz, ENG_PS_FP_CHAINS, &s, NULL) < 0)
		return -1;
	eng_perfsample_sync_threads(s);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		usleep(100000);
		eng_perfsample_drain(s, NULL, NULL);
		hs->ticks++;
	}
	hs->tick_cpu_ns += eng_perfsample_stats(s)->drain_ns;
	ps->samples += eng_perfsample_stats(s)->samples;
	ps->frames += eng_perfsample_stats(s)->frames;
	ps->lost += eng_perfsample_stats(s)->lost;
	ps->drain_ns += eng_perfsample_stats(s)->drain_ns;
	eng_perfsample_close(s);
	return 0;
}

static pid_t spawn(const char *exe, const char *threads, const char *secs,
		   int *out)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(exe, exe, threads, secs, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

/* Sample every thread of pid until it exits. */
static int sample_slh(const char *exe, pid_t pid, struct src_live_hint_stats *hs,
		      struct eng_perfsample_stats *ps)
{
	struct img m = { 0 };
	struct src_live_hint *h = NULL;
	int st;

	m.base = load_base(pid, exe);
	if (eng_image_open(exe, &m.img, NULL) < 0 ||
	    src_live_hint_new(pid, hz, mono_ns(), image_at, &m, &h, NULL) < 0)
		return -1;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		usleep(100000);
		src_live_hint_tick(h, 1);
	}
	hs->ticks += src_live_hint_stats(h)->ticks;
	hs->tick_cpu_ns += src_live_hint_stats(h)->tick_cpu_ns;
	ps->samples += eng_perfsample_stats(src_live_hint_sampler(h))->samples;
	ps->frames += eng_perfsample_stats(src_live_hint_sampler(h))->frames;
	ps->lost += eng_perfsample_stats(src_live_hint_sampler(h))->lost;
	ps->drain_ns += eng_perfsample_stats(src_live_hint_sampler(h))->drain_ns;
	src_live_hint_free(h);
	eng_image_close(m.img);
	return 0;
}

static int result(int fd, struct run *r)
{
	FILE *f = fdopen(fd, "r");
	char line[128];
	int rc = -1;

	if (f != NULL && fgets(line, sizeof(line), f) != NULL &&
	    sscanf(line, "iters %lf cpu %lf", &r->iters, &r->cpu) == 2)
		rc = 0;
	if (f != NULL)
		fclose(f);
	return rc;
}

/* Two copies at once, so that both see the same neighbours; one of them
 * (`which`) sampled.  r[0] gets the unsampled copy's result. */
static int run_pair(const char *exe, const char *threads, const char *secs,
		    int which, struct run r[2], struct src_live_hint_stats *hs,
		    struct eng_perfsample_stats *ps)
{
	int fd[2], st, rc;
	pid_t pid[2];

	for (int i = 0; i < 2; i++)
		if ((pid[i] = spawn(exe, threads, secs, &fd[i])) < 0)
			return -1;
	usleep(20000);  /* their threads exist */
	rc = fp ? sample_fp(pid[which], hs, ps) :
	     sample_slh(exe, pid[which], hs, ps);
	waitpid(pid[!which], &st, 0);
	if (rc < 0 || result(fd[!which], &r[0]) < 0 ||
	    result(fd[which], &r[1]) < 0)
		return -1;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *threads = argc > 2 ? argv[2] : "1";
	const char *secs = argc > 3 ? argv[3] : "3";
	int rounds = argc > 4 ? atoi(argv[4]) : 5;
	struct src_live_hint_stats hs = { 0 };
	struct eng_perfsample_stats ps = { 0 };
	double slow[64], base_rate = 0, samp_rate = 0;
	char exe[PATH_MAX];

	hz = argc > 5 ? atof(argv[5]) : SRC_LIVE_HINT_HZ;
	fp = argc > 6 && strcmp(argv[6], "fp") == 0;
	if (argc < 2 || realpath(argv[1], exe) == NULL || rounds < 1 ||
	    rounds > 64) {
		fprintf(stderr, "usage: bench_hint HINT_WORK [THREADS "
			"[SECONDS [ROUNDS [HZ [fp]]]]]\n");
		return 1;
	}
	for (int i = 0; i < rounds; i++) {
		struct run r[2], a, b;

		if (run_pair(exe, threads, secs, i % 2, r, &hs, &ps) < 0) {
			fprintf(stderr, "bench_hint: a run failed\n");
			return 1;
		}
		a = r[0];
		b = r[1];
		base_rate += a.iters / a.cpu;
		samp_rate += b.iters / b.cpu;
		slow[i] = 1 - (b.iters / b.cpu) / (a.iters / a.cpu);
		printf("round %d: %.0f vs %.0f iterations per CPU second "
		       "(%+.2f%%)\n", i + 1, a.iters / a.cpu, b.iters / b.cpu,
		       100 * slow[i]);
	}
	qsort(slow, (size_t)rounds, sizeof(double), cmp);
	printf("| samples | threads | Hz | work/CPU-s unsampled | sampled | "
	       "slowdown (median of %d) | hunch CPU per tick | per sample | "
	       "frames/sample | lost |\n", rounds);
	printf("| %s | %s | %.0f | %.0f | %.0f | %.2f%% | %.0f us | %.1f us | %.1f "
	       "| %llu |\n", fp ? "fp chains" : "stack copy", threads, hz, base_rate / rounds,
	       samp_rate / rounds, 100 * slow[rounds / 2],
	       hs.ticks ? (double)hs.tick_cpu_ns / (double)hs.ticks / 1e3 : 0,
	       ps.samples ? (double)ps.drain_ns / (double)ps.samples / 1e3 : 0,
	       ps.samples ? (double)ps.frames / (double)ps.samples : 0,
	       (unsigned long long)ps.lost);
	return 0;
}
