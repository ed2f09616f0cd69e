/*
 * src_live_rank.h - MPI ranks of the followed processes (internal to the
 * live source): a process started by an MPI launcher carries its rank
 * in its environment (OpenMPI: OMPI_COMM_WORLD_RANK; any PMIx launcher:
 * PMIX_RANK), read from /proc/PID/environ.  The where axis shows such a
 * process as "rank N" (its path stays /Process/<pid>).
 */
#ifndef SRC_LIVE_RANK_H
#define SRC_LIVE_RANK_H

#include <stdbool.h>
#include <sys/types.h>

#include "pc_source.h"

struct slk;
struct slr;

struct slr *slr_new(void);
void slr_free(struct slr *r);
/* The rank in process pid's environment, or -1 (none, or unreadable). */
int slr_rank_of(pid_t pid);
/* Each live child whose rank is known and not said yet is reported
 * again through fn as a process discovery naming it ("rank 2").  A child
 * is looked at until it has a rank or has run for a while: its rank
 * appears only once it has exec'ed the MPI program. */
void slr_scan(struct slr *r, const struct slk *kids, pc_disc_fn fn,
	      void *arg);

#endif
