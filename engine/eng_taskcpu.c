/*
 * eng_taskcpu.c - a process's and its threads' CPU time from the kernel
 * (see eng_taskcpu.h for what is counted from when).
 *
 * Cost per refresh: one fstat of /proc/PID/task, one pread per thread
 * on its kept schedstat descriptor, one clock_gettime on the process
 * CPU clock, and a getdents64 pass over /proc/PID/task only when the
 * thread count says threads were born (bench/taskcpu measures it per
 * thread per tick).
 * Threads are kept sorted by tid so a refresh merges the directory's
 * list with the table in one pass after a sort.
 */
#include "eng_taskcpu.h"
#include "vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ent {
	struct eng_taskcpu_thread pub;
	int fd;                 /* schedstat, or -1: read it fresh */
};

struct eng_taskcpu {
	pid_t pid;
	int dirfd;              /* /proc/PID/task */
	clockid_t pclock;
	bool has_pclock;
	uint64_t pclock0, process_ns;
	uint64_t forgotten_ns;  /* run_ns of threads dropped from the table */
	uint64_t forgotten_wait_ns;  /* and their wait_ns */
	bool opened;            /* the opening refresh is done */
	struct ent *t;
	size_t n, cap;
	pid_t *tids;            /* scratch: the directory's list */
	size_t ntids, captids;
	size_t nfds;
	uint64_t listings;      /* refreshes that listed the directory */
};

/* Fields 1 and 2 of a schedstat line; false on anything else. */
static bool parse_sched(const char *s, uint64_t *run, uint64_t *wait)
{
	char *end;

	*run = strtoull(s, &end, 10);
	if (end == s || *end != ' ')
		return false;
	s = end + 1;
	*wait = strtoull(s, &end, 10);
	return end != s;
}

bool eng_taskcpu_read_fd(int fd, uint64_t *run, uint64_t *wait)
{
	char buf[96];
	ssize_t k = pread(fd, buf, sizeof(buf) - 1, 0);

	if (k <= 0)
		return false;
	buf[k] = '\0';
	return parse_sched(buf, run, wait);
}

static int open_sched(const struct eng_taskcpu *tc, pid_t tid)
{
	char rel[48];

	snprintf(rel, sizeof(rel), "%d/schedstat", (int)tid);
	return openat(tc->dirfd, rel, O_RDONLY | O_CLOEXEC);
}

uint64_t eng_taskcpu_thread_ns(pid_t pid, pid_t tid)
{
	uint64_t run = 0, wait;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!eng_taskcpu_read_fd(fd, &run, &wait))
		run = 0;
	close(fd);
	return run;
}

/* A thread's raw counters: through its kept descriptor, or (when the
 * process ran out of descriptors) opened, read and closed now. */
