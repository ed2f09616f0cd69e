/*
 * bench_taskcpu.c - the kernel-side CPU reading per thread per tick
 * (engine/eng_taskcpu.c) on a process of N mostly sleeping threads
 * (taskcpu_threads), against baselines measured in the same run:
 *   - one clock_gettime(CLOCK_MONOTONIC) (the cheapest clock there is);
 *   - one schedstat file read fresh: open, read, close per thread;
 * and the alternatives the reader could have used:
 *   - pread on schedstat descriptors kept open (what eng_taskcpu does
 *     per thread), the /proc/PID/task listing alone, the process CPU
 *     clock alone;
 *   - read(2) on a per-thread perf task-clock counter.
 * Each figure is hunch's own CPU time (CLOCK_THREAD_CPUTIME_ID) over
 * TICKS ticks, divided by ticks and threads: wall time on a shared
 * 2-CPU machine would count other programs' time.
 *
 * Usage: bench_taskcpu TARGET [THREADS [TICKS]]   (1000, 200)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eng_taskcpu.h"

static int nthr, nticks;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The target, started with its stdin a pipe that keeps it alive. */
static pid_t start_target(const char *prog, int n, int *keep)
{
	int in[2], out[2];
	char arg[16], buf[16];
	pid_t pid;

	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	snprintf(arg, sizeof(arg), "%d", n);
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*keep = in[1];
	if (read(out[0], buf, sizeof(buf)) < 5 || strncmp(buf, "ready", 5)) {
		fprintf(stderr, "bench_taskcpu: %s did not start\n", prog);
		return -1;
	}
	close(out[0]);
	return pid;
}

static int list_tids(pid_t pid, pid_t *tids, int max)
{
	char path[48];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d != NULL && (e = readdir(d)) != NULL && n < max)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	if (d != NULL)
		closedir(d);
	return n;
}

static volatile unsigned long long sink;

static double bench_mono(int per_tick)
{
	struct timespec ts;
	double t0 = cpu_now();

	for (int k = 0; k < nticks; k++)
		for (int i = 0; i < per_tick; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += (unsigned long long)ts.tv_nsec;
		}
	return (cpu_now() - t0) / nticks / per_tick;
}

static double bench_fresh(pid_t pid, const pid_t *tids, int n)
{
	char path[64], buf[96];
	double t0 = cpu_now();

	for (int k = 0; k < nticks; k++)
		for (int i = 0; i < n; i++) {
			int fd;

			snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat",
				 (int)pid, (int)tids[i]);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (read(fd, buf, sizeof(buf) - 1) > 0)
				sink += strtoull(buf, NULL, 10);
			close(fd);
		}
	return (cpu_now() - t0) / nticks / n;
}

static double bench_pread(pid_t pid, const pid_t *tids, int n)
{
	int *fd = calloc((size_t)n, sizeof(*fd));
	char path[64], buf[96];
	double t0, r;

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat",
			 (int)pid, (int)tids[i]);
		fd[i] = open(path, O_RDONLY | O_CLOEXEC);
	}
	t0 = cpu_now();
	for (int k = 0; k < nticks; k++)
		for (int i = 0; i < n; i++) {
			ssize_t m = pread(fd[i], buf, sizeof(buf) - 1, 0);

			if (m > 0) {
				buf[m] = '\0';
				sink += strtoull(buf, NULL, 10);
			}
		}
	r = (cpu_now() - t0) / nticks / n;
	for (int i = 0; i < n; i++)
		close(fd[i]);
	free(fd);
	return r;
}

static double bench_listing(pid_t pid, int n)
{
	char path[48], buf[16384];
	double t0;
	int dfd;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	t0 = cpu_now();
	for (int k = 0; k < nticks; k++) {
		long m;

		lseek(dfd, 0, SEEK_SET);
		while ((m = getdents64(dfd, buf, sizeof(buf))) > 0)
			sink += (unsigned long long)m;
	}
	close(dfd);
	return (cpu_now() - t0) / nticks / n;
}

static double bench_pclock(pid_t pid, int n)
{
	struct timespec ts;
	clockid_t c;
	double t0;

	if (clock_getcpuclockid(pid, &c) != 0)
		return -1;
	t0 = cpu_now();
	for (int k = 0; k < nticks; k++) {
		clock_gettime(c, &ts);
		sink += (unsigned long long)ts.tv_nsec;
	}
	return (cpu_now() - t0) / nticks / n;
}

static unsigned long long listings;

