/*
 * src_live_jobcpu.h - the CPU time of a whole job of processes (the
 * program and the children it is followed into), from the kernel,
 * counting the processes that ended between two readings: each
 * unreaped process's own time plus that of the children it reaped
 * (src_live_jobcpu.c says why that is every process's time once).
 */
#ifndef SRC_LIVE_JOBCPU_H
#define SRC_LIVE_JOBCPU_H
#include <stdint.h>
#include <sys/types.h>

struct src_live_kids;
struct src_live_jobcpu;

struct src_live_jobcpu *src_live_jobcpu_new(pid_t root);
void src_live_jobcpu_free(struct src_live_jobcpu *j);
/* Read the job now: the program `root` and every process of `k`; the
 * job's CPU ns since the program started, never less than before. */
uint64_t src_live_jobcpu_read(struct src_live_jobcpu *j,
			      const struct src_live_kids *k);
/* The last reading (0 before the first, or j NULL). */
uint64_t src_live_jobcpu_ns(const struct src_live_jobcpu *j);

#endif
