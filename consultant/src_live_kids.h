/*
 * src_live_kids.h - the child processes the live source follows, as the
 * kernel sees them (internal to the live source): each child's CPU time
 * and run-queue wait, its threads, its end, and its own children (a
 * child forks out of hunch's sight: it is not traced), all from /proc.
 *
 * A child's values stay at their last reading once it has ended, so a
 * sum over processes never goes down.
 */
#ifndef SRC_LIVE_KIDS_H
#define SRC_LIVE_KIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pc_source.h"

struct src_live_kids;

struct src_live_kids *src_live_kids_new(void);
void src_live_kids_free(struct src_live_kids *k);
/* A new child (a fork event, or found under a followed child); false
 * when it is known already. */
bool src_live_kids_add(struct src_live_kids *k, pid_t pid, pid_t parent);
bool src_live_kids_has(const struct src_live_kids *k, pid_t pid);
size_t src_live_kids_count(const struct src_live_kids *k);
/* The i-th child (i < src_live_kids_count), and whether it has ended. */
pid_t src_live_kids_pid(const struct src_live_kids *k, size_t i, bool *ended);
/* Read every live child's counters (its CPU time since it was added). */
void src_live_kids_refresh(struct src_live_kids *k);
/* The CPU ns (wait: run-queue wait ns) of child `pid` (0: all children
 * summed) or of its thread `tid` (0: the process); false when the
 * process or thread is not known or gone before its first reading. */
bool src_live_kids_value(const struct src_live_kids *k, pid_t pid, pid_t tid, bool wait,
	       int64_t *ns);
/* Find new threads, new descendants and ends, reporting each as a
 * discovery through fn (threads and processes, retirements; a
 * process's retirement says how it ended and when, in seconds from
 * t0_ns, CLOCK_MONOTONIC; now: the search's seconds). */
void src_live_kids_scan(struct src_live_kids *k, uint64_t t0_ns, double now, pc_disc_fn fn,
	      void *arg);
/* Live children (those not ended). */
size_t src_live_kids_live(const struct src_live_kids *k);
/* The children's CPU and run-queue wait since the last call, added to
 * *run and *wait (cpu_share over every process of the job). */
void src_live_kids_share_delta(struct src_live_kids *k, uint64_t *run, uint64_t *wait);
/* SIGKILL every live child (the program is killed at the end). */
void src_live_kids_kill(struct src_live_kids *k);
/* The threads of child pid seen by the last scan (up to max). */
size_t src_live_kids_threads(const struct src_live_kids *k, pid_t pid, pid_t *tids, size_t max);
/* The stack samples of child pid (the hint sampler of the live source,
 * run on the child), NULL when it has none. */
struct src_live_hint;
struct src_live_hint *src_live_kids_hint(const struct src_live_kids *k, pid_t pid);
/* The children with a sampler, ended or not, in the order they came:
 * from *i = 0, the next one's sampler, pid and end, with *i moved past
 * it; NULL after the last.  Every "each sampled child" loop of the live
 * source walks them so. */
struct src_live_hint *src_live_kids_sampled(const struct src_live_kids *k,
				   size_t *i, pid_t *pid, bool *ended);
/* May child pid still get a sampler: live, not judged busy yet, and
 * using the CPU (20 ms of it in the window being judged)?  A
 * pool's workers, forked and computing, are for half a second before
 * their sampler comes: code on the whole job measured then must wait
 * for them, not count them out (src_live_jobsampled.c). */
bool src_live_kids_sampler_soon(const struct src_live_kids *k, pid_t pid);
/* Give each child its sampler once it is seen busy (0.05 CPUs over
 * 0.5 s of its readings; make returns NULL: none; the child frees it)
 * and tick the live children's samplers. */
typedef struct src_live_hint *(*src_live_kids_hint_fn)(void *arg, pid_t pid);
void src_live_kids_hints(struct src_live_kids *k, src_live_kids_hint_fn make, void *arg);
/* The children that count their inherited instrumentation into their
 * own segments (src_live_kidseg.h), made at the first call. */
struct src_live_kidseg;
struct src_live_kidseg *src_live_kids_segs(struct src_live_kids *k);
/* The CPUs of process pid's affinity mask (its main thread's, which
 * threads inherit), or those online when it cannot be read. */
int src_live_kids_cpus_available(pid_t pid);
/* Threads of process pid running or runnable now, at least one. */
double src_live_kids_active_threads(pid_t pid);

#endif