static double bench_reader(pid_t pid, int n, size_t *fds)
{
	struct eng_taskcpu *tc;
	struct hunch_err err = { 0 };
	double t0, r;

	if (eng_taskcpu_open(pid, &tc, &err) < 0) {
		fprintf(stderr, "bench_taskcpu: %s\n", err.msg);
		return -1;
	}
	*fds = eng_taskcpu_open_fds(tc);
	t0 = cpu_now();
	for (int k = 0; k < nticks; k++) {
		eng_taskcpu_refresh(tc);
		sink += eng_taskcpu_process_ns(tc);
	}
	r = (cpu_now() - t0) / nticks / n;
	listings = eng_taskcpu_listings(tc);
	eng_taskcpu_close(tc);
	return r;
}

static int perf_open(pid_t tid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static double bench_perf(const pid_t *tids, int n, int *opened, int *err)
{
	int *fd = calloc((size_t)n, sizeof(*fd));
	double t0, r;

	*opened = 0;
	*err = 0;
	for (int i = 0; i < n; i++) {
		fd[i] = perf_open(tids[i]);
		if (fd[i] >= 0)
			(*opened)++;
		else
			*err = errno;
	}
	t0 = cpu_now();
	for (int k = 0; k < nticks; k++)
		for (int i = 0; i < n; i++) {
			unsigned long long v;

			if (fd[i] >= 0 && read(fd[i], &v, sizeof(v)) > 0)
				sink += v;
		}
	r = *opened ? (cpu_now() - t0) / nticks / *opened : -1;
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(fd);
	return r;
}

int main(int argc, char **argv)
{
	int keep, n, opened, perr, status;
	double mono, fresh, pr, lst, pc, rd, pf;
	pid_t pid, *tids;
	size_t fds = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_taskcpu TARGET [THREADS [TICKS]]\n");
		return 1;
	}
	nthr = argc > 2 ? atoi(argv[2]) : 1000;
	nticks = argc > 3 ? atoi(argv[3]) : 200;
	pid = start_target(argv[1], nthr, &keep);
	if (pid < 0)
		return 1;
	tids = calloc((size_t)nthr + 16, sizeof(*tids));
	n = list_tids(pid, tids, nthr + 16);
	mono = bench_mono(n);
	fresh = bench_fresh(pid, tids, n);
	pr = bench_pread(pid, tids, n);
	lst = bench_listing(pid, n);
	pc = bench_pclock(pid, n);
	rd = bench_reader(pid, n, &fds);
	pf = bench_perf(tids, n, &opened, &perr);

	printf("# kernel CPU per thread per tick, %d threads, %d ticks "
	       "(hunch's CPU time)\n", n, nticks);
	printf("%-44s %10s %12s %12s\n", "read", "ns/thread", "x mono",
	       "x fresh");
	printf("%-44s %10.1f %12.2f %12.3f\n",
	       "baseline: clock_gettime(MONOTONIC)", mono, 1.0, mono / fresh);
	printf("%-44s %10.1f %12.2f %12.3f\n",
	       "baseline: schedstat open+read+close", fresh, fresh / mono, 1.0);
	printf("%-44s %10.1f %12.2f %12.3f\n", "schedstat pread, fd kept",
	       pr, pr / mono, pr / fresh);
	printf("%-44s %10.1f %12.2f %12.3f\n", "/proc/PID/task listing "
	       "(per thread)", lst, lst / mono, lst / fresh);
	printf("%-44s %10.1f %12.2f %12.3f\n", "process CPU clock "
	       "(per thread)", pc, pc / mono, pc / fresh);
	if (pf >= 0)
		printf("%-44s %10.1f %12.2f %12.3f\n", "perf task-clock read(), "
		       "per-thread fd", pf, pf / mono, pf / fresh);
	else
		printf("%-44s %10s (perf_event_open: %s)\n", "perf task-clock "
		       "read(), per-thread fd", "-", strerror(perr));
	printf("%-44s %10.1f %12.2f %12.3f\n", "eng_taskcpu_refresh (all of "
	       "it)", rd, rd / mono, rd / fresh);
	printf("# eng_taskcpu kept %zu descriptors, listed the threads in "
	       "%llu of %d refreshes; perf opened %d of %d; goal < 1000 "
	       "ns/thread/tick: %s\n", fds, listings, nticks + 1, opened, n,
	       rd < 1000 ? "met" : "missed");
	close(keep);
	waitpid(pid, &status, 0);
	return 0;
}