static bool read_ent(struct eng_taskcpu *tc, struct ent *e, uint64_t *run,
		     uint64_t *wait)
{
	int fd;
	bool ok;

	if (e->fd >= 0)
		return eng_taskcpu_read_fd(e->fd, run, wait);
	fd = open_sched(tc, e->pub.tid);
	if (fd < 0)
		return false;
	ok = eng_taskcpu_read_fd(fd, run, wait);
	close(fd);
	return ok;
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int cmp_ent(const void *a, const void *b)
{
	return cmp_tid(&((const struct ent *)a)->pub.tid,
		       &((const struct ent *)b)->pub.tid);
}

/* The tids in /proc/PID/task, sorted, into tc->tids. */
static int list_tids(struct eng_taskcpu *tc)
{
	char buf[16384];
	long k;

	tc->ntids = 0;
	if (lseek(tc->dirfd, 0, SEEK_SET) < 0)
		return -errno;
	while ((k = getdents64(tc->dirfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < k;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			long tid = strtol(d->d_name, NULL, 10);

			off += d->d_reclen;
			if (tid <= 0)
				continue;
			VEC_RESERVE(tc->tids, tc->captids, tc->ntids + 1);
			tc->tids[tc->ntids++] = (pid_t)tid;
		}
	}
	if (k < 0)
		return -errno;
	qsort(tc->tids, tc->ntids, sizeof(*tc->tids), cmp_tid);
	return tc->ntids > 0 ? 0 : -ESRCH;
}

/* In the sorted prefix t[0, n). */
static struct ent *find(const struct eng_taskcpu *tc, size_t n, pid_t tid)
{
	struct ent key = { .pub.tid = tid };

	return bsearch(&key, tc->t, n, sizeof(*tc->t), cmp_ent);
}

static void drop(struct eng_taskcpu *tc, struct ent *e)
{
	tc->forgotten_ns += e->pub.run_ns - e->pub.base_ns;
	tc->forgotten_wait_ns += e->pub.wait_ns - e->pub.wait_base_ns;
	if (e->fd >= 0) {
		close(e->fd);
		tc->nfds--;
	}
}

/* Forget the threads that had exited at the last refresh (their last
 * reading stayed one refresh for the caller). */
static void forget_exited(struct eng_taskcpu *tc)
{
	size_t w = 0;

	for (size_t i = 0; i < tc->n; i++) {
		if (!tc->t[i].pub.alive) {
			drop(tc, &tc->t[i]);
			continue;
		}
		tc->t[w++] = tc->t[i];
	}
	tc->n = w;
}

/* One thread's reading; a failed read means it has exited. */
static void read_one(struct eng_taskcpu *tc, struct ent *e)
{
	uint64_t run, wait;

	if (!read_ent(tc, e, &run, &wait)) {
		e->pub.alive = false;
		return;
	}
	if (!tc->opened) {
		e->pub.base_ns = run;
		e->pub.wait_base_ns = wait;
	}
	/* a reused tid's new thread reads less: count it from birth */
	if (run < e->pub.base_ns || wait < e->pub.wait_base_ns)
		e->pub.base_ns = e->pub.wait_base_ns = 0;
	e->pub.run_ns = run;
	e->pub.wait_ns = wait;
}

/* Read every thread known; returns how many are still alive. */
static size_t read_known(struct eng_taskcpu *tc)
{
	size_t alive = 0;

	for (size_t i = 0; i < tc->n; i++) {
		if (!tc->t[i].pub.alive)
			continue;
		read_one(tc, &tc->t[i]);
		alive += tc->t[i].pub.alive;
	}
	return alive;
}

/* The listing changed: threads not listed have exited, threads listed
 * and not known were born since the last refresh (or, at the opening
 * refresh, were already there: their base is now). */
static void merge_listing(struct eng_taskcpu *tc)
{
	size_t n0 = tc->n;

	for (size_t i = 0; i < n0; i++)
		if (bsearch(&tc->t[i].pub.tid, tc->tids, tc->ntids,
			    sizeof(*tc->tids), cmp_tid) == NULL)
			tc->t[i].pub.alive = false;
	for (size_t i = 0; i < tc->ntids; i++) {
		struct ent *e;

		if (find(tc, n0, tc->tids[i]) != NULL)
			continue;
		VEC_RESERVE(tc->t, tc->cap, tc->n + 1);
		e = &tc->t[tc->n++];
		memset(e, 0, sizeof(*e));
		e->pub.tid = tc->tids[i];
		e->pub.born = tc->opened;
		e->pub.alive = true;
		e->fd = open_sched(tc, e->pub.tid);
		tc->nfds += e->fd >= 0;
		read_one(tc, e);
	}
	qsort(tc->t, tc->n, sizeof(*tc->t), cmp_ent);
}

static bool read_pclock(const struct eng_taskcpu *tc, uint64_t *ns)
{
	struct timespec ts;

	if (!tc->has_pclock || clock_gettime(tc->pclock, &ts) != 0)
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return true;
}

/* The directory's link count is the thread count + 2 (the kernel sets
 * it so).  When every thread known still reads and the count matches,
 * no thread was born since the last refresh: the listing, which costs
 * about half as much as reading every thread, is skipped. */
int eng_taskcpu_refresh(struct eng_taskcpu *tc)
{
	struct stat st;
	size_t alive;
	uint64_t p;
	int rc;

	if (fstat(tc->dirfd, &st) < 0 || st.st_nlink < 3)
		return -ESRCH;
	forget_exited(tc);
	alive = read_known(tc);
	if (!tc->opened || alive != (size_t)st.st_nlink - 2) {
		rc = list_tids(tc);
		if (rc < 0)
			return rc;
		merge_listing(tc);
		tc->listings++;
	}
	if (read_pclock(tc, &p)) {
		if (!tc->opened)
			tc->pclock0 = p;
		tc->process_ns = p - tc->pclock0;
	} else if (!tc->opened) {
		tc->has_pclock = false;
	}
	/* a later failure (the process is exiting) keeps the last value */
	if (!tc->has_pclock)
		tc->process_ns = eng_taskcpu_threads_ns(tc);
	tc->opened = true;
	return 0;
}

int eng_taskcpu_open(pid_t pid, struct eng_taskcpu **out,
		     struct hunch_err *err)
{
	struct eng_taskcpu *tc = calloc(1, sizeof(*tc));
	char path[48];
	int rc;

	if (tc == NULL)
		return hunch_err_set(err, -ENOMEM, "out of memory");
	tc->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	tc->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tc->dirfd < 0) {
		rc = -errno;
		free(tc);
		return hunch_err_set(err, rc,
				     "cannot read the threads of process "
				     "%d (%s): %s",
				     (int)pid, path, strerror(-rc));
	}
	/* Reading another process's CPU clock needs no privilege on Linux;
	 * a kernel that refuses it leaves the sum over threads. */
	tc->has_pclock = clock_getcpuclockid(pid, &tc->pclock) == 0;
	rc = eng_taskcpu_refresh(tc);
	if (rc < 0) {
		eng_taskcpu_close(tc);
		return hunch_err_set(err, rc,
				     "cannot read the threads of process "
				     "%d (%s): %s",
				     (int)pid, path, strerror(-rc));
	}
	*out = tc;
	return 0;
}

void eng_taskcpu_close(struct eng_taskcpu *tc)
{
	if (tc == NULL)
		return;
	for (size_t i = 0; i < tc->n; i++)
		if (tc->t[i].fd >= 0)
			close(tc->t[i].fd);
	if (tc->dirfd >= 0)
		close(tc->dirfd);
	free(tc->t);
	free(tc->tids);
	free(tc);
}

uint64_t eng_taskcpu_process_ns(const struct eng_taskcpu *tc)
{
	return tc->process_ns;
}

uint64_t eng_taskcpu_threads_ns(const struct eng_taskcpu *tc)
{
	uint64_t s = tc->forgotten_ns;

	for (size_t i = 0; i < tc->n; i++)
		s += tc->t[i].pub.run_ns - tc->t[i].pub.base_ns;
	return s;
}

uint64_t eng_taskcpu_process_wait_ns(const struct eng_taskcpu *tc)
{
	uint64_t s = tc->forgotten_wait_ns;

	for (size_t i = 0; i < tc->n; i++)
		s += tc->t[i].pub.wait_ns - tc->t[i].pub.wait_base_ns;
	return s;
}

bool eng_taskcpu_has_process_clock(const struct eng_taskcpu *tc)
{
	return tc->has_pclock;
}

const struct eng_taskcpu_thread *eng_taskcpu_thread(
	const struct eng_taskcpu *tc, pid_t tid)
{
	const struct ent *e = find(tc, tc->n, tid);

	return e != NULL ? &e->pub : NULL;
}

size_t eng_taskcpu_nthreads(const struct eng_taskcpu *tc)
{
	return tc->n;
}

const struct eng_taskcpu_thread *eng_taskcpu_thread_at(
	const struct eng_taskcpu *tc, size_t i)
{
	return i < tc->n ? &tc->t[i].pub : NULL;
}

size_t eng_taskcpu_open_fds(const struct eng_taskcpu *tc)
{
	return tc->nfds;
}

uint64_t eng_taskcpu_listings(const struct eng_taskcpu *tc)
{
	return tc->listings;
}
