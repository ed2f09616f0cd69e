/*
 * src_live_setwall.h - a wall timer over a set of functions (the
 * shipped msg_wait: the time inside MPI's waiting calls) in child
 * processes hunch follows without instrumentation (an MPI launcher's
 * ranks), estimated from their stack samples (internal to the live
 * source); and such a timer in the program itself (io_wait over
 * write()), the same way, where timing each call would cost more than
 * the limit allows.
 *
 * The timer would run while one of the functions is on a thread's
 * stack, on a CPU or off it.  On a CPU: each interval a child's CPU
 * time (the kernel's count) times the share of its recent cpu-clock
 * samples with one of the functions on the stack.  Off a CPU: each
 * thread's time off since the last reading (wall time less CPU time,
 * the kernel's counts) times the share of the time off of its
 * switch-outs drained since (src_live_hint_offcpu_start: where it left its CPU
 * and how long it stayed off, in the run queue or asleep) that had one
 * of the functions on the stack; time off with no switch-out drained
 * yet waits for the next.  The kernel's count makes the total whole
 * when a late drain found the switch ring full.  A rank that waits in
 * MPI_Barrier by yielding its CPU (OpenMPI with more ranks than cores)
 * spends most of the wait in the run queue: the second part is the one
 * that counts there.
 *
 * A child counts from the first reading at which its samples show it in
 * one of the functions: before (MPI_Init, a calibration before the first
 * barrier) its time is not known to be outside them for the program's
 * work, and zeros from a start-up would let a search conclude false.
 * Until some child counts the timer has no value (unknown, not 0).  The
 * value is an estimate, reported as sampled, not a count.
 */
#ifndef SRC_LIVE_SETWALL_H
#define SRC_LIVE_SETWALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pc_config.h"
#include "pc_source.h"

struct src_live_hint;
struct src_live_kids;
struct src_live_ops;
struct src_live_ops_inst;
struct src_live_setwall;

/* Whether md is such a timer: a wall timer started at the entry of a
 * list of functions. */
bool src_live_setwall_applies(const struct pc_config *cfg,
			      const struct pc_metric_def *md);
/* A hint question "PATH?wait=METRIC" (pc_source.h) whose metric is
 * such a timer of a sync or I/O wait, answered over the n samplers'
 * windows into *share (src_live_hint_wait_many): true; false for any
 * other question, answered as before. */
bool src_live_setwall_hint(const struct pc_config *cfg,
			   struct src_live_hint *const *h, size_t n,
			   const char *q, double *share);
/* The estimate for child pid (0: every child followed, those found
 * later too; the program's own pid: the program) or its thread tid (0:
 * every thread), within the /Code resource `code` (NULL: any code),
 * from now on. */
struct src_live_setwall *src_live_setwall_new(const struct pc_config *cfg,
					      const struct pc_metric_def *md,
					      pid_t pid, pid_t tid,
					      const char *code);
void src_live_setwall_free(struct src_live_setwall *w);
/* The estimated wall ns inside the functions since it was made, read
 * at `now` (the live source's seconds; it never goes down).  False while no child counts yet, and at the
 * reading where the first one starts. */
bool src_live_setwall_read(struct src_live_setwall *w,
			   const struct src_live_ops *o, double now, int64_t *ns);

/* The live source's instances (src_live_ops_int.h): in an MPI launcher
 * such a timer on the whole job (no /Process, /SyncObject or /Files
 * below the root) is its children's (the launcher makes no MPI call). */
bool src_live_setwall_launcher(const struct src_live_ops *o, const char *metric,
			       const struct pc_src_focus *f);
/* Enable one on focus f for child pid (0: every child; the program's
 * pid: the program), thread tid:
 * refused with the reason when the child's samples cannot show time off
 * a CPU. */
int src_live_setwall_enable(struct src_live_ops *o, struct src_live_ops_inst *in,
			    const struct pc_src_focus *f, const char *metric,
			    pid_t pid, pid_t tid);
/* The instance's value (its rate over the last 2 s) into *value;
 * false: unknown yet (no sample is given). */
bool src_live_setwall_sample(struct src_live_ops *o, struct src_live_ops_inst *in, double dt,
			     double *value);

#endif
