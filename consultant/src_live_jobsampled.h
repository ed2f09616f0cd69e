/*
 * src_live_jobsampled.h - a sampled CPU instance on code over the whole
 * job (/Code/f on /Process, children followed): each process's CPU time
 * times the share of its own stack samples that hold the code, summed.
 *
 * A Python pool's `work` runs in its workers, not in the parent that
 * waits: measured with the parent's CPU and samples alone, the job's
 * CPU in `work` read 0 and the search never refined the job's CPU into
 * the code.  The processes are summed one by one, not the job's CPU
 * times the share of all samples, because a process with no sampler
 * yet (an idle child, or one not yet seen busy) has CPU time and no
 * samples: its CPU is counted nowhere rather than given the others'
 * share.  Part of the live source's metric side (src_live_ops_int.h).
 */
#ifndef HUNCH_SRC_LIVE_JOBSAMPLED_H
#define HUNCH_SRC_LIVE_JOBSAMPLED_H

#include <stdbool.h>

struct src_live_ops;
struct src_live_ops_inst;
struct src_live_jobsampled;

/* The instance's parts, starting from the readings now. */
struct src_live_jobsampled *src_live_jobsampled_new(struct src_live_ops *o,
						    double now);
void src_live_jobsampled_free(struct src_live_jobsampled *j);

/* The job's CPU in the instance's code since the last sample, per
 * second of dt, into *value; false when a process's CPU time has no
 * samples drained yet (the next tick then covers both intervals, as
 * for a sampled instance on one process). */
bool src_live_jobsampled_sample(struct src_live_ops *o,
				struct src_live_ops_inst *in, double now,
				double dt, double *value);

#endif
