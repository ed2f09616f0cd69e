/*
 * src_live_jobcpu.c - the CPU time of a whole job of processes, from the
 * kernel, with what its short-lived processes used (see
 * src_live_jobcpu.h).
 *
 * Each followed child's CPU is read at the source's refresh; a process
 * that starts and ends between two refreshes (make -j's compilers, a
 * shell's commands) is never read, and one that ends is missed from its
 * last reading to its end: `make -j2` used 1.8 CPUs and the job read
 * 0.41.  The kernel keeps that time: when a process is reaped, its CPU
 * time and that of the children it reaped are added to its parent's
 * cutime and cstime (/proc/PID/stat fields 16 and 17).  So the job's CPU
 * time is the sum, over its processes not reaped yet, of utime + stime +
 * cutime + cstime: every process's time is in exactly one of those, its
 * own or that of the process that reaped it.
 *
 * The processes are read in discovery order, a parent before its
 * children: a child reaped between its parent's reading and its own is
 * counted at the next reading, in its parent's cutime, never twice.  The
 * total never goes back (the largest so far is kept).  The program is
 * reaped by hunch, not by a process of the job: its last reading is kept
 * once it is gone.  A process reaped outside the job (an orphan's
 * reaper) takes its time with it.  A child whose /proc/PID/stat is gone
 * has been reaped: it is not read again.  Resolution: a clock tick (USER_HZ,
 * 10 ms) per process per reading.
 */
#include "src_live_jobcpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eng_taskstate.h"
#include "src_live_kids.h"

struct src_live_jobcpu {
	pid_t root;
	uint64_t root_last;   /* ticks: the program's last reading */
	uint64_t ns;          /* the largest total so far */
	/* children (by their index in src_live_kids) found reaped: never
	 * read again, so a build's thousands of finished compilers cost
	 * nothing a tick, and a pid reused by a process outside the job is
	 * never counted */
	bool *gone;
	size_t ngone;
};

struct src_live_jobcpu *src_live_jobcpu_new(pid_t root)
{
	struct src_live_jobcpu *j = calloc(1, sizeof(*j));

	if (j == NULL)
		abort();
	j->root = root;
	return j;
}

void src_live_jobcpu_free(struct src_live_jobcpu *j)
{
	if (j != NULL)
		free(j->gone);
	free(j);
}

/* utime + stime + cutime + cstime of pid, in ticks; false when it is
 * gone (reaped). */
static bool ticks_of(pid_t pid, uint64_t *ticks)
{
	struct eng_taskstat st;

	if (eng_taskstate_stat(pid, 0, &st) < 0)
		return false;
	*ticks = st.utime + st.stime + st.cutime + st.cstime;
	return true;
}

/* Remember that the i-th child is gone for good. */
static void mark_gone(struct src_live_jobcpu *j, size_t i)
{
	if (i >= j->ngone) {
		size_t n = i + 64;
		bool *g = realloc(j->gone, n * sizeof(*g));

		if (g == NULL)
			abort();
		memset(g + j->ngone, 0, (n - j->ngone) * sizeof(*g));
		j->gone = g;
		j->ngone = n;
	}
	j->gone[i] = true;
}

uint64_t src_live_jobcpu_read(struct src_live_jobcpu *j,
			      const struct src_live_kids *k)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t sum, t;
	bool ended;

	if (ticks_of(j->root, &t))
		j->root_last = t;
	sum = j->root_last;
	for (size_t i = 0; k != NULL && i < src_live_kids_count(k); i++) {
		pid_t pid = src_live_kids_pid(k, i, &ended);

		if (pid == j->root || (i < j->ngone && j->gone[i]))
			continue;
		if (ticks_of(pid, &t))
			sum += t;
		else
			mark_gone(j, i);
	}
	t = sum * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
	if (t > j->ns)
		j->ns = t;
	return j->ns;
}

uint64_t src_live_jobcpu_ns(const struct src_live_jobcpu *j)
{
	return j ? j->ns : 0;
}
