/*
 * src_replay_ckpt.h - checkpoints of a replayed search, for fast
 * backward seeks in the replay dashboard.
 *
 * Replaying a journal is deterministic: with the same configuration the
 * consultant makes the same requests and reaches the same state at every
 * tick.  Playing from the start to go back in time costs about 1 s per
 * 10 minutes of journal (parsing JSON, mostly), so while a replay plays
 * forward this keeps copies of its state at ticks spaced by the CPU time
 * it took to play between them (20 ms at first): the consultant (its
 * searches, data manager, counters, log; an instance unchanged since
 * the checkpoint before is shared with it), what the resource tree looked
 * like (the tree itself is shared: resources are only ever added, so
 * going back truncates it), and where the replay source stood (tick,
 * enables claimed, live handles, replies owed, the reader's byte
 * offset).  A backward seek restores the latest checkpoint before the
 * target and plays on from there.
 *
 * A checkpoint must be a state of the recording's own search: the
 * caller takes them only while nobody steered the search (a tunable
 * edited, an experiment or a curve added by hand) since the last
 * restore, and clears them all when the configuration changes.
 *
 * Memory is bounded: when the checkpoints pass their budget, every
 * other one is dropped and the spacing doubles (so a long journal gets
 * fewer, farther apart).  The consultant's log lines are not copied per
 * checkpoint: they are appended once to one archive (the recording's
 * search logs the same lines in the same order on every pass), and a
 * checkpoint keeps their count.
 */
#ifndef SRC_REPLAY_CKPT_H
#define SRC_REPLAY_CKPT_H

#include <stdbool.h>
#include <stddef.h>

#include "src_replay.h"

struct pc_consult;
struct src_replay_ckpt;
struct rp_ckpt;

#define RP_CKPT_BUDGET (64u << 20)   /* bytes of checkpoints, at most */
#define RP_CKPT_SPACING 0.02         /* CPU seconds of play between them */

/* Checkpoints of searches played on `r` (which must outlive them). */
struct src_replay_ckpt *src_replay_ckpt_new(struct src_replay *r, size_t budget,
			      double spacing);
void src_replay_ckpt_free(struct src_replay_ckpt *c);
/* Forget them all: a new resource tree, or a configuration changed. */
void src_replay_ckpt_clear(struct src_replay_ckpt *c);

/* After a tick of the recording's search (and its actions) that took
 * `cpu` seconds: keep a checkpoint when play has gone on long enough
 * since the last one.  `user` is kept with it (the dashboard keeps its
 * log's length).  True when one was taken. */
bool src_replay_ckpt_tick(struct src_replay_ckpt *c, struct pc_consult *pc,
			  double cpu,
		   size_t user);

/* The latest checkpoint at or before tick `tick`; NULL if none. */
const struct rp_ckpt *src_replay_ckpt_find(const struct src_replay_ckpt *c,
					   long tick);
long src_replay_ckpt_taken_at(const struct rp_ckpt *k);
size_t src_replay_ckpt_user(const struct rp_ckpt *k);

/* The search as it was at `k`: a new consultant (on the same source,
 * configuration and resource tree, the tree taken back to then; give
 * it a log function again), the source at the same tick, tunables set
 * by replayed actions since set back.  The caller frees the consultant
 * it had, after this (the new one must get another address).  NULL,
 * changing nothing, when k is ahead of the tree (a checkpoint later
 * than the search shown: the tree only goes back). */
struct pc_consult *src_replay_ckpt_restore(struct src_replay_ckpt *c,
				    const struct rp_ckpt *k);

size_t src_replay_ckpt_count(const struct src_replay_ckpt *c);
size_t src_replay_ckpt_bytes(const struct src_replay_ckpt *c);

/* A deep copy of a consultant, sharing its configuration, source and
 * resource tree; with `log` false its log lines are not copied (nlog
 * stays: the lines are the caller's to fill), with `dm` false nor are
 * its data manager's instances (none then).  `*bytes` adds the memory
 * it took.  (src_replay_clone.c) */
struct pc_consult *src_replay_clone(const struct pc_consult *pc, bool log,
				    bool dm, size_t *bytes);

#endif
