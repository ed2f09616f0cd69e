/*
 * rt_cpu.c - per-thread CPU time without a system call per read.
 *
 * HW level: each thread opens a software task-clock perf event on itself
 * and maps its page.  The page's `lock` changes whenever the kernel
 * updates it, which happens on every context switch of the thread (see
 * shared/notes/machine-facts.md; cap_user_time is 0 in this VM, so the
 * page's own time fields cannot be extrapolated).  While `lock` is
 * unchanged since our last exact reading, the thread has been on a CPU
 * the whole time, so its CPU time advanced exactly as the TSC did; when
 * it changed, take one exact CLOCK_THREAD_CPUTIME_ID reading and start
 * again.  The syscall is paid once per context switch, not per read,
 * and once per RT_CPU_TRUST_NS of running without one: "on a CPU the
 * whole time" also counts what the kernel charges to no task, interrupts
 * and a hypervisor's stolen time, and a 300 ms spin timed by two
 * readings 300 ms apart read 300.003 ms against schedstat's 299.444 ms
 * on a loaded CI machine.  An exact reading at the end of a long run
 * leaves that error to the last 10 ms.
 * SW level (forced, or when perf_event_open is refused): the syscall on
 * every read.  Both give ns on the same base as schedstat's field 1.
 */
#include "rt_internal.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 1 in the process whose threads opened their perf pages; 0 in a forked
 * child until its fork handler has dropped the page it inherited the
 * pointer to (rt_cpu_forked).  The kernel copies no perf event page into
 * a child (VM_DONTCOPY), and code the child runs between its fork and
 * that handler (glibc's fork calls functions hunch may time) read the
 * pointer and died of SIGSEGV at the page's `lock`: a subshell of sh,
 * one fork in three.  MADV_WIPEONFORK gives the child the 0. */
static volatile int rt_cpu_static_live = 1;
static volatile int *rt_cpu_live = &rt_cpu_static_live;

void rt_cpu_init(void)
{
	size_t n = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	if (madvise(p, n, MADV_WIPEONFORK) != 0) {
		munmap(p, n);   /* an old kernel: the flag stays 1 */
		return;
	}
	*(volatile int *)p = 1;
	rt_cpu_live = p;
}

static void rt_cpu_open(void)
{
	struct perf_event_attr a = { 0 };
	void *pg;
	int fd;

	rt_t.cpu_tried = 1;
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;  /* allowed at perf_event_paranoid 2 */
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		goto fallback;
	pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
		  fd, 0);
	if (pg == MAP_FAILED) {
		close(fd);
		goto fallback;
	}
	rt_t.perf_fd = fd;
	rt_t.seq = ~0u;  /* force an exact reading first */
	rt_barrier();
	rt_t.pg = pg;
	return;
fallback:
	if (rt_g.shm != NULL) {
		rt_g.shm->rt_cpu_level = HUNCH_LEVEL_SW;
		if (rt_tls_block != NULL)
			((struct hunch_block_hdr *)rt_tls_block)->cpu_level =
				HUNCH_LEVEL_SW;
	}
}

void rt_cpu_forked(void)
{
	/* not mapped here: nothing to unmap (the range may be reused);
	 * the descriptor is the child's copy */
	if (rt_t.pg != NULL)
		close(rt_t.perf_fd);
	rt_t.pg = NULL;
	rt_barrier();
	*rt_cpu_live = 1;
}

void rt_cpu_close(void)
{
	volatile struct perf_event_mmap_page *pg = rt_t.pg;

	rt_t.pg = NULL;
	rt_barrier();
	if (pg != NULL) {
		munmap((void *)pg, (size_t)sysconf(_SC_PAGESIZE));
		close(rt_t.perf_fd);
	}
	rt_t.cpu_tried = 1;  /* never reopen on this thread */
}

/* One exact reading; lock is read first, so a switch anywhere after it
 * changes lock again and forces the next read to be exact too. */
static uint64_t rt_cpu_resync(volatile struct perf_event_mmap_page *pg)
{
	uint32_t seq = pg->lock;
	uint64_t c, tsc;

	rt_barrier();
	c = rt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	tsc = rt_rdtsc();
	rt_t.cpu0 = c;
	rt_t.tsc0 = tsc;
	rt_barrier();
	rt_t.seq = seq;
	return c;
}

uint64_t rt_cpu_now(void)
{
	volatile struct perf_event_mmap_page *pg = rt_t.pg;

	if (rt_likely(pg != NULL && rt_g.cpu_hw && *rt_cpu_live)) {
		uint32_t seq = pg->lock;
		uint64_t tsc;

		rt_barrier();
		tsc = rt_rdtsc();
		rt_barrier();
		if (rt_likely(seq == rt_t.seq && pg->lock == seq &&
			      tsc - rt_t.tsc0 < rt_g.cpu_trust_ticks))
			return rt_t.cpu0 + rt_tsc_to_ns(tsc - rt_t.tsc0);
		return rt_cpu_resync(pg);
	}
	if (rt_g.cpu_hw && !rt_t.cpu_tried && rt_t.state == RT_T_LIVE) {
		rt_cpu_open();
		if (rt_t.pg != NULL)
			return rt_cpu_resync(rt_t.pg);
	}
	return rt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Called by a new thread just before its start routine: when (wall
 * clock, its own CPU clock) that outermost activation began, for hunch's
 * catchup of timers enabled later on it (engine/README.md, Catchup).
 * CLOCK_THREAD_CPUTIME_ID, not rt_cpu_now(): a thread that never uses a
 * CPU timer should not open a perf event. */
void rt_cpu_mark_activation(void)
{
	struct hunch_block_hdr *bh = (struct hunch_block_hdr *)rt_tls_block;

	if (bh == NULL)
		return;
	bh->act_cpu = rt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	bh->act_wall = rt_wall_now();
}
