/*
 * eng_perfswitch.h - where one thread leaves its CPU and how long it
 * stays off (the off-CPU half of eng_perfsample.h's stack samples).
 *
 * Two perf events per thread write into one ring of their own: the
 * sched:sched_switch tracepoint, sampling the user registers and the top
 * of the user stack each time the thread leaves its CPU (the tracepoint
 * fires in the leaving thread, so a per-thread event sees exactly its
 * switch-outs), and a dummy software event with attr.context_switch,
 * whose switch records give each switch-out's and switch-in's time.  A
 * sampled switch-out is closed at the thread's next switch-in with the
 * time it stayed off (in the run queue or asleep).  Every switch-out is
 * sampled until the thread switches more than ENG_PERFSWITCH_HZ times a
 * second (a thread polling with sched_yield switches thousands of times
 * a second); then every 2nd, 4th... (the rate is measured at each
 * drain).  At each drain the closed samples are handed on, each
 * standing for its share of every switch's time off since the last
 * hand-on (its own time off, scaled so that they add up to it), so the
 * thread's time off is counted whole whatever the period.
 *
 * Needs root (or perf_event_paranoid -1).  Where tracefs is not
 * mounted (a fresh machine, a container: nothing mounts it unless
 * asked), the tracepoint's id cannot be read and the software
 * context-switches event takes its place: the scheduler counts it for
 * the leaving thread too, at the same point, and with a period of 1
 * each of its samples carries the same user registers and stack.  The
 * target is never stopped.
 */
#ifndef ENG_PERFSWITCH_H
#define ENG_PERFSWITCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ENG_PERFSWITCH_HZ 200          /* sampled switch-outs a second */
#define ENG_PERFSWITCH_STACK 4096      /* user stack copied per sample */

struct eng_perfswitch;
struct eng_psample;

/* Unwind a switch-out: perf's user registers (the REGS_USER order of
 * eng_perfsample.c) and the stack copied, into *out (tid, t_ns set by
 * the caller's callback).  False: nothing usable. */
typedef int (*eng_perfswitch_unwind_fn)(void *arg, pid_t tid, uint64_t t_ns,
				       const uint64_t *regs,
				       const uint8_t *stack, size_t len,
				       struct eng_psample *out);
typedef void (*eng_perfswitch_fn)(void *arg, const struct eng_psample *s);

/* The event eng_perfswitch_open samples with: sched:sched_switch's
 * tracepoint id, or ENG_PERFSWITCH_SW_EVENT when tracefs cannot tell
 * it. */
#define ENG_PERFSWITCH_SW_EVENT UINT64_MAX
uint64_t eng_perfswitch_tracepoint(void);
/* Open thread tid's switch sampler (tp: eng_perfswitch_tracepoint's
 * answer).  Returns -errno, *why saying what to check. */
int eng_perfswitch_open(pid_t tid, uint64_t tp, uint64_t regs_mask,
			struct eng_perfswitch **out, const char **why);
void eng_perfswitch_close(struct eng_perfswitch *sw);
/* Read the ring: switch-outs are unwound by `unwind` as they come, and
 * those closed are handed to fn with off_ns set (eng_psample).  Returns
 * how many were handed on. */
int eng_perfswitch_drain(struct eng_perfswitch *sw,
			 eng_perfswitch_unwind_fn unwind, void *uarg,
			 eng_perfswitch_fn fn, void *arg);

#endif
