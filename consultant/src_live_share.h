/*
 * src_live_share.h - cpu_share on a focus for the live source: the
 * fraction of the CPU a process's or a thread's threads wanted (ran or
 * waited on a run queue, schedstat) that they got over the last tick.
 * src_live_share.c says why the share is the focus's own and why a
 * thread's demand over a tick is at most the tick.
 */
#ifndef SRC_LIVE_SHARE_H
#define SRC_LIVE_SHARE_H
#include <stdbool.h>
#include <sys/types.h>

struct eng_taskcpu;
struct src_live_hint;
struct src_live_share;

struct src_live_share *src_live_share_new(void);
void src_live_share_free(struct src_live_share *s);
/* A reading of the reader `tc` (refreshed by the caller) at time `now`
 * (s): every thread's run and wait since the previous reading; the
 * process may run on `cpus` CPUs. */
void src_live_share_read(struct src_live_share *s, const struct eng_taskcpu *tc,
			 double now, int cpus);
/* The share between the last two readings: thread `tid`'s, or with tid
 * 0 the process's (its CPU clock over its threads' demand).  In (0, 1];
 * 1 when nothing ran. */
double src_live_share_share(const struct src_live_share *s, pid_t tid);
/* The share of the /Code resource `code` in process `pid` (the reader's)
 * between the last two readings: its threads' shares weighted by its
 * CPU samples in each, newer than `*after`.  Its numerator is the
 * process's CPU clock times the share of those samples that hold the
 * code, as a sampled CPU instance on that code counts it over the same
 * samples: so that CPU divided by this share is the code's threads'
 * demand, at most one CPU per thread.  False when no sample came since
 * `*after` (the CPU it divides waits for them too); else `*after`
 * moves to the newest sample counted. */
bool src_live_share_code(const struct src_live_share *s,
			 const struct src_live_hint *h, const char *code,
			 pid_t pid, double *after, double *share);
/* The most CPUs a focus can want: 1 for thread `tid`; for process
 * `pid` its threads (with `code`, those whose samples of the last
 * second held it), at most the CPUs it may run on. */
double src_live_share_most(const struct src_live_share *s,
			   const struct src_live_hint *h, const char *code,
			   pid_t pid, pid_t tid);

#endif
