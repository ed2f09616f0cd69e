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
struct src_live_share;

struct src_live_share *src_live_share_new(void);
void src_live_share_free(struct src_live_share *s);
/* A reading of the reader `tc` (refreshed by the caller) at time `now`
 * (s): every thread's run and wait since the previous reading. */
void src_live_share_read(struct src_live_share *s, const struct eng_taskcpu *tc,
			 double now);
/* The share between the last two readings: thread `tid`'s, or with tid
 * 0 the process's (its CPU clock over its threads' demand).  In (0, 1];
 * 1 when nothing ran. */
double src_live_share_share(const struct src_live_share *s, pid_t tid);

#endif
