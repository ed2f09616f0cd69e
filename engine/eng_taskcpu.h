/*
 * eng_taskcpu.h - CPU time of a process and of each of its threads, as
 * the kernel counts it, read from the outside without stopping anything
 * and without instrumentation (no symbols needed, no cost to the target).
 *
 * Two kernel counters, both the scheduler's sum_exec_runtime in ns:
 * - per thread, /proc/PID/task/TID/schedstat (field 1: ns on a CPU,
 *   field 2: ns waiting on a run queue), read with pread(2) on a
 *   descriptor kept open per thread;
 * - per process, the process CPU clock (clock_getcpuclockid(3)), which
 *   the kernel keeps as every live thread's time plus the time of every
 *   thread that has exited: an exited thread's CPU up to its exit is in
 *   the interval it happened, even when it ran and exited between two
 *   refreshes.
 * Both advance for a running thread only at scheduler ticks and context
 * switches (about 4 ms on a busy thread), so a value is exact to a tick
 * at each reading and the errors do not add up over intervals.
 *
 * Threads come and go: a refresh lists /proc/PID/task when the thread
 * count or a failed read says the set changed.  A thread
 * first seen at the opening refresh starts from its value then (what it
 * used before hunch looked is not counted); a thread first seen later
 * was born since the last refresh, so its whole CPU time counts, from 0.
 * A thread that has exited keeps its last reading until the next
 * refresh, then is forgotten (the process total still holds its time).
 */
#ifndef ENG_TASKCPU_H
#define ENG_TASKCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hunch_err.h"

struct eng_taskcpu;

/* One thread's kernel counters at the last refresh, as the kernel
 * gives them (ns since the thread's birth). */
struct eng_taskcpu_thread {
	pid_t tid;
	uint64_t run_ns;        /* on a CPU */
	uint64_t wait_ns;       /* runnable, waiting for a CPU */
	uint64_t base_ns;       /* run_ns at the opening refresh; 0 when
				 * born later: sums count run_ns - base_ns */
	uint64_t wait_base_ns;  /* wait_ns likewise */
	bool born;              /* first seen after the opening refresh */
	bool alive;             /* read at the last refresh */
};

/* One schedstat line read from fd (at offset 0): fields 1 (ns on a CPU,
 * the base of CPU timers and CLOCK_THREAD_CPUTIME_ID) and 2 (ns waiting
 * on a run queue).  False if unreadable. */
bool eng_taskcpu_read_fd(int fd, uint64_t *run, uint64_t *wait);
/* Another process's thread's CPU time (field 1), opened and read now;
 * 0 if unreadable. */
uint64_t eng_taskcpu_thread_ns(pid_t pid, pid_t tid);

/* Opens the reader on `pid` and takes the first reading (the base).
 * Fails with the reason when /proc/PID/task cannot be read. */
int eng_taskcpu_open(pid_t pid, struct eng_taskcpu **out,
		     struct hunch_err *err);
void eng_taskcpu_close(struct eng_taskcpu *tc);

/* Lists the threads (new ones, exited ones) and reads every thread and
 * the process clock.  Returns 0, or -ESRCH when the process is gone. */
int eng_taskcpu_refresh(struct eng_taskcpu *tc);

/* The process's CPU time since the opening refresh, as of the last
 * refresh: every thread, including those that exited meanwhile. */
uint64_t eng_taskcpu_process_ns(const struct eng_taskcpu *tc);
/* The sum over the threads listed at the last refresh of their time
 * since the base (exited threads' last partial interval is missing:
 * that is what eng_taskcpu_process_ns adds). */
uint64_t eng_taskcpu_threads_ns(const struct eng_taskcpu *tc);
/* The run-queue wait (runnable, not on a CPU) summed over the threads
 * since the opening refresh, as of the last refresh.  The kernel keeps
 * no process-wide total of it: a thread's wait counts up to its last
 * reading (the wait of a thread born and gone between two refreshes,
 * or of an exited one's last partial interval, is missing). */
uint64_t eng_taskcpu_process_wait_ns(const struct eng_taskcpu *tc);
/* Does the kernel let hunch read the process clock?  When it does not,
 * eng_taskcpu_process_ns falls back to the sum over threads. */
bool eng_taskcpu_has_process_clock(const struct eng_taskcpu *tc);

/* One thread by tid; NULL when not seen at the last refresh. */
const struct eng_taskcpu_thread *eng_taskcpu_thread(
	const struct eng_taskcpu *tc, pid_t tid);
/* The threads of the last refresh by index, in tid order (exited ones
 * with alive false); NULL past the end. */
size_t eng_taskcpu_nthreads(const struct eng_taskcpu *tc);
const struct eng_taskcpu_thread *eng_taskcpu_thread_at(
	const struct eng_taskcpu *tc, size_t i);
/* Descriptors kept open (the other threads are read by open, read and
 * close because the process had no descriptor left). */
size_t eng_taskcpu_open_fds(const struct eng_taskcpu *tc);
/* How many refreshes listed /proc/PID/task (threads were born or
 * exited); the others only read the threads known. */
uint64_t eng_taskcpu_listings(const struct eng_taskcpu *tc);

#endif
